"""One error type for bad input: where it is, what it was, and what is allowed. The subject is
the stack config, or a public component's arguments when it is used on its own."""
from __future__ import annotations

ROOT = "platform"


class ConfigError(ValueError):
    def __init__(self, path: str, message: str, subject: str = "stack config"):
        self.path, self.message, self.subject = path, message, subject
        super().__init__(f"invalid {subject} at {path}: {message}")


def path_of(*parts: object) -> str:
    """platform.tpu_pools[0].topology from ("tpu_pools", 0, "topology")."""
    out = ROOT
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out
