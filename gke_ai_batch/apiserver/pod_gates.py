"""A pod that names its node while it has scheduling gates is invalid (ValidatePodCreate,
pkg/apis/core/validation/validation.go at Kubernetes v1.33: `spec.nodeName: Forbidden: cannot be set until all
schedulingGates have been cleared`). Kueue's pod webhook gates every pod it manages (pkg/controller/jobs/pod/
pod_webhook.go `Default` at v0.19.2: a queue name, or the namespace's LocalQueue `default`, or
manageJobsWithoutQueueName; not a pod whose owner Kueue already manages), and mutating webhooks run before the API
server validates: so a managed pod that names its node is refused by validation, before any admission policy."""
from __future__ import annotations

from collections.abc import Mapping

from gke_ai_batch.admission.cluster import Cluster
from gke_ai_batch.admission.owners import managed_ancestor
from gke_ai_batch.admission.queues import enabled_frameworks, management_blocker, queue_name
from gke_ai_batch.vocabulary import Obj

FORBIDDEN = "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"


def kueue_gates(cluster: Cluster, pod: Obj, ns: str, objects: Mapping[tuple[str, str, str], Obj]) -> bool:
    """Whether Kueue's pod webhook adds its admission gate to this pod on create."""
    if management_blocker(cluster, "Pod", ns):
        return False
    manage_all = bool(cluster.config.get("manageJobsWithoutQueueName"))
    ancestor = managed_ancestor(pod, objects, enabled_frameworks(cluster.config), manage_all)
    if ancestor.error or ancestor.job is not None:
        return False
    return manage_all or queue_name(cluster, pod, ns)[0] is not None


def assigned_while_gated(cluster: Cluster, pod: Obj, ns: str, objects: Mapping[tuple[str, str, str], Obj]) -> str:
    """The API server's refusal of a pod created with a node and gates (its own or Kueue's), else ""."""
    spec = pod.get("spec") or {}
    if not spec.get("nodeName"):
        return ""
    if spec.get("schedulingGates") or kueue_gates(cluster, pod, ns, objects):
        return f'The Pod "{(pod.get("metadata") or {}).get("name")}" is invalid: {FORBIDDEN}'
    return ""
