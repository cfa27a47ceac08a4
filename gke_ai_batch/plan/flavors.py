"""Kueue's ResourceFlavors, derived from what selects nodes: the pools (one flavor per pool flavor name, or per
zone of it), the compute classes, Autopilot's accelerator labels, a fleet manager's workers, and the default
flavor. A flavor carries what a quota on it may name and how its cpu, memory and scratch follow its accelerator."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gke_ai_batch import vocabulary
from gke_ai_batch.model import catalog
from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.disks import scratch_bytes
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.machines import allocatable
from gke_ai_batch.model.team_config import QueueSpec
from gke_ai_batch.model.topologies import topology_name
from gke_ai_batch.plan.autopilot import autopilot_node_labels, check_autopilot_tpu_version
from gke_ai_batch.plan.compute_classes import ComputeClassPlan
from gke_ai_batch.plan.pools import PoolPlan
from gke_ai_batch.vocabulary import (
    COMPUTE_CLASS_LABEL,
    FLAVOR_LABEL,
    KUEUE_API,
    NODES_ON_WORKER_ANNOTATION,
    WORKER_HOLDS_ANNOTATION,
    ZONE_LABEL,
    Capacity,
    ClusterMode,
    Manifest,
    PoolKind,
)

SCRATCH = "ephemeral-storage"
BASE_RESOURCES = ("cpu", "memory", SCRATCH)


@dataclass(frozen=True)
class FlavorPlan:
    name: str
    node_labels: dict[str, str]
    tolerations: tuple[dict[str, str], ...] = ()
    pools: tuple[PoolPlan, ...] = ()
    resources: tuple[str, ...] = BASE_RESOURCES  # what a quota on this flavor may name
    queued: bool = False
    # cpu and memory a node offers per accelerator unit (chip, GPU or GPU share): a team's cpu and
    # memory quota on an accelerator flavor follows its accelerator quota. None: unknown machine.
    host_share: dict[str, Decimal] | None = None
    # bytes of local SSD scratch (ephemeral storage) its nodes offer per core of allocatable cpu: a team's
    # ephemeral-storage quota on the flavor follows its cpu quota. None: its nodes have no local SSD scratch.
    scratch_share: Decimal | None = None
    topology: tuple[str, ...] = ()  # Kueue TAS levels: the flavor names the Topology of them
    dynamic_slicing: bool = False  # TPU7x sub-blocks: GKE's slice controller checks every workload admitted on it
    capacity: Capacity | None = None  # a fleet manager's flavor: its worker's pools' capacity (plan.fleet)
    worker: str | None = None  # a fleet manager's flavor: the worker whose nodes it names
    worker_holds: str | None = None  # and what they hold (JSON: capacity mode, resource -> [full size, guaranteed])
    compute_class: ComputeClassPlan | None = None  # a compute class's flavor: the class whose nodes it selects

    @property
    def topology_name(self) -> str | None:
        return topology_name(self.topology) if self.topology else None

    @property
    def accelerator_resource(self) -> str | None:
        if self.compute_class is not None:
            return self.compute_class.resource
        return self.pools[0].resource if self.pools else None

    def manifest(self) -> Manifest:
        spec: dict[str, Any] = {}
        if self.node_labels:
            spec["nodeLabels"] = dict(self.node_labels)
        if self.tolerations:
            spec["tolerations"] = [dict(t) for t in self.tolerations]
        if self.topology_name:
            spec["topologyName"] = self.topology_name
        meta: dict[str, Any] = {"name": self.name}
        if self.worker:
            meta["annotations"] = {NODES_ON_WORKER_ANNOTATION: self.worker,
                                   **({WORKER_HOLDS_ANNOTATION: self.worker_holds} if self.worker_holds else {})}
        return {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": meta, "spec": spec}



def host_share(machine_type: str | None, per_node: int) -> dict[str, Decimal] | None:
    """Allocatable cpu (cores) and memory (bytes) of one node per accelerator unit on it."""
    node = allocatable(machine_type) if machine_type else None
    if node is None or per_node < 1:
        return None
    return {r: v / per_node for r, v in node.items()}


def _pool_flavor(name: str, members: list[PoolPlan], zone: str | None = None) -> FlavorPlan:
    """A flavor selecting its pools' nodes (in one zone, for per-zone flavors) and tolerating their taints."""
    first = members[0]
    labels = {**first.node_labels, **({ZONE_LABEL: zone} if zone else {})}
    return FlavorPlan(
        name=name, node_labels=labels,
        tolerations=tuple({"key": t["key"], "operator": "Equal", "value": t["value"], "effect": t["effect"]}
                          for t in first.taints),
        pools=tuple(members), resources=BASE_RESOURCES + ((first.resource,) if first.resource else ()),
        queued=first.queued, host_share=host_share(first.machine_type, first.per_node) if first.resource else None,
        scratch_share=scratch_share(first), topology=first.topology_levels, dynamic_slicing=first.dynamic_slicing)


