"""What keeps a team inside its limits, as plain manifests: the team role its groups get, Pod
Security levels, the priorities it may name, per-namespace object quotas, a default-deny network
policy, and the admission policies that keep team pods off nodes their quota does not reach.

Each object answers one way a tenant could escape (the escape suite in tests/test_escape.py tries
them all); docs/queues.md's "Team isolation" says what is enforced where, and what is not.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.field_rules import duration_seconds
from gke_ai_batch.model.gke_pool_rules import version_below
from gke_ai_batch.model.team_config import TeamConfig
from gke_ai_batch.model.words import name_list
from gke_ai_batch.plan import runtime_limits
from gke_ai_batch.plan.admission_policies import admission_policies
from gke_ai_batch.plan.delete_policies import delete_policies
from gke_ai_batch.plan.namespace_policies import namespace_policies
from gke_ai_batch.plan.pod_spec_policies import pod_spec_policies
from gke_ai_batch.vocabulary import (
    BUDGET_ANNOTATION,
    CONFIGMAP_COUNT,
    CONTROLLER_PRIORITY,
    CRON_JOB_COUNT,
    DEPLOYMENT_COUNT,
    FLAVORS_ANNOTATION,
    GRACE_ANNOTATION,
    GROUPS_ANNOTATION,
    JOB_COUNT,
    JOBSET_COUNT,
    OBJECT_SIZE_ANNOTATION,
    POD_MONITORING_COUNT,
    POD_SECURITY_LABEL,
    PRIORITIES_ANNOTATION,
    QUEUE_VIEWER,
    RBAC_GROUP,
    REPLICASET_COUNT,
    SCRAPE_INTERVAL_ANNOTATION,
    SCRAPE_SAMPLES_ANNOTATION,
    SECRET_COUNT,
    SERVICE_COUNT,
    STATEFULSET_COUNT,
    TEAM_LABEL,
    TEAM_ROLE,
    WORKLOAD_COUNT,
    Manifest,
)

# Pod Security Standards pinned to the version of the checks `make admit` models (apiserver.pod_security),
# so a cluster upgrade never changes what a team may run without a change here.
POD_SECURITY_VERSION = "v1.33"
DEFAULT_POD_SECURITY = "baseline"  # enforced; warn and audit report what `restricted` would refuse
ISOLATION_POLICY = "gke-ai-batch-isolation"
OBJECT_QUOTA = "gke-ai-batch-objects"
CONTAINER_LIMITS = "gke-ai-batch-containers"

_RW = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]
_READ = ["get", "list", "watch"]

# The team role: run every workload kind Kueue manages here and what they need, read the queues and
# Workloads; no RBAC, no quotas, no network policies, no namespaces, no LocalQueues, no priorities.
TEAM_RULES: tuple[dict[str, list[str]], ...] = (
    {"apiGroups": [""], "resources": ["pods", "services", "configmaps", "secrets", "persistentvolumeclaims"],
     "verbs": _RW},
    {"apiGroups": [""], "resources": ["pods/log", "pods/status", "events", "serviceaccounts", "resourcequotas",
                                      "limitranges", "endpoints"], "verbs": _READ},
    {"apiGroups": [""], "resources": ["pods/exec", "pods/attach", "pods/portforward"], "verbs": ["get", "create"]},
    {"apiGroups": ["batch"], "resources": ["jobs", "cronjobs"], "verbs": _RW},
    {"apiGroups": ["batch"], "resources": ["jobs/status", "cronjobs/status"], "verbs": _READ},
    {"apiGroups": ["apps"], "resources": ["deployments", "statefulsets"], "verbs": _RW},
    {"apiGroups": ["apps"], "resources": ["deployments/scale", "statefulsets/scale"], "verbs": ["get", "update",
                                                                                               "patch"]},
    {"apiGroups": ["apps"], "resources": ["replicasets", "deployments/status", "statefulsets/status"],
     "verbs": _READ},
    {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"], "verbs": _RW},
    {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets/status"], "verbs": _READ},
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["localqueues", "localqueues/status", "workloads",
                                                    "workloads/status"], "verbs": _READ},
    # `gke-ai-batch why`/`queue` (docs/why-pending.md): a pending Workload's place, from Kueue's visibility API
    # (kueue v0.19.2 charts/kueue/templates/rbac/pending_workloads_lq_viewer_role.yaml names the subresource), and
    # the ProvisioningRequests Kueue makes in the team's namespace for a DWS check (autoscaling.x-k8s.io).
    {"apiGroups": ["visibility.kueue.x-k8s.io"], "resources": ["localqueues/pendingworkloads"], "verbs": ["get"]},
    {"apiGroups": ["autoscaling.x-k8s.io"], "resources": ["provisioningrequests"], "verbs": _READ},
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": _READ},
    {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": _READ},
    {"apiGroups": ["monitoring.googleapis.com"], "resources": ["podmonitorings"], "verbs": _RW},
)


def team_role() -> Manifest:
    return {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole",
            "metadata": {"name": TEAM_ROLE, "labels": {"app.kubernetes.io/managed-by": "gke-ai-batch"}},
            "rules": [dict(r) for r in TEAM_RULES]}


# `gke-ai-batch why` says what a team holds of its ClusterQueue, uses, and could borrow now from its cohort
# (docs/why-pending.md). That reads the cluster-scoped ClusterQueues and Cohorts, which no RoleBinding can grant.
# The rules are those of Kueue's own roles for end users (kueue v0.19.2 config/components/rbac/
# clusterqueue_viewer_role.yaml, "permissions for end users to view clusterqueues", and cohort_viewer_role.yaml):
# reading only. A member thus sees every team's quotas and usage, never another team's Workloads or pods.
QUEUE_VIEWER_RULES: tuple[dict[str, list[str]], ...] = (
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues", "cohorts"], "verbs": _READ},
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues/status"], "verbs": ["get"]},
)


def queue_viewer(groups: tuple[str, ...]) -> tuple[Manifest, ...]:
    """The quota-tree reader and one binding of every team's groups to it: two objects for the platform, none
    per team (a team added changes the binding's subjects in place)."""
    if not groups:
        return ()
    labels = {"app.kubernetes.io/managed-by": "gke-ai-batch"}
    role = {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole",
            "metadata": {"name": QUEUE_VIEWER, "labels": labels}, "rules": [dict(r) for r in QUEUE_VIEWER_RULES]}
    binding = {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": QUEUE_VIEWER, "labels": labels},
               "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": QUEUE_VIEWER},
               "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": g} for g in sorted(set(groups))]}
    return role, binding


