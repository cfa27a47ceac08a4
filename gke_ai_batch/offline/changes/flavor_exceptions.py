"""A privileged namespace that loses a flavor, for `make diff`: a Pathways head moved to another pool
(`teams[].pathways.head_pool`), or a flavor dropped from `teams[].pod_security[].flavors`.

The gke-ai-batch-privileged-flavors policy (plan.namespace_policies) refuses every new pod, and every new
template, of a namespace with the flavors annotation that selects a flavor the annotation does not name. Pods
that exist stay: an admission policy judges requests. But a running job replaces a failed pod with a new one,
and Kueue gave the job's pods the node selector of the flavor it admitted the job on (the pod set assignment), so
once that flavor leaves the annotation the job can no longer replace a pod there: a Pathways head that restarts
is refused, and its JobSet fails. A pending job whose template selects that flavor is refused on its next update.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gke_ai_batch.vocabulary import FLAVORS_ANNOTATION, NAMESPACE, kueue_type

from .inputs import object_name

Resource = dict[str, Any]
FLAVOR = kueue_type("ResourceFlavor")


def _flavors(r: Resource) -> list[str]:
    annotations = ((r.get("inputs") or {}).get("metadata") or {}).get("annotations") or {}
    return [f for f in str(annotations.get(FLAVORS_ANNOTATION, "")).split(",") if f]


def refused(steps: Iterable[tuple[str, Resource]], old: list[Resource], new: list[Resource],
            acknowledged: tuple[tuple[str, str], ...]) -> list[str]:
    """One line per privileged namespace whose running jobs could no longer replace a pod on a flavor that stays,
    unless decided. A flavor renamed or removed is not counted here: its nodes lose its label with it, and
    changes.queue_changes and the flavor's own deletion say what that does."""
    before = {r["urn"]: r for r in old}
    staying = {object_name(r) for r in new if r["type"] == FLAVOR}
    out = []
    for op, r in steps:
        was = before.get(r["urn"])
        if op != "update" or r["type"] != NAMESPACE or was is None or ("namespace", object_name(r)) in acknowledged:
            continue
        now = _flavors(r)
        if now and (lost := [f for f in _flavors(was) if f not in now and f in staying]):
            out.append(_line(object_name(r), lost, now))
    return out


def _line(namespace: str, lost: list[str], now: list[str]) -> str:
    flavors = ", ".join(lost)
    return (f"namespace {namespace} is privileged for {', '.join(now)} only after this change, no longer for "
            f"{flavors}: the gke-ai-batch-privileged-flavors policy then refuses every new pod there that selects "
            f"{flavors}, so a running job on {flavors} (a Pathways head before `head_pool` moved) cannot replace "
            f"a failed pod, and its JobSet fails; the safe way is two steps: keep {flavors} in the namespace's "
            f"`pod_security[].flavors` in this change (the heads' quota moves with `head_pool`) and land it; once "
            f"the jobs running there have ended, drop {flavors} with `acknowledge: [{{namespace: {namespace}, "
            f"reason: ...}}]` saying so (make diff cannot see running jobs, so it asks then too); or add that "
            f"acknowledgement now to take the risk, with why")
