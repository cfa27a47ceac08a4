"""Tenancy: what every team namespace is held to, declared once for the cluster: the team role its
groups are bound to, the admission policies on team pods and jobs, the PriorityClass that keeps
the platform's controllers above every team's pods, and the read of the quota tree team groups get."""
from __future__ import annotations

import pulumi

from gke_ai_batch.plan.tenancy import TenancyPlan
from gke_ai_batch.vocabulary import component_type

from .manifests import declare


class Tenancy(pulumi.ComponentResource):
    def __init__(self, name: str, plan: TenancyPlan, opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("Tenancy"), name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.controller_priority = declare(f"{name}-controller-priority", plan.controller_priority, child)
        self.team_role = declare(f"{name}-team-role", plan.team_role, child)
        self.policies = [declare(f"{name}-{m['kind'].removeprefix('ValidatingAdmission').lower()}-"
                                 f"{m['metadata']['name']}", m, child) for m in plan.admission_policies]
        self.queue_viewer = [declare(f"{name}-queue-viewer-{m['kind'].lower()}", m, child) for m in plan.queue_viewer]
        self.register_outputs({"teamRole": plan.team_role["metadata"]["name"]})
