"""The names and defaults of Kueue v0.19.2 that several parts of the model read."""
from __future__ import annotations

NAME_LABEL = "kubernetes.io/metadata.name"
DEFAULT_LOCAL_QUEUE = "default"
BLOCK_UNDECLARED, IGNORE_UNDECLARED = "BlockUndeclared", "IgnoreUndeclared"
# Kinds and the integration that manages them. Pods of a Deployment or StatefulSet are each gated and
# admitted as a single-pod workload (pkg/controller/jobs/pod, deployment, statefulset).
FRAMEWORKS = {"Job": "batch/job", "JobSet": "jobset.x-k8s.io/jobset", "Pod": "pod", "Deployment": "deployment",
              "StatefulSet": "statefulset"}
POD_TEMPLATE_KINDS = ("Deployment", "StatefulSet")
BUILTIN_PRIORITY_CLASSES = {"system-cluster-critical", "system-node-critical"}
POD_LEVEL_RESOURCES = ("cpu", "memory")
ISSUE_5129 = "https://github.com/kubernetes-sigs/kueue/issues/5129"

