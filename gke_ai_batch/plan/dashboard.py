"""The stack's Cloud Monitoring dashboard, from the plan: a platform section, then one section per team, so
a team added to the stack gets its section with no other edit.

The document is the Monitoring API's Dashboard (monitoring/api/ref_v3/rest/v1/projects.dashboards): a
mosaicLayout of 48 columns whose tiles hold widgets; a collapsibleGroup widget heads each section and
holds the tiles below it, down to the next group; every chart is an xyChart of PromQL
(timeSeriesQuery.prometheusQuery). tests/test_observability.py parses it with the API's own message types."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.plan import queries
from gke_ai_batch.plan.scheduling import SchedulingPlan
from gke_ai_batch.plan.team_namespaces import TeamPlan

COLUMNS = 48
CHART_WIDTH, CHART_HEIGHT = 24, 16  # two charts a row
GROUP_HEIGHT = 4


def chart(title: str, query: str, unit: str = "1", plot: str = "LINE") -> dict[str, Any]:
    return {"title": title, "xyChart": {"dataSets": [
        {"timeSeriesQuery": {"prometheusQuery": query, "unitOverride": unit}, "plotType": plot}]}}


def platform_charts(cluster: str) -> list[dict[str, Any]]:
    return [
        chart("Kueue replicas scraped", queries.kueue_replicas(cluster)),
        chart("Admission attempts per second, by result", queries.admission_attempts(cluster)),
        chart("Admission attempt latency, p90", queries.admission_latency_p90(cluster), "s"),
        chart("Pending workloads per ClusterQueue", queries.pending_by_cluster_queue(cluster), plot="STACKED_AREA"),
        chart("Cohort reservations over the cohort's quota", queries.cohort_usage(cluster), "10^2.%"),
        chart("Wait for admission checks (flex-start, queued provisioning), p90",
              queries.admission_check_waits(cluster), "s"),
    ]


def team_charts(cluster: str, team: TeamPlan) -> list[dict[str, Any]]:
    ns = team.namespaces
    return [
        chart("Pending workloads per LocalQueue", queries.team_pending(cluster, ns), plot="STACKED_AREA"),
        chart("Admitted workloads per LocalQueue", queries.team_admitted(cluster, ns), plot="STACKED_AREA"),
        chart(f"Usage of nominal quota ({team.cluster_queue}), per flavor and resource",
              queries.usage_of_quota(cluster, team.cluster_queue), "10^2.%"),
        chart("Wait for admission, p50", queries.team_wait(cluster, ns, 0.5), "s"),
        chart("Wait for admission, p90", queries.team_wait(cluster, ns, 0.9), "s"),
        chart("Evictions in the last hour, by reason", queries.evictions(cluster, team.cluster_queue),
              plot="STACKED_BAR"),
        chart("Preemptions its queue made in the last hour, by reason",
              queries.preemptions(cluster, team.cluster_queue), plot="STACKED_BAR"),
    ]


def _section(title: str, charts: list[dict[str, Any]], top: int) -> tuple[list[dict[str, Any]], int]:
    """A collapsible group and its charts from row `top`; the row below them."""
    rows = (len(charts) + 1) // 2
    tiles = [{"xPos": 0, "yPos": top, "width": COLUMNS, "height": GROUP_HEIGHT + rows * CHART_HEIGHT,
              "widget": {"title": title, "collapsibleGroup": {"collapsed": False}}}]
    for i, c in enumerate(charts):
        tiles.append({"xPos": (i % 2) * CHART_WIDTH, "yPos": top + GROUP_HEIGHT + (i // 2) * CHART_HEIGHT,
                      "width": CHART_WIDTH, "height": CHART_HEIGHT, "widget": c})
    return tiles, top + GROUP_HEIGHT + rows * CHART_HEIGHT


def _sections(cfg: PlatformConfig, scheduling: SchedulingPlan) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    cluster = cfg.cluster.name
    yield "Platform: Kueue and capacity", platform_charts(cluster)
    for team in scheduling.teams:
        yield f"Team {team.name} ({', '.join(team.namespaces)})", team_charts(cluster, team)


def plan_dashboard(cfg: PlatformConfig, scheduling: SchedulingPlan) -> dict[str, Any] | None:
    """The dashboard document, or None when the stack turns it off."""
    if not cfg.monitoring.dashboard:
        return None
    tiles: list[dict[str, Any]] = []
    top = 0
    for title, charts in _sections(cfg, scheduling):
        section, top = _section(title, charts, top)
        tiles += section
    return {"displayName": f"gke-ai-batch {cfg.environment}: {cfg.cluster.name}",
            "mosaicLayout": {"columns": COLUMNS, "tiles": tiles},
            "labels": cfg.resource_labels()}
