"""What the teams are promised against what the pools hold: the quota-vs-capacity model that the quota
policies judge, the summary shows and the diagram draws, read from a stack's planned resources (so it judges
any program's pools and queues, not only this platform's).

A flavor's capacity is what the node pools it serves hold at full size (PoolFacts.serves: a flavor without
node labels serves only pools without accelerators; a per-zone flavor one zone's nodes), and how much of
that is guaranteed: on-demand and reserved pools, not spot, flex-start or queued capacity, which may never
come. A compute class's flavor has the class's nodes at its most, and guarantees only what its reservations
hold. A promise is the ClusterQueues' nominal quota of one resource in one flavor."""
from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property
from typing import Any

from gke_ai_batch.model.gke_compute_class_rules import priority_capacity
from gke_ai_batch.model.machines import allocatable
from gke_ai_batch.model.pool_facts import PoolFacts, pool_facts
from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.vocabulary import (
    ACCELERATOR_RESOURCES,
    CLUSTER,
    COMPUTE_CLASS,
    COMPUTE_CLASS_LABEL,
    FLEET_WORKER_ANNOTATION,
    GPU_ACCELERATOR_LABEL,
    GPU_RESOURCE,
    HELM_RELEASE,
    KUEUE_GROUP_TYPE_PREFIX,
    MAX_NODES_ANNOTATION,
    NODE_POOL,
    RESERVED_NODES_ANNOTATION,
    TPU_ACCELERATOR_LABEL,
    TPU_RESOURCE,
    TPU_TOPOLOGY_LABEL,
    WORKER_HOLDS_ANNOTATION,
    Capacity,
    PoolKind,
)


@dataclass(frozen=True)
class Res:
    type: str
    urn: str
    props: Mapping[str, Any]
    dependencies: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return self.type.rsplit(":", 1)[-1]

    @property
    def name(self) -> str:
        return str((self.props.get("metadata") or {}).get("name") or self.props.get("name", ""))


