"""Team: one tenant's namespaces (with their Pod Security level, allowed priorities and groups, which the
platform's admission policies read), its LocalQueues, the team role for its Google groups, and in each namespace
an object quota, container defaults and a default-deny network policy. Onboarding a team is one block of stack
config; this component is what that block becomes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from gke_ai_batch.plan import lifecycle
from gke_ai_batch.plan.team_namespaces import TeamPlan
from gke_ai_batch.vocabulary import component_type

from .manifests import declare


@dataclass
class TeamArgs:
    plan: TeamPlan
    cluster_queues: dict[str, pulumi.Resource]  # the ClusterQueues its LocalQueues point at, by name
    kueue: list[pulumi.Resource]  # the Kueue release (none on a cluster with its own)
    role: pulumi.Resource  # the team role its RoleBindings refer to


_GUARD_SUFFIX = {"ResourceQuota": "quota", "LimitRange": "limits", "NetworkPolicy": "netpol"}


class Team(pulumi.ComponentResource):
    def __init__(self, name: str, args: TeamArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("Team"), name, None, opts)
        t = self.plan = args.plan
        self.namespaces = {m["metadata"]["name"]: self._namespace(name, m) for m in t.namespace_manifests}

        def in_namespace(ns: str, *deps: pulumi.Resource) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(parent=self, depends_on=[self.namespaces[ns], *deps])

        self.local_queues = [
            declare(_local_queue_name(name, m, t), m, in_namespace(
                m["metadata"]["namespace"], *args.kueue, args.cluster_queues[m["spec"]["clusterQueue"]]))
            for m in t.local_queue_manifests]
        self.role_bindings = [
            declare(f"{name}-rb-{m['metadata']['namespace']}", m, in_namespace(m["metadata"]["namespace"], args.role))
            for m in t.role_binding_manifests]
        self.guards = [
            declare(f"{name}-{_GUARD_SUFFIX[m['kind']]}-{m['metadata']['namespace']}", m,
                    in_namespace(m["metadata"]["namespace"]))
            for m in t.guard_manifests]
        self.register_outputs({"namespaces": list(t.namespaces), "localQueue": t.local_queue,
                               "localQueues": [lq for lq, _ in t.local_queues]})


    def _namespace(self, name: str, manifest: dict[str, Any]) -> pulumi.Resource:
        """A created namespace, protected where the plan says; a pre-existing one patched, never deleted."""
        ns = manifest["metadata"]["name"]
        if ns not in self.plan.created_namespaces:
            return declare(f"{name}-ns-{ns}", manifest, pulumi.ResourceOptions(parent=self), patch=True)
        kept = lifecycle.Lifecycle(protect=ns in self.plan.protected).options()
        return declare(f"{name}-ns-{ns}", manifest, pulumi.ResourceOptions(parent=self, **kept), patch=False)


def _local_queue_name(team: str, manifest: dict[str, Any], plan: TeamPlan) -> str:
    """The team's first LocalQueue keeps the name a one-queue team's has always had; the others add
    theirs after a dot, which no namespace name has (so `training` + `eval` never meets `training-eval`)."""
    ns, lq = manifest["metadata"]["namespace"], manifest["metadata"]["name"]
    return f"{team}-lq-{ns}" if lq == plan.local_queue else f"{team}-lq-{ns}.{lq}"
