"""What Kueue does not check: TPU slices and queued-provisioning node pool sizes."""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from gke_ai_batch import vocabulary
from gke_ai_batch.model import catalog, dynamic_slicing, topologies
from gke_ai_batch.model.pool_facts import PoolFacts
from gke_ai_batch.vocabulary import (
    PROVISIONING_CONTROLLER,
    QUEUED_PROVISIONING_CLASS,
    Capacity,
    Obj,
    PoolKind,
)

from .flavors import applicable_checks
from .landing import landing_warnings
from .matching import untolerated_taint
from .results import PodSet, PodSetAssignment
from .terms import ISSUE_5129
from .topology import levels_of

if TYPE_CHECKING:
    from .cluster import Cluster

def _flavor_for(psa: PodSetAssignment, resource: str) -> str | None:
    return next((c.flavor for c in psa.flavors if resource in c.resources), None)


def _pool_matches_pod(pool: PoolFacts, pod: Obj) -> bool:
    """The pod's nodeSelector against the labels the pool is known to put on its nodes."""
    return all(pool.node_labels.get(k, v) == v for k, v in (pod.get("nodeSelector") or {}).items())


def _describe_pools(pools: Iterable[PoolFacts]) -> str:
    return ", ".join(f"{p.name} ({p.topology}: {p.slice_vms} VMs x {p.per_node} chips)" for p in pools) \
        or "no TPU node pool carries the flavor's labels"


def _sliced_by_controller(cluster: Cluster, cq: Obj, flavor: str) -> bool:
    """Whether GKE's slice controller forms the slices on `flavor`: an admission check of its controller
    applies to the flavor in the ClusterQueue (TPU7x dynamic slicing, model.dynamic_slicing)."""
    return any(((cluster.get("AdmissionCheck", check) or {}).get("spec") or {}).get("controllerName")
               == vocabulary.SLICE_CONTROLLER for check in applicable_checks(cq, [flavor]))


def _sub_slice_warnings(ps: PodSet, chips: int, shape: str, flavor: str, levels: Sequence[str]) -> list[str]:
    """A sub-slice is one partition of `shape` inside a sub-block, which the flavor's Topology must have as a
    level (the pool's sub_slicing), of one pod per VM: the slice controller's webhook asks that the pods' chips
    are exactly the shape's (xpk@250d4b3c slice/internal/webhooks/defaults.go, in its words)."""
    level = topologies.partition_level(shape)
    if level not in levels:
        return [f"pod set {ps.name}: {vocabulary.SLICE_TOPOLOGY_ANNOTATION} {shape} is a sub-slice, part of one "
                f"sub-block, and the Topology of flavor {flavor} has no level {level}: its pools do not allow "
                "sub-slicing (sub_slicing: true on the pool)"]
    asked, needed = ps.pods_per_replica * chips, catalog.topology_chips(shape)
    if asked != needed:
        return [f"pod set {ps.name}: {ps.pods_per_replica} pods x {chips} {vocabulary.TPU_RESOURCE}: the slice "
                f"controller refuses it: configuration results in {asked} TPUs requested, but must be exactly "
                f"{needed} TPUs (full utilization) ({vocabulary.SLICE_TOPOLOGY_ANNOTATION} {shape}: one pod per VM "
                f"of {needed // chips if chips else 0})"]
    return []


