"""The Kueue layer derived from the stack config and the node pools, as plain manifests.

Flavors come from the pools (never typed by hand), quotas are checked against the flavors, and
every reference (cohort, flavor, ClusterQueue, priority) is resolved here, so that a plan which
reaches the components is already consistent. Emits kueue.x-k8s.io/v1beta2 only.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gke_ai_batch import vocabulary
from gke_ai_batch.model import catalog
from gke_ai_batch.model.config import KueueConfig, PlatformConfig
from gke_ai_batch.model.disks import scratch_bytes
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.machines import allocatable
from gke_ai_batch.model.quantity import parse_quantity, render_quantity
from gke_ai_batch.model.team_config import QueueSpec, QuotaSpec
from gke_ai_batch.model.topologies import topology_name
from gke_ai_batch.model.words import name_list
from gke_ai_batch.plan import admission_fair_sharing, pathways, tenancy
from gke_ai_batch.plan.autopilot import autopilot_node_labels, check_autopilot_tpu_version
from gke_ai_batch.plan.compute_classes import ComputeClassPlan, plan_compute_classes
from gke_ai_batch.plan.pools import PoolPlan
from gke_ai_batch.plan.team_namespaces import TeamPlan, _local_queues, _team_manifests, _team_namespaces, stop_policy
from gke_ai_batch.vocabulary import (
    COMPUTE_CLASS_LABEL,
    FLAVOR_LABEL,
    KUEUE_API,
    NODES_ON_WORKER_ANNOTATION,
    PROVISIONING_CONTROLLER,
    QUEUED_PROVISIONING_CLASS,
    SHARED_QUEUE_LABEL,
    WORKER_HOLDS_ANNOTATION,
    ZONE_LABEL,
    Capacity,
    ClusterMode,
    Manifest,
    PoolKind,
    admitted_by_label,
)

# Kueue docs for GKE queued provisioning: pin the pods to the nodes GKE provisioned for the request.
PROVISIONING_NODE_SELECTOR = {"key": "autoscaling.gke.io/provisioning-request",
                              "valueFromProvisioningClassDetail": "ResizeRequestName"}
SCRATCH = "ephemeral-storage"
BASE_RESOURCES = ("cpu", "memory", SCRATCH)
RESOURCE_ORDER = BASE_RESOURCES + (vocabulary.TPU_RESOURCE, vocabulary.GPU_RESOURCE)
MAX_USER_PRIORITY = 1_000_000_000  # values above are reserved for system-critical classes
MAX_FLAVORS_PER_GROUP = 64  # ClusterQueue CRD (v0.19.2): resourceGroups[].flavors maxItems
DWS_RETRY = {"backoffLimitCount": 3, "backoffBaseSeconds": 60, "backoffMaxSeconds": 1800}



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


@dataclass(frozen=True)
class ClusterQueuePlan:
    name: str
    path: str
    spec: QueueSpec
    namespaces: tuple[str, ...]  # empty: admits every namespace (a declared shared queue)
    shared: bool
    manifest: Manifest


@dataclass(frozen=True)
class SchedulingPlan:
    flavors: dict[str, FlavorPlan]
    cohorts: tuple[Manifest, ...]
    cluster_queues: tuple[ClusterQueuePlan, ...]
    teams: tuple[TeamPlan, ...]
    admission_checks: tuple[Manifest, ...]  # ProvisioningRequestConfig and AdmissionCheck
    priority_classes: tuple[Manifest, ...]
    workload_priority_classes: tuple[Manifest, ...]
    compute_classes: tuple[ComputeClassPlan, ...] = ()

    @property
    def topologies(self) -> tuple[Manifest, ...]:
        """One Kueue Topology per distinct list of levels the flavors name."""
        levels = dict.fromkeys(f.topology for f in self.flavors.values() if f.topology)
        return tuple({"apiVersion": KUEUE_API, "kind": "Topology", "metadata": {"name": topology_name(lv)},
                      "spec": {"levels": [{"nodeLabel": level} for level in lv]}} for lv in levels)


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


def derive_cohorts(cfg: PlatformConfig) -> tuple[Manifest, ...]:
    names = {c.name for c in cfg.cohorts}
    parents = {c.name: c.parent for c in cfg.cohorts}
    out: list[Manifest] = []
    declared: set[str] = set()
    for i, c in enumerate(cfg.cohorts):
        if c.name in declared:
            raise ConfigError(path_of("cohorts", i, "name"), f"cohort {c.name!r} is declared twice")
        declared.add(c.name)
        if c.parent is not None and c.parent not in names:
            raise ConfigError(path_of("cohorts", i, "parent"), f"cohort {c.parent!r} does not exist; "
                              f"declared cohorts: {name_list(names)}")
        seen, cur = {c.name}, c.parent
        while cur is not None:
            if cur in seen:
                raise ConfigError(path_of("cohorts", i, "parent"), f"cohort {c.name!r} is its own ancestor")
            seen.add(cur)
            cur = parents.get(cur)
        spec: dict[str, Any] = {}
        if c.parent:
            spec["parentName"] = c.parent
        if c.fair_sharing_weight is not None:
            spec["fairSharing"] = {"weight": render_quantity(c.fair_sharing_weight)}
        out.append({"apiVersion": KUEUE_API, "kind": "Cohort", "metadata": {"name": c.name}, "spec": spec})
    return tuple(out)


def _check_quota(fpath: str, fname: str, flavor: FlavorPlan, rname: str, q: QuotaSpec, spec: QueueSpec) -> None:
    if rname not in flavor.resources:
        raise ConfigError(f"{fpath}.{rname}", f"flavor {fname!r} has no resource {rname!r}; "
                          f"it provides: {', '.join(flavor.resources)}")
    if q.borrowing_limit is not None and spec.cohort is None:
        raise ConfigError(f"{fpath}.{rname}.borrowing_limit", "a borrowing limit needs a cohort to "
                          "borrow from; set cohort or drop borrowing_limit")
    if q.lending_limit is not None:
        if spec.cohort is None:
            raise ConfigError(f"{fpath}.{rname}.lending_limit", "a lending limit needs a cohort to "
                              "lend to; set cohort or drop lending_limit")
        if parse_quantity(q.lending_limit) > parse_quantity(q.nominal):
            raise ConfigError(f"{fpath}.{rname}.lending_limit", f"{q.lending_limit!r} is above the "
                              f"nominal quota {q.nominal!r}; a queue can lend at most what it has")


def _accelerator_of(flavor: FlavorPlan) -> str | None:
    """The one accelerator resource a flavor's nodes offer (None: cpu nodes, or Autopilot's default)."""
    accelerators = [r for r in flavor.resources if r in vocabulary.ACCELERATOR_RESOURCES]
    return accelerators[0] if len(accelerators) == 1 else None


def _scaled(value: int | str | None, share: Decimal, resource: str) -> int | str | None:
    """An accelerator or cpu amount as the cpu (whole millicores), memory (whole MiB) or scratch (whole GiB) that
    comes with it."""
    if value is None:
        return None
    amount = parse_quantity(value) * share
    if resource == "cpu":
        millis = int(amount * 1000)
        return millis // 1000 if millis % 1000 == 0 else f"{millis}m"
    if resource == SCRATCH:
        return f"{int(amount / 2**30)}Gi"
    return f"{int(amount / 2**20)}Mi"


def _metered(fname: str, flavor: FlavorPlan, resources: dict[str, QuotaSpec], fpath: str) -> dict[str, QuotaSpec]:
    """A flavor's quotas with cpu and memory covered: on accelerator nodes they follow the accelerator
    quota (the team's share of those hosts), unless the stack gives them; Kueue (BlockUndeclared) then
    admits an accelerator pod's cpu and memory on its accelerator's flavor and nothing beyond the share."""
    accelerator = _accelerator_of(flavor)
    if accelerator is None:
        return resources
    if accelerator not in resources:
        raise ConfigError(fpath, f"flavor {fname!r} selects {accelerator} nodes: its quota needs {accelerator} "
                          "(cpu and memory alone would admit accelerator-free pods, which GKE's accelerator taint "
                          "keeps off those nodes)")
    missing = [r for r in ("cpu", "memory") if r not in resources]
    if not missing:
        return resources
    if flavor.host_share is None:
        raise ConfigError(fpath, f"the size of flavor {fname!r}'s nodes is unknown, so its cpu and memory quota "
                          f"cannot follow its {accelerator} quota: give cpu and memory here too")
    q, share = resources[accelerator], flavor.host_share
    return {**resources, **{r: QuotaSpec(nominal=_scaled(q.nominal, share[r], r) or 0,
                                         borrowing_limit=_scaled(q.borrowing_limit, share[r], r),
                                         lending_limit=_scaled(q.lending_limit, share[r], r)) for r in missing}}


def _scratch(flavor: FlavorPlan, resources: dict[str, QuotaSpec]) -> dict[str, QuotaSpec]:
    """A flavor's quotas with ephemeral-storage covered where its nodes' local SSDs are the pods' scratch: it follows
    the cpu quota (the team's share of those nodes' cpu, of their scratch) unless the stack gives it. Kueue
    (BlockUndeclared) refuses a pod asking for a resource its ClusterQueue does not cover, so without it a job
    asking for scratch would never be admitted on the pool built to give it."""
    share = flavor.scratch_share
    if share is None or SCRATCH in resources or "cpu" not in resources:
        return resources
    q = resources["cpu"]
    return {**resources, SCRATCH: QuotaSpec(nominal=_scaled(q.nominal, share, SCRATCH) or 0,
                                            borrowing_limit=_scaled(q.borrowing_limit, share, SCRATCH),
                                            lending_limit=_scaled(q.lending_limit, share, SCRATCH))}


def _quota_entry(resource: str, q: QuotaSpec | None) -> dict[str, Any]:
    if q is None:  # a resource another flavor of the queue covers: none of it here
        return {"name": resource, "nominalQuota": 0}
    return {"name": resource, "nominalQuota": render_quantity(q.nominal),
            **({"borrowingLimit": render_quantity(q.borrowing_limit)} if q.borrowing_limit is not None else {}),
            **({"lendingLimit": render_quantity(q.lending_limit)} if q.lending_limit is not None else {})}


# The order Kueue tries a queue's accelerator flavors in (it takes the first that fits: flavorFungibility's
# default): capacity that stays first; then queued provisioning, which Kueue admits only once GKE has the
# nodes; then flex-start, admitted before its nodes exist and evicted if they do not come within
# kueue.wait_for_pods_ready_timeout; spot last, as it may be reclaimed mid-run. Within a capacity, the order the
# flavors are declared in (tpu_pools, gpu_pools, cpu_pools, compute_classes, autopilot_flavors, a fleet's
# workers, each as listed; a per-zone flavor by its pool's zones), never the order of a queue's `quotas`: the
# CLI hands the program that mapping with its keys sorted (gke_ai_batch.offline.stackfile.engine_json).
# What the order means when a flavor fits only by borrowing or by preempting (Kueue v0.19.2 ClusterQueue CRD,
# flavorFungibility): borrowing a cohort's idle reserved capacity beats moving on to costlier or less certain
# capacity (whenCanBorrow MayStopSearch), and trying the next flavor beats evicting someone's running work
# (whenCanPreempt TryNextFlavor). Both are Kueue's defaults, stated so that a Kueue upgrade changing them
# (whenCanBorrow's value was renamed from Borrow in v1beta2) cannot change admission silently.
FLAVOR_FUNGIBILITY = {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"}
CAPACITY_ORDER = (Capacity.RESERVATION, Capacity.ON_DEMAND, Capacity.QUEUED, Capacity.FLEX_START, Capacity.SPOT)


def _flavor_rank(name: str, flavors: dict[str, FlavorPlan]) -> tuple[bool, int]:
    """Flavors without an accelerator first, so a cpu-only pod takes its cpu flavor before the cpu that
    comes with an accelerator flavor; then the accelerator flavors by CAPACITY_ORDER; then the compute
    classes', whose chains walk their own ways (a job that wants a class selects it by
    cloud.google.com/compute-class)."""
    flavor = flavors.get(name)
    if flavor is None or _accelerator_of(flavor) is None:
        return False, 0
    if flavor.compute_class is not None:  # after the pools: the class orders its own ways
        return True, len(CAPACITY_ORDER)
    return True, CAPACITY_ORDER.index(_capacity_of(flavor))


def _flavor_order(spec: QueueSpec, flavors: dict[str, FlavorPlan]) -> list[str]:
    """The order Kueue tries the queue's flavors in: by _flavor_rank, then as the flavors are declared
    (`flavors` is in that order); an undeclared name, refused by _resource_groups, last."""
    declared = {name: i for i, name in enumerate(flavors)}
    return sorted(spec.quotas, key=lambda f: (_flavor_rank(f, flavors), declared.get(f, len(declared))))


def overruled_quota_orders(scheduling: SchedulingPlan) -> list[tuple[str, str, str]]:
    """(config path, flavor, flavor) for each ClusterQueue whose `quotas`, in the order given, put the first
    flavor before the second, of the same rank, where Kueue tries the second first. Only the offline tools
    see a stack file's order (they plan from it for this); a stack written before the order was the
    declared one's is told that its order is not the one deployed."""
    found = []
    for cq in scheduling.cluster_queues:
        tried = _flavor_order(cq.spec, scheduling.flavors)
        written = list(cq.spec.quotas)
        pair = next(((a, b) for i, a in enumerate(written) for b in written[i + 1:]
                     if tried.index(b) < tried.index(a)
                     and _flavor_rank(a, scheduling.flavors) == _flavor_rank(b, scheduling.flavors)), None)
        if pair:
            found.append((f"{cq.path}.quotas", *pair))
    return found


