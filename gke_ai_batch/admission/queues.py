"""Before the scheduler: is the object managed by Kueue, which LocalQueue and ClusterQueue it goes to, may
it use its priority, and is the queue usable (active, its flavors and admission checks present)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gke_ai_batch.vocabulary import (
    PRIORITY_LABEL,
    PROVISIONING_CONTROLLER,
    QUEUE_LABEL,
    Obj,
)

from .matching import selector_matches
from .results import PodSet
from .terms import BUILTIN_PRIORITY_CLASSES, DEFAULT_LOCAL_QUEUE, FRAMEWORKS, NAME_LABEL, POD_TEMPLATE_KINDS

if TYPE_CHECKING:
    from .cluster import Cluster

def _managed_jobs_selector(config: Obj) -> Obj:
    """Default from apis/config/v1beta2/defaults.go: every namespace but kube-system and Kueue's own."""
    default = {"matchExpressions": [{"key": NAME_LABEL, "operator": "NotIn",
                                     "values": ["kube-system", config.get("namespace") or "kueue-system"]}]}
    selector = config.get("managedJobsNamespaceSelector")
    return default if selector is None else selector


def enabled_frameworks(config: Obj) -> list[str]:
    """integrations.frameworks; unset means batch/job only (apis/config/v1beta2/defaults.go)."""
    return list(((config.get("integrations") or {}).get("frameworks")) or ["batch/job"])


def management_blocker(cluster: Cluster, kind: str, ns: str) -> str | None:
    """Kueue ignores objects whose integration is off, and (ManagedJobsNamespaceSelectorAlwaysRespected,
    GA in 0.19) any job in a namespace the managedJobsNamespaceSelector does not select
    (pkg/controller/jobframework/reconciler.go: "Namespace not opted in for Kueue management")."""
    framework = FRAMEWORKS[kind]
    if framework not in enabled_frameworks(cluster.config):
        return f"Kueue does not manage {kind}s: integration {framework} is not in integrations.frameworks"
    if not selector_matches(_managed_jobs_selector(cluster.config), cluster.namespace_labels(ns)):
        return (f"Namespace not opted in for Kueue management: namespace {ns} does not match "
                f"managedJobsNamespaceSelector, so Kueue creates no Workload for this {kind}")
    return None


def queue_name(cluster: Cluster, workload: Obj, ns: str) -> tuple[str | None, str | None]:
    """The `kueue.x-k8s.io/queue-name` label, else the LocalQueue named `default` of the namespace
    (pkg/controller/jobframework/defaults.go `ApplyDefaultLocalQueue`, always on since 0.19)."""
    labels = (workload.get("metadata") or {}).get("labels") or {}
    if labels.get(QUEUE_LABEL):
        return labels[QUEUE_LABEL], None
    if cluster.get("LocalQueue", f"{ns}/{DEFAULT_LOCAL_QUEUE}"):
        return DEFAULT_LOCAL_QUEUE, None
    held = "stays gated (scheduling gate kueue.x-k8s.io/admission)" if workload.get("kind") in (
        "Pod", *POD_TEMPLATE_KINDS) else "stays suspended"
    fate = f"{held} (manageJobsWithoutQueueName)" if cluster.config.get("manageJobsWithoutQueueName") \
        else "is not managed by Kueue"
    return None, f"no {QUEUE_LABEL} label and no LocalQueue {DEFAULT_LOCAL_QUEUE} in namespace {ns}: the job {fate}"


def priority_blocker(cluster: Cluster, workload: Obj, pod_sets: Sequence[PodSet]) -> str | None:
    """`ExtractPriority` (pkg/controller/jobframework/reconciler.go) looks up the WorkloadPriorityClass
    label, else the first pod set's PriorityClass; a missing one fails Workload creation."""
    wpc = ((workload.get("metadata") or {}).get("labels") or {}).get(PRIORITY_LABEL)
    if wpc:
        return None if cluster.get("WorkloadPriorityClass", wpc) else \
            f'workloadpriorityclasses.kueue.x-k8s.io "{wpc}" not found'
    pc = pod_sets[0].spec.get("priorityClassName") if pod_sets else None
    if pc and pc not in BUILTIN_PRIORITY_CLASSES and not cluster.get("PriorityClass", pc):
        return f'priorityclasses.scheduling.k8s.io "{pc}" not found'
    return None


def _check_is_active(cluster: Cluster, check: Obj) -> bool:
    """The ProvisioningRequest controller marks its checks inactive when their
    ProvisioningRequestConfig is missing (pkg/controller/admissionchecks/provisioning); other
    controllers are assumed to be running."""
    spec = check.get("spec") or {}
    if spec.get("controllerName") != PROVISIONING_CONTROLLER:
        return True
    params = spec.get("parameters") or {}
    return params.get("kind") != "ProvisioningRequestConfig" or bool(cluster.get("ProvisioningRequestConfig",
                                                                                params.get("name")))


def _cq_check_names(cq: Obj) -> list[str]:
    spec = cq.get("spec") or {}
    strategy = (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []
    return [c["name"] for c in strategy] + list(spec.get("admissionChecks") or [])


def cluster_queue_flavors(cq: Obj) -> list[str]:
    return [f["name"] for g in (cq.get("spec") or {}).get("resourceGroups") or [] for f in g.get("flavors") or []]


def inactive_message(cluster: Cluster, cq: Obj) -> str | None:
    """The ClusterQueue's Active=False message (pkg/cache/scheduler/clusterqueue.go `inactiveReason`)."""
    messages = []
    if (cq.get("spec") or {}).get("stopPolicy", "None") != "None":
        messages.append("is stopped")
    missing = [f for f in cluster_queue_flavors(cq) if not cluster.get("ResourceFlavor", f)]
    if missing:
        messages.append(f"references missing ResourceFlavor(s): {','.join(missing)}")
    checks = _cq_check_names(cq)
    missing = [c for c in checks if not cluster.get("AdmissionCheck", c)]
    if missing:
        messages.append(f"references missing AdmissionCheck(s): {','.join(missing)}")
    inactive = [c for c in checks if (check := cluster.get("AdmissionCheck", c))
                and not _check_is_active(cluster, check)]
    if inactive:
        messages.append(f"references inactive AdmissionCheck(s): {','.join(inactive)}")
    return f"Can't admit new workloads: {', '.join(messages)}." if messages else None


def queue_blocker(cluster: Cluster, ns: str, queue: str) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(ClusterQueue, Kueue's message, details) in the workload controller's order
    (pkg/controller/core/workload_controller.go `getQueueBlocker`)."""
    lq = cluster.get("LocalQueue", f"{ns}/{queue}")
    if lq is None:
        return None, f"LocalQueue {queue} doesn't exist", ()
    if (lq.get("spec") or {}).get("stopPolicy", "None") != "None":
        return None, f"LocalQueue {queue} is inactive", ()
    cq_name = (lq.get("spec") or {}).get("clusterQueue")
    cq = cluster.get("ClusterQueue", cq_name)
    if cq is None:
        return cq_name, f"ClusterQueue {cq_name} doesn't exist", ()
    inactive = inactive_message(cluster, cq)
    if inactive:
        return cq_name, f"ClusterQueue {cq_name} is inactive", (f"ClusterQueue {cq_name}: {inactive}",)
    return cq_name, None, ()
