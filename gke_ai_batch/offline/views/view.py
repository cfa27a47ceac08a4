"""The teams, queues, flavors and pools of a plan, read back from its registrations.

The summary and the queue diagram are built from what would be sent (the camelCase inputs of every
registered resource), not from the stack config, so that they show the plan as it is, also for a
program that builds the components directly. Capacity comes from the model the quota policies judge by
(`model.promises.flavor_capacity`), so the summary and the policies never disagree."""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gke_ai_batch.model import catalog, promises
from gke_ai_batch.model.pool_facts import PoolFacts, pool_facts, tolerates_queued
from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.vocabulary import (
    CLUSTER,
    DEFAULT_RUNTIME_ANNOTATION,
    KUEUE_GROUP_TYPE_PREFIX,
    MAX_RUNTIME_ANNOTATION,
    NODE_POOL,
    PRIORITIES_ANNOTATION,
    PRIORITY_CLASS,
    SHARED_QUEUE_LABEL,
    TEAM_LABEL,
    USAGE_BASED_ADMISSION,
    PoolKind,
)

from ..engine.runtime import Registration

# GKE's accelerator label -> the TPU generation as the stack config names it (tpu-v5-lite-podslice -> v5e).
TPU_GENERATION_OF = {g.accelerator: g.name for g in catalog.TPU_GENERATIONS.values()}


@dataclass(frozen=True)
class QueueQuota:
    """One resource of one flavor in a ClusterQueue; None is "no limit"."""

    flavor: str
    resource: str
    nominal: Decimal
    borrowing_limit: Decimal | None
    lending_limit: Decimal | None


@dataclass
class ClusterQueue:
    name: str
    cohort: str | None
    shared: bool  # labelled as a queue several teams share
    admits_all: bool  # namespaceSelector {}: every namespace may point a LocalQueue at it
    quotas: list[QueueQuota] = field(default_factory=list)
    teams: list[str] = field(default_factory=list)
    usage_ordered: bool = False  # admissionScope: UsageBasedAdmissionFairSharing (plan.admission_fair_sharing)


@dataclass(frozen=True)
class LocalQueue:
    namespace: str
    name: str
    cluster_queue: str
    team: str
    weight: str | None = None  # spec.fairSharing.weight: its usage divides by it (admission fair sharing)
    runtime: tuple[int, int] | None = None  # (maximum, default) seconds a job may run, from its namespace


@dataclass
class Team:
    """A team as the plan declares it: its labelled namespaces and the LocalQueues in them."""

    name: str
    namespaces: list[str] = field(default_factory=list)
    local_queues: list[LocalQueue] = field(default_factory=list)
    priorities: list[str] = field(default_factory=list)  # what its namespaces allow (the admission policies)

    @property
    def cluster_queues(self) -> list[str]:
        return sorted({lq.cluster_queue for lq in self.local_queues})


@dataclass
class Flavor:
    name: str
    node_labels: dict[str, str]
    queued: bool
    pools: list[str]  # names of the pools whose nodes it selects
    modes: list[str]  # their capacity modes (on-demand, spot, reservation, flex-start, queued-provisioning)
    capacity: dict[str, promises.FlavorCapacity]  # resource -> at full size and guaranteed; empty without pools
    compute_class: bool = False  # the nodes of a compute class: modes is its chain, only reservations guaranteed


@dataclass(frozen=True)
class Pool:
    facts: PoolFacts
    zones: tuple[str, ...]  # where its nodes run: its node locations, else the cluster's, else a zonal cluster's zone
    generation: str | None  # the TPU generation as the config writes it (v5e), or None
    reservation: str | None  # the reservation a SPECIFIC_RESERVATION pool consumes


@dataclass
class StackView:
    cluster: Mapping[str, Any] | None
    pools: list[Pool]
    flavors: dict[str, Flavor]
    cohorts: dict[str, str | None]  # cohort -> parent cohort
    cluster_queues: dict[str, ClusterQueue]
    teams: list[Team]
    default_priority: tuple[str, int] | None  # the global default PriorityClass: (name, value)


