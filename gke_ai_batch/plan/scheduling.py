"""The Kueue layer derived from the stack config and the node pools, as plain manifests.

Flavors come from the pools (never typed by hand), quotas are checked against the flavors, and
every reference (cohort, flavor, ClusterQueue, priority) is resolved here, so that a plan which
reaches the components is already consistent. Emits kueue.x-k8s.io/v1beta2 only.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gke_ai_batch import vocabulary
from gke_ai_batch.model.config import PlatformConfig, QueueSpec, TeamConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.quantity import parse_quantity, render_quantity
from gke_ai_batch.model.suggest import name_list
from gke_ai_batch.plan.pools import PoolPlan
from gke_ai_batch.vocabulary import (
    CLUSTER_QUEUE_LABEL,
    COST_CENTER_LABEL,
    KUEUE_API,
    PROVISIONING_CONTROLLER,
    QUEUED_PROVISIONING_CLASS,
    SHARED_QUEUE_LABEL,
    TEAM_COST_LABEL,
    TEAM_LABEL,
    ClusterMode,
)

# Kueue docs for GKE queued provisioning: pin the pods to the nodes GKE provisioned for the request.
PROVISIONING_NODE_SELECTOR = {"key": "autoscaling.gke.io/provisioning-request",
                              "valueFromProvisioningClassDetail": "ResizeRequestName"}
PREEXISTING_NAMESPACES = frozenset({"default"})  # labelled in place, never created or deleted
# Namespaces of the cluster and its controllers: a team there would get edit on them and put system pods
# under Kueue (Kueue itself refuses to manage kube-system and its own namespace).
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease", "kueue-system", "jobset-system"})
SYSTEM_PREFIXES = ("kube-", "gke-", "gmp-")
BASE_RESOURCES = ("cpu", "memory", "ephemeral-storage")
RESOURCE_ORDER = BASE_RESOURCES + (vocabulary.TPU_RESOURCE, vocabulary.GPU_RESOURCE)
MAX_USER_PRIORITY = 1_000_000_000  # values above are reserved for system-critical classes
DWS_RETRY = {"backoffLimitCount": 3, "backoffBaseSeconds": 60, "backoffMaxSeconds": 1800}

Manifest = dict[str, Any]  # a Kubernetes object as plain data


@dataclass(frozen=True)
class FlavorPlan:
    name: str
    node_labels: dict[str, str]
    tolerations: tuple[dict[str, str], ...] = ()
    pools: tuple[PoolPlan, ...] = ()
    resources: tuple[str, ...] = BASE_RESOURCES  # what a quota on this flavor may name
    queued: bool = False

    @property
    def accelerator_resource(self) -> str | None:
        return self.pools[0].resource if self.pools else None

    def manifest(self) -> Manifest:
        spec: dict[str, Any] = {}
        if self.node_labels:
            spec["nodeLabels"] = dict(self.node_labels)
        if self.tolerations:
            spec["tolerations"] = [dict(t) for t in self.tolerations]
        return {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": self.name}, "spec": spec}


@dataclass(frozen=True)
class ClusterQueuePlan:
    name: str
    path: str
    spec: QueueSpec
    namespaces: tuple[str, ...]  # empty: admits every namespace (a declared shared queue)
    shared: bool
    manifest: Manifest


@dataclass(frozen=True)
class TeamPlan:
    name: str
    path: str
    namespaces: tuple[str, ...]
    created_namespaces: tuple[str, ...]
    cluster_queue: str
    local_queue: str
    groups: tuple[str, ...]
    namespace_manifests: tuple[Manifest, ...]  # created, or (pre-existing ones) labels patched in place
    local_queue_manifests: tuple[Manifest, ...]
    role_binding_manifests: tuple[Manifest, ...]


@dataclass(frozen=True)
class SchedulingPlan:
    flavors: dict[str, FlavorPlan]
    cohorts: tuple[Manifest, ...]
    cluster_queues: tuple[ClusterQueuePlan, ...]
    teams: tuple[TeamPlan, ...]
    admission_checks: tuple[Manifest, ...]  # ProvisioningRequestConfig and AdmissionCheck
    priority_classes: tuple[Manifest, ...]
    workload_priority_classes: tuple[Manifest, ...]


def derive_flavors(cfg: PlatformConfig, pools: list[PoolPlan]) -> dict[str, FlavorPlan]:
    by_name: dict[str, list[PoolPlan]] = {}
    for p in pools:
        if p.kind != "system":
            assert p.flavor is not None  # every accelerator pool names its flavor
            by_name.setdefault(p.flavor, []).append(p)
    flavors: dict[str, FlavorPlan] = {}
    for name, members in by_name.items():
        first = members[0]
        for other in members[1:]:
            if (other.node_labels, other.taints, other.machine_type) != (first.node_labels, first.taints,
                                                                         first.machine_type):
                raise ConfigError(f"{other.path}.flavor", f"flavor {name!r} is already used by {first.path} "
                                  f"with different nodes ({first.machine_type}, {first.capacity}); a flavor "
                                  "selects one machine type, shape and capacity: name another flavor")
        queued = bool(first.taints)
        assert first.resource is not None  # accelerator pools provide TPU chips or GPUs
        flavors[name] = FlavorPlan(
            name=name, node_labels=first.node_labels,
            tolerations=tuple({"key": t["key"], "operator": "Equal", "value": t["value"], "effect": t["effect"]}
                              for t in first.taints),
            pools=tuple(members), resources=BASE_RESOURCES + (first.resource,), queued=queued)
    default = cfg.kueue.default_flavor
    referenced = any(default in q.quotas for q in _queue_specs(cfg))
    if default not in flavors and (not flavors or referenced):
        autopilot = cfg.cluster.mode == ClusterMode.AUTOPILOT
        # On Autopilot GKE creates accelerator nodes per workload, so the default flavor may hold them too.
        extra = (vocabulary.GPU_RESOURCE, vocabulary.TPU_RESOURCE) if autopilot else ()
        flavors[default] = FlavorPlan(name=default, node_labels={}, resources=BASE_RESOURCES + extra)
    return flavors


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


def _resource_groups(spec: QueueSpec, flavors: dict[str, FlavorPlan], path: str) -> list[dict[str, Any]]:
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for fname, resources in spec.quotas.items():
        fpath = f"{path}.quotas.{fname}"
        flavor = flavors.get(fname)
        if flavor is None:
            raise ConfigError(fpath, f"flavor {fname!r} does not exist in this environment; "
                              f"flavors: {name_list(flavors)}")
        if not resources:
            raise ConfigError(fpath, "a flavor quota needs at least one resource")
        for rname, q in resources.items():
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
        covered = tuple(r for r in RESOURCE_ORDER if r in resources)
        entry = {"name": fname, "resources": [
            {"name": r, "nominalQuota": render_quantity(rq.nominal),
             **({"borrowingLimit": render_quantity(rq.borrowing_limit)} if rq.borrowing_limit is not None else {}),
             **({"lendingLimit": render_quantity(rq.lending_limit)} if rq.lending_limit is not None else {})}
            for r in covered for rq in (resources[r],)]}
        groups.setdefault(covered, []).append(entry)
    keys = list(groups)
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            if set(a) & set(b):
                fa, fb = groups[a][0]["name"], groups[b][0]["name"]
                raise ConfigError(f"{path}.quotas.{fb}", f"flavor {fb!r} covers {list(b)} but flavor {fa!r} covers "
                                  f"{list(a)}: flavors that share a resource must cover the same resources")
    return [{"coveredResources": list(k), "flavors": v} for k, v in groups.items()]


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
        "namespaceSelector": {} if shared_all else {"matchLabels": {CLUSTER_QUEUE_LABEL: name}},
        "queueingStrategy": spec.queueing_strategy,
        "preemption": _preemption(spec, path, ctx.cfg),
        "resourceGroups": _resource_groups(spec, flavors, path),
    }
    if spec.cohort:
        body["cohortName"] = spec.cohort
    if spec.fair_sharing_weight is not None:
        body["fairSharing"] = {"weight": render_quantity(spec.fair_sharing_weight)}
    queued = sorted(f for f in spec.quotas if flavors[f].queued)
    if queued:
        body["admissionChecksStrategy"] = {"admissionChecks": [
            {"name": ctx.cfg.kueue.dws_admission_check, "onFlavors": queued}]}
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


def _admission_checks(cfg: PlatformConfig, flavors: dict[str, FlavorPlan]) -> tuple[Manifest, ...]:
    queued = [f for f in flavors.values() if f.queued]
    if not queued:
        return ()
    k = cfg.kueue
    # A queued flavor comes from accelerator pools, so it always has an accelerator resource.
    managed = sorted({r for f in queued if (r := f.accelerator_resource) is not None})
    return (
        {"apiVersion": KUEUE_API, "kind": "ProvisioningRequestConfig", "metadata": {"name": k.dws_config},
         "spec": {"provisioningClassName": QUEUED_PROVISIONING_CLASS, "managedResources": managed,
                  "retryStrategy": dict(DWS_RETRY),
                  "podSetUpdates": {"nodeSelector": [dict(PROVISIONING_NODE_SELECTOR)]}}},
        {"apiVersion": KUEUE_API, "kind": "AdmissionCheck", "metadata": {"name": k.dws_admission_check},
         "spec": {"controllerName": PROVISIONING_CONTROLLER,
                  "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig",
                                 "name": k.dws_config}}},
    )


def cost_labels(cfg: PlatformConfig, team: TeamConfig) -> dict[str, str]:
    """`team` and `cost-center` on a team's namespaces, so that GKE cost allocation (on in every
    cluster) can split the bill by them."""
    center = team.cost_center or cfg.cost_center
    return {TEAM_COST_LABEL: team.name, **({COST_CENTER_LABEL: center} if center else {})}


def _team_manifests(cfg: PlatformConfig, i: int, team: TeamConfig, namespaces: tuple[str, ...],
                    cq_name: str) -> TeamPlan:
    lq = team.local_queue or f"{team.name}-queue"
    labels = {TEAM_LABEL: team.name}
    created = tuple(ns for ns in namespaces if ns not in PREEXISTING_NAMESPACES)
    ns_manifests = tuple({"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": ns, "labels": {**labels, CLUSTER_QUEUE_LABEL: cq_name, **cost_labels(cfg, team)}}}
        for ns in namespaces)
    lqs = tuple({"apiVersion": KUEUE_API, "kind": "LocalQueue",
                 "metadata": {"name": lq, "namespace": ns, "labels": dict(labels)},
                 "spec": {"clusterQueue": cq_name}} for ns in namespaces)
    rbs = tuple({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                 "metadata": {"name": f"{team.name}-edit", "namespace": ns, "labels": dict(labels)},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
                 "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g}
                              for g in team.groups]}
                for ns in namespaces) if team.groups else ()
    return TeamPlan(name=team.name, path=path_of("teams", i), namespaces=tuple(namespaces), created_namespaces=created,
                    cluster_queue=cq_name, local_queue=lq, groups=tuple(team.groups),
                    namespace_manifests=ns_manifests, local_queue_manifests=lqs, role_binding_manifests=rbs)


def _system_namespace(ns: str) -> bool:
    return ns in SYSTEM_NAMESPACES or ns.startswith(SYSTEM_PREFIXES)


def _team_namespaces(cfg: PlatformConfig, shared: set[str]) -> list[tuple[str, ...]]:
    """Each team's namespaces, after checking that teams, namespaces and queue names are unique and
    that every team has a queue of its own or names a shared one."""
    owner_of_ns: dict[str, str] = {}
    team_names: set[str] = set()
    own_queues: set[str] = set()
    team_ns: list[tuple[str, ...]] = []
    for i, t in enumerate(cfg.teams):
        path = path_of("teams", i)
        if t.name in team_names:
            raise ConfigError(f"{path}.name", f"team {t.name!r} is declared twice")
        team_names.add(t.name)
        namespaces = tuple(t.namespaces) or (t.name,)
        for ns in namespaces:
            if _system_namespace(ns):
                raise ConfigError(f"{path}.namespaces", f"{ns!r} belongs to the cluster or its controllers; a team "
                                  f"needs namespaces of its own (not {', '.join(sorted(SYSTEM_NAMESPACES))} or "
                                  f"names beginning {', '.join(SYSTEM_PREFIXES)})")
            if ns in owner_of_ns:
                raise ConfigError(f"{path}.namespaces", f"namespace {ns!r} already belongs to team "
                                  f"{owner_of_ns[ns]!r}; a namespace belongs to one team")
            owner_of_ns[ns] = t.name
        team_ns.append(namespaces)
        if t.groups and not cfg.cluster.security_group:
            raise ConfigError(f"{path}.groups", "Google groups need Google Groups for RBAC: set "
                              "cluster.security_group to gke-security-groups@<your domain>")
        if t.queue is not None:
            cq = t.cluster_queue or t.name
            if cq in shared or cq in own_queues:
                raise ConfigError(f"{path}.cluster_queue", f"ClusterQueue {cq!r} already exists; a team with its "
                                  "own queue needs a unique cluster_queue name")
            own_queues.add(cq)
        elif t.cluster_queue is None:
            raise ConfigError(path, "the team has no queue: give it its own `queue` block, or name a shared queue "
                              f"in `cluster_queue` (shared queues: {name_list(shared)})")
        elif t.cluster_queue not in shared:
            raise ConfigError(f"{path}.cluster_queue", f"{t.cluster_queue!r} is not a shared queue; give the team "
                              f"its own `queue`, or name a shared queue: {name_list(shared)}")
    return team_ns


def derive_scheduling(cfg: PlatformConfig, pools: list[PoolPlan]) -> SchedulingPlan:
    flavors = derive_flavors(cfg, pools)
    cohorts = derive_cohorts(cfg)
    pcs, wpcs = derive_priorities(cfg)
    ctx = _QueueContext(flavors, {c.name for c in cfg.cohorts}, cfg)
    shared = {q.name: (i, q) for i, q in enumerate(cfg.shared_queues)}
    if len(shared) != len(cfg.shared_queues):
        dup = next(q.name for q in cfg.shared_queues if [x.name for x in cfg.shared_queues].count(q.name) > 1)
        raise ConfigError(path_of("shared_queues"), f"shared queue {dup!r} is declared twice")
    team_ns = _team_namespaces(cfg, set(shared))
    queues, teams = [], []
    for i, t in enumerate(cfg.teams):
        if t.queue is not None:
            cq_name, path = t.cluster_queue or t.name, path_of("teams", i, "queue")
            queues.append(ClusterQueuePlan(cq_name, path, t.queue, team_ns[i], False,
                                           _cluster_queue(ctx, cq_name, path, t.queue, shared=False)))
        else:
            assert t.cluster_queue is not None  # a shared queue's name, checked above
            cq_name = t.cluster_queue
        teams.append(_team_manifests(cfg, i, t, team_ns[i], cq_name))
    for name, (i, q) in shared.items():
        path = path_of("shared_queues", i)
        namespaces = tuple(ns for j, t in enumerate(cfg.teams) if t.queue is None and t.cluster_queue == name
                           for ns in team_ns[j])
        queues.append(ClusterQueuePlan(name, path, q, namespaces, True, _cluster_queue(
            ctx, name, path, q, shared=True, shared_all=q.admit == "all")))
    return SchedulingPlan(flavors=flavors, cohorts=cohorts, cluster_queues=tuple(queues), teams=tuple(teams),
                          admission_checks=_admission_checks(cfg, flavors), priority_classes=pcs,
                          workload_priority_classes=wpcs)
