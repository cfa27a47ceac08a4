"""A team's limits made tighter on a live platform, and what that does to the work already running: the notes
`make diff` puts on such a line.

The API server judges a namespace's ResourceQuota and the admission policies when an object is created, never
the objects it already holds (Kubernetes "Resource Quotas": "Neither contention nor changes to quota will affect
already created resources"). So nothing running is evicted, but every pod is created through them, the new and
replacement pods of a Job already running too (and the size cap judges every create,
plan/namespace_policies.py): a job whose template the tighter limit refuses stalls where it stands, and Kueue's
waitForPodsReady evicts and requeues it, to be refused again. The namespace's LimitRange only gives default
requests (plan.tenancy.limit_range), which refuse nothing, so no change of it is one of these."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gke_ai_batch.vocabulary import NAMESPACE, OBJECT_SIZE_ANNOTATION, RESOURCE_QUOTA

from .inputs import amount, changes, join

SIZE_PATH = join("metadata.annotations", OBJECT_SIZE_ANNOTATION)
_STALLS = "a running job whose pods it refuses can create no more of them and stalls"
NOTES = {
    RESOURCE_QUOTA: "a tighter quota: what the namespace holds stays, but it creates no more until it is below "
                    "(a running job's new pods, Kueue's Workloads for new jobs)",
    NAMESPACE: f"a tighter object size cap: objects already made keep their size; every pod is judged when created, "
               f"so {_STALLS}",
}


def _judged(type_: str, path: str) -> bool:
    """The inputs that bound what a team's next object may be: a quota's hard limits, the size cap on the
    namespace."""
    return ((type_ == RESOURCE_QUOTA and path.startswith("spec.hard")) or
            (type_ == NAMESPACE and path == SIZE_PATH))


def tightened(type_: str, paths: Iterable[str], old: dict[str, Any], new: dict[str, Any]) -> dict[str, str]:
    """The note for each changed path of `paths` that lowers a team limit, or sets one where there was none."""
    wanted = set(paths)
    out = {}
    for path, a, b in changes(old, new):
        if path in wanted and _judged(type_, path) and (after := amount(b)) is not None:
            before = amount(a)
            if before is None or after < before:
                out[path] = NOTES[type_]
    return out
