"""Kueue v0.19.2 on a StatefulSet UPDATE (pkg/controller/jobs/statefulset): one Workload for the whole StatefulSet,
a pod set of `replicas` pods (statefulset_reconciler.go `constructWorkload`), so its webhook holds the replicas
and the pods' shape of one it manages.

statefulset_webhook.go `ValidateUpdate`, when `WorkloadShouldBeSuspended` (jobframework/utils.go: a queue name,
the namespace's `default` LocalQueue that `Default` sets, or manageJobsWithoutQueueName; the namespace selected):
- the replicas may change only to or from zero ("Allow only scale down to zero and scale up from zero"):
  `spec.replicas: Invalid value: <new>: field is immutable`;
- scaling up from zero while pods are still terminating: `spec.replicas: Forbidden: scaling down is still in
  progress` (read from the old object's status.replicas);
- `ValidateImmutablePodGroupPodSpec` (jobframework/validation.go over pkg/util/pod `SpecShape`): each
  container's requests and ports, nodeSelector, affinity, tolerations, runtimeClassName, priority,
  topologySpreadConstraints, overhead, resourceClaims and pod-level requests are immutable; the value, which
  Kueue prints as a Go value, is elided here.

Scaled to zero, the reconciler puts the Workload on hold, releasing its quota ("StatefulSet scaled to zero;
workload on hold"); scaled up from zero, it takes it off hold and the Workload is admitted afresh (a Workload
kept on hold from another count is not modelled: it is judged at the new one).

The webhook is registered for `statefulsets` only (config/components/webhook/manifests.yaml), not
`statefulsets/scale`: `kubectl scale` does not reach it, and the Workload keeps its count. Scaled up, the
StatefulSet controller creates pods past that count, and Kueue's pod group reconciler deletes each as an excess
pod of the group (pkg/controller/jobs/pod/pod_controller.go `removeExcessPods`, "Excess pod deleted"), so the
StatefulSet never grows; scaled down, the Workload keeps the quota of the pods it no longer has."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.vocabulary import QUEUE_LABEL, Obj

from .queues import management_blocker, queue_name

if TYPE_CHECKING:
    from .cluster import Cluster

_SPEC = "spec.template.spec"
_SHAPED = ("nodeSelector", "affinity", "tolerations", "runtimeClassName", "priority", "topologySpreadConstraints",
           "overhead", "resourceClaims")
ON_HOLD = "Kueue puts its workload on hold and releases its quota (StatefulSet scaled to zero; workload on hold)"
OFF_HOLD = "Kueue takes its workload off hold and judges it afresh"


def replicas(obj: Obj) -> int:
    return int((obj.get("spec") or {}).get("replicas", 1))


def unmanaged_reason(cluster: Cluster, obj: Obj) -> str | None:
    """Why Kueue's webhook does not hold this StatefulSet (`WorkloadShouldBeSuspended` is false), or None."""
    ns = (obj.get("metadata") or {}).get("namespace") or "default"
    blocker = management_blocker(cluster, "StatefulSet", ns)
    if blocker:
        return blocker
    queue, _ = queue_name(cluster, obj, ns)
    if queue is None and not cluster.config.get("manageJobsWithoutQueueName"):
        return f"no {QUEUE_LABEL} label"
    return None


def update_errors(cluster: Cluster, old: Obj, new: Obj) -> list[str]:
    """What Kueue's StatefulSet webhook refuses in this update, in its words."""
    if new.get("kind") != "StatefulSet" or unmanaged_reason(cluster, new):
        return []
    errors = _shape_errors(_spec(old), _spec(new))
    was, now = replicas(old), replicas(new)
    if was and now and was != now:
        errors.append(f"spec.replicas: Invalid value: {now}: field is immutable")
    if not was and now and int((old.get("status") or {}).get("replicas") or 0) > 0:
        errors.append("spec.replicas: Forbidden: scaling down is still in progress")
    return errors


def update_effect(cluster: Cluster, old: Obj, new: Obj) -> tuple[str | None, bool]:
    """(what happens to a StatefulSet whose replicas changed, whether Kueue then judges its workload afresh);
    (None, False) when the replicas are unchanged."""
    was, now = replicas(old), replicas(new)
    if was == now:
        return None, False
    scaled = f"scaled from {was} to {now} replicas"
    why = unmanaged_reason(cluster, new)
    if why:
        return f"{scaled}: its controller adds or removes pods; Kueue does not manage it ({why})", False
    if not now:
        return f"{scaled}: {ON_HOLD}", False
    return f"{scaled}: {OFF_HOLD}", True


def scale_effect(cluster: Cluster, old: Obj, new: Obj) -> tuple[str | None, bool]:
    """update_effect for a change of replicas through `/scale`, which Kueue's webhook does not see."""
    effect, afresh = update_effect(cluster, old, new)
    was, now = replicas(old), replicas(new)
    if effect is None or unmanaged_reason(cluster, new) or not (was and now):
        return effect, afresh
    scaled = f"scaled from {was} to {now} replicas through /scale, which Kueue's webhook does not see"
    if now > was:
        return (f"{scaled}: its workload keeps its {was} pods, and Kueue deletes every pod its controller creates "
                "past them as an excess pod of the group (Excess pod deleted)"), False
    return f"{scaled}: its controller removes pods, and its workload keeps the quota of {was}", False


def _spec(obj: Obj) -> Obj:
    return ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}


def _shape_errors(old: Obj, new: Obj) -> list[str]:
    """`validateImmutablePodGroupPodSpecPath` over the two shapes, in field order (Kueue's is a map's)."""
    errors = []
    for field in ("containers", "initContainers"):
        was, now = old.get(field) or [], new.get(field) or []
        if len(was) != len(now):
            errors.append(_immutable(f"{_SPEC}.{field}"))
            continue
        for i, (a, b) in enumerate(zip(was, now, strict=True)):
            if _requests(a) != _requests(b):
                errors.append(_immutable(f"{_SPEC}.{field}[{i}].resources.requests"))
            if _empty(a.get("ports")) != _empty(b.get("ports")):
                errors.append(_immutable(f"{_SPEC}.{field}[{i}].ports"))
    errors += [_immutable(f"{_SPEC}.{f}") for f in _SHAPED if _empty(old.get(f)) != _empty(new.get(f))]
    if _pod_requests(old) != _pod_requests(new):
        errors.append(_immutable(f"{_SPEC}.resources"))
    return errors


def _immutable(path: str) -> str:
    return f"{path}: Invalid value: ...: field is immutable"


def _empty(value: Any) -> Any:
    """apimachinery's semantic equality: an empty list or map is the same as none."""
    return value if value not in ([], {}) else None


def _requests(container: Obj) -> dict[str, Any]:
    requests = (container.get("resources") or {}).get("requests") or {}
    return {r: parse_quantity(v) for r, v in requests.items()}


def _pod_requests(spec: Obj) -> dict[str, Any] | None:
    """Pod-level resources count only when set (SpecShape: `if podSpec.Resources != nil`)."""
    resources = spec.get("resources")
    return None if resources is None else _requests({"resources": resources})
