"""Topology Aware Scheduling in Kueue v0.19.2: which flavors a pod set may take, and whether a required
topology fits the nodes behind the flavor.

Flavor matching is pkg/scheduler/flavorassigner/tas_flavorassigner.go `checkPodSetAndFlavorMatchForTAS`: a pod
set asks for TAS with a topology annotation, or implicitly when every flavor of its ClusterQueue is a TAS
flavor; one that asks takes only TAS flavors holding the requested level, one that does not never takes a
TAS flavor. The fit is pkg/cache/scheduler/tas_flavor_snapshot.go's, over the nodes that exist (Kueue counts
Ready nodes carrying every level's label): on an empty cluster, a pool's fixed or minimum nodes. A host or
hostname domain is one node (one VM per host on the machines GKE labels), a TPU7x 4x4x4 partition one sub-block
of 16 nodes (its sub-slice partitions 8, 4, 2 and 1); a block or sub-block is counted as holding all of a pool's
nodes, which a reservation may spread over several: an upper bound, so a fit here can still fail on the cluster,
never the other way.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gke_ai_batch.model.pool_facts import PoolFacts
from gke_ai_batch.model.topologies import DOMAIN_NODES
from gke_ai_batch.vocabulary import Obj

from .matching import untolerated_taint
from .results import PodSet, PodSetAssignment

if TYPE_CHECKING:
    from .cluster import Cluster

REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
# Slices of a pod set (apis/kueue/v1beta2/topology_types.go): each `podset-slice-size` pods in one domain of the
# `podset-slice-required-topology` level, all of them in one domain of the required level. GKE's slice
# controller writes these for a TPU7x slice (model.topologies: the partition of its shape, inside one block).
SLICE_REQUIRED = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"


def requested_level(ps: PodSet) -> str | None:
    return ps.annotations.get(REQUIRED) or ps.annotations.get(PREFERRED)


def requests_tas(ps: PodSet) -> bool:
    return bool(requested_level(ps)) or ps.annotations.get(UNCONSTRAINED) == "true"


def levels_of(cluster_objects: Obj, flavor: Obj | None) -> list[str] | None:
    """The levels of the Topology a flavor names; None for a flavor without one."""
    name = ((flavor or {}).get("spec") or {}).get("topologyName")
    if not name:
        return None
    topology = (cluster_objects.get("Topology") or {}).get(name) or {}
    return [level.get("nodeLabel") for level in (topology.get("spec") or {}).get("levels") or []]


def tas_mismatch(name: str, levels: list[str] | None, ps: PodSet, tas_only: bool) -> str | None:
    """Kueue's reason a pod set may not take flavor `name` (with Topology `levels`), or None."""
    if requests_tas(ps) or tas_only:
        if tas_only and not requests_tas(ps):
            return None
        if levels is None:
            return f'Flavor "{name}" does not support TopologyAwareScheduling'
        level, slice_level = requested_level(ps), ps.annotations.get(SLICE_REQUIRED)
        if (level and level not in levels) or (slice_level and slice_level not in levels):
            return f'Flavor "{name}" does not contain the requested level'
        return None
    if levels is not None:
        return f'Flavor "{name}" supports only TopologyAwareScheduling'
    return None


def _domain_nodes(level: str, nodes: int) -> int:
    return min(DOMAIN_NODES.get(level, nodes), nodes)


def slice_request(ps: PodSet, levels: Sequence[str]) -> tuple[str | None, int, str | None]:
    """The pod set's slice level and size (a slice of one pod at the lowest level when it asks for none), or
    Kueue's reason it cannot be placed: tas_flavor_snapshot.go `getSliceSizeWithSinglePodAsDefault` and the
    slice level's order against the required one."""
    slice_level = ps.annotations.get(SLICE_REQUIRED)
    if not slice_level:
        return None, 1, None
    size = ps.annotations.get(SLICE_SIZE, "")
    if not size.isdigit() or int(size) <= 0:
        return slice_level, 0, "slice topology requested, but slice size not provided"
    level = ps.annotations.get(REQUIRED)
    if level in levels and slice_level in levels and levels.index(level) > levels.index(slice_level):
        return slice_level, 0, f"podset slice topology {slice_level} is above the podset topology {level}"
    return slice_level, int(size), None


