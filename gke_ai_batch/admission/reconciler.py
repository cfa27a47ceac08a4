"""What Kueue v0.19.2's job reconciler (pkg/controller/jobframework/reconciler.go) does with an object a team
member updated. The old object stands for what runs on the cluster: a Job or JobSet with `spec.suspend: true`
is still queued (Kueue unsuspends what it admits), one without it admitted and running."""
from __future__ import annotations

from gke_ai_batch.vocabulary import Obj

from .pod_sets import pod_sets_of
from .webhooks import elastic, suspended

POD_UPDATE = "updated in place: Kueue's pod reconciler keeps it as its gates and labels say"
TEMPLATE_UPDATE = "updated: its controller replaces its pods, and Kueue gates and admits each new one as on create"
KEPT_PODS = "updated in place: its pods stay as they are"


def _pod_sets(obj: Obj) -> list[tuple[str, int, Obj]]:
    return [(ps.name, ps.count, ps.spec) for ps in pod_sets_of(obj)]


def reconciler_effect(old: Obj, new: Obj, slicing: bool) -> str | None:
    """The reconciler's answer, or None when Kueue judges the object's workload afresh: a job still queued (a
    changed one gets a new Workload), or an elastic job's new workload slice for its new counts (`slicing`: the
    elastic-jobs gate is on, webhooks.workload_slicing)."""
    kind = new.get("kind")
    if kind == "Pod":
        return POD_UPDATE
    if kind not in ("Job", "JobSet"):  # a Deployment or StatefulSet: each pod is its own workload
        return TEMPLATE_UPDATE if _pod_sets(old) != _pod_sets(new) else KEPT_PODS
    if suspended(new):
        return None
    if suspended(old):  # step 8: "Running job is not admitted by a cluster queue, suspending"
        if elastic(new, slicing):
            return ("left running: Kueue leaves an unsuspended elastic job to its scheduling gates "
                    "(WorkloadSliceEnabled), without charging its quota")
        return "Kueue suspends it again: Not admitted by cluster queue"
    if _pod_sets(old) != _pod_sets(new):
        if elastic(new, slicing):
            return None
        return "Kueue suspends it: job with no matching workload (its pods no longer match the admitted workload)"
    return "left running: its admitted workload still matches"
