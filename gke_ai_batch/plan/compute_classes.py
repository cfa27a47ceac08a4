"""GKE custom compute classes from the stack config: the ComputeClass objects (cloud.google.com/v1, fields as
GKE's ComputeClass reference and the schema vendored in gke_ai_batch/conform/schemas give them), and the node
auto-provisioning settings of the cluster that creates their node pools.

A class is one accelerator shape and an ordered chain of ways to get it. Only a reserved priority guarantees
nodes (its `reserved_nodes`); the rest may come. The class's Kueue flavor selects its nodes by the label GKE
puts on them and tolerates the taint GKE puts on them (plan.scheduling)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from typing import Any

from gke_ai_batch.model import catalog
from gke_ai_batch.model.catalog import CatalogError
from gke_ai_batch.model.compute_class_config import ClassPriority, ComputeClassConfig
from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.machines import shape
from gke_ai_batch.model.words import did_you_mean, name_list, nearest
from gke_ai_batch.plan.pools import PoolPlan, check_reservation, tpu_shape_at
from gke_ai_batch.vocabulary import (
    COMPUTE_CLASS_API,
    GPU_RESOURCE,
    MAX_NODES_ANNOTATION,
    RESERVED_NODES_ANNOTATION,
    TPU_RESOURCE,
    Capacity,
    ClusterMode,
    Manifest,
    PoolKind,
)

WAY_CAPACITY = {"reservation": Capacity.RESERVATION, "flex_start": Capacity.FLEX_START, "spot": Capacity.SPOT,
                "on_demand": Capacity.ON_DEMAND}
MAX_FLEX_START_SECONDS = 7 * 24 * 3600  # flex-start runs a node at most seven days (GKE: About flex-start)


@dataclass(frozen=True)
class PriorityPlan:
    """One way to get the class's nodes, as the ComputeClass lists it."""

    capacity: Capacity
    reservation: str | None = None
    reserved_nodes: int = 0
    max_run_seconds: int | None = None
    zones: tuple[str, ...] = ()

    def words(self) -> str:
        if self.capacity == Capacity.RESERVATION:
            return f"reservation {self.reservation} ({self.reserved_nodes} nodes)"
        if self.capacity == Capacity.FLEX_START:
            return f"flex-start ({self.max_run_seconds}s)"
        return str(self.capacity)


@dataclass(frozen=True)
class ComputeClassPlan:
    name: str
    path: str
    kind: PoolKind  # TPU or GPU
    accelerator: str  # GKE's accelerator type: the TPU node label value, or the GPU's name
    resource: str  # what pods request: google.com/tpu or nvidia.com/gpu
    per_node: int  # chips or GPUs on each node
    machine_type: str
    topology: str | None
    multi_host: bool
    priorities: tuple[PriorityPlan, ...]
    max_nodes: int
    zones: tuple[str, ...]
    when_unsatisfiable: str
    active_migration: bool
    driver_version: str | None = None

    @property
    def reserved_nodes(self) -> int:
        """The nodes the class is guaranteed: what its reservations hold, at most its size."""
        return min(self.max_nodes, sum(p.reserved_nodes for p in self.priorities))

    @property
    def first_capacity(self) -> Capacity:
        return self.priorities[0].capacity

    def chain(self) -> str:
        return " -> ".join(p.words() for p in self.priorities)

    def node_shape(self) -> dict[str, Any]:
        """What every priority asks for: the machine type and the accelerator (ComputeClass priorities[].tpu
        {type, count, topology} or gpu {type, count, driverVersion})."""
        if self.kind == PoolKind.TPU:
            return {"machineType": self.machine_type,
                    "tpu": {"type": self.accelerator, "count": self.per_node, "topology": self.topology}}
        return {"machineType": self.machine_type,
                "gpu": {"type": self.accelerator, "count": self.per_node, "driverVersion": self.driver_version}}

    def manifest(self) -> Manifest:
        """The ComputeClass: each priority the shape and its way, the class's zones as priorityDefaults,
        node pools created as needed, and what happens past the last priority."""
        return {
            "apiVersion": COMPUTE_CLASS_API, "kind": "ComputeClass",
            "metadata": {"name": self.name, "annotations": {
                MAX_NODES_ANNOTATION: str(self.max_nodes), RESERVED_NODES_ANNOTATION: str(self.reserved_nodes)}},
            "spec": {
                "description": f"{self.accelerator} nodes: {self.chain()}",
                "priorities": [_priority(self, p) for p in self.priorities],
                **({"priorityDefaults": {"location": {"zones": list(self.zones)}}} if self.zones else {}),
                "nodePoolAutoCreation": {"enabled": True},
                "whenUnsatisfiable": self.when_unsatisfiable,
                "activeMigration": {"optimizeRulePriority": self.active_migration},
            },
        }


