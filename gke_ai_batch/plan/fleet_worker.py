"""A fleet worker stack: what it refuses (its teams are the manager's) and what it tells its manager
(model.fleet_facts), derived from its own plan."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.quantity import format_quantity
from gke_ai_batch.plan.admission_checks import provisioning_check
from gke_ai_batch.plan.flavors import FlavorPlan
from gke_ai_batch.plan.gke_inputs import ip_endpoint
from gke_ai_batch.vocabulary import ClusterMode

# What a worker leaves to its manager, which declares it on the worker from the one team block.
MANAGER_KEYS = ("teams", "shared_queues", "cohorts", "priorities")


def check_worker(cfg: PlatformConfig) -> None:
    """A worker declares its cluster, pools and Kueue; its queues come from the manager, so that they
    cannot drift from the manager's."""
    assert cfg.fleet is not None and cfg.fleet.role == "worker"
    for key in MANAGER_KEYS:
        if getattr(cfg, key):
            raise ConfigError(path_of(key), f"a fleet worker's {key} are its manager's: the manager stack declares "
                              "them on every worker it dispatches to (docs/fleet.md); move them there")
    for key in ("workers", "dispatcher", "credentials"):
        if key in cfg.fleet.model_fields_set:
            raise ConfigError(path_of("fleet", key), f"a worker has no {key}: they are its manager's "
                              "(fleet.role: manager), which dispatches to it and makes its credentials")
    if ip_endpoint(cfg) == "private":
        raise ConfigError(path_of("cluster", "ip_endpoint"), "a fleet worker's control plane is reached by its "
                          "manager's Kueue, with a ServiceAccount token, from the manager's network: a private "
                          "endpoint answers only networks connected to the worker's VPC, and the DNS endpoint "
                          "refuses such tokens; set ip_endpoint: authorized and list the manager's egress "
                          "addresses in master_authorized_networks")
    if cfg.cluster.mode == ClusterMode.AUTOPILOT:
        raise ConfigError(path_of("cluster", "mode"), "a fleet worker is a Standard cluster: the manager checks "
                          "each team's quota against the worker's node pools, which Autopilot does not have")


def flavor_facts(cfg: PlatformConfig, flavor: FlavorPlan) -> dict[str, Any]:
    held: dict[str, Decimal] = {}
    fixed: dict[str, Decimal] = {}
    for pool in flavor.pools:
        for resource, part in pool.provides_in(flavor.node_labels).items():  # as the worker's own policies count
            held[resource] = held.get(resource, Decimal(0)) + part
            fixed[resource] = fixed.get(resource, Decimal(0)) + (part if pool.fixed_capacity else 0)
    facts: dict[str, Any] = {
        "node_labels": dict(flavor.node_labels), "tolerations": [dict(t) for t in flavor.tolerations],
        "resources": {r: format_quantity(v) for r, v in held.items()},
        "guaranteed": {r: format_quantity(v) for r, v in fixed.items() if v},
        "capacity": str(flavor.pools[0].capacity), "accelerator": flavor.accelerator_resource,
    }
    if flavor.host_share is not None:
        facts["host_share"] = {r: format_quantity(v) for r, v in flavor.host_share.items()}
    if flavor.queued:
        facts["admission_check"] = provisioning_check(cfg.kueue, flavor)[0]
    return facts


def worker_facts(cfg: PlatformConfig, flavors: dict[str, FlavorPlan], frameworks: list[str]) -> dict[str, Any]:
    """The `fleetWorker` output without the control plane's address and CA, which the cluster computes."""
    return {"role": "worker", "cluster": cfg.cluster.name, "project": cfg.project, "region": cfg.region,
            "kueue_version": cfg.kueue.version, "frameworks": list(frameworks),
            "flavors": {name: flavor_facts(cfg, f) for name, f in flavors.items() if f.pools}}
