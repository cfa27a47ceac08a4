"""The node pool blocks of the stack config: the system pool, TPU, GPU and CPU pools, and Autopilot
accelerator flavors."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
)

from gke_ai_batch.model.catalog import GPU_TYPES, TPU_GENERATIONS
from gke_ai_batch.model.field_rules import (
    CLUSTER_NAME,
    DNS_LABEL,
    SECONDS,
    CpuCapacity,
    Model,
    refused_by,
    taint_key_problem,
    taint_value_problem,
    text,
    unknown_gpu,
)
from gke_ai_batch.model.machines import unknown_machine
from gke_ai_batch.vocabulary import Capacity


class SystemPoolConfig(Model):
    """The CPU pool that runs the controllers (Kueue, JobSet, GKE's own)."""

    name: str = text(DNS_LABEL, "system", max_length=63)
    """The node pool's name."""
    machine_type: Annotated[str, AfterValidator(refused_by(unknown_machine))] = "e2-standard-4"
    """A Compute Engine machine type: a predefined type of a series the catalog knows
    (gke_ai_batch/model/machine_series.py), or a custom type such as n2-custom-8-32768."""
    min_nodes: int = Field(1, ge=0)
    """Autoscaling minimum, per zone."""
    max_nodes: int = Field(3, ge=1)
    """Autoscaling maximum, per zone."""
    disk_size_gb: int = Field(100, ge=10)
    """Boot disk size in GB."""
    adopt: str | None = None
    """An existing node pool to import instead of creating one: its GKE name, projects/PROJECT/locations/
    LOCATION/clusters/CLUSTER/nodePools/NAME, of this stack's cluster and this pool's name."""


class Autoscaling(Model):
    """Cluster autoscaler limits: the pool grows for pods that wait and shrinks when nodes idle.
    A multi-host TPU slice scales as a unit, from 0 to all of its VMs."""

    min_nodes: int = Field(0, ge=0)
    """The fewest nodes (per zone, or over all zones with total: true)."""
    max_nodes: int | None = Field(None, ge=1)
    """The most nodes (per zone, or over all zones with total: true); a multi-host slice's default
    and only value is its VM count."""
    total: bool | None = None
    """true: the limits count nodes over all the pool's zones (GKE's total limits); false: per zone.
    Default: true for flex-start and queued-provisioning GPU pools (as GKE's commands for them), else
    false; a multi-host TPU slice always takes per-zone limits."""
    location_policy: Literal["BALANCED", "ANY"] | None = None
    """Where the autoscaler adds nodes: BALANCED spreads them over the zones, ANY takes whichever zone
    has capacity (default: ANY for flex-start and queued provisioning, which refuse BALANCED; else
    GKE's default, BALANCED)."""


class LocalSsd(Model):
    """Local SSDs on every node, as fast scratch space."""

    count: int = Field(ge=1)
    """How many local SSD disks each node gets; the machine type decides which counts are allowed."""
    use: Literal["ephemeral-storage", "raw-block"] = "ephemeral-storage"
    """ephemeral-storage: they back the node's emptyDir volumes and container storage; raw-block:
    NVMe block devices a workload formats and mounts itself."""


class Taint(Model):
    key: Annotated[str, AfterValidator(refused_by(taint_key_problem))]
    """The taint's key, a Kubernetes label key (Kubernetes validates taints with the label key rule)."""
    value: Annotated[str, AfterValidator(refused_by(taint_value_problem))] = ""
    """The taint's value, a Kubernetes label value."""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"
    """What happens to pods that do not tolerate it."""


class NodeSettings(Model):
    """What accelerator and worker pools set on their nodes besides the machine itself."""

    disk_type: str | None = None
    """The boot disk's type (pd-balanced, pd-ssd, hyperdisk-balanced...); unset: GKE's default for
    the machine type."""
    disk_size_gb: int | None = Field(None, ge=10)
    """The boot disk's size in GB; unset: GKE's default (100)."""
    local_ssd: LocalSsd | None = None
    """Local SSDs on each node, as ephemeral storage or raw block devices."""
    node_labels: dict[str, str] = {}
    """Extra Kubernetes labels on the nodes; workloads may select them (the flavor does not)."""
    taints: list[Taint] = []
    """Extra taints on the nodes; the pool's flavor tolerates them, so admitted workloads do too."""
    autoscaling: Autoscaling | None = None
    """Autoscaling limits; unset: a fixed size (flex-start and queued pools always autoscale)."""
    adopt: str | None = None
    """An existing node pool to import instead of creating one: its GKE name, projects/PROJECT/locations/
    LOCATION/clusters/CLUSTER/nodePools/NAME, of this stack's cluster and this pool's GKE name (a TPU pool of
    one slice: <name>-0)."""


class TpuPoolConfig(NodeSettings):
    """TPU slices of one shape: each slice is one node pool (a multislice pool is `slices` node pools)."""

    name: str = text(DNS_LABEL, max_length=36)
    """The pool's name; node pools are named <name>-<slice> when there are several slices."""
    generation: str = Field(json_schema_extra={"enum": list(TPU_GENERATIONS)})
    """TPU generation, from the catalog."""
    topology: str
    """Slice topology such as 2x4 or 4x4x4; the catalog lists each generation's shapes."""
    machine_type: str | None = None
    """A TPU machine type of the generation; unset: the 4-chip machine (the -8t for single-host shapes)."""
    slices: int = 1
    """Number of slices (node pools) of this shape; more than one makes a multislice pool. A
    single-host pool that autoscales is one node pool: set autoscaling.max_nodes instead."""
    capacity: Capacity = Capacity.ON_DEMAND
    """How the capacity is obtained: on-demand, spot, reservation, flex-start or queued-provisioning."""
    reservation: str | None = None
    """With capacity reservation: NAME (this project), projects/OWNER/reservations/NAME (shared), or a
    block of one (NAME/reservationBlocks/BLOCK[/reservationSubBlocks/SUB_BLOCK])."""
    zones: list[str] = []
    """The zone of the slices; unset: the platform's first zone."""
    # https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig (maxRunDuration); the 7 days:
    # the max-run-duration rule (gke_pool_rules.py)
    max_run_duration: str | None = text(SECONDS, None)
    """How long each node may run before GKE removes it, any capacity (GKE's NodeConfig.maxRunDuration: "the
    maximum duration for the nodes to exist"), at most 7 days; unset: no limit but the capacity's own (flex-start
    runs a node for up to seven days)."""
    flavor: str | None = text(DNS_LABEL, None, max_length=63)
    """The Kueue ResourceFlavor; pools of one shape may share one. Unset: the pool's name."""
    dynamic_slicing: bool = False
    """TPU7x dynamic slicing: the pool is `slices` sub-blocks (topology 4x4x4, one node pool each) of an All
    Capacity mode reservation, which GKE's slice controller stitches into the slice each admitted job asks for
    (Kueue Topology Aware Scheduling over the sub-blocks, and an admission check of the slice controller, which
    the cluster turns on). GKE Standard, Rapid channel, a pinned version of 1.35.2-gke.1842000 or later; a fixed
    size, no autoscaling (docs/scenarios/dynamic-slicing.md)."""
    sub_slicing: bool = False
    """With dynamic_slicing: a job may also take a sub-slice, part of one sub-block (2x2x1, 2x2x2, 2x2x4 or
    2x4x4: 1, 2, 4 or 8 of its VMs); the flavor's Topology gains the levels of those partitions. GKE
    1.36.0-gke.3712000 or later. Unset: slices are whole sub-blocks (docs/scenarios/dynamic-slicing.md)."""


class GpuSharing(Model):
    """Several containers on one physical GPU: time-sharing, or MIG partitions (A100, H100, H200, B200)."""

    strategy: Literal["time-sharing", "mig"]
    """time-sharing: containers take turns on a whole GPU; mig: the GPU is split into isolated partitions."""
    max_clients: int | None = Field(None, ge=2, le=48)
    """time-sharing: containers that share one GPU (2 to 48); each GPU counts as this many
    nvidia.com/gpu. With mig: containers that share each partition."""
    partition_size: str | None = None
    """mig: a partition size GKE's GPU device plugin takes for the GPU (A100 40GB 1g.5gb ... 7g.40gb, 80GB
    GPUs 1g.10gb ... 7g.80gb, H200 1g.18gb ... 7g.141gb, B200 1g.23gb ... 7g.180gb); each GPU counts as
    its partitions."""


class NodeNetwork(Model):
    """An existing VPC network and one of its subnets, in the cluster's region, for one extra NIC."""

    network: str = text(CLUSTER_NAME, max_length=63)
    """The VPC network's name (in the cluster's project)."""
    subnetwork: str = text(CLUSTER_NAME, max_length=63)
    """The subnet's name."""


class GpuDirectNetworks(Model):
    """Existing networks for GPUDirect, one per extra NIC in the order GKE's pages attach them: A3 High 4
    and A3 Mega 8 VPCs of one subnet each; A3 Ultra and A4 the gVNIC network, then the 8 subnets of one RoCE
    VPC; A4X the gVNIC network, then 4 RoCE subnets."""

    networks: list[NodeNetwork] = Field(min_length=1)
    """The networks, in the node pool's order."""


class GpuPoolConfig(NodeSettings):
    name: str = text(DNS_LABEL, max_length=36)
    """The node pool's name."""
    gpu: str = Field(json_schema_extra={"enum": list(GPU_TYPES)})
    """GKE's GPU name, from the catalog."""
    machine_type: str | None = None
    """A machine type that carries the GPU; unset: the catalog's default for it."""
    gpus_per_node: int | None = Field(None, ge=1)
    """GPUs on each VM, where the machine type leaves a choice (N1 with T4: 1, 2 or 4); unset: the
    catalog's count for the machine type."""
    capacity: Capacity = Capacity.ON_DEMAND
    """on-demand, spot, reservation, flex-start, or queued-provisioning (Dynamic Workload Scheduler)."""
    reservation: str | None = None
    """With capacity reservation: NAME (this project), projects/OWNER/reservations/NAME (shared), or a
    block of one (NAME/reservationBlocks/BLOCK[/reservationSubBlocks/SUB_BLOCK])."""
    nodes: int = Field(1, ge=0)
    """Fixed node count per zone, for a pool without autoscaling."""
    max_nodes: int | None = Field(None, ge=1)
    """Queued provisioning: the total autoscaling ceiling (the same as autoscaling.max_nodes)."""
    zones: list[str] = []
    """The pool's zones; unset: the platform's first zone (all of them for queued provisioning)."""
    driver_version: Literal["DEFAULT", "LATEST", "INSTALLATION_DISABLED"] = "LATEST"
    """The NVIDIA driver GKE installs; INSTALLATION_DISABLED: none, for users who install it themselves."""
    sharing: GpuSharing | None = None
    """GPU sharing: time-sharing or MIG partitions, which multiply the nvidia.com/gpu each node offers."""
    gvnic: bool = True
    """Google Virtual NIC, for the network bandwidth GPU machines are rated for."""
    gpudirect: Literal["auto", "create"] | GpuDirectNetworks | None = None
    """The extra networks GPUDirect moves multi-node NCCL traffic over (A3 High, A3 Mega, A3 Ultra, A4, A4X).
    create: the stack creates the VPCs and subnets GKE's pages create for the machine, with the GKE network
    objects pods name, on a cluster with multi-networking; {networks: [...]}: the same from existing
    networks; auto: GKE's accelerator network profile creates them (A3 Ultra, A4, A4X; GKE
    1.34.1-gke.1829001 or later). Unset: the pool has only its primary NIC, so multi-node NCCL traffic
    runs slower (the gpudirect-networks policy says so)."""
    # https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/NodeConfig (maxRunDuration); the 7 days:
    # the max-run-duration rule (gke_pool_rules.py)
    max_run_duration: str | None = text(SECONDS, None)
    """How long each node may run before GKE removes it, any capacity (GKE's NodeConfig.maxRunDuration: "the
    maximum duration for the nodes to exist"), at most 7 days; unset: no limit but the capacity's own (flex-start
    runs a node for up to seven days)."""
    flavor: str | None = text(DNS_LABEL, None, max_length=63)
    """The Kueue ResourceFlavor; pools of one shape may share one. Unset: the pool's name."""
    zone_flavors: bool = False
    """One flavor per zone (<flavor>-<zone>), so queues can hold quota per zone and Kueue picks a zone."""
    topology_aware: bool = False
    """Kueue's Topology Aware Scheduling on this pool's flavor (A3 Ultra and A4 pools): jobs ask for a level
    with kueue.x-k8s.io/podset-required-topology (or -preferred-topology). Best on reserved capacity. Kueue
    places such jobs only on nodes that exist, so the pool keeps at least one node unless it is
    queued-provisioning, whose ProvisioningRequest makes them."""
    topology_levels: list[str] | None = None
    """With topology_aware, the Topology's levels, in order; unset: the ones GKE labels A3 Ultra and A4 nodes
    with (cloud.google.com/gce-topology-block, -subblock, -host, then kubernetes.io/hostname)."""


class CpuPoolConfig(NodeSettings):
    """A CPU worker pool, for the cpu and memory of data loading, preprocessing and evaluation."""

    name: str = text(DNS_LABEL, max_length=40)
    """The node pool's name."""
    machine_type: Annotated[str, AfterValidator(refused_by(unknown_machine))]
    """A Compute Engine machine type: a predefined type of a series the catalog knows
    (gke_ai_batch/model/machine_series.py), such as n2-standard-8, or a custom type such as n2-custom-8-32768."""
    capacity: CpuCapacity = Capacity.ON_DEMAND
    """on-demand or spot."""
    nodes: int = Field(1, ge=0)
    """Fixed node count per zone, for a pool without autoscaling."""
    zones: list[str] = []
    """The pool's zones; unset: the platform's zones."""
    flavor: str | None = text(DNS_LABEL, None, max_length=63)
    """The Kueue ResourceFlavor; unset: the pool's name."""


class AutopilotTpu(Model):
    generation: str = Field(json_schema_extra={"enum": list(TPU_GENERATIONS)})
    """TPU generation, from the catalog."""
    topology: str
    """Slice topology; Autopilot creates a slice of this shape for each workload that selects it."""


class AutopilotFlavorConfig(Model):
    """An accelerator flavor on Autopilot: the node labels Autopilot provisions nodes from, which
    Kueue adds to the pods it admits under the flavor."""

    name: str = text(DNS_LABEL, max_length=63)
    """The Kueue ResourceFlavor's name; quotas name it."""
    tpu: AutopilotTpu | None = None
    """TPU slices of one generation and topology."""
    gpu: Annotated[str | None, AfterValidator(refused_by(unknown_gpu))] = Field(
        None, json_schema_extra={"enum": list(GPU_TYPES)})
    """GPUs of one type (GKE's name, from the catalog)."""
    spot: bool = False
    """Spot capacity (cloud.google.com/gke-spot)."""
    compute_class: str | None = text(DNS_LABEL, None, max_length=63)
    """An Autopilot compute class (cloud.google.com/compute-class), such as Accelerator."""
