"""Where two sides' inputs of one resource differ, as the paths `make diff` prints (`nodeConfig.diskSizeGb`,
`metadata.labels["kueue.x-k8s.io/queue-name"]`): read by the diff's lines and by the decision gate alike."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class _Absent:
    """An input key or list item that one side does not have."""

    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Any = _Absent()


def changes(old: Any, new: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """The leaf paths where two input values differ: dict keys by name, lists of objects by index, lists of
    plain values as a whole (a namespace list reads better whole than item by item)."""
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [*old, *(k for k in new if k not in old)]:
            yield from changes(old.get(key, ABSENT), new.get(key, ABSENT), join(path, key))
    elif isinstance(old, list) and isinstance(new, list) and any(isinstance(v, dict | list) for v in old + new):
        for i in range(max(len(old), len(new))):
            yield from changes(old[i] if i < len(old) else ABSENT, new[i] if i < len(new) else ABSENT,
                               f"{path}[{i}]")
    else:
        yield path, old, new


def join(path: str, key: str) -> str:
    """`spec.resources` for plain keys, `labels["kueue.x-k8s.io/queue-name"]` for the others."""
    if _IDENT.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"
