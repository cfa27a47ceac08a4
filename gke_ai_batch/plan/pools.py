"""Node pools derived from the stack config: one plan per GKE node pool, validated before any
resource exists. A multislice TPU pool becomes one node pool per slice, which JobSet's
exclusive-topology placement (one slice per `cloud.google.com/gke-nodepool`) relies on."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import TypedDict

from gke_ai_batch import vocabulary
from gke_ai_batch.model import catalog
from gke_ai_batch.model.catalog import CatalogError
from gke_ai_batch.model.config import (
    GpuCapacity,
    GpuPoolConfig,
    PlatformConfig,
    SystemPoolConfig,
    TpuCapacity,
    TpuPoolConfig,
)
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.labels import label_safe
from gke_ai_batch.model.pool_facts import PoolCapacity
from gke_ai_batch.vocabulary import (
    FLAVOR_LABEL,
    FLEX_START_LABEL,
    QUEUED_TAINT,
    RESERVATION_LABEL,
    SPOT_LABEL,
    ClusterMode,
)

# Set by us: GKE documents reservation labels only as ComputeClass selectors. Its value is label-safe
# (a shared reservation's path has '/'), see labels.label_safe.


GCP_NAME_MAX = 63


@dataclass(frozen=True)
class WorkloadPolicyPlan:
    """The HIGH_THROUGHPUT workload policy a TPU7x multi-host slice is placed by ("About Ironwood
    (TPU7x) in GKE": it replaces the topology flag). Regional, named in the node pool."""

    name: str
    region: str
    topology: str


def workload_policy_name(cluster: str, pool: str) -> str:
    """A Compute Engine name (at most 63 characters) unique to the cluster's pool in the region."""
    name = f"{cluster}-{pool}-wp"
    if len(name) <= GCP_NAME_MAX:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:10]
    return f"{name[:GCP_NAME_MAX - 11].rstrip('-')}-{digest}"


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
    node_count: int | None = None  # fixed size
    min_nodes: int | None = None  # per-zone autoscaling
    max_nodes: int | None = None
    total_max_nodes: int | None = None  # queued provisioning: total, location policy ANY
    accelerator: str | None = None
    topology: str | None = None
    multi_host: bool = False
    per_node: int = 0  # chips or GPUs per VM
    resource: str | None = None
    reservation: str | None = None
    max_run_duration: str | None = None
    driver_version: str | None = None
    gvnic: bool = False
    flavor: str | None = None
    node_labels: dict[str, str] = field(default_factory=dict)  # labels the nodes carry (GKE's and ours)
    custom_labels: dict[str, str] = field(default_factory=dict)  # the part of node_labels we set
    taints: tuple[dict[str, str], ...] = ()  # taints GKE puts on the nodes that workloads must tolerate
    disk_size_gb: int | None = None  # boot disk (system pool)
    workload_policy: WorkloadPolicyPlan | None = None  # TPU7x multi-host slices

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


@dataclass(frozen=True)
class PoolContext:
    """What a pool is planned against: the region, the platform's zones (the default for pools that
    name none) and the cluster's name (which names a TPU7x slice's workload policy)."""

    region: str
    zones: tuple[str, ...]
    cluster: str

    @classmethod
    def of(cls, cfg: PlatformConfig) -> PoolContext:
        return cls(cfg.region, tuple(cfg.zones), cfg.cluster.name)


def _zones(cfg: PoolContext, zones: list[str], path: str, every_zone: bool = False) -> tuple[str, ...]:
    """The pool's zones (checked against the region by the pool-zones rule); by default the first
    platform zone, or all of them where GKE picks the zone itself (queued provisioning, location
    policy ANY)."""
    if zones:
        return tuple(zones)
    if not cfg.zones:
        raise ConfigError(path_of("zones"), "no zone given: list at least one zone of region "
                          f"{cfg.region!r} (accelerator pools are zonal)")
    return tuple(cfg.zones) if every_zone else (cfg.zones[0],)


# A reservation in this project, a shared one, or a block or sub-block of one (GKE: "Consume reserved
# zonal resources"; AI Hypercomputer: reservationBlocks/BLOCK[/reservationSubBlocks/SUB]).
_RFC1035 = r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?"
RESERVATION_FORM = re.compile(rf"^(projects/[a-z][-a-z0-9]{{4,28}}[a-z0-9]/reservations/)?{_RFC1035}"
                              rf"(/reservationBlocks/{_RFC1035}(/reservationSubBlocks/{_RFC1035})?)?$")


def _capacity_args(capacity: str, reservation: str | None, path: str) -> None:
    if capacity == "reservation" and not reservation:
        raise ConfigError(f"{path}.reservation", "capacity 'reservation' needs the reservation's name")
    if reservation and not RESERVATION_FORM.match(reservation):
        raise ConfigError(f"{path}.reservation", f"{reservation!r}: name a reservation of this project (NAME), a "
                          "shared one (projects/OWNER_PROJECT/reservations/NAME), or a block of one "
                          "(NAME/reservationBlocks/BLOCK[/reservationSubBlocks/SUB_BLOCK])")
    if capacity != "reservation" and reservation:
        raise ConfigError(f"{path}.capacity", f"{capacity!r} with reservation {reservation!r}: a reservation "
                          "is only consumed with capacity 'reservation' (flex-start, queued provisioning "
                          "and spot capacity never come from a reservation)")


