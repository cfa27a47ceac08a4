"""The SDK's test for unknown values, with the same answers and no garbage for the cyclic collector.

`pulumi.runtime.rpc.contains_unknowns` defines a recursive inner function on every call: the function refers to
itself through its closure cell, so each call leaves a reference cycle (the function, its cell, its defaults and
annotations) that only the cyclic collector frees. The SDK calls it about 26 times for each resource (every
Output's value, every registration's inputs), and freeing those cycles was a quarter of a 2,000-team plan (6.9 s
of 30 s in gen-0 collections, 2.4 million objects). The offline runtime puts in place a loop over the same values
instead. `output.py` and `rpc.py` look the function up on `rpc` at each call, so this one is used everywhere."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pulumi.runtime import known_types, rpc


def contains_unknowns(val: Any) -> bool:
    """Whether an unknown is in `val` (the SDK's parameter name), its dicts' values or its lists' items, each
    object looked at once, as the SDK's does. A dict is walked by its keys and item lookup: the SDK's input types
    are dicts whose attribute names can shadow dict methods."""
    seen: set[int] = set()
    todo = [val]
    while todo:
        item = todo.pop()
        if known_types.is_unknown(item):
            return True
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, dict):
            todo.extend(item[k] for k in item)
        elif isinstance(item, list):
            todo.extend(item)
    return False


@contextmanager
def unknowns_without_cycles() -> Iterator[None]:
    original = rpc.contains_unknowns
    rpc.contains_unknowns = contains_unknowns
    try:
        yield
    finally:
        rpc.contains_unknowns = original