def _node_requirements(spec: Obj) -> list[tuple[str, str, list[str]]]:
    """(key, operator, values) of the pod's nodeSelector (as `In`) and its required node affinity terms."""
    terms = ((((spec.get("affinity") or {}).get("nodeAffinity") or {})
              .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or [])
    return [(k, "In", [v]) for k, v in (spec.get("nodeSelector") or {}).items()] + [
        (e.get("key", ""), e.get("operator", ""), list(e.get("values") or []))
        for t in terms for e in t.get("matchExpressions") or []]


def _unsliced_warnings(ps: PodSet) -> list[str]:
    """GKE's slice controller forms Slices only for the pod sets it deems relevant: a slice topology (the
    annotation, or a partition label the pod selects) and the TPU7x accelerator in the nodeSelector or a required
    node affinity; a workload with none of them it skips, leaving its admission check Pending, so the workload
    holds its quota and never starts (xpk@250d4b3c, branch slice-main, peer source:
    slice/internal/core/core.go `IsRelevantPodTemplateSpec`, `GetTPUTopology`, `GetTPUAccelerator`;
    slice/internal/controller/workload_controller.go `validateRelevantWorkload`, "Skipping workload")."""
    needs = _node_requirements(ps.spec)
    missing = []
    if not ps.annotations.get(vocabulary.SLICE_TOPOLOGY_ANNOTATION) and not any(
            k.startswith(topologies.PARTITION_PREFIX) and k.endswith(("-id", "-state")) for k, _, _ in needs):
        missing.append(f"no {vocabulary.SLICE_TOPOLOGY_ANNOTATION} annotation")
    if (vocabulary.TPU_ACCELERATOR_LABEL, "In", [dynamic_slicing.GENERATION]) not in needs:
        missing.append(f"no nodeSelector {vocabulary.TPU_ACCELERATOR_LABEL}: {dynamic_slicing.GENERATION}")
    if not missing:
        return []
    return [f"pod set {ps.name}: {' and '.join(missing)}: GKE's slice controller forms no Slice for it (a workload "
            "with no pod set naming both is skipped, its admission check left Pending: it holds its quota and never "
            "starts)"]


def _stitched_slice_warnings(ps: PodSet, chips: int, flavor: str, pools: Sequence[PoolFacts],
                             levels: Sequence[str]) -> list[str]:
    """A dynamically sliced pod set's replica is one slice of whole sub-blocks (one node pool each), which the
    slice controller stitches, of the shape its pods name (a Slice the controller's webhook accepts, of one pod
    per VM); or, where the pools allow sub-slicing, one partition of a sub-block."""
    unsliced = _unsliced_warnings(ps)
    if unsliced:
        return unsliced
    per_slice, sub_block = ps.pods_per_replica, max((p.slice_vms for p in pools), default=0)
    total = sum(p.slice_vms for p in pools)
    shape = ps.annotations.get(vocabulary.SLICE_TOPOLOGY_ANNOTATION)
    problem = dynamic_slicing.slice_shape_problem(shape) if shape else None
    if problem:
        return [f"pod set {ps.name}: {vocabulary.SLICE_TOPOLOGY_ANNOTATION} {problem}: the slice controller "
                "refuses the Slice"]
    if shape and dynamic_slicing.is_sub_slice(shape):
        return _sub_slice_warnings(ps, chips, shape, flavor, levels)
    if shape and catalog.topology_chips(shape) != per_slice * chips:
        return [f"pod set {ps.name}: {per_slice} pods x {chips} {vocabulary.TPU_RESOURCE} = {per_slice * chips} "
                f"chips per slice, but {vocabulary.SLICE_TOPOLOGY_ANNOTATION} {shape} has "
                f"{catalog.topology_chips(shape)}: one pod runs on each VM of the slice"]
    if sub_block and per_slice % sub_block == 0 and per_slice * ps.replicas <= total:
        return []
    return [f"pod set {ps.name}: {ps.replicas} slice(s) of {per_slice} pods: the slice controller forms slices of "
            f"whole {sub_block}-VM sub-blocks, and flavor {flavor} has {total} VMs in sub-blocks "
            f"({_describe_pools(pools)})"]


def tpu_slice_warnings(cluster: Cluster, cq: Obj, ps: PodSet, psa: PodSetAssignment) -> list[str]:
    """A multi-host TPU pod set runs one pod per VM of one slice, and a multi-host node pool is one
    slice: some pool behind the flavor must have per-VM chips equal to the pod's request, the pod's
    topology, and as many VMs as pods per replica; a JobSet needs one such pool per replica
    (exclusive placement on `cloud.google.com/gke-nodepool`). Where GKE's slice controller forms the
    slices, a slice is whole sub-blocks instead."""
    chips, flavor = ps.per_pod.get(vocabulary.TPU_RESOURCE, 0), _flavor_for(psa, vocabulary.TPU_RESOURCE)
    if not chips or flavor is None or not any(p.resource == vocabulary.TPU_RESOURCE for p in cluster.pools):
        return []  # no TPU node pools at all: Autopilot or auto-provisioning, nothing to judge against
    topology = (ps.spec.get("nodeSelector") or {}).get(vocabulary.TPU_TOPOLOGY_LABEL)
    pools = [p for p in cluster.pools_behind(flavor, vocabulary.TPU_RESOURCE) if _pool_matches_pod(p, ps.spec)]
    if not any(p.per_node >= chips for p in pools):
        return [f"pod set {ps.name}: a pod asks for {chips} {vocabulary.TPU_RESOURCE} but no node behind flavor "
                f"{flavor} has that many: {_describe_pools(pools)}"]
    multi = catalog.slice_vms(topology, chips) > 1 if topology else any(p.multi_host for p in pools)
    if not multi:
        return []
    if _sliced_by_controller(cluster, cq, flavor):
        levels = levels_of(cluster.objects, cluster.get("ResourceFlavor", flavor)) or []
        return _stitched_slice_warnings(ps, chips, flavor, pools, levels)
    per_slice = ps.pods_per_replica
    slices = [p for p in pools if p.multi_host and p.per_node == chips and p.slice_vms == per_slice]
    if not slices:
        return [f"pod set {ps.name}: {per_slice} pods x {chips} {vocabulary.TPU_RESOURCE} = {per_slice * chips} "
                f"chips per slice{f' in topology {topology}' if topology else ''} match no TPU slice behind "
                f"flavor {flavor}: {_describe_pools(pools)}"]
    if ps.replicas > len(slices):
        return [f"pod set {ps.name}: {ps.replicas} slices requested but flavor {flavor} has only {len(slices)} "
                f"node pool(s) of that shape ({', '.join(p.name for p in slices)}): one slice per node pool, "
                f"so {ps.replicas - len(slices)} replica(s) can never be placed"]
    return []


def accelerator_taint_warnings(cluster: Cluster, ps: PodSet, psa: PodSetAssignment) -> list[str]:
    """Kueue gives cpu and memory the first flavor with room, an accelerator's too: a pod set that requests
    no accelerator can get a TPU or GPU flavor when its ClusterQueue has no CPU flavor first. GKE taints
    those nodes with the accelerator's resource name, and the platform's placement policy lets team pods
    tolerate that taint only with a request for it: such pods never schedule, and hold the quota until
    waitForPodsReady evicts the workload."""
    out = []
    for choice in psa.flavors:
        pools = cluster.pools_behind(choice.flavor)
        taints = {p.resource or "": p.accelerator_taint for p in pools if p.accelerator_taint}
        if not pools or len(taints) != 1 or any(p.kind == PoolKind.CPU for p in pools):
            continue
        resource, taint = taints.popitem()
        if ps.per_pod.get(resource) or not untolerated_taint([taint], ps.spec.get("tolerations") or []):
            continue
        nodes = ", ".join(p.name for p in pools)
        out.append(f"pod set {ps.name} requests no {resource} but got flavor {choice.flavor}, whose nodes ({nodes}) "
                   f"carry GKE's {resource}=present:NoSchedule taint: its pods never schedule, and hold the quota "
                   "until waitForPodsReady evicts the workload; request the accelerator, or send accelerator-free "
                   "work to a queue with a CPU flavor")
    return out


def _provisioning_setup(cluster: Cluster, check: str) -> Obj | None:
    """The ProvisioningRequestConfig spec behind a provisioning-request check, or None if another controller."""
    ac = cluster.get("AdmissionCheck", check) or {}
    spec = ac.get("spec") or {}
    if spec.get("controllerName") != PROVISIONING_CONTROLLER:
        return None
    params = spec.get("parameters") or {}
    return (cluster.get("ProvisioningRequestConfig", params.get("name")) or {}).get("spec") or {}


def _nodes_needed(pods: int, per_pod: int, per_node: int) -> int | None:
    """Nodes for `pods` pods of `per_pod` GPUs each: whole pods per node, rounded up (equals
    ceil(pods x per_pod / per_node) when per_pod divides per_node); None if one pod exceeds a node."""
    fit = per_node // per_pod if per_pod else 0
    return math.ceil(pods / fit) if fit else None


def provisioning_warnings(cluster: Cluster, cq: Obj, ps: PodSet, psa: PodSetAssignment) -> list[str]:
    """A queued-provisioning ProvisioningRequest for more nodes than the node pool's maximum fails
    with "Max nodepool size reached", the check goes to Retry, the workload is evicted and requeued
    and fails again, until the retries run out (Kueue issue 5129). Kueue's quota check passes."""
    out: list[str] = []
    for check in applicable_checks(cq, [c.flavor for c in psa.flavors]):
        setup = _provisioning_setup(cluster, check)
        gpus = ps.per_pod.get(vocabulary.GPU_RESOURCE, 0)
        managed = (setup or {}).get("managedResources") or []
        if setup is None or not gpus or (managed and not set(managed) & set(ps.per_pod)):
            continue
        flavor = _flavor_for(psa, vocabulary.GPU_RESOURCE)
        queued = setup.get("provisioningClassName", QUEUED_PROVISIONING_CLASS) == QUEUED_PROVISIONING_CLASS
        pools = [p for p in cluster.pools_behind(flavor, vocabulary.GPU_RESOURCE)
                 if not queued or p.capacity == Capacity.QUEUED] if flavor else []
        out += _pool_size_warning(ps, check, flavor, gpus, pools)
    return out


def _fits_pool(ps: PodSet, gpus: int, pool: PoolFacts) -> bool:
    needed = _nodes_needed(ps.count, gpus, pool.per_node)
    return needed is not None and needed <= pool.nodes


def _pool_size_warning(ps: PodSet, check: str, flavor: str | None, gpus: int, pools: list[PoolFacts]) -> list[str]:
    """Warn when no candidate pool can grow to what the pod set needs (one pool serves the request)."""
    if not pools or any(_fits_pool(ps, gpus, p) for p in pools):
        return []
    biggest = max(pools, key=lambda p: (p.nodes, p.per_node))
    needed = _nodes_needed(ps.count, gpus, biggest.per_node)
    need = (f"needs {needed} nodes of node pool {biggest.name} ({biggest.per_node} {vocabulary.GPU_RESOURCE} "
            f"per node) but the pool's maximum size is {biggest.nodes}") if needed else \
        (f"asks for {gpus} {vocabulary.GPU_RESOURCE} per pod but nodes of node pool {biggest.name} "
         f"have {biggest.per_node}")
    return [f"pod set {ps.name} ({ps.count} pods x {gpus} {vocabulary.GPU_RESOURCE}, flavor {flavor}) {need}: "
            f"the ProvisioningRequest of admission check {check} fails with \"Max nodepool size reached\" "
            f"and the check is retried and fails again and again (Kueue issue 5129, {ISSUE_5129})"]


def physical_warnings(cluster: Cluster, cq: Obj, pod_sets: Sequence[PodSet],
                      assignments: Sequence[PodSetAssignment]) -> tuple[str, ...]:
    """Problems Kueue's quota check cannot see, per assigned pod set: they make it inadmissible too."""
    out: list[str] = []
    for ps, psa in zip(pod_sets, assignments, strict=True):
        out += (accelerator_taint_warnings(cluster, ps, psa) + landing_warnings(cluster, ps, psa)
                + tpu_slice_warnings(cluster, cq, ps, psa) + provisioning_warnings(cluster, cq, ps, psa))
    return tuple(out)
