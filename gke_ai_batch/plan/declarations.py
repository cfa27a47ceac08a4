"""What each component declares, decided here so that a component reads one plan and calls back into no other
(issue 51): a node pool's inputs and day-two options, the cluster's, the Kueue and JobSet releases with their
Helm values, the tenancy and monitoring objects, and the teams' buckets. A component fills in only what the
engine alone knows: another resource's output (the cluster's name, the node service account, a network's ID).

The public components' plan entries (plan.component_plans) build these from a component's own arguments; the
Platform component's entry builds all of them from the whole platform's plan."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gke_ai_batch.vocabulary import TEAM_COST_LABEL, ClusterMode

from . import lifecycle
from .gke_inputs import cluster_inputs, is_production, node_pool_inputs, workload_policy_inputs
from .identity import NodeIdentity
from .installs import jobset_values, kueue_values
from .lifecycle import Lifecycle
from .monitoring import MonitoringPlan, kueue_monitoring
from .network import NetworkPlan
from .platform import Platform
from .pools import PoolPlan
from .storage import TeamStoragePlan, bucket_inputs
from .tenancy import TenancyPlan, plan_tenancy


@dataclass(frozen=True)
class NodePoolDeclaration:
    """One GKE NodePool: its plan, its inputs but the cluster, location and node service account (outputs), and how
    it is replaced and protected; a TPU7x slice's workload policy inputs (named after the cluster, an output)."""

    plan: PoolPlan
    inputs: dict[str, Any]
    lifecycle: Lifecycle
    protection: Lifecycle = Lifecycle()  # the component's own: production protects accelerator pools
    workload_policy: dict[str, Any] | None = None


@dataclass(frozen=True)
class ClusterDeclaration:
    """A GkeCluster: its node identity, network, Cluster inputs and options; `protection` is the component's."""

    identity: NodeIdentity
    network: NetworkPlan
    inputs: dict[str, Any]
    lifecycle: Lifecycle
    protection: Lifecycle = Lifecycle()


@dataclass(frozen=True)
class Release:
    """A Helm release the platform installs: chart, version, values and day-two options."""

    chart: str
    version: str
    values: dict[str, Any]
    lifecycle: Lifecycle


@dataclass(frozen=True)
class KueueDeclaration:
    """The scheduling layer: the installs (JobSet's where the platform needs it), the tenancy objects every team
    shares, the queues and teams of the platform's plan, and the scrape of Kueue's metrics."""

    platform: Platform
    kueue: Release
    jobset: Release | None
    tenancy: TenancyPlan
    monitoring: MonitoringPlan


@dataclass(frozen=True)
class BucketDeclaration:
    name: str
    inputs: dict[str, Any]
    lifecycle: Lifecycle


@dataclass(frozen=True)
class PlatformDeclaration:
    """Everything the Platform component declares, from the platform's plan."""

    platform: Platform
    cluster: ClusterDeclaration
    pools: dict[str, list[NodePoolDeclaration]]  # by the config pool they come from, in the plan's order
    kueue: KueueDeclaration
    buckets: dict[str, list[BucketDeclaration]]  # by team: the buckets it creates


def node_pools(plans: Sequence[PoolPlan], project: str, labels: dict[str, str],
               protection: Lifecycle | None = None) -> list[NodePoolDeclaration]:
    def policy(p: PoolPlan) -> dict[str, Any] | None:
        return workload_policy_inputs(p.workload_policy, project) if p.workload_policy else None
    return [NodePoolDeclaration(p, node_pool_inputs(p, labels), lifecycle.node_pool(p), protection or Lifecycle(),
                                policy(p))
            for p in plans]


def cluster(platform: Platform) -> ClusterDeclaration:
    """The cluster's inputs see the teams' buckets (the FUSE driver) and the pools' networks (multi-networking)."""
    cfg = platform.config
    return ClusterDeclaration(platform.identity, platform.network, cluster_inputs(cfg, cfg.resource_labels()),
                              lifecycle.cluster(cfg.cluster.adopt), lifecycle.protection(cfg, "cluster",
                                                                                         cfg.cluster.name))


def kueue(platform: Platform) -> KueueDeclaration:
    cfg = platform.config
    jobset = (Release(cfg.jobset.chart, cfg.jobset.version, jobset_values(platform), lifecycle.release(cfg, "jobset"))
              if platform.install_jobset else None)
    groups = tuple(g for t in platform.scheduling.teams for g in t.groups)
    return KueueDeclaration(
        platform, Release(cfg.kueue.chart, cfg.kueue.version, kueue_values(platform), lifecycle.release(cfg, "kueue")),
        jobset, plan_tenancy(cfg.cluster.version, groups), kueue_monitoring(cfg.cluster.mode))


def _buckets(platform: Platform, storage: TeamStoragePlan) -> list[BucketDeclaration]:
    """A team's created buckets: protected in production until the team drains or an acknowledgement names one."""
    cfg = platform.config
    team = next(t for t in cfg.teams if t.name == storage.team)
    labels = {**cfg.resource_labels(), TEAM_COST_LABEL: storage.team}
    return [BucketDeclaration(b.name, bucket_inputs(b, cfg.project, labels), lifecycle.bucket(
        lifecycle.protects(cfg, "bucket", b.name, team), is_production(cfg))) for b in storage.buckets if b.create]


def platform(plan: Platform) -> PlatformDeclaration:
    cfg = plan.config
    labels = cfg.resource_labels()
    pools: dict[str, list[PoolPlan]] = {}
    for p in plan.pools if cfg.cluster.mode != ClusterMode.AUTOPILOT else ():
        pools.setdefault(p.source, []).append(p)
    accelerators = {t.name for t in cfg.tpu_pools} | {g.name for g in cfg.gpu_pools}

    def protection(source: str) -> Lifecycle | None:
        """Deleting an accelerator pool evicts every job on it."""
        return lifecycle.protection(cfg, "node_pool", source) if source in accelerators else None
    return PlatformDeclaration(
        plan, cluster(plan), {source: node_pools(plans, cfg.project, labels, protection(source))
                              for source, plans in pools.items()},
        kueue(plan), {s.team: _buckets(plan, s) for s in plan.storage})