def _capacity_of(flavor: FlavorPlan) -> Capacity:
    """A flavor's pools share one capacity (plan.pools refuses a mix); a fleet manager's flavor has its
    worker's; Autopilot's flavors have no pools."""
    if flavor.capacity is not None:
        return flavor.capacity
    if flavor.pools:
        return Capacity(flavor.pools[0].capacity)
    return Capacity.SPOT if flavor.node_labels.get(vocabulary.SPOT_LABEL) == "true" else Capacity.ON_DEMAND


def _resource_groups(spec: QueueSpec, flavors: dict[str, FlavorPlan], path: str) -> list[dict[str, Any]]:
    """One resource group covering every resource any of the queue's flavors gives: with BlockUndeclared a
    pod asking for anything else is not admitted, and a flavor without a covered resource gives none."""
    quotas: dict[str, dict[str, QuotaSpec]] = {}
    for fname in _flavor_order(spec, flavors):
        resources, fpath = spec.quotas[fname], f"{path}.quotas.{fname}"
        flavor = flavors.get(fname)
        if flavor is None:
            raise ConfigError(fpath, f"flavor {fname!r} does not exist in this environment; "
                              f"flavors: {name_list(flavors)}")
        if not resources:
            raise ConfigError(fpath, "a flavor quota needs at least one resource")
        for rname, q in resources.items():
            _check_quota(fpath, fname, flavor, rname, q, spec)
        quotas[fname] = _scratch(flavor, _metered(fname, flavor, resources, fpath))
    if len(quotas) > MAX_FLAVORS_PER_GROUP:
        raise ConfigError(f"{path}.quotas", f"{len(quotas)} flavors: a Kueue resource group holds at most "
                          f"{MAX_FLAVORS_PER_GROUP}")
    if not quotas:
        return []
    covered = [r for r in RESOURCE_ORDER if any(r in q for q in quotas.values())]
    return [{"coveredResources": covered, "flavors": [
        {"name": f, "resources": [_quota_entry(r, q.get(r)) for r in covered]} for f, q in quotas.items()]}]