def natural(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that puts pool-2 before pool-10."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name) if part)


def cluster_zones(regs: Sequence[Registration]) -> list[str]:
    """The node zones of the stack's cluster: where its pools without nodeLocations run."""
    return next((list(r.inputs.get("nodeLocations") or []) for r in regs if r.type == CLUSTER), [])


def _kueue(regs: Iterable[Registration], kind: str) -> list[Registration]:
    return [r for r in regs if r.type.startswith(KUEUE_GROUP_TYPE_PREFIX) and r.type.endswith(f":{kind}")]


def _meta(r: Registration) -> dict[str, Any]:
    return dict(r.inputs.get("metadata") or {})


def _spec(r: Registration) -> dict[str, Any]:
    return dict(r.inputs.get("spec") or {})


def _quantity(value: Any) -> Decimal | None:
    """A quota field as a Decimal (None when absent); manifests carry whole numbers as integers."""
    if value is None:
        return None
    return parse_quantity(value if isinstance(value, int | str) else str(value))


def _pool(props: Mapping[str, Any], zones: Sequence[str], location: str) -> Pool:
    facts = pool_facts(props, zones)
    affinity = (props.get("nodeConfig") or {}).get("reservationAffinity") or {}
    specific = affinity.get("consumeReservationType") == "SPECIFIC_RESERVATION"
    reservation = ", ".join(affinity.get("values") or []) if specific else None
    zonal = location.count("-") == 2  # us-east5-b; a region (us-east5) has one dash
    generation = TPU_GENERATION_OF.get(facts.accelerator or "") if facts.kind == PoolKind.TPU else None
    return Pool(facts, facts.zones or ((location,) if zonal else ()), generation, reservation or None)


def _flavors(regs: Sequence[Registration], pools: Sequence[Pool]) -> dict[str, Flavor]:
    ix = promises.StackIndex([promises.Res(r.type, r.urn, r.inputs) for r in regs if r.custom])
    caps, classes = promises.flavor_capacity(ix), promises.compute_classes(ix)
    out: dict[str, Flavor] = {}
    for r in _kueue(regs, "ResourceFlavor"):
        name, spec = str(_meta(r).get("name")), _spec(r)
        matched = [p.facts for p in pools if p.facts.serves(spec)]
        remote = promises.worker_holds(r.inputs)  # a fleet manager's flavor: its worker's pools' mode
        cc = promises.class_of(r.inputs, classes)  # a compute class's flavor: its chain's ways
        modes = (list(dict.fromkeys(str(w) for w in cc.ways)) if cc else
                 sorted({p.capacity for p in matched} | ({remote[0]} if remote else set())))
        out[name] = Flavor(name, dict(spec.get("nodeLabels") or {}), tolerates_queued(spec),
                           [p.name for p in matched], modes, caps.get(name, {}), cc is not None)
    return dict(sorted(out.items()))


def _cluster_queue(r: Registration) -> ClusterQueue:
    spec = _spec(r)
    labels = _meta(r).get("labels") or {}
    cq = ClusterQueue(str(_meta(r).get("name")), spec.get("cohortName"), labels.get(SHARED_QUEUE_LABEL) == "true",
                      spec.get("namespaceSelector") == {},
                      usage_ordered=(spec.get("admissionScope") or {}).get("admissionMode") == USAGE_BASED_ADMISSION)
    for group in spec.get("resourceGroups") or []:
        for fl in group.get("flavors") or []:
            for res in fl.get("resources") or []:
                nominal = _quantity(res.get("nominalQuota")) or Decimal(0)
                cq.quotas.append(QueueQuota(fl["name"], res["name"], nominal, _quantity(res.get("borrowingLimit")),
                                       _quantity(res.get("lendingLimit"))))
    return cq


def _teams(regs: Sequence[Registration]) -> list[Team]:
    """Teams by the team label of their namespaces and LocalQueues; a LocalQueue without one belongs
    to its namespace's team, else it is shown under its namespace in parentheses."""
    teams: dict[str, Team] = {}
    ns_team: dict[str, str] = {}
    ns_annotations: dict[str, dict[str, str]] = {}
    for r in regs:
        if r.type.startswith("kubernetes:core/v1:Namespace") and TEAM_LABEL in (_meta(r).get("labels") or {}):
            name, team = str(_meta(r)["name"]), str(_meta(r)["labels"][TEAM_LABEL])
            ns_team[name] = team
            teams.setdefault(team, Team(team)).namespaces.append(name)
            ns_annotations[name] = dict(_meta(r).get("annotations") or {})
            allowed = str((_meta(r).get("annotations") or {}).get(PRIORITIES_ANNOTATION) or "")
            teams[team].priorities = [p for p in allowed.split(",") if p]
    for r in _kueue(regs, "LocalQueue"):
        meta = _meta(r)
        ns = str(meta.get("namespace") or "default")
        team = (meta.get("labels") or {}).get(TEAM_LABEL) or ns_team.get(ns) or f"({ns})"
        weight = (_spec(r).get("fairSharing") or {}).get("weight")
        lq = LocalQueue(ns, str(meta.get("name")), str(_spec(r).get("clusterQueue")), team,
                        None if weight is None else str(weight),
                        _runtime(ns_annotations.get(ns, {}), str(meta.get("name"))))
        teams.setdefault(team, Team(team)).local_queues.append(lq)
    for t in teams.values():
        t.namespaces.sort()
        t.local_queues.sort(key=lambda q: (q.namespace, q.name))
    return [teams[n] for n in sorted(teams, key=natural)]


def _runtime(annotations: Mapping[str, str], queue: str) -> tuple[int, int] | None:
    """A LocalQueue's (maximum, default) time limit in seconds, as its namespace carries it for the policies."""
    most = annotations.get(MAX_RUNTIME_ANNOTATION + queue)
    if most is None:
        return None
    return int(most), int(annotations.get(DEFAULT_RUNTIME_ANNOTATION + queue, most))


def _default_priority(regs: Sequence[Registration]) -> tuple[str, int] | None:
    """What a job that names no priority gets: the global default PriorityClass (Kueue has no per-team
    or per-namespace default), else none (priority 0)."""
    found = sorted((str(_meta(r).get("name")), int(r.inputs.get("value") or 0)) for r in regs
                   if r.type == PRIORITY_CLASS and r.inputs.get("globalDefault"))
    return found[0] if found else None


def stack_view(regs: Sequence[Registration]) -> StackView:
    zones, cluster = cluster_zones(regs), next((r.inputs for r in regs if r.type == CLUSTER), None)
    location = str((cluster or {}).get("location") or "")
    pools = sorted((_pool(r.inputs, zones, location) for r in regs if r.type == NODE_POOL),
                   key=lambda p: natural(p.facts.name))
    queues = {cq.name: cq for cq in sorted((_cluster_queue(r) for r in _kueue(regs, "ClusterQueue")),
                                           key=lambda q: q.name)}
    teams = _teams(regs)
    by_queue: dict[str, set[str]] = defaultdict(set)
    for t in teams:
        for q in t.cluster_queues:
            by_queue[q].add(t.name)
    for name, cq in queues.items():
        cq.teams = sorted(by_queue.get(name, ()))
    cohorts = {str(_meta(r).get("name")): _spec(r).get("parentName") for r in _kueue(regs, "Cohort")}
    for cq in queues.values():
        if cq.cohort:
            cohorts.setdefault(cq.cohort, None)  # named by a queue but not declared: shown all the same
    return StackView(cluster=cluster, pools=pools,
                     flavors=_flavors(regs, pools), cohorts=dict(sorted(cohorts.items())),
                     cluster_queues=queues, teams=teams, default_priority=_default_priority(regs))