def _priority(c: ComputeClassPlan, p: PriorityPlan) -> dict[str, Any]:
    """A priority rule: the node shape and one way. On-demand consumes no reservation (affinity None), so a
    class never takes a reservation kept for another pool or class; a reservation is named (Specific), the
    only affinity GKE offers TPUs in compute classes."""
    rule: dict[str, Any] = dict(c.node_shape())
    if p.capacity == Capacity.RESERVATION:
        assert p.reservation is not None  # a reserved priority names its reservation (ClassPriority)
        rule["reservations"] = {"affinity": "Specific", "specific": [specific_reservation(p.reservation)]}
        rule["spot"] = False
    elif p.capacity == Capacity.FLEX_START:
        rule["flexStart"] = {"enabled": True}
        rule["maxRunDurationSeconds"] = p.max_run_seconds
    elif p.capacity == Capacity.SPOT:
        rule["spot"] = True
    else:
        rule["spot"] = False
        rule["reservations"] = {"affinity": "None"}
    if p.zones:
        rule["location"] = {"zones": list(p.zones)}
    return rule


def specific_reservation(reservation: str) -> dict[str, Any]:
    """NAME, projects/P/reservations/NAME, and /reservationBlocks/B[/reservationSubBlocks/S] as the
    ComputeClass's reservations.specific[] entry (name, project, reservationBlock{name, reservationSubBlock})."""
    m = re.match(r"^(?:projects/([^/]+)/reservations/)?([^/]+)(?:/reservationBlocks/([^/]+)"
                 r"(?:/reservationSubBlocks/([^/]+))?)?$", reservation)
    assert m is not None  # check_reservation checked it
    project, name, block, sub = m.groups()
    out: dict[str, Any] = {"name": name, **({"project": project} if project else {})}
    if block:
        out["reservationBlock"] = {"name": block, **({"reservationSubBlock": {"name": sub}} if sub else {})}
    return out


def _priority_plan(path: str, p: ClassPriority, zones: tuple[str, ...]) -> PriorityPlan:
    capacity = WAY_CAPACITY[p.way]
    if p.reservation is not None:
        check_reservation(p.reservation, f"{path}.reservation")
    duration = p.flex_start.max_run_duration if p.flex_start else None
    seconds = int(duration[:-1]) if duration else None
    if seconds is not None and not 0 < seconds <= MAX_FLEX_START_SECONDS:
        raise ConfigError(f"{path}.flex_start.max_run_duration", f"{duration}: flex-start runs a node for at most "
                          f"{MAX_FLEX_START_SECONDS}s (7 days)")
    for k, z in enumerate(p.zones):
        if z not in zones:
            raise ConfigError(f"{path}.zones[{k}]", f"zone {z!r} is not one of the class's: a priority's zones are "
                              f"among them; {did_you_mean(z, zones)}the class's zones: {', '.join(nearest(z, zones))}")
    return PriorityPlan(capacity, p.reservation, p.reserved_nodes or 0, seconds, tuple(p.zones))


def _tpu_shape(path: str, c: ComputeClassConfig) -> tuple[str, int, str, str | None, bool]:
    assert c.tpu is not None
    shape = tpu_shape_at(f"{path}.tpu", c.tpu.generation, c.tpu.topology, c.machine_type)
    return shape.accelerator, shape.chips_per_vm, shape.machine_type, shape.topology, shape.multi_host


def _gpu_shape(path: str, c: ComputeClassConfig) -> tuple[str, int, str, str | None, bool]:
    assert c.gpu is not None
    try:
        shape = catalog.gpu_shape(c.gpu.type, c.machine_type, c.gpu.count)
    except CatalogError as e:
        at = "gpu.count" if e.config_field == "gpus_per_node" else "machine_type"
        raise ConfigError(f"{path}.{at}", str(e)) from None
    return c.gpu.type, shape.gpus, shape.machine_type, None, False


def _class_plan(cfg: PlatformConfig, i: int, c: ComputeClassConfig) -> ComputeClassPlan:
    path = path_of("compute_classes", i)
    kind = PoolKind.TPU if c.tpu else PoolKind.GPU
    accelerator, per_node, machine, topology, multi_host = (_tpu_shape if c.tpu else _gpu_shape)(path, c)
    zones = tuple(c.zones or cfg.zones)
    if not zones and cfg.cluster.mode == ClusterMode.STANDARD:
        raise ConfigError(f"{path}.zones", "no zones: give the class's zones, or the platform's `zones`")
    stray = [z for z in zones if not z.startswith(f"{cfg.region}-")]
    if stray:
        raise ConfigError(f"{path}.zones", f"{name_list(stray)}: the class's zones are in the cluster's region "
                          f"{cfg.region}")
    priorities = tuple(_priority_plan(f"{path}.priorities[{j}]", p, zones) for j, p in enumerate(c.priorities))
    return ComputeClassPlan(
        name=c.name, path=path, kind=kind, accelerator=accelerator,
        resource=TPU_RESOURCE if c.tpu else GPU_RESOURCE, per_node=per_node, machine_type=machine,
        topology=topology, multi_host=multi_host, priorities=priorities, max_nodes=c.max_nodes, zones=zones,
        when_unsatisfiable=c.when_unsatisfiable, active_migration=c.active_migration,
        driver_version=c.gpu.driver_version if c.gpu else None)


