"""Plain argument types of the public components, shared by several of them. They mirror the stack
config model (gke_ai_batch.model.config) field for field, so a component used on its own is
validated by the same model with the same errors; tests/test_components.py keeps them in step.

No `from __future__ import annotations` here: Pulumi's component analyzer reads these annotations
at run time to build the package schema for other languages."""
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

import pulumi


class NodePoolTarget(TypedDict):
    """Where a node pool goes and what it is checked against."""

    project: str
    """The Google Cloud project of the cluster."""
    region: str
    """The cluster's region: a pool's zones must be in it."""
    cluster: pulumi.Input[str]
    """The cluster the pool joins: GkeCluster's `name` output (so the pool waits for the cluster), or a name."""
    location: pulumi.Input[str]
    """The cluster's location: GkeCluster's `location` output."""
    zones: NotRequired[list[str]]
    """The pool's zones (default for TPU pools: none, so give one; queued-provisioning GPU pools span all)."""
    cluster_version: NotRequired[str]
    """The cluster's pinned GKE version, if any: checked against the version each capacity mode needs."""
    labels: NotRequired[dict[str, str]]
    """Resource labels of the pool's VMs (cost reports; the policy pack requires environment and owner)."""
    service_account: NotRequired[pulumi.Input[str]]
    """The nodes' IAM service account: GkeCluster's `node_service_account` output. Unset, GKE runs the
    nodes as the Compute Engine default account, which the policy pack refuses (node-service-account)."""


class AutoscalingArgs(TypedDict, total=False):
    """Cluster autoscaler limits (a multi-host slice: 0 or all of its VMs)."""

    min_nodes: int
    """The fewest nodes (default 0)."""
    max_nodes: int
    """The most nodes (a multi-host slice: its VM count)."""
    total: bool
    """Limits over all zones instead of per zone (default: flex-start and queued GPU pools)."""
    location_policy: str
    """BALANCED or ANY."""


class LocalSsdArgs(TypedDict):
    """Local SSDs on every node."""

    count: int
    """Disks per node; the machine type decides which counts are allowed."""
    use: NotRequired[str]
    """ephemeral-storage (default) or raw-block."""


class TaintArgs(TypedDict):
    """A node taint; the pool's flavor tolerates it."""

    key: str
    """The taint's key."""
    value: NotRequired[str]
    """The taint's value."""
    effect: NotRequired[str]
    """NoSchedule (default), PreferNoSchedule or NoExecute."""


class NodeSettingsArgs(TypedDict, total=False):
    """Node settings every accelerator and worker pool takes."""

    disk_type: str
    """Boot disk type (default: GKE's for the machine)."""
    disk_size_gb: int
    """Boot disk size in GB."""
    local_ssd: LocalSsdArgs
    """Local SSDs per node."""
    node_labels: dict[str, str]
    """Extra Kubernetes labels on the nodes."""
    taints: list[TaintArgs]
    """Extra node taints."""
    autoscaling: AutoscalingArgs
    """Autoscaling limits (default: a fixed size)."""
    adopt: str
    """An existing node pool to import: its GKE name, projects/PROJECT/locations/LOCATION/clusters/CLUSTER/
    nodePools/NAME."""


class TpuShape(NodeSettingsArgs):
    """A TPU slice shape and where its capacity comes from (stack config: one entry of tpu_pools)."""

    generation: str
    """TPU generation, from the catalog (gke_ai_batch/model/catalog.py; the stack file reference lists them)."""
    topology: str
    """Slice topology such as 2x4 or 4x4x4; the catalog lists each generation's shapes."""
    slices: NotRequired[int]
    """Number of slices of this shape, one node pool each (default 1)."""
    machine_type: NotRequired[str]
    """Machine type, when the generation has several for the topology."""
    capacity: NotRequired[str]
    """on-demand (default), spot, reservation, flex-start or queued-provisioning."""
    reservation: NotRequired[str]
    """The reservation to consume (capacity reservation): NAME, projects/P/reservations/NAME or a block of one."""
    max_run_duration: NotRequired[str]
    """Most a node may run, in seconds with an s (e.g. 604800s)."""
    flavor: NotRequired[str]
    """The Kueue ResourceFlavor name (default: the pool's name)."""


