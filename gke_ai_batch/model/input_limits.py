"""Bounds on what a stack's config may hold, so that a hostile or broken file ends in one error, not in a
traceback, a hang or gigabytes of memory.

The platform config reaches the program twice over: the offline tools read the stack file's YAML, and the
program itself (under the engine too) reads the config value as JSON. Both refuse, each with one message:
- more than MAX_BYTES (the file, or the config's JSON);
- nesting deeper than MAX_DEPTH (Python's parsers recurse, and 50,000 `[` ended in a RecursionError);
- an integer of more than MAX_DIGITS digits (Python refuses to read one of 4,300 with a ValueError; nothing
  the platform takes needs more than an int64's 19);
- YAML aliases (`*name`), which the YAML reader checks: a few lines of aliases expand to billions of nodes.
A real config is far inside every bound: the deepest path (`platform.teams[0].queue.quotas.<flavor>.<resource>
.nominal`) is 7 levels, and 5,000 teams (the most `make bench` plans) take about 1.7 MiB.
"""
from __future__ import annotations

import json
from typing import Any

from gke_ai_batch.model.config import CONFIG_KEY
from gke_ai_batch.model.errors import ROOT, ConfigError

MAX_BYTES = 3 * 2**20  # 5,000 teams take about 1.7 MiB; a file of 3 MiB reads in about 3 s and 250 MB
MAX_DEPTH = 32
MAX_DIGITS = 20


def too_large(size: int) -> str | None:
    """Why a config of `size` bytes is refused, or None."""
    if size <= MAX_BYTES:
        return None
    return (f"the config is {size / 2**20:.1f} MiB; at most {MAX_BYTES // 2**20} MiB is read (5,000 teams take "
            "about 1.7 MiB)")


TOO_DEEP = f"values are nested more than {MAX_DEPTH} levels deep (the deepest the platform reads is 7)"


def too_long(digits: str) -> str:
    return (f"an integer of {len(digits.lstrip('+-')):,} digits; at most {MAX_DIGITS} are read (no setting "
            "needs more than 19)")


def parse_config(text: str | None) -> Any:
    """The platform config from its JSON (as the engine passes it); ConfigError at `platform` on a value too
    large, too deep, with too long a number, or not JSON."""
    if text is None:
        return None
    if problem := too_large(len(text.encode())):
        raise ConfigError(ROOT, problem)
    try:
        value = json.loads(text, parse_int=_int)
    except RecursionError:
        raise ConfigError(ROOT, TOO_DEEP) from None
    except json.JSONDecodeError:
        raise ConfigError(ROOT, f"`{CONFIG_KEY}` should be a mapping of keys to values, not text") from None
    if deepest(value) > MAX_DEPTH:
        raise ConfigError(ROOT, TOO_DEEP)
    return value


def _int(digits: str) -> int:
    if len(digits.lstrip("+-")) > MAX_DIGITS:
        raise ConfigError(ROOT, too_long(digits))
    return int(digits)


def deepest(value: Any) -> int:
    """How many levels of mappings and lists `value` nests, counted without recursion."""
    most, todo = 0, [(value, 0)]
    while todo:
        v, depth = todo.pop()
        most = max(most, depth)
        children = v.values() if isinstance(v, dict) else v if isinstance(v, list) else ()
        todo += [(c, depth + 1) for c in children if isinstance(c, dict | list)]
    return most + 1 if isinstance(value, dict | list) else 0
