"""Plans for one public component at a time, from its plain arguments: the same config model,
catalog and GKE rules as the whole-platform plan, with errors that name the component and the
argument ("invalid TpuSlicePool 'v6e' arguments at topology: ...") before any resource exists."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ROOT, ConfigError
from gke_ai_batch.model.gke_rules import cluster_findings, pool_findings
from gke_ai_batch.model.pool_config import (
    CpuPoolConfig,
    GpuPoolConfig,
    SystemPoolConfig,
    TpuPoolConfig,
)
from gke_ai_batch.model.pydantic_errors import config_error
from gke_ai_batch.plan import declarations, lifecycle
from gke_ai_batch.plan.adoption import check_adoption
from gke_ai_batch.plan.declarations import ClusterDeclaration, KueueDeclaration, NodePoolDeclaration
from gke_ai_batch.plan.gke_check import enforce_network_rules
from gke_ai_batch.plan.gke_inputs import cluster_inputs, cluster_location, engine_form
from gke_ai_batch.plan.identity import node_identity
from gke_ai_batch.plan.network import plan_network
from gke_ai_batch.plan.platform import WorkerOutputs, build_platform, derive_platform
from gke_ai_batch.plan.pools import (
    PoolContext,
    PoolPlan,
    cpu_pool_plan,
    gpu_pool_plan,
    system_pool_plan,
    tpu_pool_plans,
)
from gke_ai_batch.vocabulary import ClusterMode

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

# Placeholders for the identity a scheduling-only platform does not have: they name nothing that is
# declared (the Kueue layer reads teams, queues, priorities and the pools' shapes, never these).
_SCHEDULING_ONLY: dict[str, Any] = {"project": "scheduling-only", "environment": "none", "owner": "none",
                    "cluster": {"name": "scheduling-only"}}


def _plain(args: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    """The given keys that are set (None means unset, as an optional argument left out)."""
    return {k: args[k] for k in keys if args.get(k) is not None}


def _named(component: str, name: str, run: Callable[[], T]) -> T:
    """Run a plan step; a ConfigError's path is re-rooted at the component's arguments."""
    try:
        return run()
    except ConfigError as e:
        at = e.path.removeprefix(ROOT).lstrip(".")
        raise ConfigError(at or "(arguments)", e.message, subject=f"{component} {name!r} arguments") from None


def _validated(model: type[M], raw: dict[str, Any]) -> M:
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        raise config_error(e, raw, model) from None


def _shape(model: type[BaseModel]) -> tuple[str, ...]:
    """A pool component's own arguments: every field of its config block but the name (its resource name)."""
    return tuple(f for f in model.model_fields if f != "name")


# A dynamically sliced TPU pool needs the cluster's slice controller, which GkeCluster plans from the platform's
# pools only: the component door does not offer dynamic slicing (TpuShape has no such argument).
TPU_SHAPE = tuple(f for f in _shape(TpuPoolConfig) if f not in ("dynamic_slicing", "sub_slicing"))
GPU_SHAPE, CPU_SHAPE = _shape(GpuPoolConfig), _shape(CpuPoolConfig)
SYSTEM_SHAPE = _shape(SystemPoolConfig)

P = TypeVar("P", bound=BaseModel)


def _pool_plans(component: str, name: str, args: Mapping[str, Any], model: type[P], shape: tuple[str, ...],
                plan: Callable[[PoolContext, str, P], list[PoolPlan]]) -> list[NodePoolDeclaration]:
    """A pool component's node pools from its arguments: the config model, the planner, then GKE's pool
    rules over what would be sent (with the cluster's location and pinned version)."""
    def run() -> list[NodePoolDeclaration]:
        cluster = args.get("cluster")  # a plain name names a TPU7x workload policy; an output is named later
        zones = tuple(args.get("zones") or ())
        ctx = PoolContext(str(args["region"]), zones, cluster if isinstance(cluster, str) else "")
        plans = plan(ctx, ROOT, _validated(model, {"name": name, **_plain(args, *shape)}))
        pools = declarations.node_pools(plans, str(args["project"]), dict(args.get("labels") or {}))
        props = {"location": args["region"], "minMasterVersion": args.get("cluster_version")}
        for rule, finding in pool_findings(engine_form(pools[0].inputs), props):
            raise ConfigError(f"{ROOT}.{rule.field}{finding.at}", finding.message)
        return pools
    return _named(component, name, run)


def tpu_slices(name: str, args: Mapping[str, Any]) -> list[NodePoolDeclaration]:
    """The node pools of a TpuSlicePool, one per slice (all of one shape, so the rules judge the first)."""
    return _pool_plans("TpuSlicePool", name, args, TpuPoolConfig, TPU_SHAPE, tpu_pool_plans)


