"""Node pools derived from the stack config: one plan per GKE node pool, validated before any
resource exists. A multislice TPU pool becomes one node pool per slice, which JobSet's
exclusive-topology placement (one slice per `cloud.google.com/gke-nodepool`) relies on."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from . import catalog
from .catalog import CatalogError
from .config import ClusterMode, GpuCapacity, GpuPoolConfig, PlatformConfig, TpuCapacity, TpuPoolConfig
from .errors import ConfigError, path_of

RESERVATION_LABEL = "gke-ai-batch.io/reservation"  # set by us: GKE documents no such label for Standard nodes
SPOT_LABEL = "cloud.google.com/gke-spot"
FLEX_START_LABEL = "cloud.google.com/gke-flex-start"  # source page 003: workloads select it
QUEUED_TAINT = {"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NoSchedule"}  # page 004


FIXED_CAPACITY = ("on-demand", "reservation")  # spot, flex-start and queued capacity can vanish


class PoolCapacity:
    """What a pool provides at full size, from its `nodes`, `per_node` and `capacity`."""

    @property
    def accelerators(self) -> int:
        return self.nodes * self.per_node

    @property
    def fixed_capacity(self) -> bool:
        """On-demand and reserved pools hold their accelerators; spot, flex-start and queued do not."""
        return self.capacity in FIXED_CAPACITY


@dataclass(frozen=True)
class PoolPlan(PoolCapacity):
    """Everything a GKE node pool needs, and what it provides to Kueue."""

    name: str  # GKE node pool name
    source: str  # config pool it comes from
    path: str  # its config path, for messages
    kind: str  # system | tpu | gpu
    machine_type: str
    zones: tuple[str, ...]
    capacity: str
    node_count: Optional[int] = None  # fixed size
    min_nodes: Optional[int] = None  # per-zone autoscaling
    max_nodes: Optional[int] = None
    total_max_nodes: Optional[int] = None  # queued provisioning: total, location policy ANY
    accelerator: Optional[str] = None
    topology: Optional[str] = None
    multi_host: bool = False
    per_node: int = 0  # chips or GPUs per VM
    resource: Optional[str] = None
    reservation: Optional[str] = None
    max_run_duration: Optional[str] = None
    driver_version: Optional[str] = None
    gvnic: bool = False
    flavor: Optional[str] = None
    node_labels: dict = field(default_factory=dict)  # labels the nodes carry (GKE's and ours)
    custom_labels: dict = field(default_factory=dict)  # the part of node_labels we set
    taints: tuple = ()  # taints GKE puts on the nodes that workloads must tolerate
    disk_size_gb: Optional[int] = None  # boot disk (system pool)
    workload_policy: Optional[str] = None  # TPU7x multi-host: the HIGH_THROUGHPUT policy that places it

    @property
    def flex_start(self) -> bool:
        return self.capacity == "flex-start"

    @property
    def queued(self) -> bool:
        return self.capacity == "queued-provisioning"

    @property
    def auto_repair(self) -> bool:
        """Off where a repair would recreate capacity that cannot come back (source pages 003, 004)."""
        return not (self.flex_start or self.queued)

    @property
    def nodes(self) -> int:
        """Most nodes the pool can have: what it provides at full size."""
        if self.node_count is not None:
            return self.node_count * len(self.zones)
        if self.total_max_nodes is not None:
            return self.total_max_nodes
        return (self.max_nodes or 0) * len(self.zones)


def _zones(cfg: PlatformConfig, zones: list[str], path: str) -> tuple[str, ...]:
    for i, z in enumerate(zones):
        if not z.startswith(cfg.region + "-"):
            raise ConfigError(f"{path}.zones[{i}]", f"zone {z!r} is not in region {cfg.region!r}; "
                              f"use a zone such as {cfg.region}-a")
    if zones:
        return tuple(zones)
    if not cfg.zones:
        raise ConfigError(path_of("zones"), "no zone given: list at least one zone of region "
                          f"{cfg.region!r} (accelerator pools are zonal)")
    return (cfg.zones[0],)


def _capacity_args(capacity: str, reservation: Optional[str], path: str) -> None:
    if capacity == "reservation" and not reservation:
        raise ConfigError(f"{path}.reservation", "capacity 'reservation' needs the reservation's name")
    if capacity != "reservation" and reservation:
        raise ConfigError(f"{path}.capacity", f"{capacity!r} with reservation {reservation!r}: a reservation "
                          "is only consumed with capacity 'reservation' (flex-start, queued provisioning "
                          "and spot capacity never come from a reservation)")


def _capacity_labels(capacity: str, reservation: Optional[str]) -> tuple[dict, dict]:
    """(labels GKE sets, labels we set) that tell this capacity's nodes apart."""
    if capacity == "spot":
        return {SPOT_LABEL: "true"}, {}
    if capacity == "flex-start":
        return {FLEX_START_LABEL: "true"}, {}
    if capacity == "reservation":
        return {}, {RESERVATION_LABEL: reservation}
    return {}, {}


