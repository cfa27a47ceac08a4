"""The scheduler: flavor assignment (pkg/scheduler/flavorassigner/flavorassigner.go)."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from gke_ai_batch.vocabulary import Obj

from .matching import flavor_mismatch
from .quantities import format_amount, resource_order
from .queues import cluster_queue_flavors
from .results import AssignmentError, FlavorChoice, PodSet, PodSetAssignment
from .terms import IGNORE_UNDECLARED
from .topology import levels_of, tas_mismatch

if TYPE_CHECKING:
    from .cluster import Cluster

def _group_of(cq: Obj, resource: str) -> Obj | None:
    return next((g for g in (cq.get("spec") or {}).get("resourceGroups") or []
                 if resource in (g.get("coveredResources") or [])), None)


def _quota_reason(res: str, flavor: str, used: int, request: int, cap: int) -> str:
    return (f"insufficient quota for {res} in flavor {flavor}, previously considered podsets requests "
            f"({format_amount(res, used)}) + current podset request ({format_amount(res, request)}) "
            f"> maximum capacity ({format_amount(res, cap)})")


def flavor_quota(cluster: Cluster, cq: str, flavor: str, requests: Mapping[str, int],
                 usage: Mapping[tuple[str, str], int]) -> tuple[bool, int, list[str]]:
    """`fitsResourceQuota` for each requested resource of the group: (fits, borrowing level, reasons).
    Every resource is checked even after one fails, so all reasons are reported. `usage` holds what
    earlier pod sets of this workload already took of the same flavor and resource."""
    node, fits, level, reasons = ("cq", cq), True, 0, []
    for res in resource_order(requests):
        fr = (flavor, res)
        val = usage.get(fr, 0) + requests[res]
        cap = cluster.tree.potential(node, fr)
        if val > cap:
            fits = False
            reasons.append(_quota_reason(res, flavor, usage.get(fr, 0), requests[res], cap))
            continue
        level = max(level, cluster.tree.borrowing_level(node, fr, val))
    return fits, level, reasons


def find_flavor(cluster: Cluster, cq: Obj, group: Obj, ps: PodSet, requests: Mapping[str, int],
                usage: Mapping[tuple[str, str], int]) -> tuple[FlavorChoice | None, list[str]]:
    """`findFlavorForPodSets`: flavors in resourceGroups order; with FlavorFungibility's default
    (whenCanBorrow: MayStopSearch) the first that fits wins even if it borrows; under TryNextFlavor
    the least-borrowing fit wins, ties to the earlier flavor. Reasons only matter if none fits."""
    covered = {r: q for r, q in requests.items() if r in (group.get("coveredResources") or [])}
    try_next = ((cq.get("spec") or {}).get("flavorFungibility") or {}).get("whenCanBorrow") == "TryNextFlavor"
    cq_name, best, reasons = cq["metadata"]["name"], None, []
    tas_only = all(levels_of(cluster.objects, cluster.get("ResourceFlavor", f)) is not None
                   for f in cluster_queue_flavors(cq))
    for f in group.get("flavors") or []:
        name = f["name"]
        flavor = cluster.get("ResourceFlavor", name)
        mismatch = tas_mismatch(name, levels_of(cluster.objects, flavor), ps, tas_only) or \
            flavor_mismatch(name, flavor, ps.spec)
        if mismatch:
            reasons.append(mismatch)
            continue
        fits, level, why = flavor_quota(cluster, cq_name, name, covered, usage)
        reasons += why
        if not fits:
            continue
        if best is None or level < best[1]:
            best = (name, level)
        if level == 0 or not try_next:
            break
    if best is None:
        return None, reasons
    return FlavorChoice(best[0], tuple(resource_order(covered)), best[1] > 0), []


def assign_pod_set(cluster: Cluster, cq: Obj, ps: PodSet, usage: Mapping[tuple[str, str], int],
                   strategy: str) -> tuple[PodSetAssignment | None, str | None]:
    """`assignFlavors` for one pod set: resources in Kueue's order; one not covered by any resource
    group blocks the pod set under BlockUndeclared (unless its request is 0) and is skipped under
    IgnoreUndeclared; the first resource of a group picks the flavor for the whole group."""
    requests = ps.total()
    if _group_of(cq, "pods") is not None:
        requests["pods"] = ps.count
    chosen: dict[str, FlavorChoice] = {}
    for res in resource_order(requests):
        group = _group_of(cq, res)
        if group is None:
            if requests[res] == 0 or strategy == IGNORE_UNDECLARED:
                continue
            return None, f"resource {res} unavailable in ClusterQueue"
        if res in chosen:
            continue
        choice, reasons = find_flavor(cluster, cq, group, ps, requests, usage)
        if choice is None:
            return None, ", ".join(sorted(reasons))
        chosen.update({r: choice for r in choice.resources})
    groups = tuple(dict.fromkeys(chosen.values()))
    return PodSetAssignment(ps.name, ps.count, groups), None


def assign_flavors(cluster: Cluster, cq: Obj, pod_sets: Sequence[PodSet],
                   strategy: str) -> tuple[list[PodSetAssignment], str | None]:
    """All pod sets in order; the first that fails stops the search (`Assignment.Message`:
    `couldn't assign flavors to pod set <name>: <sorted reasons>`)."""
    usage: dict[tuple[str, str], int] = defaultdict(int)
    out: list[PodSetAssignment] = []
    for ps in pod_sets:
        try:
            psa, why = assign_pod_set(cluster, cq, ps, usage, strategy)
        except AssignmentError as e:
            return out, f"failed to assign flavors to pod set {ps.name}: {e}"
        if psa is None:
            return out, f"couldn't assign flavors to pod set {ps.name}: {why}"
        requests = ps.total()
        for choice in psa.flavors:
            for res in choice.resources:
                usage[(choice.flavor, res)] += requests.get(res, ps.count if res == "pods" else 0)
        out.append(psa)
    return out, None


def applicable_checks(cq: Obj, assigned: Iterable[str]) -> tuple[str, ...]:
    """Checks whose flavors intersect the assigned ones; empty onFlavors means every flavor of the
    ClusterQueue (pkg/util/admissioncheck/admissioncheck.go `NewAdmissionChecks`,
    pkg/workload/workload.go `admissionChecksForAdmission`)."""
    assigned, spec = set(assigned), cq.get("spec") or {}
    every = set(cluster_queue_flavors(cq))
    out = [c["name"] for c in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []
           if set(c.get("onFlavors") or every) & assigned]
    out += [name for name in spec.get("admissionChecks") or [] if every & assigned]
    return tuple(dict.fromkeys(out))
