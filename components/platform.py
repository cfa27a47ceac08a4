"""Platform: the whole environment from one typed stack config (gke_ai_batch.model.config), for
programs that want everything: the cluster, its node pools, Kueue, JobSet, queues and teams.
`declare_platform` is what the project's own `__main__.py` runs at the top level of the stack.

No `from __future__ import annotations`: the component analyzer reads the annotations at run time."""
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.plan import component_plans
from gke_ai_batch.plan.declarations import PlatformDeclaration
from gke_ai_batch.vocabulary import component_type

from .compute_classes import ComputeClasses
from .cpu_pool import CpuPool
from .fleet import FleetManager, FleetManagerArgs, WorkerStacks
from .gke_cluster import GkeCluster
from .gpu_pool import GpuPool
from .kueue_layer import KueueResources, declare_kueue
from .observability import Observability, ObservabilityArgs
from .pod_networks import declare_pod_networks
from .system_pool import SystemNodePool
from .team_buckets import TeamBuckets, TeamBucketsArgs
from .team_cost import TeamCost, TeamCostArgs
from .team_storage import TeamStorage, TeamStorageArgs
from .tpu_slice_pool import TpuSlicePool


@dataclass
class PlatformResources:
    cluster: GkeCluster
    pools: list[pulumi.ComponentResource]
    kueue: KueueResources
    storage: list[TeamStorage]


def _args(values: dict[str, Any]) -> Any:
    """A validated config block as a component's arguments, beside the plan the component is given: its own
    record of what it was declared with (a pool's `spec`), never validated or planned again."""
    return values


def _json(model: Any, **kw: Any) -> dict[str, Any]:
    return dict(model.model_dump(mode="json", exclude_none=True, **kw))


def _pools(declared: PlatformDeclaration, target: dict[str, Any],
           opts: pulumi.ResourceOptions) -> list[pulumi.ComponentResource]:
    """Each pool's component, with the zones the plan resolved (the platform's defaults applied)."""
    cfg, pools = declared.platform.config, declared.pools
    if not pools:  # Autopilot: GKE makes the nodes
        return []

    def pool_args(pool: Any) -> Any:
        """What the pool's block sets, with the zones the plan resolved."""
        zones = list(pools[pool.name][0].plan.zones)
        return _args({**target, **_json(pool, exclude={"name"}, exclude_unset=True), "zones": zones})

    def protected(name: str) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(**pools[name][0].protection.options()))
    system = cfg.system_pool
    out: list[pulumi.ComponentResource] = [SystemNodePool(
        system.name, _args({**target, **_json(system, exclude={"name"})}), opts, planned=pools[system.name][0])]
    out += [TpuSlicePool(t.name, pool_args(t), protected(t.name), planned=pools[t.name]) for t in cfg.tpu_pools]
    out += [GpuPool(g.name, pool_args(g), protected(g.name), planned=pools[g.name][0]) for g in cfg.gpu_pools]
    out += [CpuPool(c.name, pool_args(c), opts, planned=pools[c.name][0]) for c in cfg.cpu_pools]
    return out


