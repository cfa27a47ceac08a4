"""From raw stack config to a validated, fully derived platform plan: what `__main__.py` and the Platform
component build from a stack file (the other components plan their part through plan.component_plans).
Nothing here touches Pulumi."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from gke_ai_batch.model import catalog
from gke_ai_batch.model.config import CONFIG_KEY, PlatformConfig
from gke_ai_batch.model.errors import ROOT, ConfigError
from gke_ai_batch.model.fleet_config import FleetConfig
from gke_ai_batch.model.fleet_facts import WorkerFacts
from gke_ai_batch.model.pydantic_errors import config_error
from gke_ai_batch.model.words import closest, name_list, shorten
from gke_ai_batch.plan import fleet as fleet_plan
from gke_ai_batch.plan.adoption import check_adoption
from gke_ai_batch.plan.alerts import AlertPlan, plan_alerts
from gke_ai_batch.plan.cost import CostPlan, plan_cost
from gke_ai_batch.plan.dashboard import plan_dashboard
from gke_ai_batch.plan.fleet_worker import check_worker
from gke_ai_batch.plan.gke_check import enforce_gke_rules
from gke_ai_batch.plan.gke_inputs import cluster_location
from gke_ai_batch.plan.gpudirect_networks import installers, refuse_overlaps
from gke_ai_batch.plan.identity import NodeIdentity, node_identity
from gke_ai_batch.plan.network import NetworkPlan, plan_network
from gke_ai_batch.plan.pools import PoolPlan, plan_pools
from gke_ai_batch.plan.scheduling import SchedulingPlan, derive_scheduling
from gke_ai_batch.plan.storage import TeamStoragePlan, plan_storage
from gke_ai_batch.vocabulary import JOBSET_FRAMEWORK

# A manager stack's way to its workers' `fleetWorker` outputs, by worker name (pulumi.StackReference in the
# program; the offline plan answers them from the worker stacks' own plans).
WorkerOutputs = Callable[[FleetConfig], Mapping[str, Any]]


@dataclass(frozen=True)
class Platform:
    config: PlatformConfig
    pools: tuple[PoolPlan, ...]
    scheduling: SchedulingPlan
    identity: NodeIdentity
    network: NetworkPlan
    storage: tuple[TeamStoragePlan, ...]
    fleet: fleet_plan.FleetPlan | None = None  # a fleet manager's workers and what it declares on them
    fleet_jobset: bool = False  # a fleet manager whose workers run JobSet
    dashboard: dict[str, Any] | None = None  # the Cloud Monitoring dashboard (plan.dashboard)
    alerts: tuple[AlertPlan, ...] = ()  # the alert policies (plan.alerts)
    cost: CostPlan | None = None  # the per-team cost view (plan.cost)

    @property
    def multi_host(self) -> bool:
        return multi_host(self.config, self.pools)

    @property
    def install_jobset(self) -> bool:
        return install_jobset(self.config, self.pools, self.fleet_jobset)

    @property
    def frameworks(self) -> list[str]:
        return frameworks(self.install_jobset)

    @property
    def gpudirect_installers(self) -> list[dict[str, Any]]:
        """GKE's NCCL installer DaemonSets its GPUDirect pools need."""
        return installers(self.pools)


def multi_host(cfg: PlatformConfig, pools: Sequence[PoolPlan]) -> bool:
    """A multi-host TPU slice: a pool of one, or an Autopilot flavor selecting one."""
    return any(p.multi_host for p in pools) or any(
        catalog.tpu_shape(f.tpu.generation, f.tpu.topology).multi_host
        for f in cfg.autopilot_flavors if f.tpu is not None)


def install_jobset(cfg: PlatformConfig, pools: Sequence[PoolPlan], fleet_jobset: bool) -> bool:
    """jobset.install: always, or auto where a slice is multi-host, a team runs Pathways (its jobs are
    JobSets) or a fleet manager's workers run JobSet."""
    mode = cfg.jobset.install
    pathways = any(t.pathways for t in cfg.teams)
    return mode == "always" or (mode == "auto" and (multi_host(cfg, pools) or pathways or fleet_jobset))