@dataclass(frozen=True)
class _QueueContext:
    """What every ClusterQueue is checked against: the flavors, the declared cohorts, the config."""

    flavors: dict[str, FlavorPlan]
    cohorts: set[str]
    cfg: PlatformConfig


def _preemption(spec: QueueSpec, path: str, cfg: PlatformConfig) -> dict[str, Any]:
    if spec.preemption.borrow_within_cohort and cfg.kueue.fair_sharing:
        raise ConfigError(f"{path}.preemption.borrow_within_cohort", "Kueue ignores borrowWithinCohort when fair "
                          "sharing is on (kueue.fair_sharing: true; Kueue docs, concepts/preemption: fair sharing "
                          "works with withinClusterQueue and reclaimWithinCohort, not borrowWithinCohort): drop it, "
                          "or turn fair sharing off")
    if spec.preemption.borrow_within_cohort and spec.preemption.reclaim_within_cohort == "Never":
        raise ConfigError(f"{path}.preemption.borrow_within_cohort", "borrowing preemption needs "
                          "reclaim_within_cohort other than 'Never' (Kueue rejects the pair)")
    p = spec.preemption
    preemption: dict[str, Any] = {"reclaimWithinCohort": p.reclaim_within_cohort,
                                  "withinClusterQueue": p.within_cluster_queue}
    if p.borrow_within_cohort:
        preemption["borrowWithinCohort"] = {"policy": p.borrow_within_cohort.policy, **(
            {"maxPriorityThreshold": p.borrow_within_cohort.max_priority_threshold}
            if p.borrow_within_cohort.max_priority_threshold is not None else {})}
    return preemption