class TpuPoolSpec(TpuShape):
    """A named TPU pool, as the KueueLayer derives flavors from it."""

    name: str
    """The pool's name (its slices' node pools are <name>-0, <name>-1, ...)."""
    zones: NotRequired[list[str]]
    """The pool's zone (one for a multi-host slice)."""


class GpuSharingArgs(TypedDict):
    """GPU sharing: time-sharing or MIG partitions."""

    strategy: str
    """time-sharing or mig."""
    max_clients: NotRequired[int]
    """time-sharing: containers per GPU."""
    partition_size: NotRequired[str]
    """mig: the partition size, e.g. 1g.10gb."""


class GpuShape(NodeSettingsArgs):
    """A GPU pool shape and where its capacity comes from (stack config: one entry of gpu_pools)."""

    gpu: str
    """GKE's accelerator name, e.g. nvidia-h100-80gb or nvidia-l4."""
    machine_type: NotRequired[str]
    """Machine type, when the GPU comes on several."""
    gpus_per_node: NotRequired[int]
    """GPUs per VM, where the machine type leaves a choice (N1 with T4)."""
    capacity: NotRequired[str]
    """on-demand (default), spot, reservation, flex-start or queued-provisioning."""
    reservation: NotRequired[str]
    """The reservation to consume (capacity reservation)."""
    nodes: NotRequired[int]
    """Fixed size per zone (on-demand, spot, reservation; default 1)."""
    max_nodes: NotRequired[int]
    """Total autoscaling ceiling of a queued or flex-start pool (the same as autoscaling.max_nodes)."""
    driver_version: NotRequired[str]
    """GPU driver GKE installs: LATEST (default), DEFAULT or INSTALLATION_DISABLED."""
    sharing: NotRequired[GpuSharingArgs]
    """GPU sharing (time-sharing or MIG)."""
    zone_flavors: NotRequired[bool]
    """One flavor per zone."""
    topology_aware: NotRequired[bool]
    """Kueue Topology Aware Scheduling on the pool's flavor (A3 Ultra and A4 pools; default false)."""
    topology_levels: NotRequired[list[str]]
    """The Topology's levels, in order, with topology_aware (default: GKE's block, sub-block, host, hostname)."""
    gvnic: NotRequired[bool]
    """Google Virtual NIC (default on)."""
    gpudirect: NotRequired[str]
    """GPUDirect's extra networks: create (the pool creates them as GKE's pages do) or auto (GKE's
    accelerator network profile); from Python also the stack file's {networks: [...]} of existing ones."""
    max_run_duration: NotRequired[str]
    """Most a node may run, in seconds with an s."""
    flavor: NotRequired[str]
    """The Kueue ResourceFlavor name (default: the pool's name)."""


class GpuPoolSpec(GpuShape):
    """A named GPU pool, as the KueueLayer derives flavors from it."""

    name: str
    """The pool's name."""
    zones: NotRequired[list[str]]
    """The pool's zones."""


class CpuShape(NodeSettingsArgs):
    """A CPU worker pool (stack config: one entry of cpu_pools)."""

    machine_type: str
    """A Compute Engine machine type, e.g. n2-standard-32."""
    capacity: NotRequired[str]
    """on-demand (default) or spot."""
    nodes: NotRequired[int]
    """Fixed size per zone (default 1), for a pool without autoscaling."""
    flavor: NotRequired[str]
    """The Kueue ResourceFlavor name (default: the pool's name)."""


class CpuPoolSpec(CpuShape):
    """A named CPU pool, as the KueueLayer derives its flavor."""

    name: str
    """The pool's name."""
    zones: NotRequired[list[str]]
    """The pool's zones (default: the platform's)."""


def pool_spec(name: str, args: Mapping[str, Any], shape: type) -> dict[str, Any]:
    """A pool component's `spec`: its name, shape and zones, as KueueLayer derives flavors from them. A program
    passes `pool.spec` in KueueLayer's tpu_pools, gpu_pools or cpu_pools, so each shape is stated once, in the
    pool (stated twice, a layer's 4x4 against a pool's 2x4 selected nodes that did not exist)."""
    keys = set(shape.__annotations__) | {"zones"}
    return {"name": name, **{k: v for k, v in args.items() if k in keys}}