def frameworks(jobset: bool) -> list[str]:
    """Jobs and JobSets, and Kueue's pod, deployment and statefulset integrations, so that a bare Pod,
    Deployment or StatefulSet in a team namespace is gated until its queue admits it instead of running on
    accelerator nodes outside every quota (Kueue docs: run plain Pods, deployments). A fleet worker tells
    its manager these; the manager may enable no more."""
    return ["batch/job", *([JOBSET_FRAMEWORK] if jobset else []), "pod", "deployment", "statefulset"]


def build_platform(raw: Any, project: str = "gke-ai-batch", config_keys: Iterable[str] = (),
                   worker_outputs: WorkerOutputs | None = None) -> Platform:
    """Validate and derive everything; raises ConfigError (one, with its path) on bad input.
    `config_keys` are the stack's config keys, to name a misspelt platform key; `worker_outputs` reads a
    fleet manager's workers (none: a manager is refused at its first worker)."""
    if raw is None:
        raise ConfigError(ROOT, _no_platform_key(f"{project}:{CONFIG_KEY}", list(config_keys)))
    if not isinstance(raw, dict):
        raise ConfigError(ROOT, f"`{project}:{CONFIG_KEY}` should be a mapping of keys to values")
    try:
        cfg = PlatformConfig.model_validate(raw)
    except ValidationError as e:
        raise config_error(e, raw) from None
    return derive_platform(cfg, check_gke_rules=True, worker_outputs=worker_outputs, project=project)


def _no_platform_key(key: str, found: list[str]) -> str:
    """Pulumi names a project's config keys after the project: a key of another project's name is the stack
    file of a renamed project (or one copied from another), which needs its key renamed."""
    other = next((k for k in found if k.endswith(f":{CONFIG_KEY}") and k != key), None)
    if other:
        return (f"the stack config has no `{key}` key; it has `{shorten(other)}`: Pulumi names config keys after "
                f"the project (Pulumi.yaml's name), so rename that key to `{key}`")
    guess = closest(key, found)
    if guess:
        return f"the stack config has no `{key}` key; it has `{shorten(guess)}`: did you mean `{key}`?"
    return f"the stack config has no `{key}` key (it has: {name_list(found)})"


def derive_platform(cfg: PlatformConfig, check_gke_rules: bool = False,
                    worker_outputs: WorkerOutputs | None = None, project: str = "gke-ai-batch") -> Platform:
    """The network, pools, GKE's rules over the cluster, pools and network (a pool GKE refuses is
    reported before the queues that name it), a fleet manager's workers, scheduling, then the teams'
    storage. The KueueLayer component skips the rules: the pools' components check them."""
    network = plan_network(cfg)
    pools = plan_pools(cfg)
    check_adoption(cfg, cluster_location(cfg), [(p.path, p.adopt) for p in pools])
    if network.ranges:
        refuse_overlaps(pools, network.ranges.nodes)
    if check_gke_rules:
        enforce_gke_rules(cfg, pools, network)
    workers = _fleet_workers(cfg, worker_outputs, project)
    fleet_jobset = any(JOBSET_FRAMEWORK in w.frameworks for w in workers.values())
    scheduling = derive_scheduling(cfg, pools, fleet_plan.fleet_flavors(cfg, workers) if workers else None)
    fleet = None
    if workers:
        enabled = frameworks(install_jobset(cfg, pools, fleet_jobset))
        scheduling, fleet = fleet_plan.plan_fleet(cfg, scheduling, workers, enabled)
    storage = plan_storage(cfg, {t.name: t.namespaces for t in scheduling.teams})
    return Platform(config=cfg, pools=tuple(pools), scheduling=scheduling, identity=node_identity(cfg),
                    network=network, storage=storage, fleet=fleet, fleet_jobset=fleet_jobset,
                    dashboard=plan_dashboard(cfg, scheduling), alerts=plan_alerts(cfg, scheduling),
                    cost=plan_cost(cfg, scheduling.teams))


def _fleet_workers(cfg: PlatformConfig, worker_outputs: WorkerOutputs | None,
                   project: str) -> dict[str, WorkerFacts]:
    """A manager's workers, read and checked; a worker's own rules; nothing for other stacks."""
    if cfg.fleet is None:
        return {}
    if cfg.fleet.role == "worker":
        check_worker(cfg)
        return {}
    fleet_plan.check_manager(cfg, project)
    return fleet_plan.read_workers(cfg, worker_outputs(cfg.fleet) if worker_outputs else {})