def role_binding(team: TeamConfig, ns: str) -> Manifest:
    """The team's groups bound to the team role in one of its namespaces (a new name: the role it
    refers to cannot change in place, so the old `<team>-edit` binding is deleted, not edited)."""
    return {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "RoleBinding",
            "metadata": {"name": f"{team.name}-member", "namespace": ns, "labels": {TEAM_LABEL: team.name}},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": TEAM_ROLE},
            "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": g} for g in team.groups]}


ADMISSION_POLICY_MIN_VERSION = "1.30"  # ValidatingAdmissionPolicy v1 is GA (Kubernetes 1.30 release notes)


def check_version(cfg: PlatformConfig) -> None:
    """Team containment rests on admission policies: a pinned version must serve them."""
    version = cfg.cluster.version
    if cfg.teams and version_below(version, ADMISSION_POLICY_MIN_VERSION):
        raise ConfigError(path_of("cluster", "version"), f"{version}: the platform keeps team pods in their "
                          "limits with ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1), GA from "
                          f"Kubernetes {ADMISSION_POLICY_MIN_VERSION}; pin {ADMISSION_POLICY_MIN_VERSION} or later, "
                          "or leave the version to the release channel")


def check_queue_management(cfg: PlatformConfig) -> None:
    """Kueue gates a team's jobs and pods that name no queue only with `manageJobsWithoutQueueName`: without it
    "those jobs are not managed and if they are created unsuspended, they will start immediately" (kueue v0.19.2
    apis/config/v1beta2/configuration_types.go), outside every quota."""
    if cfg.teams and not cfg.kueue.manage_jobs_without_queue_name:
        raise ConfigError(path_of("kueue", "manage_jobs_without_queue_name"), "false: Kueue would leave a job or pod "
                          "that names no queue unmanaged, and it would start at once, outside every quota, in the "
                          f"namespaces of teams {name_list(t.name for t in cfg.teams)}; only true is allowed where "
                          "teams are declared")