def tpu_pool_plans(cfg: PlatformConfig, i: int, p: TpuPoolConfig) -> list[PoolPlan]:
    path = path_of("tpu_pools", i)
    try:
        shape = catalog.tpu_shape(p.generation, p.topology, p.machine_type)
    except CatalogError as e:
        field_name = ("generation" if e.what == "TPU generation"
                      else "machine_type" if e.what.startswith("machine type") else "topology")
        raise ConfigError(f"{path}.{field_name}", str(e)) from None
    if p.slices < 1:
        raise ConfigError(f"{path}.slices", f"{p.slices} slices: a pool needs at least 1 slice")
    _capacity_args(p.capacity.value, p.reservation, path)
    zones = _zones(cfg, p.zones, path)
    if shape.multi_host and len(zones) > 1:
        raise ConfigError(f"{path}.zones", f"{list(zones)}: a multi-host slice ({p.topology}, {shape.vms} VMs) "
                          "is one ICI-connected unit in a single zone; give exactly one zone")
    gke_labels, ours = _capacity_labels(p.capacity.value, p.reservation)
    labels = {catalog.TPU_ACCELERATOR_LABEL: shape.accelerator, catalog.TPU_TOPOLOGY_LABEL: shape.topology,
              **gke_labels, **ours}
    flex = p.capacity == TpuCapacity.FLEX_START
    sizing = dict(min_nodes=0, max_nodes=shape.vms) if flex else dict(node_count=shape.vms)
    return [
        PoolPlan(
            name=f"{p.name}-{s}", source=p.name, path=path, kind="tpu", machine_type=shape.machine_type,
            zones=zones, capacity=p.capacity.value, accelerator=shape.accelerator,
            topology=shape.topology if shape.multi_host else None, multi_host=shape.multi_host,
            per_node=shape.chips_per_vm, resource=catalog.TPU_RESOURCE, reservation=p.reservation,
            max_run_duration=p.max_run_duration, flavor=p.flavor or p.name, node_labels=labels,
            custom_labels=ours, **sizing,
        )
        for s in range(p.slices)
    ]


def gpu_pool_plan(cfg: PlatformConfig, i: int, p: GpuPoolConfig) -> PoolPlan:
    path = path_of("gpu_pools", i)
    try:
        machine_type, per_node = catalog.gpu_machine(p.gpu, p.machine_type)
    except CatalogError as e:
        raise ConfigError(f"{path}.{'gpu' if e.what == 'GPU type' else 'machine_type'}", str(e)) from None
    _capacity_args(p.capacity.value, p.reservation, path)
    zones = _zones(cfg, p.zones, path)
    gke_labels, ours = _capacity_labels(p.capacity.value, p.reservation)
    labels = {catalog.GPU_ACCELERATOR_LABEL: p.gpu, **gke_labels, **ours}
    if p.capacity == GpuCapacity.QUEUED:
        if p.max_nodes is None:
            raise ConfigError(f"{path}.max_nodes", "queued provisioning needs max_nodes, the total autoscaling "
                              "ceiling (the pool starts at 0 nodes; at most 1000 VMs per request)")
        sizing = dict(min_nodes=0, total_max_nodes=p.max_nodes)
        taints: tuple = (QUEUED_TAINT,)
    else:
        if p.max_nodes is not None:
            raise ConfigError(f"{path}.max_nodes", f"{p.max_nodes}: only queued-provisioning pools autoscale "
                              "here; set nodes (per zone) for a fixed-size pool")
        sizing, taints = dict(node_count=p.nodes), ()
    return PoolPlan(
        name=p.name, source=p.name, path=path, kind="gpu", machine_type=machine_type, zones=zones,
        capacity=p.capacity.value, accelerator=p.gpu, per_node=per_node, resource=catalog.GPU_RESOURCE,
        reservation=p.reservation, max_run_duration=p.max_run_duration, driver_version=p.driver_version,
        gvnic=p.gvnic, flavor=p.flavor or p.name, node_labels=labels, custom_labels=ours, taints=taints,
        **sizing,
    )


def plan_pools(cfg: PlatformConfig) -> list[PoolPlan]:
    """All node pools of the platform; raises ConfigError on the first impossible one."""
    for i, z in enumerate(cfg.zones):
        if not z.startswith(cfg.region + "-"):
            raise ConfigError(path_of("zones", i), f"zone {z!r} is not in region {cfg.region!r}")
    if cfg.cluster.mode == ClusterMode.AUTOPILOT:
        if cfg.tpu_pools or cfg.gpu_pools:
            key = "tpu_pools" if cfg.tpu_pools else "gpu_pools"
            raise ConfigError(path_of(key), "an Autopilot cluster has no node pools: GKE creates accelerator "
                              "nodes from each workload's nodeSelector. Remove the pools, or set "
                              "cluster.mode: standard")
        return []
    s = cfg.system_pool
    if s.min_nodes > s.max_nodes:
        raise ConfigError(path_of("system_pool", "min_nodes"), f"{s.min_nodes} is above max_nodes {s.max_nodes}")
    plans = [PoolPlan(name=s.name, source=s.name, path=path_of("system_pool"), kind="system",
                      machine_type=s.machine_type, zones=tuple(cfg.zones) or (), capacity="on-demand",
                      min_nodes=s.min_nodes, max_nodes=s.max_nodes, disk_size_gb=s.disk_size_gb)]
    for i, p in enumerate(cfg.tpu_pools):
        plans += tpu_pool_plans(cfg, i, p)
    for i, p in enumerate(cfg.gpu_pools):
        plans.append(gpu_pool_plan(cfg, i, p))
    seen: dict[str, str] = {}
    for plan in plans:
        if plan.name in seen:
            raise ConfigError(f"{plan.path}.name", f"node pool name {plan.name!r} is already used by "
                              f"{seen[plan.name]}; pool names must be unique in the cluster")
        seen[plan.name] = plan.path
    return plans
