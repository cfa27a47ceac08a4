"""Helm values for the Kueue and JobSet installs, derived from the platform (pure, testable)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import yaml

from gke_ai_batch.model.fleet_config import INCREMENTAL
from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.model.releases import pinned_image
from gke_ai_batch.model.team_config import TeamConfig
from gke_ai_batch.plan.kueue_configuration import Settings, configuration
from gke_ai_batch.plan.namespace_policies import POD_HEADROOM
from gke_ai_batch.plan.tenancy import object_quota
from gke_ai_batch.vocabulary import (
    CONTROLLER_PRIORITY,
    DEPLOYMENT_COUNT,
    JOB_COUNT,
    JOBSET_COUNT,
    KUEUE_REPLICAS,
    STATEFULSET_COUNT,
    SYSTEM_POOL_TAINT,
    WORKLOAD_COUNT,
    ClusterMode,
)

if TYPE_CHECKING:
    from gke_ai_batch.plan.platform import Platform


def controller_resources(cpu: str, memory: str) -> dict[str, dict[str, str]]:
    """Requests equal to limits: the chart's default cpu limit of 2 would otherwise stay below any
    larger request (an invalid pod)."""
    return {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}}


WORKLOADS_PER_512MI = 7000  # kueue PR #566, which set the chart's 512Mi: "around 7000 Jobs"


def recommended_memory(queues: int, workloads: int = 0, text_bytes: int = 0) -> int:
    """MiB one controller replica wants: Kueue keeps every queue and workload in memory. The chart's 512Mi
    for about 7,000 workloads (no Kueue document gives a formula; the PR that set 512Mi measured that), a
    512Mi step per 7,000 more, at least 256Mi more per 100 queues, plus the text the teams' objects may
    carry (cached_text_bytes), rounded up to a 512Mi step (the kueue-controller-size policy compares
    against it)."""
    by_workloads = 512 * max(1, -(-workloads // WORKLOADS_PER_512MI))
    base = max(by_workloads, 512 + 256 * (queues // 100))
    return 512 * -(-(base + -(-text_bytes // 2**20)) // 512)


# The object counts of a team namespace's ResourceQuota whose objects Kueue keeps in its informer caches (and,
# for jobs, copies into Workloads): Jobs, JobSets, Deployments, StatefulSets, pods and the Workloads.
CACHED_COUNTS = (JOB_COUNT, JOBSET_COUNT, DEPLOYMENT_COUNT, STATEFULSET_COUNT, "pods", WORKLOAD_COUNT)


def namespace_text_bytes(hard: Mapping[str, object], object_size: int) -> int:
    """Bytes of text one namespace's cached objects may hold: count cap x size cap (a pod's cap has the
    headroom for what controllers add to it). The counts are quantities: the API server hands them back in its
    canonical form (1000 as `1k`), as a real preview's policy pack reads them."""
    pods = int(parse_quantity(str(hard.get("pods", 0))))
    return sum(int(parse_quantity(str(hard.get(k, 0)))) for k in CACHED_COUNTS) * object_size + pods * POD_HEADROOM


def cached_text_bytes(teams: Iterable[TeamConfig]) -> int:
    """Bytes of text one replica may hold for the teams. Every replica runs the same manager with the
    same informer caches (its webhooks answer on each), so this is per replica, not shared between them."""
    return sum(namespace_text_bytes(object_quota(t, ns)["spec"]["hard"], t.object_quotas.object_size)
               for t in teams for ns in (t.namespaces or [t.name]))


def expected_workloads(platform: Platform) -> int:
    """The most Workloads the teams may hold at once: their object quotas, per namespace. Finished and
    deactivated Workloads count until kueue.retention has Kueue delete them, so the quota, not the rate of
    jobs, bounds what the controller holds (without retention the quota would fill and stay full)."""
    return sum(t.object_quotas.workloads * len(t.namespaces or [t.name]) for t in platform.config.teams)


def controller_memory(platform: Platform) -> str:
    """The stack's kueue.controller_memory, else sized by the teams' object quotas (count and size); a step of
    512Mi changes only when the quotas cross one, so onboarding a team rarely restarts Kueue."""
    k = platform.config.kueue
    teams = platform.config.teams
    return k.controller_memory or f"{recommended_memory(0, expected_workloads(platform), cached_text_bytes(teams))}Mi"


def system_pool_toleration(platform: Platform) -> list[dict[str, str]]:
    """The controllers run on the system pool, whose taint keeps team pods off (Standard only)."""
    if platform.config.cluster.mode == ClusterMode.AUTOPILOT:
        return []
    return [{"key": SYSTEM_POOL_TAINT["key"], "operator": "Equal", "value": SYSTEM_POOL_TAINT["value"],
             "effect": SYSTEM_POOL_TAINT["effect"]}]


def _spread() -> list[dict[str, Any]]:
    """Replicas on different nodes where the system pool has them (not required: one node still runs both)."""
    return [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "kueue",
                                               "control-plane": "controller-manager"}}}]


def kueue_manager_config(platform: Platform) -> dict[str, Any]:
    """The controller's Configuration: the chart's, with the stack's changes (plan.kueue_configuration).
    Nothing in it depends on the teams, so onboarding a team never changes the release (or restarts Kueue)."""
    k = platform.config.kueue
    ready = {"timeout": k.wait_for_pods_ready_timeout, "blockAdmission": False,
             "requeuingStrategy": {"timestamp": "Eviction", "backoffLimitCount": k.requeue_limit,
                                   "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600}}
    return configuration(Settings(k, tuple(platform.frameworks), ready, _multikueue(platform)))


def _multikueue(platform: Platform) -> dict[str, Any] | None:
    """A fleet manager's dispatcher; nothing elsewhere (MultiKueue itself is beta and on in Kueue 0.19)."""
    if platform.fleet is None:
        return None
    if platform.fleet.config.dispatcher == INCREMENTAL:
        return {"dispatcherName": platform.fleet.dispatcher, "incrementalDispatcherConfig": {"stepSize": 1}}
    return {"dispatcherName": platform.fleet.dispatcher}


def kueue_values(platform: Platform) -> dict[str, Any]:
    """Two replicas with a disruption budget, a priority above every team's, on the system pool, from the
    release's image pinned by digest: the pod webhook fails closed for every team namespace, so Kueue down
    stops every team's pods."""
    k = platform.config.kueue
    return {
        "controllerManager": {
            "replicas": KUEUE_REPLICAS,
            "podDisruptionBudget": {"enabled": True, "minAvailable": 1},
            "tolerations": system_pool_toleration(platform),
            "topologySpreadConstraints": _spread(),
            "manager": {"priorityClassName": CONTROLLER_PRIORITY, "image": pinned_image("Kueue", k.version),
                        "resources": controller_resources(k.controller_cpu, controller_memory(platform))}},
        "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(
            kueue_manager_config(platform), sort_keys=False)},
    }


def jobset_values(platform: Platform) -> dict[str, Any]:
    """The same for JobSet (its v0.12.0 chart has no priorityClassName value; its webhook fails closed
    for JobSets only)."""
    return {"image": pinned_image("JobSet", platform.config.jobset.version),
            "controller": {"replicas": KUEUE_REPLICAS, "podDisruptionBudget": {"enabled": True, "minAvailable": 1},
                           "tolerations": system_pool_toleration(platform)}}
