"""Each team's namespaces and LocalQueues: which namespaces it gets (created, or labelled in place), the
labels that put them under Kueue and their Pod Security level, and a draining team's stop policy."""
from __future__ import annotations

from dataclasses import dataclass

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.team_config import TeamConfig
from gke_ai_batch.model.words import name_list
from gke_ai_batch.plan import lifecycle, runtime_limits, tenancy
from gke_ai_batch.plan.isolation import isolation_policy
from gke_ai_batch.vocabulary import (
    COST_CENTER_LABEL,
    KUEUE_API,
    TEAM_COST_LABEL,
    TEAM_LABEL,
    Manifest,
    admitted_by_label,
)

PREEXISTING_NAMESPACES = frozenset({"default"})  # labelled in place, never created or deleted
# Namespaces of the cluster and its controllers: a team there would get edit on them and put system pods
# under Kueue (Kueue itself refuses to manage kube-system and its own namespace).
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease", "kueue-system", "jobset-system"})
SYSTEM_PREFIXES = ("kube-", "gke-", "gmp-")


@dataclass(frozen=True)
class TeamPlan:
    name: str
    path: str
    namespaces: tuple[str, ...]
    created_namespaces: tuple[str, ...]
    cluster_queue: str  # the team's ClusterQueue: its own, or the shared one it names
    local_queues: tuple[tuple[str, str], ...]  # (LocalQueue, ClusterQueue) in each namespace
    groups: tuple[str, ...]
    namespace_manifests: tuple[Manifest, ...]  # created, or (pre-existing ones) labels patched in place
    local_queue_manifests: tuple[Manifest, ...]
    role_binding_manifests: tuple[Manifest, ...]
    guard_manifests: tuple[Manifest, ...] = ()  # per namespace: object quota, container limits, network isolation
    priorities: tuple[str, ...] = ()  # the priorities its pods and jobs may name
    pod_security: tuple[tuple[str, str], ...] = ()  # (namespace, enforced Pod Security level)
    protected: tuple[str, ...] = ()  # created namespaces that refuse deletion (plan.lifecycle.protects)

    @property
    def local_queue(self) -> str:
        """The team's first LocalQueue: the one a single-queue team has."""
        return self.local_queues[0][0]

    @property
    def cluster_queues(self) -> tuple[str, ...]:
        """Every ClusterQueue the team's LocalQueues point at."""
        return tuple(dict.fromkeys(cq for _, cq in self.local_queues))


def cost_labels(cfg: PlatformConfig, team: TeamConfig) -> dict[str, str]:
    """`team` and `cost-center` on a team's namespaces, so that GKE cost allocation (on in every
    cluster) can split the bill by them."""
    center = team.cost_center or cfg.cost_center
    return {TEAM_COST_LABEL: team.name, **({COST_CENTER_LABEL: center} if center else {})}


def _namespace(cfg: PlatformConfig, team: TeamConfig, ns: str, level: str, admitted_by: dict[str, str],
               allowed: tuple[str, ...], flavors: tuple[str, ...], runtime: dict[str, str]) -> Manifest:
    """A team namespace: the team, the queues that admit it, cost labels, its Pod Security level, and
    what the admission policies read (its priorities, object size cap, a privileged namespace's flavors,
    its queues' time limits)."""
    labels = {TEAM_LABEL: team.name, **admitted_by, **cost_labels(cfg, team), **tenancy.pod_security_labels(level)}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": ns, "labels": labels, "annotations": {**tenancy.namespace_annotations(team, allowed, flavors),
                                                      **runtime}}}


def _team_manifests(cfg: PlatformConfig, i: int, team: TeamConfig, namespaces: tuple[str, ...],
                    local_queues: tuple[tuple[str, str], ...], cq_name: str, flavors: frozenset[str]) -> TeamPlan:
    """`flavors`: the platform's pool flavors (the values of their flavor node label)."""
    tenancy.check_groups(cfg, i, team)
    levels = tenancy.pod_security_levels(i, team, namespaces)
    bound = tenancy.privileged_flavors(i, team, flavors)
    allowed = tenancy.allowed_priorities(cfg, i, team)
    runtime = runtime_limits.namespace_annotations(runtime_limits.limits(i, team))
    admitted_by = {admitted_by_label(cq): "true" for _, cq in local_queues}
    created = tuple(ns for ns in namespaces if ns not in PREEXISTING_NAMESPACES)
    stop = stop_policy(team)
    lqs = tuple({"apiVersion": KUEUE_API, "kind": "LocalQueue",
                 "metadata": {"name": lq, "namespace": ns, "labels": {TEAM_LABEL: team.name}},
                 "spec": {"clusterQueue": cq, **({"stopPolicy": stop} if stop else {})}}
                for ns in namespaces for lq, cq in local_queues)
    guards = tuple(m for ns in namespaces for m in (
        tenancy.object_quota(team, ns), tenancy.limit_range(team, ns),
        isolation_policy(team.name, ns, tenancy.ISOLATION_POLICY)))
    return TeamPlan(name=team.name, path=path_of("teams", i), namespaces=tuple(namespaces), created_namespaces=created,
                    cluster_queue=cq_name, local_queues=local_queues, groups=tuple(team.groups),
                    namespace_manifests=tuple(_namespace(cfg, team, ns, levels[ns], admitted_by, allowed,
                                                         bound.get(ns, ()), runtime) for ns in namespaces),
                    local_queue_manifests=lqs,
                    role_binding_manifests=tuple(tenancy.role_binding(team, ns) for ns in namespaces)
                    if team.groups else (),
                    guard_manifests=guards, priorities=allowed, pod_security=tuple(levels.items()),
                    protected=tuple(ns for ns in created if lifecycle.protects(cfg, "namespace", ns, team)))


def stop_policy(team: TeamConfig) -> str | None:
    """A draining team's queues stop admitting (Kueue's stopPolicy, on the ClusterQueue and LocalQueue:
    Hold lets admitted workloads run to completion, HoldAndDrain evicts them); None while active. Set on
    its LocalQueues, which are its own even when the ClusterQueue is shared."""
    return (team.stop_policy or "HoldAndDrain") if team.state == "draining" else None


def _local_queues(i: int, team: TeamConfig, cq_name: str, shared: set[str],
                  own: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """(LocalQueue, ClusterQueue) pairs of a team: its local_queues, or the one local_queue. A
    LocalQueue submits to the team's ClusterQueue or to a shared one, never to another team's."""
    path = path_of("teams", i)
    if team.local_queue and team.local_queues:
        raise ConfigError(f"{path}.local_queues", "give local_queue (one queue) or local_queues (several), "
                          "not both")
    if not team.local_queues:
        return ((team.local_queue or f"{team.name}-queue", cq_name),)
    pairs: list[tuple[str, str]] = []
    for j, lq in enumerate(team.local_queues):
        cq = lq.cluster_queue or cq_name
        if lq.name in (name for name, _ in pairs):
            raise ConfigError(path_of("teams", i, "local_queues", j, "name"), f"LocalQueue {lq.name!r} is "
                              "declared twice in the team")
        if cq not in shared and cq != cq_name:
            what = f"team {own[cq]!r}'s own queue" if cq in own else "not a ClusterQueue of this platform"
            raise ConfigError(path_of("teams", i, "local_queues", j, "cluster_queue"), f"{cq!r} is {what}; a "
                              f"LocalQueue submits to its team's ClusterQueue ({cq_name}) or a shared queue: "
                              f"{name_list(shared)}")
        pairs.append((lq.name, cq))
    return tuple(pairs)


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