def gpu_pool(name: str, args: Mapping[str, Any]) -> NodePoolDeclaration:
    return _pool_plans("GpuPool", name, args, GpuPoolConfig, GPU_SHAPE,
                       lambda c, path, pool: [gpu_pool_plan(c, path, pool)])[0]


def cpu_pool(name: str, args: Mapping[str, Any]) -> NodePoolDeclaration:
    return _pool_plans("CpuPool", name, args, CpuPoolConfig, CPU_SHAPE,
                       lambda c, path, pool: [cpu_pool_plan(c, path, pool)])[0]


def system_pool(name: str, args: Mapping[str, Any]) -> NodePoolDeclaration:
    return _pool_plans("SystemNodePool", name, args, SystemPoolConfig, SYSTEM_SHAPE,
                       lambda c, path, pool: [system_pool_plan(c, path, pool)])[0]


CLUSTER_IDENTITY = ("project", "region", "zones", "environment", "production", "owner", "cost_center", "labels",
                    "network")


def cluster(name: str, args: Mapping[str, Any]) -> ClusterDeclaration:
    """A GkeCluster's node identity, network and Cluster inputs, checked against GKE's cluster rules."""
    def run() -> ClusterDeclaration:
        cfg = _validated(PlatformConfig, {**_plain(args, *CLUSTER_IDENTITY), "cluster": dict(args["cluster"])})
        network = plan_network(cfg)
        check_adoption(cfg, cluster_location(cfg), [])
        inputs = cluster_inputs(cfg, cfg.resource_labels())
        for rule, finding in cluster_findings(engine_form(inputs)):
            raise ConfigError(f"{rule.field}{finding.at}", finding.message)
        enforce_network_rules(network, engine_form(inputs), [])  # the pools are not known here
        return ClusterDeclaration(node_identity(cfg), network, inputs, lifecycle.cluster(cfg.cluster.adopt))
    return _named("GkeCluster", name, run)


SCHEDULING = ("region", "zones", "tpu_pools", "gpu_pools", "cpu_pools", "autopilot_flavors", "kueue",
              "jobset", "cohorts", "shared_queues", "priorities", "teams")


_QUOTA_NAMES = {"borrowingLimit": "borrowing_limit", "lendingLimit": "lending_limit"}


def _python_names(queue: Any) -> Any:
    """A queue's quotas with Python names: the component provider maps schema (camelCase) names back
    for objects and lists, but not for the objects inside a map, as quotas (flavor -> resource -> quota) are."""
    if not isinstance(queue, Mapping) or not isinstance(queue.get("quotas"), Mapping):
        return queue
    quotas = {flavor: {res: {_QUOTA_NAMES.get(k, k): v for k, v in q.items()} if isinstance(q, Mapping) else q
                       for res, q in resources.items()} if isinstance(resources, Mapping) else resources
              for flavor, resources in queue["quotas"].items()}
    return {**queue, "quotas": quotas}


def _queues_in_python_names(raw: dict[str, Any]) -> dict[str, Any]:
    teams = [{**t, "queue": _python_names(t["queue"])} if isinstance(t, Mapping) and "queue" in t else t
             for t in raw.get("teams") or []]
    shared = [_python_names(q) for q in raw.get("shared_queues") or []]
    return {**raw, "teams": teams, "shared_queues": shared}


def scheduling(name: str, args: Mapping[str, Any]) -> KueueDeclaration:
    """What a KueueLayer installs and declares: flavors from the pools' shapes, then every queue."""
    def run() -> KueueDeclaration:
        raw = _queues_in_python_names({**_SCHEDULING_ONLY, **_plain(args, *SCHEDULING)})
        if args.get("autopilot"):
            raw["cluster"] = {**_SCHEDULING_ONLY["cluster"], "mode": ClusterMode.AUTOPILOT}
        cfg = _validated(PlatformConfig, raw)
        for i, team in enumerate(cfg.teams):
            for key in ("buckets", "service_account"):
                if getattr(team, key):
                    raise ConfigError(f"teams[{i}].{key}", "a KueueLayer declares queues, not Google Cloud "
                                      "resources: declare team storage with the Platform component")
        for i, pool in enumerate(cfg.tpu_pools):
            if pool.dynamic_slicing:
                raise ConfigError(f"tpu_pools[{i}].dynamic_slicing", "a KueueLayer beside a GkeCluster cannot turn "
                                  "on the cluster's slice controller that dynamic slicing needs: declare the pool "
                                  "with the Platform component (or a stack's tpu_pools)")
        return declarations.kueue(derive_platform(cfg))
    return _named("KueueLayer", name, run)


def platform(raw: Any, project: str, config_keys: Iterable[str] = (),
             worker_outputs: WorkerOutputs | None = None) -> declarations.PlatformDeclaration:
    """What the Platform component declares: the whole stack's plan (plan.platform.build_platform), with every
    component's part of it decided."""
    return declarations.platform(build_platform(raw, project, config_keys, worker_outputs))
