"""From raw stack config to a validated, fully derived platform plan: the single entry point that
`__main__.py`, the offline tools and the tests use. Nothing here touches Pulumi."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ROOT, ConfigError
from gke_ai_batch.plan.gke_check import enforce_gke_rules
from gke_ai_batch.plan.pools import PoolPlan, plan_pools
from gke_ai_batch.plan.scheduling import SchedulingPlan, derive_scheduling


@dataclass(frozen=True)
class Platform:
    config: PlatformConfig
    pools: tuple[PoolPlan, ...]
    scheduling: SchedulingPlan

    @property
    def multi_host(self) -> bool:
        return any(p.multi_host for p in self.pools)

    @property
    def install_jobset(self) -> bool:
        mode = self.config.jobset.install
        return mode == "always" or (mode == "auto" and self.multi_host)


def _pydantic_path(loc: tuple[int | str, ...]) -> str:
    out = ROOT
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("int", "str") or "[" in str(part):
            continue  # union branch names pydantic adds to the location, e.g. function-after[...]
        else:
            out += f".{part}"
    return out


def _short_form(raw: Any, loc: tuple[int | str, ...]) -> bool:
    """True when a quota was written as a bare quantity (`cpu: 4`), so `.nominal` is not in the file."""
    node = raw
    for part in loc[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
    return bool(loc) and loc[-1] == "nominal" and not isinstance(node, dict)


def config_error(e: ValidationError, raw: Any = None) -> ConfigError:
    """The first pydantic error as a ConfigError: path, value, and what is allowed."""
    err = e.errors()[0]
    if _short_form(raw, err["loc"]):
        err = {**err, "loc": err["loc"][:-1]}
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        msg = "unknown key; check its spelling against the stack config reference in README.md"
    elif err["type"] == "enum" or err["type"] == "literal_error":
        msg = msg.replace("Input should be", "allowed:")
    value = err.get("input")
    shown = "" if err["type"] in ("missing",) or isinstance(value, dict) else f"{value!r}: "
    return ConfigError(_pydantic_path(err["loc"]), f"{shown}{msg}")


def build_platform(raw: Any) -> Platform:
    """Validate and derive everything; raises ConfigError (one, with its path) on bad input."""
    if not isinstance(raw, dict):
        raise ConfigError(ROOT, "the stack config needs a `gke-ai-batch:platform` mapping")
    try:
        cfg = PlatformConfig.model_validate(raw)
    except ValidationError as e:
        raise config_error(e, raw) from None
    return derive_platform(cfg, check_gke_rules=True)


def derive_platform(cfg: PlatformConfig, check_gke_rules: bool = False) -> Platform:
    """Pools, then GKE's rules over them (a pool GKE refuses is reported before the queues that name
    it), then scheduling. The KueueLayer component skips the rules: the pools' components check them."""
    pools = plan_pools(cfg)
    if check_gke_rules:
        enforce_gke_rules(cfg, pools)
    return Platform(config=cfg, pools=tuple(pools), scheduling=derive_scheduling(cfg, pools))
