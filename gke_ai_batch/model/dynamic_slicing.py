"""TPU7x dynamic slicing: what GKE requires of a pool whose sub-blocks the slice controller stitches into slices
when a job is admitted, instead of fixed slices of one shape.

GKE's pages ("About dynamic slicing", https://docs.cloud.google.com/kubernetes-engine/docs/concepts/dynamic-slicing;
"Schedule dynamic slices with Kueue and TAS", .../how-to/use-gke-dynamic-slicing; the Slice reference,
.../reference/crds/slice): capacity comes in sub-blocks, "a 16-node group of TPU VMs with a 4x4x4 topology", and
"a node pool maps directly to a sub-block"; the slice controller is a custom resource controller running in the
GKE control plane (so nothing is installed in the cluster for it), turned on with `gcloud container clusters
update --enable-slice-controller` (pulumi-gcp 10.2.0 Cluster.addonsConfig.sliceControllerConfig.enabled); a Kueue
admission check creates the Slice resources.
Requirements: a Standard cluster in the Rapid channel, 1.35.2-gke.1842000 or later for super-slicing (slices of
one or more whole sub-blocks) and 1.36.0-gke.3712000 for sub-slicing (smaller than 4x4x4); Ironwood (TPU7x);
Container-Optimized OS nodes; All Capacity mode reservations; JobSet v0.10.1 or later for multislice workloads
(every JobSet release this platform allows, model.releases, is later: 0.12.0). The pages read name no Kueue
minimum for the slice admission check; Cluster Toolkit and xpk install Kueue 0.17.1, older than any release here.

Incremental provisioning: the how-to's node pool command was out of reach of the searches made here. The pool is
declared as both of Google's tools declare it: xpk (src/xpk/core/nodepool.py `ensure_resource_policy_exists`,
recipes/Cluster_create_super-slicing.md: `gcloud beta compute resource-policies create workload-policy
--type=HIGH_THROUGHPUT --accelerator-topology=4x4x4 --accelerator-topology-mode=PROVISION_ONLY`, then per
sub-block `node-pools create --machine-type=tpu7x-standard-4t --num-nodes=16 --reservation-affinity=specific
--placement-policy=<policy>`) and Cluster Toolkit (examples/gke-tpu-7x, modules/compute/resource-policy): a
specific reservation and that policy, "The interconnected chips are connected on demand" (pulumi-gcp
ResourcePolicy.workloadPolicy.acceleratorTopologyMode).
"""
from __future__ import annotations

import re
from math import prod

from gke_ai_batch.model import catalog, topologies
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.pool_config import TpuPoolConfig
from gke_ai_batch.vocabulary import Capacity

GENERATION = "tpu7x"
SUB_BLOCK = "4x4x4"  # a node pool is one sub-block: 16 tpu7x-standard-4t VMs, 64 chips
TOPOLOGY_MODE = "PROVISION_ONLY"
SUPER_SLICING_MIN_VERSION = "1.35.2-gke.1842000"
SUB_SLICING_MIN_VERSION = "1.36.0-gke.3712000"
OS_IMAGE = "COS_CONTAINERD"  # GKE's Container-Optimized OS node image, the default the platform leaves in place
# The Slice reference's rules for a tpu7x slice's topology: "AxBxC", "Each dimension (A, B, and C) must be a multiple
# of four", "sorted in non-decreasing order", "The product of the dimensions (A*B*C) must not exceed 9,216".
SLICE_DIMENSION_STEP = 4
SLICE_MAX_CHIPS = catalog.TPU7X_MAX_CUBES * catalog.CUBE  # the Ironwood pod, as the catalog caps fixed slices
_SHAPE = re.compile(r"^[0-9]+x[0-9]+x[0-9]+$")


def check_pool(path: str, p: TpuPoolConfig) -> None:
    """A dynamically sliced pool is fixed TPU7x sub-blocks from an All Capacity mode reservation, and only such a
    pool has sub-blocks to sub-slice; one error at the first field that is not."""
    if not p.dynamic_slicing:
        if p.sub_slicing:
            raise ConfigError(f"{path}.sub_slicing", "sub-slicing splits the sub-blocks of a dynamically sliced pool "
                              "into smaller slices: set dynamic_slicing: true as well (TPU7x, topology 4x4x4, an All "
                              "Capacity mode reservation), or drop sub_slicing")
        return
    if p.generation != GENERATION:
        raise ConfigError(f"{path}.generation", f"{p.generation!r}: dynamic slicing is a TPU7x (Ironwood) feature "
                          "(GKE: \"Use Ironwood (TPU7x) version\"); other generations take fixed slices: drop "
                          "dynamic_slicing")
    if p.topology != SUB_BLOCK:
        raise ConfigError(f"{path}.topology", f"{p.topology!r}: a dynamically sliced pool is provisioned in sub-blocks "
                          f"of {SUB_BLOCK} (16 tpu7x-standard-4t VMs, 64 chips; GKE: \"a node pool maps directly to a "
                          "sub-block\"), and jobs ask for their slice's shape when they run: set topology "
                          f"{SUB_BLOCK} and slices to the number of sub-blocks")
    if p.autoscaling is not None:
        raise ConfigError(f"{path}.autoscaling", "a dynamically sliced pool keeps its sub-blocks up, 16 nodes each (as "
                          "xpk and Cluster Toolkit create them, --num-nodes=16): Kueue's Topology Aware Scheduling "
                          "places a job only on nodes that exist (pkg/cache/scheduler/tas_flavor_snapshot.go at "
                          "v0.19.2), so a sub-block scaled to zero never gets a job that would scale it up: drop "
                          "autoscaling")
    if p.capacity != Capacity.RESERVATION:
        raise ConfigError(f"{path}.capacity", f"{str(p.capacity)!r}: dynamic slicing runs on All Capacity mode "
                          "reservations only (GKE: \"Dynamic slicing features are available exclusively on TPUs "
                          "that use All Capacity mode\"): set capacity reservation and name the reservation")


def is_sub_slice(topology: str) -> bool:
    """A slice of part of one sub-block (the slice controller's SupportedSubsliceTopologies, model.topologies)."""
    return topology in topologies.SUB_SLICE_SHAPES


def slice_shape_problem(topology: str) -> str | None:
    """Why the slice controller's webhook refuses a Slice of `topology` (the Slice reference; for the sub-slice
    shapes, the controller's ParseTopologyV7 in xpk@250d4b3c slice/internal/topology/topology.go), or None."""
    if not _SHAPE.match(topology):
        return f"{topology!r} is not AxBxC"
    if is_sub_slice(topology):
        return None
    dims = [int(d) for d in topology.split("x")]
    if any(d % SLICE_DIMENSION_STEP or d == 0 for d in dims):
        return (f"{topology}: each dimension is a multiple of {SLICE_DIMENSION_STEP}, or the shape is a "
                f"sub-slice, {', '.join(topologies.SUB_SLICE_SHAPES)} (the slice controller: "
                "\"topology dimensions must be "
                f"divisible by 4: {topology}\")")
    if dims != sorted(dims):
        return f"{topology}: dimensions are in non-decreasing order ({'x'.join(map(str, sorted(dims)))})"
    if prod(dims) > SLICE_MAX_CHIPS:
        return f"{topology}: {prod(dims):,} chips, above the {SLICE_MAX_CHIPS:,} a slice may have"
    return None