def check_groups(cfg: PlatformConfig, i: int, team: TeamConfig) -> None:
    """Groups in the platform's domains, where it names them."""
    if not cfg.group_domains:
        return
    for j, g in enumerate(team.groups):
        if g.rsplit("@", 1)[1].lower() not in {d.lower() for d in cfg.group_domains}:
            raise ConfigError(path_of("teams", i, "groups", j), f"{g!r} is outside the platform's group domains: "
                              f"{name_list(cfg.group_domains)}")


def pod_security_levels(i: int, team: TeamConfig, namespaces: tuple[str, ...]) -> dict[str, str]:
    """Each namespace's enforced level: baseline, or the team's named exception."""
    levels = dict.fromkeys(namespaces, DEFAULT_POD_SECURITY)
    for j, e in enumerate(team.pod_security):
        if e.namespace not in levels:
            raise ConfigError(path_of("teams", i, "pod_security", j, "namespace"), f"{e.namespace!r} is not a "
                              f"namespace of team {team.name!r}: {name_list(namespaces)}")
        levels[e.namespace] = e.level
    return levels


def pod_security_labels(level: str) -> dict[str, str]:
    """Enforce the level; warn and audit at restricted, so teams see what the strictest level would refuse."""
    return {f"{POD_SECURITY_LABEL}/enforce": level, f"{POD_SECURITY_LABEL}/enforce-version": POD_SECURITY_VERSION,
            f"{POD_SECURITY_LABEL}/warn": "restricted", f"{POD_SECURITY_LABEL}/warn-version": POD_SECURITY_VERSION,
            f"{POD_SECURITY_LABEL}/audit": "restricted", f"{POD_SECURITY_LABEL}/audit-version": POD_SECURITY_VERSION}


def allowed_priorities(cfg: PlatformConfig, i: int, team: TeamConfig) -> tuple[str, ...]:
    """The priorities a team may name: its block's list, else the global default and every priority
    at or below it (with no global default, those at or below 0, what a pod naming none gets)."""
    declared = {p.name: p.value for p in cfg.priorities}
    if team.priorities is not None:
        for j, name in enumerate(team.priorities):
            if name not in declared:
                raise ConfigError(path_of("teams", i, "priorities", j), f"priority {name!r} is not declared; "
                                  f"priorities: {name_list(declared)}")
        return tuple(dict.fromkeys(team.priorities))
    ceiling = next((p.value for p in cfg.priorities if p.global_default), 0)
    return tuple(p.name for p in cfg.priorities if p.value <= ceiling)


def object_quota(team: TeamConfig, ns: str) -> Manifest:
    """Every object a namespace may hold that costs the cluster something nothing else meters: Kueue's memory
    (jobs, Workloads, pods), the service range and node ports, Cloud load balancers, disks, etcd (CronJobs too)
    and Managed Prometheus's one collector configuration (PodMonitorings). Every kind the team role may create
    is counted (Kubernetes "Resource Quotas": `count/<resource>.<group>`, custom resources included)."""
    q = team.object_quotas
    hard = {JOB_COUNT: q.jobs, JOBSET_COUNT: q.jobsets, WORKLOAD_COUNT: q.workloads,
            "pods": q.pods, DEPLOYMENT_COUNT: q.deployments, REPLICASET_COUNT: q.replicasets,
            STATEFULSET_COUNT: q.statefulsets, CRON_JOB_COUNT: q.cronjobs,
            SERVICE_COUNT: q.services, "services.nodeports": q.node_ports,
            "services.loadbalancers": q.load_balancers, CONFIGMAP_COUNT: q.configmaps, SECRET_COUNT: q.secrets,
            POD_MONITORING_COUNT: q.pod_monitorings,
            "persistentvolumeclaims": q.persistent_volume_claims, "requests.storage": q.storage}
    return {"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": OBJECT_QUOTA, "namespace": ns, "labels": {TEAM_LABEL: team.name}},
            "spec": {"hard": {k: str(v) for k, v in hard.items()}}}