def annotations_of(props: Mapping[str, Any]) -> Mapping[str, Any]:
    """A Kubernetes object's annotations, as declared (empty where it has none, or they are not a mapping)."""
    meta = props.get("metadata")
    found = meta.get("annotations") if isinstance(meta, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def worker_of(props: Mapping[str, Any]) -> str | None:
    """The fleet worker a Kubernetes object is declared on (a fleet manager declares objects on its workers,
    through their providers), or None for the stack's own cluster."""
    worker = annotations_of(props).get(FLEET_WORKER_ANNOTATION)
    return str(worker) if worker else None


class StackIndex:
    """One pass over the stack: resources by type, every Kueue object, and the cluster-scoped Kueue
    objects by kind and name (what references name; LocalQueues are namespaced and named by none). A fleet
    manager's objects on its workers are another cluster's: they are indexed by worker, apart."""

    def __init__(self, resources: Sequence[Res]):
        self.by_type: dict[str, list[Res]] = defaultdict(list)
        self.kueue_objects: list[Res] = []
        self.kueue: dict[str, dict[str, Res]] = defaultdict(dict)
        self.workers: dict[str, list[Res]] = defaultdict(list)
        for r in resources:
            if worker := worker_of(r.props):
                self.workers[worker].append(r)
                continue
            self.by_type[r.type].append(r)
            if r.type.startswith(KUEUE_GROUP_TYPE_PREFIX):
                self.kueue_objects.append(r)
                if r.kind != "LocalQueue":
                    self.kueue[r.kind][r.name] = r
        clusters = self.by_type[CLUSTER]
        zones = (clusters[0].props.get("nodeLocations") or ()) if len(clusters) == 1 else ()
        self.pools = [(r, pool_facts(r.props, zones)) for r in self.by_type[NODE_POOL]]
        self.quotas: dict[tuple[str, str], list[Any]] | None = None  # nominal_quotas, once

    def releases(self, chart_word: str) -> list[Res]:
        return [r for r in self.by_type[HELM_RELEASE] if chart_word in str(r.props.get("chart", ""))]


@dataclass
class FlavorCapacity:
    """What a flavor's pools hold of one resource at full size, and how much of it is guaranteed
    (on-demand and reserved pools; spot, flex-start and queued capacity may never come)."""

    total: Decimal = Decimal(0)
    fixed: Decimal = Decimal(0)


def worker_holds(props: Mapping[str, Any]) -> tuple[str, dict[str, FlavorCapacity]] | None:
    """A fleet manager's flavor: its worker's pools' capacity mode and what they hold, as the flavor states it
    (plan.fleet); None for any other flavor, or a hand-written annotation the quota rules cannot read."""
    stated = annotations_of(props).get(WORKER_HOLDS_ANNOTATION)
    if not stated:
        return None
    try:
        doc = json.loads(str(stated))
        return str(doc["capacity"]), {r: FlavorCapacity(parse_quantity(total), parse_quantity(fixed))
                                      for r, (total, fixed) in doc["resources"].items()}
    except (ValueError, TypeError, KeyError):
        return None


@dataclass(frozen=True)
class ClassFacts:
    """A ComputeClass as declared: its node shape, its chain of ways, and what the platform states of its size
    (the most nodes, and how many of them its reservations hold)."""

    name: str
    resource: str | None
    per_node: int
    machine_type: str
    ways: tuple[Capacity, ...]
    max_nodes: int
    reserved_nodes: int

    def capacity(self) -> dict[str, FlavorCapacity]:
        """At full size, and guaranteed: the reserved nodes only; the other ways may never come."""
        node = {**({self.resource: Decimal(self.per_node)} if self.resource else {}),
                **(allocatable(self.machine_type) or {})}
        return {r: FlavorCapacity(v * self.max_nodes, v * self.reserved_nodes) for r, v in node.items()}


def class_facts(props: Mapping[str, Any]) -> ClassFacts | None:
    """A ComputeClass read back; None where its priorities name no accelerator or its size is not stated."""
    notes = annotations_of(props)
    rules = list((props.get("spec") or {}).get("priorities") or [])
    if not rules or not str(notes.get(MAX_NODES_ANNOTATION, "")).isdigit():
        return None
    first: Mapping[str, Any] = rules[0]
    resource: str | None = TPU_RESOURCE if first.get("tpu") else GPU_RESOURCE if first.get("gpu") else None
    shape: Mapping[str, Any] = first.get("tpu") or first.get("gpu") or {}
    reserved = str(notes.get(RESERVED_NODES_ANNOTATION, "0"))
    return ClassFacts(str((props.get("metadata") or {}).get("name", "")), resource, int(shape.get("count") or 0),
                      str(first.get("machineType", "")), tuple(priority_capacity(r) for r in rules),
                      int(notes[MAX_NODES_ANNOTATION]), int(reserved) if reserved.isdigit() else 0)


def class_pool_facts(props: Mapping[str, Any]) -> PoolFacts | None:
    """A ComputeClass's nodes as admission judges a node pool: the class's shape, up to its most nodes, labelled
    with the class's name (GKE's label on the nodes it creates for the class), on its first way."""
    cc = class_facts(props)
    if cc is None or cc.resource is None:
        return None
    first = ((props.get("spec") or {}).get("priorities") or [{}])[0]
    tpu = first.get("tpu") or {}
    zones = tuple((((props.get("spec") or {}).get("priorityDefaults") or {}).get("location") or {}).get("zones") or ())
    labels = {COMPUTE_CLASS_LABEL: cc.name}
    if tpu:
        labels.update({TPU_ACCELERATOR_LABEL: str(tpu.get("type")), TPU_TOPOLOGY_LABEL: str(tpu.get("topology"))})
    else:
        labels[GPU_ACCELERATOR_LABEL] = str((first.get("gpu") or {}).get("type"))
    return PoolFacts(name=f"compute class {cc.name}", kind=PoolKind.TPU if tpu else PoolKind.GPU,
                     machine_type=cc.machine_type, capacity=cc.ways[0], zones=zones,
                     accelerator=str(tpu.get("type") or (first.get("gpu") or {}).get("type")),
                     topology=tpu.get("topology"), per_node=cc.per_node, resource=cc.resource, fixed_nodes=None,
                     min_nodes=0, max_nodes=cc.max_nodes, total_autoscaling=True, node_labels=labels)


def compute_classes(ix: StackIndex) -> dict[str, ClassFacts]:
    return {f.name: f for r in ix.by_type[COMPUTE_CLASS] if (f := class_facts(r.props)) is not None}


def class_of(flavor_props: Mapping[str, Any], classes: Mapping[str, ClassFacts]) -> ClassFacts | None:
    """The compute class a flavor's nodes come from: the one its node labels select."""
    labels = (flavor_props.get("spec") or {}).get("nodeLabels") or {}
    return classes.get(str(labels.get(COMPUTE_CLASS_LABEL, "")))


def flavor_capacity(ix: StackIndex) -> dict[str, dict[str, FlavorCapacity]]:
    """flavor -> resource -> FlavorCapacity, for flavors that serve nodes of this stack's pools or compute
    classes, or state what a fleet worker's pools hold. On Autopilot there are no pools, so nothing is judged."""
    out: dict[str, dict[str, FlavorCapacity]] = {}
    classes = compute_classes(ix)
    for name, flavor in ix.kueue["ResourceFlavor"].items():
        if (held := worker_holds(flavor.props)) is not None:
            out[name] = held[1]
            continue
        if (cc := class_of(flavor.props, classes)) is not None:
            out[name] = cc.capacity()
            continue
        spec = flavor.props.get("spec") or {}
        for f in (f for _, f in ix.pools if f.serves(spec)):
            for resource, amount in f.provides_in(spec.get("nodeLabels") or {}).items():
                cap = out.setdefault(name, {}).setdefault(resource, FlavorCapacity())
                cap.total += amount
                cap.fixed += amount if f.fixed_capacity else 0
    return out


class Stack(list[Res]):
    """The stack's resources as the stack rules read them, indexed once for every rule that is given the very
    same stack (the offline check gives all of them one; the engine's analyzer builds one per policy)."""

    @cached_property
    def indexed(self) -> StackIndex:
        return StackIndex(self)


def index_of(resources: Sequence[Res]) -> StackIndex:
    return resources.indexed if isinstance(resources, Stack) else StackIndex(resources)


def nominal_quotas(ix: StackIndex) -> dict[tuple[str, str], list[Any]]:
    """(flavor, resource) -> [sum of nominal quota, ClusterQueue names], summed once per index (read only)."""
    if ix.quotas is None:
        ix.quotas = _nominal_quotas(ix)
    return ix.quotas


def _nominal_quotas(ix: StackIndex) -> dict[tuple[str, str], list[Any]]:
    out: dict[tuple[str, str], list[Any]] = {}
    for cq in ix.kueue["ClusterQueue"].values():
        for group in (cq.props.get("spec") or {}).get("resourceGroups") or []:
            for fl in group.get("flavors") or []:
                for res in fl.get("resources") or []:
                    entry = out.setdefault((fl["name"], res["name"]), [Decimal(0), []])
                    entry[0] += parse_quantity(res["nominalQuota"])
                    entry[1].append(cq.name)
    return out


def promises(ix: StackIndex) -> list[tuple[str, str, Decimal, FlavorCapacity, list[str]]]:
    """(flavor, resource, nominal quota promised, capacity behind it, queues) for every quota on a
    flavor with pools: the plan shows them, the quota policies judge them."""
    caps, out = flavor_capacity(ix), []
    for (flavor, resource), (promised, queues) in sorted(nominal_quotas(ix).items()):
        if flavor in caps:
            out.append((flavor, resource, promised, caps[flavor].get(resource, FlavorCapacity()), sorted(queues)))
    return out


def show_amount(resource: str, amount: Decimal) -> str:
    """Quantities as people read them: memory in GiB, the rest as counts."""
    if resource in ("memory", "ephemeral-storage"):
        return f"{amount / 2**30:,.0f}Gi"
    return f"{amount:,.0f}" if amount == amount.to_integral_value() else f"{amount:,.1f}"


Promise = tuple[str, str, Decimal, FlavorCapacity, list[str]]


def headline(rows: list[Promise]) -> list[Promise]:
    """Where a flavor's accelerator is over-promised, its cpu and memory (which follow the accelerator
    quota) are too: name the accelerator alone."""
    over = {flavor for flavor, res, *_ in rows if res in ACCELERATOR_RESOURCES}
    return [r for r in rows if r[1] in ACCELERATOR_RESOURCES or r[0] not in over]