def plan_compute_classes(cfg: PlatformConfig, pools: list[PoolPlan]) -> tuple[ComputeClassPlan, ...]:
    """Every class, checked: names apart from each other and from the pools' and Autopilot's flavors, each
    reservation of one shape across the classes and pools that consume it, and an Autopilot flavor that names a
    class of the class's shape. GKE takes custom compute classes on Standard and Autopilot alike (About custom
    compute classes); on Autopilot, GKE creates every node, so the cluster has no auto-provisioning to set."""
    plans: list[ComputeClassPlan] = []
    flavors = {p.flavor for p in pools if p.flavor} | {f.name for f in cfg.autopilot_flavors}
    for i, c in enumerate(cfg.compute_classes):
        if c.name in flavors or any(c.name == p.name for p in plans):
            raise ConfigError(path_of("compute_classes", i, "name"), f"{c.name!r} is already a flavor of this "
                              "stack; a class is the flavor of its name: name it apart")
        plans.append(_class_plan(cfg, i, c))
    _one_shape_per_reservation(plans, pools)
    _autopilot_flavors_match(cfg, plans)
    return tuple(plans)


def _autopilot_flavors_match(cfg: PlatformConfig, classes: list[ComputeClassPlan]) -> None:
    """An Autopilot flavor may name one of the stack's classes as its compute class (beside GKE's built-in ones):
    its accelerator must be the class's, or no node GKE creates for the class carries the flavor's labels."""
    by_name = {c.name: c for c in classes}
    for i, f in enumerate(cfg.autopilot_flavors):
        c = by_name.get(f.compute_class or "")
        if c is None:
            continue
        mine = f.gpu or (tpu_shape_at(path_of("autopilot_flavors", i, "tpu"), f.tpu.generation, f.tpu.topology)
                         .accelerator if f.tpu else None)
        same_topology = f.tpu is None or f.tpu.topology == c.topology
        if mine != c.accelerator or not same_topology:
            raise ConfigError(path_of("autopilot_flavors", i, "compute_class"), f"compute class {c.name!r} makes "
                              f"{c.accelerator}{f' {c.topology}' if c.topology else ''} nodes; flavor {f.name!r} "
                              "selects another accelerator: name a class of its shape, or drop the key")


def _one_shape_per_reservation(classes: list[ComputeClassPlan], pools: list[PoolPlan]) -> None:
    """A reservation holds VMs of one machine type: a class whose reserved priority names one that another
    class or a pool consumes with a different machine asks for nodes the reservation cannot give."""
    seen: dict[str, tuple[str, str]] = {p.reservation: (p.machine_type, p.path) for p in pools if p.reservation}
    for c in classes:
        for j, p in enumerate(c.priorities):
            if p.reservation is None:
                continue
            machine, where = seen.setdefault(p.reservation, (c.machine_type, c.path))
            if machine != c.machine_type:
                raise ConfigError(f"{c.path}.priorities[{j}].reservation", f"{p.reservation!r} holds {machine} VMs "
                                  f"({where} consumes it so); this class's nodes are {c.machine_type}: name a "
                                  "reservation of this shape")


# Node auto-provisioning. Resource limits count every pool of the cluster, not only auto-created ones, in vCPUs,
# GB of memory and accelerators by GKE's type (GKE: About node auto-provisioning, "Resource limits").
# The memory unit: pulumi-gcp ClusterClusterAutoscalingResourceLimit.maximum is "Maximum amount of the resource in
# the cluster" (no unit) and goes to the API's ResourceLimit as is; gcloud sends --max-memory to the same field
# unchanged (googlecloudsdk api_adapter: ResourceLimit(resourceType='memory', maximum=options.max_memory)) and
# documents it as "Maximum number of gigabytes of memory to which the cluster can scale" (command_lib/container/
# flags.py); GKE's "Selectively enforce firewall policies" page: "MAX_MEMORY: the maximum memory capacity for the
# cluster in gigabytes". A gap: no GKE page says whether that gigabyte is 10^9 bytes or 2^30 (the open-source
# cluster autoscaler's config/const.go: "Gigabyte is 2^30 bytes"). A machine's memory (GiB) is therefore counted in
# 10^9-byte GB, rounded up: the larger count of the two, so a derived limit never stops the autoscaler short, and
# a given one is refused only below it.
GIB_TO_GB = Decimal("1.073741824")


