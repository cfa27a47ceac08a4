"""From raw stack config to a validated, fully derived platform plan: what `__main__.py` and the Platform
component build from a stack file (the other components plan their part through plan.component_plans).
Nothing here touches Pulumi."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from gke_ai_batch.model import catalog
from gke_ai_batch.model.config import CONFIG_KEY, PlatformConfig
from gke_ai_batch.model.errors import ROOT, ConfigError
from gke_ai_batch.model.pydantic_errors import config_error
from gke_ai_batch.model.words import closest, name_list, shorten
from gke_ai_batch.plan.gke_check import enforce_gke_rules
from gke_ai_batch.plan.gpudirect_networks import refuse_overlaps
from gke_ai_batch.plan.identity import NodeIdentity, node_identity
from gke_ai_batch.plan.network import NetworkPlan, plan_network
from gke_ai_batch.plan.pools import PoolPlan, plan_pools
from gke_ai_batch.plan.scheduling import SchedulingPlan, derive_scheduling
from gke_ai_batch.plan.storage import TeamStoragePlan, plan_storage


@dataclass(frozen=True)
class Platform:
    config: PlatformConfig
    pools: tuple[PoolPlan, ...]
    scheduling: SchedulingPlan
    identity: NodeIdentity
    network: NetworkPlan
    storage: tuple[TeamStoragePlan, ...]

    @property
    def multi_host(self) -> bool:
        """A multi-host TPU slice: a pool of one, or an Autopilot flavor selecting one."""
        return any(p.multi_host for p in self.pools) or any(
            catalog.tpu_shape(f.tpu.generation, f.tpu.topology).multi_host
            for f in self.config.autopilot_flavors if f.tpu is not None)

    @property
    def install_jobset(self) -> bool:
        mode = self.config.jobset.install
        return mode == "always" or (mode == "auto" and self.multi_host)


def build_platform(raw: Any, project: str = "gke-ai-batch", config_keys: Iterable[str] = ()) -> Platform:
    """Validate and derive everything; raises ConfigError (one, with its path) on bad input.
    `config_keys` are the stack's config keys, to name a misspelt platform key."""
    if raw is None:
        raise ConfigError(ROOT, _no_platform_key(f"{project}:{CONFIG_KEY}", list(config_keys)))
    if not isinstance(raw, dict):
        raise ConfigError(ROOT, f"`{project}:{CONFIG_KEY}` should be a mapping of keys to values")
    try:
        cfg = PlatformConfig.model_validate(raw)
    except ValidationError as e:
        raise config_error(e, raw) from None
    return derive_platform(cfg, check_gke_rules=True)


def _no_platform_key(key: str, found: list[str]) -> str:
    guess = closest(key, found)
    if guess:
        return f"the stack config has no `{key}` key; it has `{shorten(guess)}`: did you mean `{key}`?"
    return f"the stack config has no `{key}` key (it has: {name_list(found)})"


def derive_platform(cfg: PlatformConfig, check_gke_rules: bool = False) -> Platform:
    """The network, pools, GKE's rules over the cluster, pools and network (a pool GKE refuses is
    reported before the queues that name it), scheduling, then the teams' storage. The
    KueueLayer component skips the rules: the pools' components check them."""
    network = plan_network(cfg)
    pools = plan_pools(cfg)
    if network.ranges:
        refuse_overlaps(pools, network.ranges.nodes)
    if check_gke_rules:
        enforce_gke_rules(cfg, pools, network)
    scheduling = derive_scheduling(cfg, pools)
    storage = plan_storage(cfg, {t.name: t.namespaces for t in scheduling.teams})
    return Platform(config=cfg, pools=tuple(pools), scheduling=scheduling, identity=node_identity(cfg),
                    network=network, storage=storage)
