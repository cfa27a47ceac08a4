"""KueueMonitoring: Google Cloud Managed Service for Prometheus scrapes Kueue's controller, with the
token and the rights Kueue's authenticated metrics endpoint asks for (plan.monitoring says why)."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi

from gke_ai_batch.plan.monitoring import MonitoringPlan
from gke_ai_batch.vocabulary import component_type

from .manifests import declare


@dataclass
class KueueMonitoringArgs:
    plan: MonitoringPlan
    kueue: list[pulumi.Resource]  # the Kueue release (none on a cluster with its own): its namespace, ClusterRole, pods


class KueueMonitoring(pulumi.ComponentResource):
    def __init__(self, name: str, args: KueueMonitoringArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("KueueMonitoring"), name, None, opts)
        p = args.plan
        after = pulumi.ResourceOptions(parent=self, depends_on=args.kueue)
        self.service_account = declare(f"{name}-sa", p.service_account, after)
        self.token = declare(f"{name}-token", p.token,
                             pulumi.ResourceOptions(parent=self, depends_on=[*args.kueue, self.service_account]))
        self.reader_binding = declare(f"{name}-reader", p.reader_binding, after)
        self.token_role = declare(f"{name}-token-role", p.token_role, after)
        self.collector_binding = declare(f"{name}-collector", p.collector_binding, after)
        self.pod_monitoring = declare(f"{name}-podmonitoring", p.pod_monitoring, after)
        self.register_outputs({"podMonitoring": p.pod_monitoring["metadata"]["name"]})