def _capacity_labels(capacity: str, reservation: str | None, flavor: str) -> tuple[dict[str, str], dict[str, str]]:
    """(labels GKE sets, labels we set): the capacity's own labels and the flavor label. GKE's labels
    alone cannot tell an on-demand pool from a spot pool of the same shape (a flavor cannot select
    "no spot label"), so every accelerator pool carries the name of its flavor."""
    ours = {FLAVOR_LABEL: flavor}
    if capacity == "spot":
        return {SPOT_LABEL: "true"}, ours
    if capacity == "flex-start":
        return {FLEX_START_LABEL: "true"}, ours
    if capacity == "reservation":
        assert reservation is not None  # _capacity_args refuses capacity 'reservation' without one
        return {}, {**ours, RESERVATION_LABEL: label_safe(reservation)}
    return {}, ours


class _Sizing(TypedDict, total=False):
    """A pool's size: fixed (node_count per zone) or autoscaling (min_nodes and max_nodes per zone,
    or total_max_nodes)."""

    node_count: int
    min_nodes: int
    max_nodes: int
    total_max_nodes: int


def tpu_pool_plans(cfg: PoolContext, path: str, p: TpuPoolConfig) -> list[PoolPlan]:
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
    gke_labels, ours = _capacity_labels(p.capacity.value, p.reservation, p.flavor or p.name)
    labels = {vocabulary.TPU_ACCELERATOR_LABEL: shape.accelerator, vocabulary.TPU_TOPOLOGY_LABEL: shape.topology,
              **gke_labels, **ours}
    flex = p.capacity == TpuCapacity.FLEX_START
    sizing: _Sizing = dict(min_nodes=0, max_nodes=shape.vms) if flex else dict(node_count=shape.vms)
    policy = (WorkloadPolicyPlan(workload_policy_name(cfg.cluster, p.name), cfg.region, shape.topology)
              if shape.multi_host and shape.machine_type in catalog.WORKLOAD_POLICY_MACHINES else None)
    return [
        PoolPlan(
            name=f"{p.name}-{s}", source=p.name, path=path, kind="tpu", machine_type=shape.machine_type,
            zones=zones, capacity=p.capacity.value, accelerator=shape.accelerator,
            topology=shape.topology if shape.multi_host else None, multi_host=shape.multi_host,
            per_node=shape.chips_per_vm, resource=vocabulary.TPU_RESOURCE, reservation=p.reservation,
            max_run_duration=p.max_run_duration, flavor=p.flavor or p.name, node_labels=labels,
            custom_labels=ours, workload_policy=policy, **sizing,
        )
        for s in range(p.slices)
    ]


def gpu_pool_plan(cfg: PoolContext, path: str, p: GpuPoolConfig) -> PoolPlan:
    try:
        machine_type, per_node = catalog.gpu_machine(p.gpu, p.machine_type)
    except CatalogError as e:
        raise ConfigError(f"{path}.{'gpu' if e.what == 'GPU type' else 'machine_type'}", str(e)) from None
    _capacity_args(p.capacity.value, p.reservation, path)
    zones = _zones(cfg, p.zones, path, every_zone=p.capacity == GpuCapacity.QUEUED)
    gke_labels, ours = _capacity_labels(p.capacity.value, p.reservation, p.flavor or p.name)
    labels = {vocabulary.GPU_ACCELERATOR_LABEL: p.gpu, **gke_labels, **ours}
    if p.capacity == GpuCapacity.QUEUED:
        if p.max_nodes is None:
            raise ConfigError(f"{path}.max_nodes", "queued provisioning needs max_nodes, the total autoscaling "
                              "ceiling (the pool starts at 0 nodes; at most 1000 VMs per request)")
        sizing: _Sizing = dict(min_nodes=0, total_max_nodes=p.max_nodes)
        taints: tuple[dict[str, str], ...] = (QUEUED_TAINT,)
    else:
        if p.max_nodes is not None:
            raise ConfigError(f"{path}.max_nodes", f"{p.max_nodes}: only queued-provisioning pools autoscale "
                              "here; set nodes (per zone) for a fixed-size pool")
        sizing, taints = dict(node_count=p.nodes), ()
    return PoolPlan(
        name=p.name, source=p.name, path=path, kind="gpu", machine_type=machine_type, zones=zones,
        capacity=p.capacity.value, accelerator=p.gpu, per_node=per_node, resource=vocabulary.GPU_RESOURCE,
        reservation=p.reservation, max_run_duration=p.max_run_duration, driver_version=p.driver_version,
        gvnic=p.gvnic, flavor=p.flavor or p.name, node_labels=labels, custom_labels=ours, taints=taints,
        **sizing,
    )


def system_pool_plan(cfg: PoolContext, path: str, s: SystemPoolConfig) -> PoolPlan:
    if s.min_nodes > s.max_nodes:
        raise ConfigError(f"{path}.min_nodes", f"{s.min_nodes} is above max_nodes {s.max_nodes}")
    return PoolPlan(name=s.name, source=s.name, path=path, kind="system", machine_type=s.machine_type,
                    zones=cfg.zones, capacity="on-demand", min_nodes=s.min_nodes, max_nodes=s.max_nodes,
                    disk_size_gb=s.disk_size_gb)


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
    ctx = PoolContext.of(cfg)
    plans = [system_pool_plan(ctx, path_of("system_pool"), cfg.system_pool)]
    for i, tpu in enumerate(cfg.tpu_pools):
        plans += tpu_pool_plans(ctx, path_of("tpu_pools", i), tpu)
    for i, gpu in enumerate(cfg.gpu_pools):
        plans.append(gpu_pool_plan(ctx, path_of("gpu_pools", i), gpu))
    seen: dict[str, str] = {}
    for plan in plans:
        if plan.name in seen:
            raise ConfigError(f"{plan.path}.name", f"node pool name {plan.name!r} is already used by "
                              f"{seen[plan.name]}; pool names must be unique in the cluster")
        seen[plan.name] = plan.path
    return plans
