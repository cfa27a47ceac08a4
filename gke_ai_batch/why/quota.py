"""What the team's ClusterQueue holds, uses and could take now, per flavor and resource the job asks for: its
nominal quota and borrowing limit (spec.resourceGroups), what its admitted and reserving Workloads hold
(status.flavorsReservation, the usage Kueue's scheduler counts), and what Kueue would let a new Workload take now,
computed over the whole cohort tree as Kueue v0.19.2 does (pkg/cache/scheduler/resource_node.go `available`, in
admission.quotas.QuotaTree). Reading the tree needs the platform's queue-viewer role (plan.tenancy)."""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from gke_ai_batch.admission.quantities import amount, format_amount
from gke_ai_batch.admission.quotas import QuotaTree

from .kube import Forbidden, Kube, Obj, last_line, refusal

Usage = dict[str, dict[tuple[str, str], int]]


def quota_tree(kube: Kube) -> tuple[list[Obj], list[Obj], str]:
    """Every ClusterQueue and Cohort, or why they could not be read."""
    found: list[list[Obj]] = []
    for kind in ("clusterqueues.kueue.x-k8s.io", "cohorts.kueue.x-k8s.io"):
        ok, out, err = kube.raw(["get", kind, "-o", "json"])
        if not ok:
            why = refusal(err, "what the team holds and could borrow")
            return [], [], str(why) if isinstance(why, Forbidden) else f"{kind} unreadable ({last_line(err)})"
        found.append(list(json.loads(out).get("items") or []))
    return found[0], found[1], ""


def reserved(cluster_queues: Iterable[Obj]) -> Usage:
    """Each ClusterQueue's reserved quota by (flavor, resource), in Kueue's units."""
    return {cq["metadata"]["name"]: {(f.get("name", ""), r.get("name", "")): amount(r.get("name", ""),
                                                                                    r.get("total") or 0)
                                     for f in (cq.get("status") or {}).get("flavorsReservation") or []
                                     for r in f.get("resources") or []}
            for cq in cluster_queues}


def shown(resource: str, value: int) -> str:
    """cpu in cores (Kueue counts millicores), the rest as Kueue prints them."""
    return f"{value / 1000:g}" if resource == "cpu" else format_amount(resource, value)


# Kueue's quota reasons name the resource and flavor (flavorassigner.go: "insufficient unused quota for %s in flavor
# %s, ..." and "insufficient quota for %s in flavor %s, ...").
_QUOTA_REASON = re.compile(r"insufficient (?:unused )?quota for (\S+) in flavor ([A-Za-z0-9._-]+)")


def asked(wl: Obj, reasons: Iterable[str]) -> set[tuple[str, str]]:
    """The (flavor, resource) pairs worth a line: those the Workload holds (status.admission's podSetAssignments),
    else those Kueue's reasons say are short."""
    held = {(flavor, resource) for ps in ((wl.get("status") or {}).get("admission") or {}).get("podSetAssignments")
            or [] for resource, flavor in (ps.get("flavors") or {}).items()}
    return held or {(m.group(2), m.group(1)) for r in reasons if (m := _QUOTA_REASON.search(r))}


def rows(name: str, cluster_queues: list[Obj], cohorts: list[Obj],
         wanted: set[tuple[str, str]]) -> list[dict[str, Any]]:
    """One row per (flavor, resource) of ClusterQueue `name` in `wanted` that it could ever get any of, in the
    ClusterQueue's order."""
    tree = QuotaTree({"ClusterQueue": {cq["metadata"]["name"]: cq for cq in cluster_queues},
                      "Cohort": {co["metadata"]["name"]: co for co in cohorts}})
    used, node = reserved(cluster_queues), ("cq", name)
    out = []
    for (flavor, resource), quota in tree.quotas.get(node, {}).items():
        if (flavor, resource) not in wanted or tree.potential(node, (flavor, resource)) == 0:
            continue  # not asked about, or none to be had at all (Kueue's reason says "maximum capacity (0)")
        use = used.get(name, {}).get((flavor, resource), 0)
        free = max(0, tree.available(node, (flavor, resource), used))
        own_left = max(0, quota.nominal - use)
        amounts = {"nominal": quota.nominal, "used": use, "borrowed": max(0, use - quota.nominal), "free_now": free,
                   "lent_out": max(0, own_left - free), "to_borrow": max(0, free - own_left)}
        limit = None if quota.borrowing_limit is None else shown(resource, quota.borrowing_limit)
        out.append({"flavor": flavor, "resource": resource, "borrowing_limit": limit,
                    **{k: shown(resource, v) for k, v in amounts.items()}})
    return out


def cohort_of(name: str, cluster_queues: list[Obj]) -> str:
    spec = next((cq.get("spec") or {} for cq in cluster_queues if cq["metadata"]["name"] == name), {})
    return str(spec.get("cohortName") or "")


def quota_lines(cluster_queue: str, cohort: str, found: list[dict[str, Any]]) -> list[str]:
    """`quota of <cq> in <flavor>, <resource>: holds 8 (may borrow up to 8), uses 16 (8 borrowed); free to it
    now: 0`."""
    out = []
    for r in found:
        limit = ("in no cohort" if not cohort else "no borrowing limit" if r["borrowing_limit"] is None
                 else f"may borrow up to {r['borrowing_limit']}")
        borrowed = f" ({r['borrowed']} borrowed)" if r["borrowed"] != "0" else ""
        parts = [f"{r['lent_out']} of its own lent to others in cohort {cohort}"] if r["lent_out"] != "0" else []
        if r["to_borrow"] != "0":
            parts.append(f"{r['to_borrow']} to borrow from cohort {cohort}")
        free = r["free_now"] + (f" ({', '.join(parts)})" if parts else "")
        out.append(f"  quota of {cluster_queue} in {r['flavor']}, {r['resource']}: holds {r['nominal']} ({limit}), "
                   f"uses {r['used']}{borrowed}; free to it now: {free}")
    return out
