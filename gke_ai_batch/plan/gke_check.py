"""The planner's side of the GKE rules: check the inputs the platform is about to send and stop at
the first broken rule with a ConfigError at the rule's config path."""
from __future__ import annotations

from collections.abc import Sequence

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ROOT, ConfigError, path_of
from gke_ai_batch.model.gke_rule_sources import GkeRule, Props
from gke_ai_batch.model.gke_rules import (
    class_findings,
    cluster_findings,
    network_findings,
    pool_findings,
    stack_findings,
    sub_slicing_findings,
)
from gke_ai_batch.plan.compute_classes import plan_compute_classes
from gke_ai_batch.plan.gke_inputs import cluster_inputs, engine_form, node_pool_inputs
from gke_ai_batch.plan.network import NetworkPlan
from gke_ai_batch.plan.pools import PoolPlan


def _path(base: str, rule: GkeRule, at: str) -> str:
    if rule.field.startswith(f"{ROOT}."):
        return rule.field + at
    return f"{base}.{rule.field}{at}"


def enforce_gke_rules(cfg: PlatformConfig, pools: list[PoolPlan], network: NetworkPlan) -> None:
    labels = cfg.resource_labels()
    cluster = engine_form(cluster_inputs(cfg, labels))
    for rule, finding in cluster_findings(cluster):
        raise ConfigError(_path(ROOT, rule, finding.at), finding.message)
    sub_sliced = [path_of("tpu_pools", i) for i, t in enumerate(cfg.tpu_pools) if t.dynamic_slicing and t.sub_slicing]
    for rule, finding in sub_slicing_findings({"minMasterVersion": cfg.cluster.version, "subSlicingPools": sub_sliced}):
        raise ConfigError(_path(ROOT, rule, finding.at), finding.message)
    declared = [engine_form(node_pool_inputs(plan, labels)) for plan in pools]
    for plan, pool in zip(pools, declared, strict=True):
        for rule, finding in pool_findings(pool, cluster):
            raise ConfigError(_path(plan.path, rule, finding.at), finding.message)
    for _rule, finding in stack_findings(declared, cluster):
        assert finding.pool is not None  # a rule over all pools points at one of them
        raise ConfigError(pools[finding.pool].path, finding.message)
    for c in plan_compute_classes(cfg, pools):
        for rule, finding in class_findings(c.manifest(), cluster):
            raise ConfigError(_path(c.path, rule, finding.at), finding.message)
    enforce_network_rules(network, cluster, declared)


def enforce_network_rules(network: NetworkPlan, cluster: Props, pools: Sequence[Props]) -> None:
    """A created network's ranges against each other and the pools (an adopted one's are not known)."""
    if not network.create:
        return
    subnet = engine_form(network.subnet_inputs(network.name))
    for rule, finding in network_findings(subnet, cluster, pools):
        raise ConfigError(_path(ROOT, rule, finding.at), finding.message)
