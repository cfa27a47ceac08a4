"""Node pools derived from the stack config: one plan per GKE node pool, validated before any
resource exists. A multislice TPU pool becomes one node pool per slice, which JobSet's
exclusive-topology placement (one slice per `cloud.google.com/gke-nodepool`) relies on."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, TypedDict

from gke_ai_batch import vocabulary
from gke_ai_batch.model import catalog, dynamic_slicing, topologies
from gke_ai_batch.model.catalog import CatalogError
from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.gpudirect import AUTO_PROFILE, CREATE, DRA_DRIVER_LABEL, GPUDIRECT
from gke_ai_batch.model.labels import label_safe
from gke_ai_batch.model.pool_config import (
    Autoscaling,
    CpuPoolConfig,
    GpuPoolConfig,
    GpuSharing,
    LocalSsd,
    NodeSettings,
    SystemPoolConfig,
    TpuPoolConfig,
)
from gke_ai_batch.model.pool_facts import PoolCapacity
from gke_ai_batch.model.words import closest, plural
from gke_ai_batch.plan import adoption, gpudirect_networks
from gke_ai_batch.plan.gpudirect_networks import NodeNetwork
from gke_ai_batch.vocabulary import (
    FLAVOR_LABEL,
    FLEX_START_LABEL,
    QUEUED_TAINT,
    RESERVATION_LABEL,
    SCALES_FROM_ZERO,
    SPOT_LABEL,
    Capacity,
    ClusterMode,
    PoolKind,
)

GCP_NAME_MAX = 63


@dataclass(frozen=True)
class WorkloadPolicyPlan:
    """The HIGH_THROUGHPUT workload policy a TPU7x multi-host slice is placed by ("About Ironwood
    (TPU7x) in GKE": it replaces the topology flag). Regional, named in the node pool."""

    name: str
    region: str
    topology: str
    mode: str | None = None  # PROVISION_ONLY: a dynamically sliced sub-block's chips connect when a slice forms

    def named_for(self, cluster: str, pool: str) -> str:
        """Its name in a cluster known only to the engine (a component's cluster output)."""
        return workload_policy_name(cluster, pool, self.mode)


def workload_policy_name(cluster: str, pool: str, mode: str | None = None) -> str:
    """A Compute Engine name unique to the cluster's pool in the region. A dynamically sliced pool's policy
    (PROVISION_ONLY) has a name of its own, as xpk's super-slicing placement policy does (`-ss`): turning dynamic
    slicing on or off is then a new policy that the node pools name, which replaces them, instead of a policy
    replaced under the same name beneath node pools whose VMs keep the old connection mode."""
    return cluster_scoped_name(cluster, pool, "wp" if mode is None else "ds-wp")


def cluster_scoped_name(cluster: str, pool: str, suffix: str) -> str:
    """A Compute Engine name (at most 63 characters) for something of the cluster's pool: the cluster's
    name keeps two clusters of one project apart; a long one is cut and keeps a digest of the whole."""
    name = f"{cluster}-{pool}-{suffix}"
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
    kind: PoolKind
    machine_type: str
    zones: tuple[str, ...]
    capacity: Capacity
    node_count: int | None = None  # fixed size, per zone
    min_nodes: int | None = None  # autoscaling, per zone or (total) over all zones
    max_nodes: int | None = None
    total: bool = False  # the autoscaling limits count nodes over all zones
    location_policy: str | None = None  # BALANCED or ANY, with autoscaling
    accelerator: str | None = None
    topology: str | None = None
    multi_host: bool = False
    per_node: int = 0  # what Kueue counts per VM: chips, GPUs, or GPU shares with GPU sharing
    gpus: int = 0  # physical GPUs per VM
    resource: str | None = None
    reservation: str | None = None
    max_run_duration: str | None = None
    driver_version: str | None = None
    gvnic: bool = False
    gpudirect: str | None = None  # auto, create or existing (plan.gpudirect_networks)
    node_networks: tuple[NodeNetwork, ...] = ()  # the extra NICs' networks, created ones by suffix
    sharing: GpuSharing | None = None
    flavor: str | None = None
    zone_flavors: bool = False  # one flavor per zone
    adopt: str | None = None  # an existing node pool's GKE name, imported (plan.adoption)
    node_labels: dict[str, str] = field(default_factory=dict)  # what its flavor selects by (GKE's labels and ours)
    custom_labels: dict[str, str] = field(default_factory=dict)  # the labels we set on the nodes (ours, the user's)
    taints: tuple[dict[str, str], ...] = ()  # taints the nodes carry that workloads must tolerate
    custom_taints: tuple[dict[str, str], ...] = ()  # the part of taints we set
    disk_type: str | None = None
    disk_size_gb: int | None = None
    local_ssd: LocalSsd | None = None
    workload_policy: WorkloadPolicyPlan | None = None  # TPU7x multi-host slices
    topology_levels: tuple[str, ...] = ()  # Kueue TAS levels of its flavor (model.topologies)
    dynamic_slicing: bool = False  # a TPU7x sub-block the slice controller stitches into slices (model.dynamic_slicing)

    @property
    def flex_start(self) -> bool:
        return self.capacity == Capacity.FLEX_START

    @property
    def queued(self) -> bool:
        return self.capacity == Capacity.QUEUED

    @property
    def autoscaled(self) -> bool:
        return self.node_count is None

    @property
    def auto_repair(self) -> bool:
        """Off where a repair would recreate capacity that cannot come back (source pages 003, 004)."""
        return not (self.flex_start or self.queued)

    @property
    def zone_nodes(self) -> int:
        """Most nodes one zone can have: its fixed size, or the autoscaling maximum (a total one may all be there)."""
        return self.node_count if self.node_count is not None else (self.max_nodes or 0)

    @property
    def created_vpcs(self) -> tuple[gpudirect_networks.Vpc, ...]:
        """The VPCs the stack creates for the pool's GPUDirect NICs (none where it names existing ones)."""
        return gpudirect_networks.created_vpcs(GPUDIRECT[self.machine_type]) if self.gpudirect == CREATE else ()

    def scoped_name(self, cluster: str, suffix: str) -> str:
        """The Compute Engine name of something the stack creates for this pool of the cluster."""
        return cluster_scoped_name(cluster, self.name, suffix)

    def created_network_names(self, cluster: str) -> dict[str, str]:
        """The names of the networks and subnets the stack creates for the pool's GPUDirect NICs, by their suffix in
        the plan (components.gpudirect_networks creates them so named): what its pod network objects name where no
        network resource is declared (a Kubernetes-only stack)."""
        return {suffix: self.scoped_name(cluster, suffix)
                for v in self.created_vpcs for suffix in (v.suffix, *(s.suffix for s in v.subnets))}

    @property
    def nodes(self) -> int:
        """Most nodes the pool can have: what it provides at full size (an autoscaled pool's maximum)."""
        if self.node_count is not None:
            return self.node_count * len(self.zones)
        return (self.max_nodes or 0) * (1 if self.total else len(self.zones))

    @property
    def scratch_ssds(self) -> int:
        """Local SSDs given to the pods as ephemeral storage (none when they are raw block devices)."""
        return self.local_ssd.count if self.local_ssd and self.local_ssd.use == "ephemeral-storage" else 0


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
    platform zone (accelerators), or all of them (queued provisioning, where GKE picks the zone
    itself, and CPU workers)."""
    if zones:
        return tuple(zones)
    if not cfg.zones:
        raise ConfigError(path_of("zones"), "no zone given: list at least one zone of region "
                          f"{cfg.region!r} (node pools are zonal)")
    return tuple(cfg.zones) if every_zone else (cfg.zones[0],)


# A reservation in this project, a shared one, or a block or sub-block of one (GKE: "Consume reserved
# zonal resources"; AI Hypercomputer: reservationBlocks/BLOCK[/reservationSubBlocks/SUB]).
_RFC1035 = r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?"
RESERVATION_FORM = re.compile(rf"^(projects/[a-z][-a-z0-9]{{4,28}}[a-z0-9]/reservations/)?{_RFC1035}"
                              rf"(/reservationBlocks/{_RFC1035}(/reservationSubBlocks/{_RFC1035})?)?$")


# The words of a reservation's path, where each stands: after a project (an even number of parts) or not.
_PATH_WORDS = {True: ("projects", "reservations", "reservationBlocks", "reservationSubBlocks"),
               False: ("reservationBlocks", "reservationSubBlocks")}


def check_reservation(reservation: str, at: str) -> None:
    """A reservation named in a form GKE takes; a mistyped word of its path (`reservationBlock`) is named with
    the word it stands for, as a mistyped key is."""
    if RESERVATION_FORM.match(reservation):
        return
    parts = reservation.split("/")
    words = _PATH_WORDS[len(parts) % 2 == 0]
    slips = [f"{word!r} where it says {part!r}" for part, word in zip(parts[len(parts) % 2::2], words, strict=False)
             if part != word and closest(part, [word])]
    hint = f"did you mean {', '.join(slips)}? " if slips else ""
    raise ConfigError(at, f"{reservation!r}: {hint}name a reservation of this project (NAME), a shared one "
                      "(projects/OWNER_PROJECT/reservations/NAME), or a block of one "
                      "(NAME/reservationBlocks/BLOCK[/reservationSubBlocks/SUB_BLOCK]); each name is lowercase "
                      "letters, digits and '-', starting with a letter")


def _capacity_args(capacity: Capacity, reservation: str | None, path: str) -> None:
    if capacity == Capacity.RESERVATION and not reservation:
        raise ConfigError(f"{path}.reservation", "capacity 'reservation' needs the reservation's name")
    if reservation:
        check_reservation(reservation, f"{path}.reservation")
    if capacity != Capacity.RESERVATION and reservation:
        raise ConfigError(f"{path}.capacity", f"{capacity!r} with reservation {reservation!r}: a reservation "
                          "is only consumed with capacity 'reservation' (flex-start, queued provisioning "
                          "and spot capacity never come from a reservation)")


def _capacity_labels(capacity: Capacity, reservation: str | None, flavor: str) -> tuple[dict[str, str], dict[str, str]]:
    """(labels GKE sets, labels we set): the capacity's own labels and the flavor label. GKE's labels
    alone cannot tell an on-demand pool from a spot pool of the same shape (a flavor cannot select
    "no spot label"), so every accelerator pool carries the name of its flavor."""
    ours = {FLAVOR_LABEL: flavor}
    if capacity == Capacity.SPOT:
        return {SPOT_LABEL: "true"}, ours
    if capacity == Capacity.FLEX_START:
        return {FLEX_START_LABEL: "true"}, ours
    if capacity == Capacity.RESERVATION:
        assert reservation is not None  # _capacity_args refuses capacity 'reservation' without one
        return {}, {**ours, RESERVATION_LABEL: label_safe(reservation)}
    return {}, ours


class _Sizing(TypedDict, total=False):
    """A pool's size: fixed (node_count per zone) or autoscaling limits."""

    node_count: int
    min_nodes: int
    max_nodes: int
    total: bool
    location_policy: str


def _slice_limits(at: str, a: Autoscaling, top: int, unit: int) -> None:
    """A multi-host slice scales atomically between 0 and all its VMs, by per-zone limits (GKE checks
    the slice against max_node_count: "Maximum node count 0 is not a valid size of TPU pod slice")."""
    if top != unit or a.min_nodes not in (0, unit):
        field_name, wrong = ("max_nodes", top) if top != unit else ("min_nodes", a.min_nodes)
        raise ConfigError(f"{at}.{field_name}", f"{wrong}: a multi-host slice of {plural(unit, 'VM')} scales as "
                          f"a unit, from 0 to all {unit} VMs (min_nodes 0 or {unit}, max_nodes {unit}); GKE "
                          "never runs part of a slice")
    if a.total:
        raise ConfigError(f"{at}.total", "a multi-host slice takes per-zone limits (GKE sizes the slice by "
                          "max_node_count); drop total")


def _autoscaled(path: str, a: Autoscaling, capacity: Capacity, unit: int | None, total_default: bool) -> _Sizing:
    """Autoscaling limits from the config; `unit` is a multi-host slice's VM count, which it scales by
    as a whole (0 or all of them)."""
    at = f"{path}.autoscaling"
    top = a.max_nodes if a.max_nodes is not None else unit
    if top is None:
        raise ConfigError(f"{at}.max_nodes", "autoscaling needs max_nodes, the most nodes the pool may have")
    if unit is not None:
        _slice_limits(at, a, top, unit)
    if a.min_nodes > top:
        raise ConfigError(f"{at}.min_nodes", f"{a.min_nodes} is above max_nodes {top}")
    if capacity in SCALES_FROM_ZERO and a.min_nodes:
        raise ConfigError(f"{at}.min_nodes", f"{a.min_nodes}: a {capacity} pool scales from 0 (its nodes "
                          "exist only while admitted work runs); drop min_nodes")
    total = a.total if a.total is not None else total_default and unit is None
    # GKE's documented commands for flex-start and queued pools send --location-policy=ANY (flex-start's
    # default; BALANCED is refused, gke_rules); elsewhere GKE's default (BALANCED) applies unless set.
    policy = a.location_policy or ("ANY" if capacity in SCALES_FROM_ZERO else None)
    return _Sizing(min_nodes=a.min_nodes, max_nodes=top, total=total,
                   **({"location_policy": policy} if policy else {}))


def _sizing(path: str, autoscaling: Autoscaling | None, capacity: Capacity, fixed: int,
            unit: int | None = None, total_default: bool = False) -> _Sizing:
    """The pool's size: its autoscaling limits, else a fixed count. Flex-start and queued pools always
    autoscale from 0 (to a multi-host slice's VM count when no limits are given)."""
    if autoscaling is not None:
        return _autoscaled(path, autoscaling, capacity, unit, total_default)
    if capacity in SCALES_FROM_ZERO:
        if unit is None:
            raise ConfigError(f"{path}.autoscaling", f"a {capacity} pool autoscales from 0: give "
                              "autoscaling.max_nodes, the most nodes it may have")
        return _autoscaled(path, Autoscaling(), capacity, unit, total_default)
    return _Sizing(node_count=fixed)


def _taints(settings: NodeSettings) -> tuple[dict[str, str], ...]:
    return tuple({"key": t.key, "value": t.value, "effect": t.effect} for t in settings.taints)


def _settings(s: NodeSettings, gke_taints: tuple[dict[str, str], ...] = ()) -> dict[str, Any]:
    """The node settings a pool plan carries: disks, local SSDs, our taints besides GKE's."""
    ours = _taints(s)
    return dict(disk_type=s.disk_type, disk_size_gb=s.disk_size_gb, local_ssd=s.local_ssd,
                custom_taints=ours, taints=gke_taints + ours)


def _labels(s: NodeSettings, path: str, gke: dict[str, str], ours: dict[str, str]) -> tuple[dict[str, str],
                                                                                          dict[str, str]]:
    """(the labels the pool's flavor selects its nodes by, the labels we set on them): the user's extra
    labels are set on the nodes but stay out of the flavor, and may not replace GKE's or the platform's."""
    for key in s.node_labels:
        if key in gke or key in ours:
            raise ConfigError(f"{path}.node_labels.{key}", f"{key!r} is set by GKE or the platform on this pool "
                              "(the flavor selects by it); choose another key")
    return {**gke, **ours}, {**ours, **s.node_labels}


def _slicing_levels(p: TpuPoolConfig) -> tuple[str, ...]:
    """The Topology of a dynamically sliced pool's flavor: the sub-slice partitions' levels too where jobs may
    take part of a sub-block (model.topologies)."""
    if not p.dynamic_slicing:
        return ()
    return topologies.SUB_SLICING_LEVELS if p.sub_slicing else topologies.DYNAMIC_SLICING_LEVELS


def _tpu_labels(path: str, p: TpuPoolConfig, shape: catalog.TpuShape) -> tuple[dict[str, str], dict[str, str]]:
    """_labels of a TPU pool: GKE's accelerator and topology labels beside the capacity's. A dynamically sliced
    flavor selects the accelerator only, as Cluster Toolkit's and xpk's do: no GKE page read here says which
    gke-tpu-topology label such nodes carry (a slice's shape is set when it forms)."""
    gke_labels, ours = _capacity_labels(p.capacity, p.reservation, p.flavor or p.name)
    shape_label = {} if p.dynamic_slicing else {vocabulary.TPU_TOPOLOGY_LABEL: shape.topology}
    return _labels(p, path, {vocabulary.TPU_ACCELERATOR_LABEL: shape.accelerator, **shape_label, **gke_labels}, ours)


def tpu_pool_plans(cfg: PoolContext, path: str, p: TpuPoolConfig) -> list[PoolPlan]:
    """One PoolPlan per slice: a multi-host slice is one node pool, so `slices` node pools of one shape."""
    dynamic_slicing.check_pool(path, p)
    shape = tpu_shape_at(path, p.generation, p.topology, p.machine_type)
    if p.slices < 1:
        raise ConfigError(f"{path}.slices", f"{p.slices} slices: a pool needs at least 1 slice")
    _capacity_args(p.capacity, p.reservation, path)
    zones = _zones(cfg, p.zones, path)
    if shape.multi_host and len(zones) > 1:
        raise ConfigError(f"{path}.zones", f"{list(zones)}: a multi-host slice ({p.topology}, {shape.vms} VMs) "
                          "is one ICI-connected unit in a single zone; give exactly one zone")
    if not shape.multi_host and p.autoscaling is not None and p.slices > 1:
        raise ConfigError(f"{path}.slices", f"{p.slices}: an autoscaled single-host pool is one node pool of "
                          "up to autoscaling.max_nodes VMs; drop slices")
    labels, custom = _tpu_labels(path, p, shape)
    unit = shape.vms if shape.multi_host or p.autoscaling is None else None
    sizing = _sizing(path, p.autoscaling, p.capacity, shape.vms, unit)
    mode = dynamic_slicing.TOPOLOGY_MODE if p.dynamic_slicing else None
    policy = (WorkloadPolicyPlan(workload_policy_name(cfg.cluster, p.name, mode), cfg.region, shape.topology, mode)
              if shape.multi_host and shape.machine_type in catalog.WORKLOAD_POLICY_MACHINES else None)
    queued = (QUEUED_TAINT,) if p.capacity == Capacity.QUEUED else ()
    if p.adopt is not None and p.slices > 1:
        raise ConfigError(f"{path}.adopt", f"{p.adopt!r}: a pool of {p.slices} slices is {p.slices} node pools; "
                          "adopt names one: adopt a pool of one slice, and add slices in a later change")
    adopt = adoption.checked_pool(f"{path}.adopt", p.adopt, f"{p.name}-0")
    return [
        PoolPlan(
            name=f"{p.name}-{s}", source=p.name, path=path, kind=PoolKind.TPU, machine_type=shape.machine_type,
            zones=zones, capacity=p.capacity, accelerator=shape.accelerator,
            topology=shape.topology if shape.multi_host else None, multi_host=shape.multi_host,
            per_node=shape.chips_per_vm, resource=vocabulary.TPU_RESOURCE, reservation=p.reservation,
            max_run_duration=p.max_run_duration, flavor=p.flavor or p.name, node_labels=labels,
            custom_labels=custom, workload_policy=policy, adopt=adopt, dynamic_slicing=p.dynamic_slicing,
            topology_levels=_slicing_levels(p),
            **_settings(p, queued), **sizing,
        )
        for s in range(p.slices)
    ]


def tpu_shape_at(path: str, generation: str, topology: str, machine_type: str | None = None) -> catalog.TpuShape:
    """The catalog's slice shape, or a ConfigError at the field the catalog refused."""
    try:
        return catalog.tpu_shape(generation, topology, machine_type)
    except CatalogError as e:
        field_name = ("generation" if e.what == "TPU generation"
                      else "machine_type" if e.what.startswith("machine type") else "topology")
        raise ConfigError(f"{path}.{field_name}", str(e)) from None


def _gpu_autoscaling(path: str, p: GpuPoolConfig) -> Autoscaling | None:
    """The pool's autoscaling block; max_nodes alone (the older form) is a queued or flex-start
    pool's total ceiling."""
    if p.max_nodes is None:
        return p.autoscaling
    if p.autoscaling is not None:
        raise ConfigError(f"{path}.max_nodes", "give the ceiling once: autoscaling.max_nodes replaces max_nodes")
    if p.capacity not in SCALES_FROM_ZERO:
        raise ConfigError(f"{path}.max_nodes", f"{p.max_nodes}: max_nodes alone is the ceiling of a queued or "
                          "flex-start pool; for this pool set autoscaling: {min_nodes, max_nodes}")
    return Autoscaling(max_nodes=p.max_nodes, total=True)


def gpu_pool_plan(cfg: PoolContext, path: str, p: GpuPoolConfig) -> PoolPlan:
    gpu = _gpu_shape(path, p)
    _capacity_args(p.capacity, p.reservation, path)
    autoscaling = _gpu_autoscaling(path, p)
    if autoscaling is not None and "nodes" in p.model_fields_set:
        raise ConfigError(f"{path}.nodes", "nodes is a fixed size and autoscaling sets limits: give one of them")
    zones = _zones(cfg, p.zones, path, every_zone=p.capacity == Capacity.QUEUED)
    gke_labels, ours = _capacity_labels(p.capacity, p.reservation, p.flavor or p.name)
    labels, custom = _labels(p, path, {vocabulary.GPU_ACCELERATOR_LABEL: p.gpu, **gke_labels}, ours)
    queued = (QUEUED_TAINT,) if p.capacity == Capacity.QUEUED else ()
    direct, networks = gpudirect_networks.choice(path, p, gpu.machine_type, zones)
    levels = _topology_levels(path, p, gpu.machine_type)
    _tas_floor(path, p, autoscaling)
    if direct == AUTO_PROFILE:
        custom = {**custom, DRA_DRIVER_LABEL: "true"}
    return PoolPlan(
        name=p.name, source=p.name, path=path, kind=PoolKind.GPU, machine_type=gpu.machine_type, zones=zones,
        capacity=p.capacity, accelerator=p.gpu, per_node=gpu.resource_count, gpus=gpu.gpus,
        resource=vocabulary.GPU_RESOURCE, reservation=p.reservation, max_run_duration=p.max_run_duration,
        driver_version=p.driver_version, gvnic=p.gvnic, gpudirect=direct, node_networks=networks,
        sharing=p.sharing, flavor=p.flavor or p.name,
        zone_flavors=p.zone_flavors, node_labels=labels, custom_labels=custom, topology_levels=levels,
        adopt=adoption.checked_pool(f"{path}.adopt", p.adopt, p.name), **_settings(p, queued),
        # GKE's flex-start and queued GPU commands set total limits (--total-max-nodes).
        **_sizing(path, autoscaling, p.capacity, p.nodes, total_default=p.capacity in SCALES_FROM_ZERO),
    )


def _topology_levels(path: str, p: GpuPoolConfig, machine_type: str) -> tuple[str, ...]:
    """The pool's TAS levels: none, GKE's for the machine (true), or the ones given, checked as Kueue and
    GKE would have them (model.topologies)."""
    if not p.topology_aware:
        if p.topology_levels is not None:
            raise ConfigError(f"{path}.topology_levels", "levels without topology_aware: true name no Topology")
        return ()
    levels = tuple(p.topology_levels) if p.topology_levels is not None else \
        tuple(topologies.LEVELS_BY_MACHINE.get(machine_type, ()))
    problem = topologies.levels_problem(levels, machine_type)
    if problem:
        field = "topology_levels" if p.topology_levels is not None else "topology_aware"
        raise ConfigError(f"{path}.{field}", problem)
    return levels


def _tas_floor(path: str, p: GpuPoolConfig, autoscaling: Autoscaling | None) -> None:
    """A topology-aware pool that can reach zero nodes is dead once it does, unless a ProvisioningRequest check
    creates its nodes: Kueue's TAS places a pod set on nodes that exist, and waits for nodes only on a flavor with
    a ProvisioningRequest admission check (pkg/scheduler/flavorassigner/tas_flavorassigner.go at v0.19.2, the
    DelayedTopologyRequest of a first pass), which only a queued (DWS) pool's flavor has here."""
    if not p.topology_aware or p.capacity == Capacity.QUEUED:
        return
    if p.capacity in SCALES_FROM_ZERO:
        field, floor = "capacity", 0
    elif autoscaling is not None:
        field, floor = "autoscaling.min_nodes", autoscaling.min_nodes
    else:
        field, floor = "nodes", p.nodes
    if floor == 0:
        raise ConfigError(f"{path}.{field}", f"a topology-aware {p.capacity} pool can reach 0 nodes, and then no job "
                          "is admitted on it again: Kueue's Topology Aware Scheduling places a job only on nodes that "
                          "exist, and waits for new nodes only on a flavor with a ProvisioningRequest admission check "
                          "(pkg/scheduler/flavorassigner/tas_flavorassigner.go at v0.19.2), which only queued (DWS) "
                          "pools have: keep at least 1 node (autoscaling.min_nodes), use capacity "
                          f"{Capacity.QUEUED}, or drop topology_aware")


def _gpu_shape(path: str, p: GpuPoolConfig) -> catalog.GpuShape:
    try:
        return catalog.gpu_shape(p.gpu, p.machine_type, p.gpus_per_node, p.sharing)
    except CatalogError as e:
        raise ConfigError(f"{path}.{e.config_field or 'gpu'}", str(e)) from None


def cpu_pool_plan(cfg: PoolContext, path: str, p: CpuPoolConfig) -> PoolPlan:
    if p.autoscaling is not None and "nodes" in p.model_fields_set:
        raise ConfigError(f"{path}.nodes", "nodes is a fixed size and autoscaling sets limits: give one of them")
    zones = _zones(cfg, p.zones, path, every_zone=True)
    gke_labels, ours = _capacity_labels(p.capacity, None, p.flavor or p.name)
    labels, custom = _labels(p, path, gke_labels, ours)
    return PoolPlan(
        name=p.name, source=p.name, path=path, kind=PoolKind.CPU, machine_type=p.machine_type, zones=zones,
        capacity=p.capacity, flavor=p.flavor or p.name, node_labels=labels, custom_labels=custom,
        adopt=adoption.checked_pool(f"{path}.adopt", p.adopt, p.name),
        **_settings(p), **_sizing(path, p.autoscaling, p.capacity, p.nodes),
    )


def system_pool_plan(cfg: PoolContext, path: str, s: SystemPoolConfig) -> PoolPlan:
    if s.min_nodes > s.max_nodes:
        raise ConfigError(f"{path}.min_nodes", f"{s.min_nodes} is above max_nodes {s.max_nodes}")
    # GKE's taint for a pool kept for system components: GKE's own tolerate it, Kueue and JobSet are
    # given its toleration (plan.installs), and team pods may not tolerate it (plan.admission_policies).
    reserved = (dict(vocabulary.SYSTEM_POOL_TAINT),)
    return PoolPlan(name=s.name, source=s.name, path=path, kind=PoolKind.SYSTEM, machine_type=s.machine_type,
                    zones=cfg.zones, capacity=Capacity.ON_DEMAND, min_nodes=s.min_nodes, max_nodes=s.max_nodes,
                    disk_size_gb=s.disk_size_gb, taints=reserved, custom_taints=reserved,
                    adopt=adoption.checked_pool(f"{path}.adopt", s.adopt, s.name))


POOL_KEYS = ("tpu_pools", "gpu_pools", "cpu_pools")


def _autopilot_has_no_pools(cfg: PlatformConfig) -> None:
    for i, tpu in enumerate(cfg.tpu_pools):
        if tpu.dynamic_slicing:
            raise ConfigError(path_of("tpu_pools", i, "dynamic_slicing"), "dynamic slicing runs on GKE Standard "
                              "clusters only (GKE: \"Use a Standard cluster\"): its sub-blocks are node pools; set "
                              "cluster.mode: standard")
    for key in POOL_KEYS:
        if getattr(cfg, key):
            raise ConfigError(path_of(key), "an Autopilot cluster has no node pools: GKE creates nodes from each "
                              "workload's nodeSelector. Declare autopilot_flavors instead (the node labels "
                              "Autopilot provisions from), or set cluster.mode: standard")
    if "system_pool" in cfg.model_fields_set:
        raise ConfigError(path_of("system_pool"), "an Autopilot cluster has no node pools: GKE runs the "
                          "controllers on nodes it manages; drop system_pool, or set cluster.mode: standard")


def plan_pools(cfg: PlatformConfig) -> list[PoolPlan]:
    """All node pools of the platform; raises ConfigError on the first impossible one."""
    for i, z in enumerate(cfg.zones):
        if not z.startswith(cfg.region + "-"):
            raise ConfigError(path_of("zones", i), f"zone {z!r} is not in region {cfg.region!r}")
    if cfg.cluster.mode == ClusterMode.AUTOPILOT:
        _autopilot_has_no_pools(cfg)
        return []
    if cfg.autopilot_flavors:
        raise ConfigError(path_of("autopilot_flavors"), "autopilot_flavors are for Autopilot clusters; on "
                          "Standard, flavors come from the node pools: declare tpu_pools, gpu_pools or cpu_pools")
    ctx = PoolContext.of(cfg)
    plans = [system_pool_plan(ctx, path_of("system_pool"), cfg.system_pool)]
    for i, tpu in enumerate(cfg.tpu_pools):
        plans += tpu_pool_plans(ctx, path_of("tpu_pools", i), tpu)
    for i, gpu in enumerate(cfg.gpu_pools):
        plans.append(gpu_pool_plan(ctx, path_of("gpu_pools", i), gpu))
    for i, cpu in enumerate(cfg.cpu_pools):
        plans.append(cpu_pool_plan(ctx, path_of("cpu_pools", i), cpu))
    seen: dict[str, str] = {}
    for plan in plans:
        if plan.name in seen:
            raise ConfigError(f"{plan.path}.name", f"node pool name {plan.name!r} is already used by "
                              f"{seen[plan.name]}; pool names must be unique in the cluster")
        seen[plan.name] = plan.path
    return plans
