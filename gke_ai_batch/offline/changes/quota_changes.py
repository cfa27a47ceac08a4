"""Each team's accelerator quotas at BASE and in the working tree, for the reviewer of `make diff`: what every
team may use before and after the change, by the ClusterQueues its LocalQueues point at (a shared queue under
each team that uses it). Read from the two plans' resources.json with the plan summary's own view."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from gke_ai_batch.vocabulary import ACCELERATOR_RESOURCES

from ..engine.runtime import Registration
from ..views.text import aligned
from ..views.view import natural, stack_view

Key = tuple[str, str, str, str]  # team, ClusterQueue, flavor, resource


def team_quotas(resources: list[dict[str, Any]]) -> dict[Key, Decimal]:
    """Nominal TPU and GPU quota per team, ClusterQueue, flavor and resource; zero quotas left out."""
    view = stack_view([Registration(r["urn"], r["type"], r["name"], r.get("parent"), r.get("custom", True),
                                    r.get("inputs") or {}) for r in resources])
    return {(t.name, cq, q.flavor, q.resource): q.nominal
            for t in view.teams for cq in t.cluster_queues if cq in view.cluster_queues
            for q in view.cluster_queues[cq].quotas if q.resource in ACCELERATOR_RESOURCES and q.nominal}


def either_side(before: dict[Key, Decimal], after: dict[Key, Decimal]) -> list[Key]:
    """Every quota of either side, in team, queue, flavor and resource order (pool-2 before pool-10)."""
    return sorted(before.keys() | after.keys(), key=lambda k: tuple(natural(part) for part in k))


def quota_lines(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[str]:
    """An aligned table, one row per quota on either side: `16 -> 32` where it changes, `16` where it does not."""
    before, after = team_quotas(old), team_quotas(new)
    keys = either_side(before, after)
    if not keys:
        return ["accelerator quotas per team: (none on either side)"]
    rows = [("team", "ClusterQueue", "flavor", "resource", "BASE -> working tree")]
    for key in keys:
        a, b = (str(side[key]) if key in side else "-" for side in (before, after))
        rows.append((*key, a if a == b else f"{a} -> {b}"))
    return ["accelerator quotas per team (nominal):", *aligned(rows)]