def limit_range(team: TeamConfig, ns: str) -> Manifest:
    """The cpu and memory a container requests when it names neither a request nor a limit: the LimitRanger
    admission plugin fills `defaultRequest` in (Kubernetes "Limit Ranges"), so Kueue charges such a container and
    the scheduler reserves room for it. Nothing more: a `default` limit below a container's own request makes the
    API server refuse the pod, and `maxLimitRequestRatio` refuses every container without a limit; bursting above
    requests is evicted and OOM-killed first, so a limit protects mostly the burster (docs/queues.md, "Team
    isolation")."""
    c = team.container_limits
    return {"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"name": CONTAINER_LIMITS, "namespace": ns, "labels": {TEAM_LABEL: team.name}},
            "spec": {"limits": [{"type": "Container",
                                 "defaultRequest": {"cpu": str(c.cpu_request), "memory": str(c.memory_request)}}]}}


def namespace_annotations(team: TeamConfig, allowed: tuple[str, ...], flavors: tuple[str, ...]) -> dict[str, str]:
    """What the admission policies read from a namespace (so no policy lists the teams): its team's groups, whose
    members' requests the holds judge, its priorities, the size cap of one workload object, its pods' longest
    grace period, its PodMonitorings' scrape bounds, and a privileged namespace's flavors."""
    q = team.object_quotas
    return {**({GROUPS_ANNOTATION: ",".join(sorted(set(team.groups)))} if team.groups else {}),
            PRIORITIES_ANNOTATION: ",".join(allowed), OBJECT_SIZE_ANNOTATION: str(q.object_size),
            GRACE_ANNOTATION: str(duration_seconds(team.max_termination_grace)),
            SCRAPE_SAMPLES_ANNOTATION: str(q.scrape_samples),
            SCRAPE_INTERVAL_ANNOTATION: str(duration_seconds(q.scrape_interval)),
            **({FLAVORS_ANNOTATION: ",".join(flavors)} if flavors else {}),
            **({BUDGET_ANNOTATION: f"{Decimal(str(team.budget)):f}"} if team.budget is not None else {})}


def privileged_flavors(i: int, team: TeamConfig, flavors: frozenset[str]) -> dict[str, tuple[str, ...]]:
    """Each privileged namespace's flavors, every one a pool flavor of the platform."""
    out: dict[str, tuple[str, ...]] = {}
    for j, e in enumerate(team.pod_security):
        for k, f in enumerate(e.flavors):
            if f not in flavors:
                raise ConfigError(path_of("teams", i, "pod_security", j, "flavors", k), f"{f!r} is not a pool "
                                  f"flavor of this platform: {name_list(flavors)}")
        if e.flavors:
            out[e.namespace] = tuple(dict.fromkeys(e.flavors))
    return out


CONTROLLER_PRIORITY_VALUE = 1_000_000_000  # the highest a user class may have; every team priority is below


@dataclass(frozen=True)
class TenancyPlan:
    controller_priority: Manifest
    team_role: Manifest
    admission_policies: tuple[Manifest, ...]
    queue_viewer: tuple[Manifest, ...] = ()  # the quota-tree reader and its binding, where teams have groups


def controller_priority() -> Manifest:
    """Kueue's and JobSet's pods above every team's (team priorities stay below 1,000,000,000), without
    the system-* classes that GKE keeps for its own components."""
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": CONTROLLER_PRIORITY},
            "value": CONTROLLER_PRIORITY_VALUE, "globalDefault": False, "preemptionPolicy": "PreemptLowerPriority",
            "description": "The platform's controllers (Kueue, JobSet): never preempted by team pods"}


def plan_tenancy(version: str | None, groups: tuple[str, ...]) -> TenancyPlan:
    """`version`: the cluster's pinned Kubernetes version, which decides whether time limits get their
    default by a MutatingAdmissionPolicy (plan.runtime_limits); `groups`: every team's groups."""
    return TenancyPlan(controller_priority(), team_role(),
                       admission_policies() + delete_policies() + namespace_policies() + pod_spec_policies() +
                       runtime_limits.policies(version), queue_viewer(groups))