def _cluster_queue(ctx: _QueueContext, name: str, path: str, spec: QueueSpec, *, shared: bool,
                   shared_all: bool = False) -> Manifest:
    if spec.cohort is not None and spec.cohort not in ctx.cohorts:
        raise ConfigError(f"{path}.cohort", f"cohort {spec.cohort!r} does not exist; declared cohorts: "
                          f"{name_list(ctx.cohorts)}")
    flavors = ctx.flavors
    body: dict[str, Any] = {
        # By label, not by namespace list: a team joining a shared queue changes its namespaces, not the queue.
        "namespaceSelector": {} if shared_all else {"matchLabels": {admitted_by_label(name): "true"}},
        "queueingStrategy": spec.queueing_strategy,
        "preemption": _preemption(spec, path, ctx.cfg),
        "resourceGroups": _resource_groups(spec, flavors, path),
        "flavorFungibility": FLAVOR_FUNGIBILITY,
    }
    if spec.cohort:
        body["cohortName"] = spec.cohort
    if spec.fair_sharing_weight is not None:
        body["fairSharing"] = {"weight": render_quantity(spec.fair_sharing_weight)}
    checks: dict[str, list[str]] = {}
    for f in sorted(f for f in spec.quotas if flavors[f].queued):
        checks.setdefault(provisioning_check(ctx.cfg.kueue, flavors[f])[0], []).append(f)
    for f in sorted(f for f in spec.quotas if flavors[f].dynamic_slicing):
        checks.setdefault(vocabulary.SLICE_ADMISSION_CHECK, []).append(f)
    if checks:
        body["admissionChecksStrategy"] = {"admissionChecks": [
            {"name": check, "onFlavors": on} for check, on in sorted(checks.items())]}
    meta: dict[str, Any] = {"name": name}
    if shared:
        meta["labels"] = {SHARED_QUEUE_LABEL: "true"}
    return {"apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": meta, "spec": body}


