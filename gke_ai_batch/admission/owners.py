"""The owner chain as Kueue v0.19.2's pod webhook follows it (pkg/controller/jobs/pod/pod_webhook.go `Default`
calls pkg/controller/jobframework/reconciler.go `FindAncestorJobManagedByKueue`): a pod whose chain of
controller owners reaches a job Kueue manages is neither gated nor labelled managed; that job's Workload holds
its quota.

Each hop: the controller ownerReference; an owner of a kind no integration knows (apps/v1 ReplicaSet is known,
as an interim owner) ends the walk; a known owner is looked up by name in the pod's namespace (here: among the
objects given, as they are on the cluster), and a missing one is an error the webhook returns, so the pod is
not created; an owner whose uid differs from the reference ends the walk ("same-namespace ownership spoofing
is out of scope"); an owner of an enabled integration with a queue name (or any, with
manageJobsWithoutQueueName) becomes the job Kueue leaves the pod to. At most 10 hops
(`managedOwnersChainLimit`); a uid seen twice is "cyclic ownership". Integrations other than Job, JobSet,
Deployment, StatefulSet and Pod are not modelled: their kinds end the walk here.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gke_ai_batch.vocabulary import JOBSET_API, QUEUE_LABEL, Obj

from .terms import FRAMEWORKS

KNOWN = {("batch/v1", "Job"), (JOBSET_API, "JobSet"), ("apps/v1", "Deployment"),
         ("apps/v1", "StatefulSet"), ("v1", "Pod"), ("apps/v1", "ReplicaSet")}
CHAIN_LIMIT = 10
_RESOURCES = {"Job": 'jobs.batch', "JobSet": "jobsets.jobset.x-k8s.io", "Deployment": "deployments.apps",
              "StatefulSet": "statefulsets.apps", "Pod": "pods", "ReplicaSet": "replicasets.apps"}


@dataclass(frozen=True)
class Ancestor:
    """The walk's end: the job Kueue leaves the pod to (None: the pod is its own workload), or the webhook's
    error."""

    job: Obj | None = None
    error: str | None = None


def controller_of(obj: Obj) -> Obj | None:
    """metav1.GetControllerOf: the ownerReference with controller: true."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return next((r for r in refs if r.get("controller")), None)


def managed_ancestor(obj: Obj, objects: Mapping[tuple[str, str, str], Obj], frameworks: list[str],
                     without_queue_name: bool = False) -> Ancestor:
    """FindAncestorJobManagedByKueue over `objects` ((kind, namespace, name) -> object)."""
    ns = (obj.get("metadata") or {}).get("namespace") or "default"
    current, top, seen = obj, None, set()
    while (owner := controller_of(current)) is not None:
        uid = (current.get("metadata") or {}).get("uid")
        if uid and uid in seen:
            return Ancestor(error="cyclic ownership")
        seen.add(uid)
        if (owner.get("apiVersion"), owner.get("kind")) not in KNOWN:
            break
        parent = objects.get((str(owner.get("kind")), ns, str(owner.get("name"))))
        if parent is None:
            return Ancestor(error=f'workload owner not found: {_RESOURCES[str(owner["kind"])]} '
                                  f'"{owner.get("name")}" not found')
        if ((parent.get("metadata") or {}).get("uid") or "") != owner.get("uid"):
            break
        managed = FRAMEWORKS.get(str(parent.get("kind"))) in frameworks
        labels = (parent.get("metadata") or {}).get("labels") or {}
        if managed and (without_queue_name or labels.get(QUEUE_LABEL)):
            top = parent
        current = parent
        if len(seen) > CHAIN_LIMIT:
            return Ancestor(error="managed owner chain limit reached")
    return Ancestor(job=top)