def scratch_share(pool: PoolPlan) -> Decimal | None:
    """Bytes of local SSD scratch per core of allocatable cpu on the pool's nodes, where its local SSDs are the
    pods' ephemeral storage (model.disks.scratch_bytes); None for any other pool."""
    node = allocatable(pool.machine_type)
    if not pool.scratch_ssds or node is None:
        return None
    return scratch_bytes(pool.scratch_ssds) / node["cpu"]


def _same_nodes(name: str, members: list[PoolPlan]) -> None:
    """Pools sharing a flavor select the same nodes and name the same Topology, which Kueue gives one flavor."""
    first = members[0]
    for other in members[1:]:
        if other.topology_levels != first.topology_levels:
            theirs, ours = (topology_name(p.topology_levels) if p.topology_levels else "none" for p in (first, other))
            raise ConfigError(f"{other.path}.flavor", f"flavor {name!r} is already used by {first.path}, whose "
                              f"flavor names the Topology {theirs}; this pool's would name {ours} (a flavor names "
                              "one Topology, which dynamic_slicing, sub_slicing and topology_levels decide): name "
                              "another flavor")
        if (other.node_labels, other.taints, other.machine_type, other.per_node, other.zone_flavors,
                other.topology_levels) != (first.node_labels, first.taints, first.machine_type, first.per_node,
                                           first.zone_flavors, first.topology_levels):
            raise ConfigError(f"{other.path}.flavor", f"flavor {name!r} is already used by {first.path} "
                              f"with different nodes ({first.machine_type}, {first.capacity}); a flavor "
                              "selects one machine type, shape and capacity: name another flavor")


def pool_flavors(pools: list[PoolPlan]) -> dict[str, FlavorPlan]:
    """One flavor per pool flavor name, or per zone of it (<flavor>-<zone>) where the pools ask."""
    by_name: dict[str, list[PoolPlan]] = {}
    for p in pools:
        if p.kind != PoolKind.SYSTEM:
            assert p.flavor is not None  # every accelerator and worker pool names its flavor
            by_name.setdefault(p.flavor, []).append(p)
    flavors: dict[str, FlavorPlan] = {}
    for name, members in by_name.items():
        _same_nodes(name, members)
        made = ([_pool_flavor(name, members)] if not members[0].zone_flavors else
                [_pool_flavor(f"{name}-{z}", [p for p in members if z in p.zones], z)
                 for z in dict.fromkeys(z for p in members for z in p.zones)])
        for flavor in made:
            _unique_flavor(flavor, flavors)
            flavors[flavor.name] = flavor
    return flavors


def _unique_flavor(flavor: FlavorPlan, flavors: dict[str, FlavorPlan]) -> None:
    """A per-zone flavor (<flavor>-<zone>) may meet another pool's flavor of that name: one would replace
    the other's ResourceFlavor."""
    if flavor.name in flavors:
        pool = flavor.pools[0]
        other = flavors[flavor.name].pools[0]
        raise ConfigError(f"{pool.path}.flavor", f"flavor {flavor.name!r} is made twice, by {other.path} and "
                          f"{pool.path} (a per-zone flavor is <flavor>-<zone>): name one of them another flavor")