def derive_priorities(cfg: PlatformConfig) -> tuple[tuple[Manifest, ...], tuple[Manifest, ...]]:
    pcs: list[Manifest] = []
    wpcs: list[Manifest] = []
    names: set[str] = set()
    defaults = [i for i, p in enumerate(cfg.priorities) if p.global_default]
    if len(defaults) > 1:
        raise ConfigError(path_of("priorities", defaults[1], "global_default"),
                          f"{cfg.priorities[defaults[0]].name!r} is already the global default; "
                          "at most one priority class may be")
    for i, p in enumerate(cfg.priorities):
        if p.name in names:
            raise ConfigError(path_of("priorities", i, "name"), f"priority {p.name!r} is declared twice")
        names.add(p.name)
        if not -MAX_USER_PRIORITY <= p.value < MAX_USER_PRIORITY:
            raise ConfigError(path_of("priorities", i, "value"), f"{p.value} is out of range: user priority "
                              f"classes take values from -{MAX_USER_PRIORITY:,} to {MAX_USER_PRIORITY - 1:,} "
                              "(higher values are reserved for system-critical pods)")
        if p.pod_priority_class:
            pc: Manifest = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": p.name},
                  "value": p.value, "globalDefault": p.global_default, "preemptionPolicy": p.preemption_policy}
            if p.description:
                pc["description"] = p.description
            pcs.append(pc)
        if p.workload_priority_class:
            wpc: Manifest = {"apiVersion": KUEUE_API, "kind": "WorkloadPriorityClass", "metadata": {"name": p.name},
                   "value": p.value}
            if p.description:
                wpc["description"] = p.description
            wpcs.append(wpc)
    return tuple(pcs), tuple(wpcs)