def declare_platform(declared: PlatformDeclaration, parent: pulumi.Resource | None = None,
                     workers: WorkerStacks | None = None) -> PlatformResources:
    """Every component of a validated platform, as children of `parent` (None: the stack itself); a fleet
    manager's objects on its workers through the `workers` its plan was read from."""
    platform = declared.platform
    cfg = platform.config
    child = pulumi.ResourceOptions(parent=parent)
    cluster = _json(cfg, include=set(component_plans.CLUSTER_IDENTITY) | {"cluster"})
    gke = GkeCluster("gke", _args(cluster), pulumi.ResourceOptions(
        parent=parent, **declared.cluster.protection.options()), planned=declared.cluster)
    target = dict(project=cfg.project, region=cfg.region, cluster=gke.name, location=gke.location,
                  labels=cfg.resource_labels(), service_account=gke.node_service_account,
                  **({"cluster_version": cfg.cluster.version} if cfg.cluster.version else {}))
    pools = _pools(declared, target, child)
    system = [p for p in pools if isinstance(p, SystemNodePool)]
    # The controllers run on the system pool: install once it exists, not after every accelerator pool
    # (a slice waiting for capacity must not hold back the scheduling layer of every team).
    installs = pulumi.ResourceOptions(parent=parent, providers=[gke.provider], depends_on=system)
    kueue = declare_kueue(declared.kueue, installs)
    if platform.scheduling.compute_classes:
        ComputeClasses("compute-classes", platform.scheduling.compute_classes,
                       pulumi.ResourceOptions(parent=parent, providers=[gke.provider]))
    _pod_networks(platform.gpudirect_installers, pools, pulumi.ResourceOptions(parent=parent,
                                                                               providers=[gke.provider]))
    if platform.dashboard is not None or platform.alerts:
        Observability("observability", ObservabilityArgs(cfg.project, platform.dashboard, platform.alerts,
                                                         cfg.resource_labels()), child)
    if platform.cost is not None:
        TeamCost("team-cost", TeamCostArgs(platform.cost, cfg.project, cfg.resource_labels()), child)
    if platform.fleet is not None:
        assert workers is not None and kueue.kueue is not None  # a manager's plan was read through them; installs
        FleetManager("fleet", FleetManagerArgs(platform.fleet, workers.references, kueue.kueue.release),
                     pulumi.ResourceOptions(parent=parent, providers=[gke.provider]))
    return PlatformResources(gke, pools, kueue, _storage(declared, kueue, pulumi.ResourceOptions(
        parent=parent, providers=[gke.provider])))


def _pod_networks(installers: list[dict[str, Any]], pools: list[pulumi.ComponentResource],
                  opts: pulumi.ResourceOptions) -> None:
    """The GKE network objects of every GPU pool with GPUDirect networks, after the pool (and its networks),
    and GKE's NCCL installers for them."""
    declare_pod_networks(installers, [(p.plan, p.networks.names if p.networks else {}, [p])
                                      for p in pools if isinstance(p, GpuPool)], opts)


def _storage(declared: PlatformDeclaration, kueue: KueueResources,
             opts: pulumi.ResourceOptions) -> list[TeamStorage]:
    """Every team's buckets, then each team's service accounts and grants, once its namespaces exist."""
    platform = declared.platform
    if not platform.storage:
        return []
    cfg = platform.config
    created: dict[str, pulumi.Output[str]] = {}
    for team, buckets in declared.buckets.items():
        created.update(TeamBuckets(f"team-{team}-buckets", TeamBucketsArgs(buckets), opts).names)
    number = gcp.organizations.get_project_output(project_id=cfg.project).number
    teams = {t.plan.name: t for t in kueue.teams}
    return [TeamStorage(f"team-{s.team}-storage", TeamStorageArgs(s, cfg.project, number, created, teams[s.team]),
                        opts) for s in platform.storage]


class PlatformArgs:
    """The stack config: a PlatformConfig, or the mapping a stack file holds under gke-ai-batch:platform."""

    def __init__(self, config: PlatformConfig | dict[str, Any]):
        self.config = config


class Platform(pulumi.ComponentResource):
    """A whole environment from one stack config, validated before any resource exists."""

    def __init__(self, name: str, args: PlatformArgs, opts: pulumi.ResourceOptions | None = None):
        raw = args.config.model_dump(mode="json") if isinstance(args.config, PlatformConfig) else args.config
        workers = WorkerStacks()
        # refused before any resource registers
        declared = component_plans.platform(raw, pulumi.get_project(), worker_outputs=workers)
        if declared.platform.config.fleet is not None and declared.platform.config.fleet.role == "worker":
            raise ConfigError(path_of("fleet", "role"), "a fleet worker's stack exports `fleetWorker` and "
                              "`kubeconfig` for its manager, which this component cannot do for its program: plan "
                              "a worker with the project's own __main__.py")
        super().__init__(component_type("Platform"), name, None, opts)
        self.resources = declare_platform(declared, parent=self, workers=workers)
        self.register_outputs({"cluster": self.resources.cluster.name})