def autopilot_flavors(cfg: PlatformConfig) -> dict[str, FlavorPlan]:
    """Flavors by the node labels Autopilot provisions accelerator nodes from (plan.autopilot)."""
    check_autopilot_tpu_version(cfg)
    flavors: dict[str, FlavorPlan] = {}
    for i, f in enumerate(cfg.autopilot_flavors):
        if f.name in flavors:
            raise ConfigError(path_of("autopilot_flavors", i, "name"), f"flavor {f.name!r} is declared twice")
        labels, resource = autopilot_node_labels(path_of("autopilot_flavors", i), f)
        share = None
        if f.tpu is not None:  # Autopilot's TPU nodes are the slice's machine type; its GPU nodes vary
            shape = catalog.tpu_shape(f.tpu.generation, f.tpu.topology)
            share = host_share(shape.machine_type, shape.chips_per_vm)
        flavors[f.name] = FlavorPlan(name=f.name, node_labels=labels, resources=BASE_RESOURCES + (resource,),
                                     host_share=share)
    return flavors


def class_flavor(c: ComputeClassPlan) -> FlavorPlan:
    """A compute class's flavor: the nodes GKE labels with the class's name, tolerating the taint GKE puts on
    them (GKE: About custom compute classes). It names the accelerator labels GKE puts on them too, so that
    Kueue gives it only pods whose selectors the class's nodes satisfy (a pod asking for a 4x4 slice never gets
    a 2x4 class)."""
    shape = ({vocabulary.TPU_ACCELERATOR_LABEL: c.accelerator, vocabulary.TPU_TOPOLOGY_LABEL: str(c.topology)}
             if c.kind == PoolKind.TPU else {vocabulary.GPU_ACCELERATOR_LABEL: c.accelerator})
    return FlavorPlan(name=c.name, node_labels={COMPUTE_CLASS_LABEL: c.name, **shape},
                      tolerations=(vocabulary.compute_class_toleration(c.name),),
                      resources=BASE_RESOURCES + (c.resource,), host_share=host_share(c.machine_type, c.per_node),
                      capacity=c.first_capacity, compute_class=c)


def derive_flavors(cfg: PlatformConfig, pools: list[PoolPlan], fleet: Mapping[str, FlavorPlan] | None = None,
                   classes: tuple[ComputeClassPlan, ...] = ()) -> dict[str, FlavorPlan]:
    """The pools' flavors, the compute classes', Autopilot's, a fleet manager's workers' (plan.fleet), and the
    default flavor."""
    flavors = {**pool_flavors(pools), **{c.name: class_flavor(c) for c in classes}, **autopilot_flavors(cfg),
               **(fleet or {})}
    default = cfg.kueue.default_flavor
    referenced = any(default in q.quotas for q in _queue_specs(cfg))
    if default not in flavors and (not flavors or referenced):
        flavors[default] = _default_flavor(cfg)
        if referenced and cfg.cluster.mode == ClusterMode.STANDARD:
            path = next(_quota_paths(cfg, default))
            raise ConfigError(path, f"flavor {default!r} has no node pool: on a Standard cluster the system pool "
                              "runs only the controllers (GKE's system-component taint keeps team pods off it); add "
                              f"a cpu_pools entry with flavor: {default}, or quote the flavor of a pool")
    return flavors


def _quota_paths(cfg: PlatformConfig, flavor: str) -> Iterator[str]:
    """Config paths of the quotas on `flavor`, teams' queues first."""
    for i, t in enumerate(cfg.teams):
        if t.queue and flavor in t.queue.quotas:
            yield path_of("teams", i, "queue", "quotas", flavor)
    for i, q in enumerate(cfg.shared_queues):
        if flavor in q.quotas:
            yield path_of("shared_queues", i, "quotas", flavor)


def _default_flavor(cfg: PlatformConfig) -> FlavorPlan:
    """On Autopilot, any node GKE creates for the pod (accelerator nodes too). On Standard, the nodes of
    pools that name it: it selects the platform's flavor label, since without a label it would let a
    pod pick any untainted node, its own quota or not; the tainted system pool is for controllers."""
    default = cfg.kueue.default_flavor
    if cfg.cluster.mode == ClusterMode.AUTOPILOT:
        return FlavorPlan(name=default, node_labels={},
                          resources=BASE_RESOURCES + (vocabulary.GPU_RESOURCE, vocabulary.TPU_RESOURCE))
    return FlavorPlan(name=default, node_labels={FLAVOR_LABEL: default})


def _queue_specs(cfg: PlatformConfig) -> list[QueueSpec]:
    return [t.queue for t in cfg.teams if t.queue] + list(cfg.shared_queues)