def provisioning_check(k: KueueConfig, flavor: FlavorPlan) -> tuple[str, str]:
    """(AdmissionCheck, ProvisioningRequestConfig) names of a queued flavor: one pair for GPUs (source
    page 004's names), and one per TPU topology, since a TPU request names its slice's topology."""
    topology = flavor.node_labels.get(vocabulary.TPU_TOPOLOGY_LABEL)
    if flavor.accelerator_resource != vocabulary.TPU_RESOURCE or topology is None:
        return k.dws_admission_check, k.dws_config
    return f"{k.dws_admission_check}-tpu-{topology}", f"{k.dws_config}-tpu-{topology}"


def _provisioning_pair(check: str, config: str, spec: dict[str, Any]) -> tuple[Manifest, Manifest]:
    return (
        {"apiVersion": KUEUE_API, "kind": "ProvisioningRequestConfig", "metadata": {"name": config},
         "spec": {"provisioningClassName": QUEUED_PROVISIONING_CLASS, **spec, "retryStrategy": dict(DWS_RETRY)}},
        {"apiVersion": KUEUE_API, "kind": "AdmissionCheck", "metadata": {"name": check},
         "spec": {"controllerName": PROVISIONING_CONTROLLER,
                  "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": config}}},
    )


def _admission_checks(cfg: PlatformConfig, flavors: dict[str, FlavorPlan]) -> tuple[Manifest, ...]:
    """The queued-provisioning checks: GPUs as source page 004 sets them up; TPUs as Google's Cluster
    Toolkit does (no GKE page shows it): the request names the slice topology in its parameters. Both
    pin the pods to the nodes GKE provisioned for their request (`podSetUpdates`, Kueue's provisioning
    docs: "restrict scheduling of the PodSets' pods to the newly provisioned nodes"); without it a TPU
    slice's pods could land on another request's nodes of the same shape."""
    out: list[Manifest] = []
    queued = {provisioning_check(cfg.kueue, f): f for f in flavors.values() if f.queued}
    pinned = {"podSetUpdates": {"nodeSelector": [dict(PROVISIONING_NODE_SELECTOR)]}}
    for (check, config), flavor in queued.items():
        topology = flavor.node_labels.get(vocabulary.TPU_TOPOLOGY_LABEL)
        if check == cfg.kueue.dws_admission_check:
            spec = {"managedResources": [vocabulary.GPU_RESOURCE], **pinned}
        else:
            spec = {"managedResources": [vocabulary.TPU_RESOURCE], "parameters": {"tpu-topology": topology},
                    **pinned}
        out += _provisioning_pair(check, config, spec)
    if any(f.dynamic_slicing for f in flavors.values()):
        out.append(slice_check())
    return tuple(out)


