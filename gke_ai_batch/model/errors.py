"""One error type for bad stack config: where it is, what it was, and what is allowed."""
from __future__ import annotations

ROOT = "platform"


class ConfigError(ValueError):
    def __init__(self, path: str, message: str):
        self.path, self.message = path, message
        super().__init__(f"invalid stack config at {path}: {message}")


def path_of(*parts: object) -> str:
    """platform.tpu_pools[0].topology from ("tpu_pools", 0, "topology")."""
    out = ROOT
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out
