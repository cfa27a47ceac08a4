"""The stack's alert policies, from the plan: the platform's (Kueue down or short of replicas, a
ProvisioningRequest failing) and the teams' (work stuck pending, pinned at its quota, an eviction burst).

The teams' alerts are one policy each for every team that keeps the stack's thresholds and channels, its
query broken down by queue (one incident per queue that fires), and one each of its own for a team whose block
sets its own: a team costs no alert policy unless it routes or tunes its alerts (issue 51).

Each alert is one Cloud Monitoring AlertPolicy with a PromQL condition (conditionPrometheusQueryLanguage:
query, duration, evaluationInterval, alertRule, ruleGroup), the same expression and `for` a Prometheus
alerting rule would have, so `promtool test rules` can hold each one to its meaning (tests/test_alerts.py).
A team added to the stack is covered with no other edit."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.monitoring_config import AlertThresholds, TeamAlerts
from gke_ai_batch.model.team_config import TeamConfig
from gke_ai_batch.model.words import name_list
from gke_ai_batch.plan import queries
from gke_ai_batch.plan.scheduling import SchedulingPlan
from gke_ai_batch.vocabulary import KUEUE_REPLICAS, PROVISIONING_CONTROLLER

RULE_GROUP = "gke-ai-batch"


@dataclass(frozen=True)
class AlertPlan:
    name: str  # the Prometheus alert name, and the policy's resource-name suffix
    title: str  # the policy's display name
    query: str
    duration_s: int  # how long the expression must hold (Prometheus `for`)
    channels: tuple[str, ...]  # notification channel names (projects/.../notificationChannels/N)
    severity: str  # CRITICAL, ERROR or WARNING (AlertPolicy.severity)
    runbook: str  # what to do, in the policy's documentation
    team: str | None = None  # a team's own alert (its block sets its alerts)
    every_team: bool = False  # the alert of every team that keeps the stack's alert settings


def plan_alerts(cfg: PlatformConfig, scheduling: SchedulingPlan) -> tuple[AlertPlan, ...]:
    """Every alert of the stack, with its channels resolved; a channel name nothing declares is refused."""
    if not cfg.monitoring.alerts:
        return ()
    platform = _channels(cfg, cfg.monitoring.notify, path_of("monitoring", "notify"))
    alerts = list(_platform_alerts(cfg, scheduling, platform))
    queues = {t.name: t for t in scheduling.teams}
    own = {i: team for i, team in enumerate(cfg.teams) if team.alerts != TeamAlerts()}
    cluster = cfg.cluster.name
    keeping = [queues[t.name] for i, t in enumerate(cfg.teams) if i not in own]
    if keeping:
        tuned = [queues[t.name] for t in own.values()]
        others = {q.cluster_queue for q in tuned} - {q.cluster_queue for q in keeping}
        alerts += _team_alerts(cluster, cfg.monitoring.thresholds, platform, None,
                               queries.teams_queues(cluster, "exported_namespace", None,
                                                    [ns for q in tuned for ns in q.namespaces]),
                               queries.teams_queues(cluster, "cluster_queue", None, others))
    for i, team in own.items():
        plan = queues[team.name]
        channels = _channels(cfg, team.alerts.channels, path_of("teams", i, "alerts", "channels"))
        alerts += _team_alerts(cluster, _thresholds(cfg.monitoring.thresholds, team),
                               channels or platform, team.name,
                               queries.teams_queues(cluster, "exported_namespace", plan.namespaces),
                               queries.teams_queues(cluster, "cluster_queue", [plan.cluster_queue]))
    return tuple(alerts)


def _channels(cfg: PlatformConfig, names: Sequence[str], path: str) -> tuple[str, ...]:
    declared = cfg.monitoring.channels
    for i, name in enumerate(names):
        if name not in declared:
            allowed = f"one of {name_list(sorted(declared))}" if declared else "none declared yet"
            raise ConfigError(f"{path}[{i}]", f"no notification channel {name!r} in monitoring.channels "
                              f"({allowed}): declare it there as "
                              f"{name}: projects/PROJECT_ID/notificationChannels/NUMBER")
    return tuple(declared[n] for n in names)


def _thresholds(defaults: AlertThresholds, team: TeamConfig) -> AlertThresholds:
    own = team.alerts.model_dump(exclude={"channels"}, exclude_none=True)
    return defaults.model_copy(update=own)


def _platform_alerts(cfg: PlatformConfig, scheduling: SchedulingPlan,
                     channels: tuple[str, ...]) -> list[AlertPlan]:
    cluster = cfg.cluster.name
    alerts = [
        AlertPlan("KueueDown", f"{cluster}: Kueue is down", queries.kueue_absent(cluster), 300, channels,
                  "CRITICAL", "No Kueue replica was scraped for 5 minutes. Its webhooks fail closed, so no team "
                  "can create a job or pod: kubectl -n kueue-system get pods, describe and logs."),
        AlertPlan("KueueDegraded", f"{cluster}: Kueue runs fewer than {KUEUE_REPLICAS} replicas",
                  f"{queries.kueue_replicas(cluster)} < {KUEUE_REPLICAS}", 900, channels, "WARNING",
                  "One Kueue replica is missing for 15 minutes: the webhooks have no spare. Check the system "
                  "pool's nodes and the pods' events in kueue-system (OOMKilled: see kueue-controller-size)."),
    ]
    checked = _provisioning_queues(scheduling)
    if checked:
        alerts.append(AlertPlan(
            "ProvisioningRequestFailing", f"{cluster}: a ProvisioningRequest failed",
            queries.provisioning_failures(cluster, checked), 0, channels, "ERROR",
            "Kueue evicted a workload because its ProvisioningRequest failed (retried) or ran out of retries "
            "(deactivated). kubectl get provisioningrequests -A and the workload's events say why: stockout, "
            "quota, or a shape the zone cannot give."))
    return alerts


def _provisioning_queues(scheduling: SchedulingPlan) -> list[str]:
    """ClusterQueues with a ProvisioningRequest admission check on any flavor."""
    checks = {c["metadata"]["name"] for c in scheduling.admission_checks
              if c["kind"] == "AdmissionCheck" and c["spec"]["controllerName"] == PROVISIONING_CONTROLLER}
    named = [(q.name, q.manifest["spec"].get("admissionChecksStrategy", {}).get("admissionChecks", []))
             for q in scheduling.cluster_queues]
    return [name for name, rules in named if any(r["name"] in checks for r in rules)]


def _team_alerts(cluster: str, t: AlertThresholds, channels: tuple[str, ...], team: str | None, namespaces: str,
                 cluster_queues: str) -> list[AlertPlan]:
    """One team's alerts (`team`), or every team's that keeps the stack's settings; `namespaces` and
    `cluster_queues` select their queues' series (queries.teams_queues)."""
    def title(own: str, every: str) -> str:
        return f"{cluster}/{team}: {own}" if team else f"{cluster}: {every}"
    pending = f"workloads pending {t.pending_minutes}m with none admitted"
    at_quota = f"at its nominal quota for {t.at_quota_minutes}m"
    burst = f"more than {t.evictions_per_hour} evictions in an hour"
    return [
        AlertPlan("TeamWorkloadsStuck", title(pending, f"a team's {pending}"),
                  queries.stuck_pending(namespaces, t.pending_minutes), 0, channels, "WARNING",
                  "Workloads wait and none was admitted: make admit says why a job does not fit (quota, "
                  "flavor, topology); kubectl describe workloads -n NAMESPACE shows Kueue's own reason.",
                  team, team is None),
        AlertPlan("TeamAtQuota", title(at_quota, f"a team {at_quota}"),
                  queries.at_quota(cluster_queues), t.at_quota_minutes * 60, channels, "WARNING",
                  "The team uses all of its quota of a flavor: more quota, a cohort to borrow from, or its "
                  "own priorities to order its work.", team, team is None),
        AlertPlan("TeamEvictionBurst", title(burst, f"a team's queue with {burst}"),
                  queries.eviction_burst(cluster_queues, t.evictions_per_hour), 0, channels, "WARNING",
                  "Kueue evicted many of the team's workloads: the reason label says which (Preempted, "
                  "PodsReadyTimeout, AdmissionCheck, NodeFailures).", team, team is None),
    ]