def slice_check() -> Manifest:
    """The AdmissionCheck of GKE's slice controller: it forms the Slice of sub-blocks Kueue's TAS assigned a
    workload, and the workload's pods start once the slice is ready (model.dynamic_slicing). It takes no
    parameters (Cluster Toolkit's and xpk's checks name none)."""
    return {"apiVersion": KUEUE_API, "kind": "AdmissionCheck", "metadata": {"name": vocabulary.SLICE_ADMISSION_CHECK},
            "spec": {"controllerName": vocabulary.SLICE_CONTROLLER}}


def derive_scheduling(cfg: PlatformConfig, pools: list[PoolPlan],
                      fleet_flavors: Mapping[str, FlavorPlan] | None = None) -> SchedulingPlan:
    tenancy.check_version(cfg)
    tenancy.check_queue_management(cfg)
    classes = plan_compute_classes(cfg, pools)
    flavors = derive_flavors(cfg, pools, fleet_flavors, classes)
    cohorts = derive_cohorts(cfg)
    pcs, wpcs = derive_priorities(cfg)
    ctx = _QueueContext(flavors, {c.name for c in cfg.cohorts}, cfg)
    shared = {q.name: (i, q) for i, q in enumerate(cfg.shared_queues)}
    if len(shared) != len(cfg.shared_queues):
        dup = next(q.name for q in cfg.shared_queues if [x.name for x in cfg.shared_queues].count(q.name) > 1)
        raise ConfigError(path_of("shared_queues"), f"shared queue {dup!r} is declared twice")
    team_ns = _team_namespaces(cfg, set(shared))
    own = {t.cluster_queue or t.name: t.name for t in cfg.teams if t.queue is not None}
    tpu_flavors = {n: f.node_labels.get(vocabulary.TPU_ACCELERATOR_LABEL) for n, f in flavors.items()
                   if _accelerator_of(f) == vocabulary.TPU_RESOURCE}
    with_heads = pathways.queues_with_heads(cfg, pools, tpu_flavors)
    queues, teams = [], []
    pool_flavor_names = frozenset(f.node_labels[FLAVOR_LABEL] for f in flavors.values()
                                  if FLAVOR_LABEL in f.node_labels)
    for i, t in enumerate(cfg.teams):
        if (queue := with_heads.get(i) or t.queue) is not None:
            cq_name, path = t.cluster_queue or t.name, path_of("teams", i, "queue")
            cq = _cluster_queue(ctx, cq_name, path, queue, shared=False)
            if stop := stop_policy(t):
                cq["spec"]["stopPolicy"] = stop
            queues.append(ClusterQueuePlan(cq_name, path, queue, team_ns[i], False, cq))
        else:
            assert t.cluster_queue is not None  # a shared queue's name, checked above
            cq_name = t.cluster_queue
        teams.append(_team_manifests(cfg, i, t, team_ns[i], _local_queues(i, t, cq_name, set(shared), own),
                                     cq_name, pool_flavor_names))
    for name, (i, q) in shared.items():
        path = path_of("shared_queues", i)
        namespaces = tuple(ns for team in teams if name in team.cluster_queues for ns in team.namespaces)
        queues.append(ClusterQueuePlan(name, path, q, namespaces, True, _cluster_queue(
            ctx, name, path, q, shared=True, shared_all=q.admit == "all")))
    admission_fair_sharing.apply(cfg, [(q.name, q.path, q.spec.admission_fair_sharing, q.shared, q.manifest)
                                       for q in queues], teams)
    return SchedulingPlan(flavors=flavors, cohorts=cohorts, cluster_queues=tuple(queues), teams=tuple(teams),
                          admission_checks=_admission_checks(cfg, flavors), priority_classes=pcs,
                          workload_priority_classes=wpcs, compute_classes=classes)
