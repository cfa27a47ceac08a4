"""Observability: the stack's Cloud Monitoring dashboard and alert policies, as plan.dashboard and
plan.alerts derived them (Kueue's metrics, scraped by KueueMonitoring)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.plan.alerts import RULE_GROUP, AlertPlan
from gke_ai_batch.vocabulary import TEAM_COST_LABEL, component_type


@dataclass
class ObservabilityArgs:
    project: str
    dashboard: dict[str, Any] | None
    alerts: tuple[AlertPlan, ...]
    labels: dict[str, str]


def resource_suffix(alert: AlertPlan) -> str:
    """A stable child name: the team (or platform) and the alert, in kebab case; the alert alone for the one of
    every team that keeps the stack's settings (no team's name is empty, so none collides with it)."""
    kebab = re.sub(r"(?<!^)(?=[A-Z])", "-", alert.name).lower()
    return kebab if alert.every_team else f"{alert.team or 'platform'}-{kebab}"


def condition(alert: AlertPlan) -> gcp.monitoring.AlertPolicyConditionArgs:
    """The PromQL condition: the alert's expression and `for`, evaluated every 30 s (the API's default).
    Metric validation is off: Cloud Monitoring refuses a condition on a metric with no series yet unless
    disableMetricValidation is set (pulumi-gcp 10.2 AlertPolicyConditionConditionPrometheusQueryLanguageArgs:
    "allows alerting policies to be defined on metrics that do not yet exist"), and a fresh cluster has no
    Kueue series until Kueue runs; kueue_evicted_workloads_total has none until the first eviction."""
    return gcp.monitoring.AlertPolicyConditionArgs(
        display_name=alert.title,
        condition_prometheus_query_language=gcp.monitoring.AlertPolicyConditionConditionPrometheusQueryLanguageArgs(
            query=alert.query, duration=f"{alert.duration_s}s", evaluation_interval="30s", alert_rule=alert.name,
            rule_group=RULE_GROUP, disable_metric_validation=True))


class Observability(pulumi.ComponentResource):
    def __init__(self, name: str, args: ObservabilityArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("Observability"), name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.dashboard = None if args.dashboard is None else gcp.monitoring.Dashboard(
            f"{name}-dashboard", dashboard_json=json.dumps(args.dashboard), project=args.project, opts=child)
        self.alerts = [gcp.monitoring.AlertPolicy(
            f"{name}-{resource_suffix(a)}", display_name=a.title, combiner="OR", conditions=[condition(a)],
            notification_channels=list(a.channels), severity=a.severity, project=args.project,
            documentation=gcp.monitoring.AlertPolicyDocumentationArgs(content=a.runbook, mime_type="text/markdown"),
            user_labels={**args.labels, **({TEAM_COST_LABEL: a.team} if a.team else {})}, opts=child)
            for a in args.alerts]
        self.register_outputs({"alertPolicies": len(self.alerts)})
