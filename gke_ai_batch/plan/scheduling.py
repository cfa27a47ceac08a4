"""The Kueue layer derived from the stack config and the node pools, as plain manifests.

Flavors come from the pools (never typed by hand: plan.flavors), quotas are checked against the flavors, and
every reference (cohort, flavor, ClusterQueue, priority, admission check) is resolved here, so that a plan which
reaches the components is already consistent. Emits kueue.x-k8s.io/v1beta2 only.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gke_ai_batch import vocabulary
from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.quantity import parse_quantity, render_quantity
from gke_ai_batch.model.team_config import QueueSpec, QuotaSpec
from gke_ai_batch.model.topologies import topology_name
from gke_ai_batch.model.words import name_list
from gke_ai_batch.plan import admission_fair_sharing, pathways, tenancy
from gke_ai_batch.plan.admission_checks import admission_checks, provisioning_check
from gke_ai_batch.plan.compute_classes import ComputeClassPlan, plan_compute_classes
from gke_ai_batch.plan.flavors import BASE_RESOURCES, SCRATCH, FlavorPlan, derive_flavors
from gke_ai_batch.plan.pools import PoolPlan
from gke_ai_batch.plan.priorities import derive_priorities
from gke_ai_batch.plan.team_namespaces import TeamPlan, _local_queues, _team_manifests, _team_namespaces, stop_policy
from gke_ai_batch.vocabulary import (
    FLAVOR_LABEL,
    KUEUE_API,
    SHARED_QUEUE_LABEL,
    Capacity,
    Manifest,
    admitted_by_label,
)

RESOURCE_ORDER = BASE_RESOURCES + (vocabulary.TPU_RESOURCE, vocabulary.GPU_RESOURCE)
MAX_FLAVORS_PER_GROUP = 64  # ClusterQueue CRD (v0.19.2): resourceGroups[].flavors maxItems



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
# CLI hands the program that mapping with its keys sorted (gke_ai_batch.offline.engine.stackfile.engine_json).
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
                          admission_checks=admission_checks(cfg, flavors), priority_classes=pcs,
                          workload_priority_classes=wpcs, compute_classes=classes)
