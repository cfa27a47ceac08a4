"""A compute class reordered, or its reservation dropped, while active migration is on, for `make diff`.

With `activeMigration.optimizeRulePriority: true`, GKE moves the workloads of a ComputeClass to the node pools of
a higher-priority rule where it can ("OptimizeRulePriority defines whether workloads affected by given
ComputeClass should be migrated to nodepool defined by higher priority rule, if possible": the ComputeClass CRD,
cloud.google.com/v1, gke_ai_batch/conform/schemas/gke-computeclass; GKE docs, "About custom ComputeClasses").
Moving a pod is evicting it: a training job's pods restart elsewhere. So a way moved up the list pulls running
pods off the nodes of the ways now below it, and a reservation dropped from the list leaves its nodes matching
no rule (their pods are moved to a rule still listed) and the reservation idle, while the quota it backed is no
longer guaranteed. The update itself is harmless to the API server; what GKE then does stops running work.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gke_ai_batch.vocabulary import COMPUTE_CLASS, Capacity

from .inputs import object_name

Resource = dict[str, Any]
SOURCE = ("activeMigration.optimizeRulePriority: \"workloads ... should be migrated to nodepool defined by higher "
          "priority rule, if possible\" (ComputeClass CRD cloud.google.com/v1; GKE docs, About custom ComputeClasses)")


def _way(rule: dict[str, Any]) -> str:
    """A priority rule as the stack file names its way."""
    specific = ((rule.get("reservations") or {}).get("specific") or [{}])[0]
    if specific.get("name"):
        return f"reservation {specific['name']}"
    if (rule.get("flexStart") or {}).get("enabled"):
        return Capacity.FLEX_START.value
    return (Capacity.SPOT if rule.get("spot") else Capacity.ON_DEMAND).value


def _ways(r: Resource) -> list[str]:
    return [_way(p) for p in (((r.get("inputs") or {}).get("spec") or {}).get("priorities") or [])]


def _migrating(r: Resource) -> bool:
    spec = (r.get("inputs") or {}).get("spec") or {}
    return bool((spec.get("activeMigration") or {}).get("optimizeRulePriority"))


def refused(steps: Iterable[tuple[str, Resource]], old: list[Resource],
            acknowledged: tuple[tuple[str, str], ...]) -> list[str]:
    """One line per compute class whose running pods GKE would move after this change, unless decided."""
    before = {r["urn"]: r for r in old}
    out = []
    for op, r in steps:
        was = before.get(r["urn"])
        if op != "update" or r["type"] != COMPUTE_CLASS or was is None or not _migrating(r):
            continue
        if ("compute_class", object_name(r)) in acknowledged:
            continue
        if line := _line(object_name(r), _ways(was), _ways(r)):
            out.append(line)
    return out


def _line(name: str, was: list[str], now: list[str]) -> str | None:
    dropped = [w for w in was if w.startswith("reservation ") and w not in now]
    kept = [w for w in was if w in now]
    raised = [w for w in kept if any(was.index(o) < was.index(w) and now.index(o) > now.index(w) for o in kept)]
    if not dropped and not raised:
        return None
    what = []
    if raised:
        what.append(f"{', '.join(raised)} now ranked above ways it was below ({' -> '.join(now)}, was "
                    f"{' -> '.join(was)}): GKE moves the running pods on the nodes of the ways now below to "
                    f"{raised[0]} as soon as it can, evicting them")
    if dropped:
        what.append(f"{', '.join(dropped)} dropped: its nodes match no rule of the class, GKE moves their pods to a "
                    "way still listed, evicting them, the reservation stays idle and the quota it backed is no "
                    "longer guaranteed")
    return (f"ComputeClass {name} with active migration: {'; '.join(what)} ({SOURCE}); the safe way is two steps: "
            f"set `active_migration: false` on {name} and land it, then change its priorities (and turn active "
            f"migration back on once the jobs running there have ended); or add "
            f"`acknowledge: [{{compute_class: {name}, reason: ...}}]` to the stack file, with why")
