"""Kueue's Topology Aware Scheduling on GKE: the topology levels GKE labels a machine's nodes with, and
Kueue's rules for a Topology (v0.19.2 CRD kueue.x-k8s.io_topologies.yaml).

GKE labels A4 and A3 Ultra nodes with where they sit: the reservation block, the sub-block within it, the
physical host, and (as every node) the hostname (GKE: "Schedule GKE workloads with Topology Aware
Scheduling", https://cloud.google.com/ai-hypercomputer/docs/workloads/schedule-gke-workloads-tas, whose
Topology lists them in this order). The same page warns that TAS works best with reserved capacity and
"might not work well" with Spot or Flex-start VMs. No GKE page documents such labels for other machines
here, so TAS is refused on them, but for TPU7x dynamic slicing (model.dynamic_slicing): a sub-block of 16
tpu7x-standard-4t nodes is one `cloud.google.com/gke-tpu-partition-4x4x4-id` domain, and with sub-slicing the
partitions inside it are domains too."""
from __future__ import annotations

from collections.abc import Sequence
from math import prod

from gke_ai_batch.model.catalog import SMALL_3D
from gke_ai_batch.model.words import or_list

BLOCK = "cloud.google.com/gce-topology-block"
SUBBLOCK = "cloud.google.com/gce-topology-subblock"
HOST = "cloud.google.com/gce-topology-host"
HOSTNAME = "kubernetes.io/hostname"


PARTITION_PREFIX = "cloud.google.com/gke-tpu-partition-"


def partition_level(shape: str) -> str:
    """The node label of the TPU7x partition of `shape` a node belongs to."""
    return f"{PARTITION_PREFIX}{shape}-id"


# The 4x4x4 partition (sub-block) a TPU7x node of a dynamically sliced pool belongs to. No GKE page read here
# shows the Topology's levels in full (the how-to's Kueue manifest was out of reach); Cluster Toolkit's
# kueue-configuration-dynamic-slicing.yaml.tftpl and xpk's kueue_super_slicing_topology.yaml.j2 both give block,
# this label, hostname.
PARTITION_4X4X4 = partition_level("4x4x4")
DYNAMIC_SLICING_LEVELS = (BLOCK, PARTITION_4X4X4, HOSTNAME)
# Sub-slicing (model.dynamic_slicing): each sub-block is split into nested partitions of SUB_SLICE_SHAPES, two of
# each shape in the one above it (4x4x4 > 2x4x4 > 2x2x4 > 2x2x2 > 2x2x1), each labelled partition_level(shape).
# No GKE page read here names these labels (the how-to's Kueue manifests were out of reach); the peer is GKE's
# slice controller as xpk publishes it (AI-Hypercomputer/xpk @250d4b3c, branch slice-main:
# slice/internal/topology/topology.go `RequiredSliceLevel`, the Topology of slice/test/e2e/subslice/jobset_test.go
# and the nodes of slice/hack/kind-cluster-subslice.yaml), whose levels are these, in this order.
SUB_SLICE_SHAPES = tuple(reversed(SMALL_3D))  # the 3D shapes below a cube, largest first: the nesting order
SUB_SLICING_LEVELS = (BLOCK, PARTITION_4X4X4, *map(partition_level, SUB_SLICE_SHAPES), HOSTNAME)
GPU_LEVELS = (BLOCK, SUBBLOCK, HOST, HOSTNAME)
LEVELS_BY_MACHINE = {"a3-ultragpu-8g": GPU_LEVELS, "a4-highgpu-8g": GPU_LEVELS}
MAX_LEVELS = 16  # the CRD's levels maxItems
SHORT_NAMES = {BLOCK: "block", SUBBLOCK: "subblock", HOST: "host", HOSTNAME: "hostname",
               PARTITION_4X4X4: "partition", **{partition_level(s): s for s in SUB_SLICE_SHAPES}}
# Levels whose domain holds a known number of nodes: a VM is a whole host on the GPU machines, so a host or
# hostname domain is one node; a 4x4x4 partition is one sub-block of 16 VMs (GKE: "About dynamic slicing": "a
# 16-node group of TPU VMs with a 4x4x4 topology"). A block or sub-block holds as many of a pool's nodes as its
# reservation put there, at most all of them. A sub-slice partition holds a VM per 4 of its chips (tpu7x-standard-4t),
# as the peer's e2e tests run one pod per VM: 8 in a 2x4x4, 4 in a 2x2x4, 2 in a 2x2x2, 1 in a 2x2x1.
DOMAIN_NODES = {HOST: 1, HOSTNAME: 1, PARTITION_4X4X4: 16,
                **{partition_level(s): prod(map(int, s.split("x"))) // 4 for s in SUB_SLICE_SHAPES}}


def levels_problem(levels: Sequence[str], machine_type: str) -> str | None:
    """Why `levels` cannot be a Topology for `machine_type`'s nodes, or None."""
    known = LEVELS_BY_MACHINE.get(machine_type)
    if known is None:
        return (f"{machine_type}: GKE documents topology labels for {or_list(sorted(LEVELS_BY_MACHINE))} "
                "nodes only, so Kueue would find no topology domains on these")
    if not levels:
        return "no levels: a Kueue Topology has at least one"
    if len(levels) > MAX_LEVELS:
        return f"{len(levels)} levels: a Kueue Topology has at most {MAX_LEVELS}"
    if len(set(levels)) != len(levels):
        return f"{list(levels)}: a level appears twice (Kueue: levels must be unique)"
    if HOSTNAME in levels and levels[-1] != HOSTNAME:
        return f"{HOSTNAME} must be the last level (Kueue: it can only be used at the lowest level)"
    unknown = [level for level in levels if level not in known]
    if unknown:
        return f"{or_list(unknown)}: not a label GKE puts on {machine_type} nodes; levels here: {', '.join(known)}"
    return None


def topology_name(levels: Sequence[str]) -> str:
    """`gke-block-subblock-host-hostname`: one Topology per distinct list of levels, named by them."""
    return "gke-" + "-".join(SHORT_NAMES.get(level, level.rsplit("/", 1)[-1]) for level in levels)