def _node_amounts(machine_type: str, accelerator: str | None, per_node: int) -> dict[str, int]:
    """One node's vCPUs, memory in whole GB (rounded up) and accelerators, as NAP limits count them."""
    cpus, gib = shape(machine_type) or (0, Decimal(0))
    gb = int((Decimal(gib) * GIB_TO_GB).to_integral_value(rounding=ROUND_CEILING))
    return {"cpu": cpus, "memory": gb, **({accelerator: per_node} if accelerator else {})}


def _pool_reach(p: PoolPlan) -> dict[str, int]:
    per_node = p.gpus if p.kind == PoolKind.GPU else p.per_node
    return {k: v * p.nodes for k, v in _node_amounts(p.machine_type, p.accelerator, per_node).items()}


def class_node(c: ComputeClassPlan) -> dict[str, int]:
    return _node_amounts(c.machine_type, c.accelerator, c.per_node)


def reach(pools: list[PoolPlan], classes: tuple[ComputeClassPlan, ...]) -> dict[str, int]:
    """What the cluster's pools and classes reach at full size, by NAP limit type."""
    out: dict[str, int] = {}
    for amounts in [_pool_reach(p) for p in pools] + [{k: v * c.max_nodes for k, v in class_node(c).items()}
                                                      for c in classes]:
        for k, v in amounts.items():
            out[k] = out.get(k, 0) + v
    return out


LIMIT_TYPES_IN_WORDS = "cpu, memory, or an accelerator type (a TPU's tpu-...-slice/podslice, a GPU's name)"


def _limit_types() -> set[str]:
    return {"cpu", "memory", *(g.accelerator for g in catalog.TPU_GENERATIONS.values()), *catalog.GPU_TYPES}


def resource_limits(cfg: PlatformConfig, pools: list[PoolPlan],
                    classes: tuple[ComputeClassPlan, ...]) -> dict[str, int]:
    """The limits: as given, each at least the largest node of a class that counts it and what the pools and
    classes reach at full size (below, the autoscaler stops short of the quota teams are given); the rest
    derived as that reach."""
    ap = cfg.cluster.auto_provisioning
    given = dict(ap.limits) if ap else {}
    needed = reach(pools, classes)
    for key, limit in given.items():
        at = path_of("cluster", "auto_provisioning", "limits", key)
        if key not in _limit_types():
            raise ConfigError(at, f"{key!r} is not a resource GKE limits; limits are {LIMIT_TYPES_IN_WORDS}")
        for c in classes:
            node = class_node(c).get(key, 0)
            if limit < node:
                raise ConfigError(at, f"{limit} is below one node of compute class {c.name!r} ({node} {key}), so "
                                  "GKE could create none of its nodes: raise it, or drop the key to derive it")
        if limit < needed.get(key, 0):
            raise ConfigError(at, f"{limit} is below what the pools and compute classes reach at full size "
                              f"({needed[key]} {key}); the autoscaler would stop short of the quota teams are "
                              f"given: raise it to {needed[key]}, or drop the key to derive it")
    return {**needed, **given}


def auto_provisioning(cfg: PlatformConfig, pools: list[PoolPlan], classes: tuple[ComputeClassPlan, ...],
                      service_account: str, scopes: list[str]) -> dict[str, Any] | None:
    """The cluster's cluster_autoscaling (pulumi-gcp 10.2 ClusterClusterAutoscaling): on, with resource limits
    (cpu and memory are required to enable it), the platform's node service account and scopes, auto-repair
    and auto-upgrade, and the zones the classes name. None where nothing asks for it."""
    ap = cfg.cluster.auto_provisioning
    if ap is None and not classes:
        return None
    if ap is not None and not ap.enabled:
        if ap.limits or ap.locations:
            raise ConfigError(path_of("cluster", "auto_provisioning", "limits" if ap.limits else "locations"),
                              "without cluster-level auto-provisioning (enabled: false) GKE applies no cluster-wide "
                              "limits or locations; drop the key, or turn auto-provisioning on")
        return None
    limits = resource_limits(cfg, pools, classes)
    locations = (list(ap.locations) if ap and ap.locations else
                 list(dict.fromkeys(z for c in classes for z in c.zones)) or list(cfg.zones))
    return {
        "enabled": True,
        "resource_limits": [{"resource_type": k, "minimum": 0, "maximum": v} for k, v in sorted(limits.items())],
        "auto_provisioning_defaults": {"service_account": service_account, "oauth_scopes": scopes,
                                       "management": {"auto_repair": True, "auto_upgrade": True}},
        "auto_provisioning_locations": locations,
    }