def fit_reason(topology: str, level: str, ps: PodSet, per_node_fit: int, nodes: int,
               slice_level: str | None = None, slice_size: int = 1, excluded: int = 0) -> str | None:
    """Whether one domain of the required `level` holds all of the pod set's slices (each in one domain of
    `slice_level`), in Kueue's words (`notFitMessage`: slices, or pods when a slice is one pod). `excluded`: the
    nodes of the flavor the pod set cannot use; with none left, the domains exist but hold nothing."""
    if nodes == 0 and not excluded:
        return f"no topology domains at level: {level}"
    per_domain = per_node_fit * _domain_nodes(level, nodes)
    if slice_level is None:
        fit, needed = per_domain, ps.count
    else:
        slice_nodes = max(1, _domain_nodes(slice_level, nodes))
        fit = _domain_nodes(level, nodes) // slice_nodes * (per_node_fit * slice_nodes // slice_size)
        needed = ps.count // slice_size
    unit = "slice" if slice_size > 1 else "pod"
    if fit >= needed:
        return None
    if fit == 0:
        return f"topology \"{topology}\" doesn't allow to fit any of {needed} {unit}(s)"
    return f'topology "{topology}" allows to fit only {fit} out of {needed} {unit}(s)'


def existing_nodes(pool: PoolFacts) -> int:
    """The nodes a pool has before any workload asks for more: its fixed size, or its autoscaling minimum."""
    if pool.fixed_nodes is not None:
        return pool.fixed_nodes * max(1, len(pool.zones))
    return (pool.min_nodes or 0) * (1 if pool.total_autoscaling else max(1, len(pool.zones)))


def per_node_fit(ps: PodSet, pool: PoolFacts) -> int:
    """How many of the pod set's pods one of the pool's nodes holds, by its accelerator."""
    asked = ps.per_pod.get(pool.resource or "", 0)
    return pool.per_node // asked if asked else 1


def topology_reason(cluster: Cluster, pod_sets: Sequence[PodSet],
                    assignments: Sequence[PodSetAssignment]) -> str | None:
    """The first pod set whose required topology does not fit the nodes behind its TAS flavor."""
    for ps, psa in zip(pod_sets, assignments, strict=True):
        level = ps.annotations.get(REQUIRED)
        tas = [(c.flavor, levels_of(cluster.objects, cluster.get("ResourceFlavor", c.flavor))) for c in psa.flavors]
        flavor, levels = next(((f, levels) for f, levels in tas if levels), (None, None))
        if not level or flavor is None or levels is None:
            continue
        spec = (cluster.get("ResourceFlavor", flavor) or {}).get("spec") or {}
        usable, excluded = _by_taints(cluster.pools_behind(flavor), [*(ps.spec.get("tolerations") or []),
                                                                     *(spec.get("tolerations") or [])])
        nodes = sum(existing_nodes(p) for p in usable)
        fits = min((per_node_fit(ps, p) for p in usable), default=0)
        slice_level, slice_size, reason = slice_request(ps, levels)
        reason = reason or fit_reason(str(spec.get("topologyName")), level, ps, fits, nodes, slice_level, slice_size,
                                      sum(excluded.values()))
        if reason:
            return f"couldn't assign flavors to pod set {ps.name}: {reason}{_exclusions(nodes, excluded)}"
    return None


def _by_taints(pools: Sequence[PoolFacts], tolerations: Sequence[Obj]) -> tuple[list[PoolFacts], dict[str, int]]:
    """The pools whose nodes the pod set tolerates, and the nodes of the others by the taint that keeps it off
    (Kueue's TAS filters nodes by the pod set's and the flavor's tolerations: tas_flavor_snapshot.go, its
    exclusion stats counted per `Taint.ToString()`, `key=value:Effect`)."""
    usable: list[PoolFacts] = []
    excluded: dict[str, int] = {}
    for pool in pools:
        taint = untolerated_taint(pool.taints, tolerations)
        if taint is None:
            usable.append(pool)
        else:
            text = f"{taint['key']}{'=' + taint['value'] if taint.get('value') else ''}:{taint['effect']}"
            excluded[text] = excluded.get(text, 0) + existing_nodes(pool)
    return usable, {k: n for k, n in excluded.items() if n}


def _exclusions(usable: int, excluded: dict[str, int]) -> str:
    """`notFitMessage`'s suffix: `. Total nodes: N; excluded: taint "k=v:NoSchedule": n`."""
    if not excluded:
        return ""
    reasons = ", ".join(sorted(f'taint "{taint}": {n}' for taint, n in excluded.items()))
    return f". Total nodes: {usable + sum(excluded.values())}; excluded: {reasons}"
