"""Where two sides' inputs of one resource differ, as the paths `make diff` prints (`nodeConfig.diskSizeGb`,
`metadata.labels["kueue.x-k8s.io/queue-name"]`): read by the diff's lines and by the decision gate alike."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import yaml

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
SECRET = "[secret]"  # how a plan shows every secret value
DIGEST_KEY = "GKE_AI_BATCH_SECRET_DIGEST_KEY"  # set by `make diff` for both sides' planners, one key per run


class _Absent:
    """An input key or list item that one side does not have."""

    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Any = _Absent()


def changes(old: Any, new: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """The leaf paths where two input values differ: dict keys by name, lists of objects by index, lists of
    plain values as a whole (a namespace list reads better whole than item by item), and a YAML document
    held in a string (Kueue's configuration in the Helm values) key by key, as if it were inputs."""
    if old == new:
        return
    if (docs := (embedded(old), embedded(new)))[0] is not None and docs[1] is not None:
        yield from changes(*docs, path)
    elif isinstance(old, dict) and isinstance(new, dict):
        for key in [*old, *(k for k in new if k not in old)]:
            yield from changes(old.get(key, ABSENT), new.get(key, ABSENT), join(path, str(key)))
    elif isinstance(old, list) and isinstance(new, list) and any(isinstance(v, dict | list) for v in old + new):
        for i in range(max(len(old), len(new))):
            yield from changes(old[i] if i < len(old) else ABSENT, new[i] if i < len(new) else ABSENT,
                               f"{path}[{i}]")
    else:
        yield path, old, new


def embedded(value: Any) -> dict[str, Any] | None:
    """The mapping a multi-line string holds as YAML, or None (a plain string, or not YAML)."""
    if not isinstance(value, str) or "\n" not in value:
        return None
    try:
        doc = yaml.safe_load(value)
    except yaml.YAMLError:
        return None
    return doc if isinstance(doc, dict) else None


def join(path: str, key: str) -> str:
    """`spec.resources` for plain keys, `labels["kueue.x-k8s.io/queue-name"]` for the others."""
    if _IDENT.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


class Hidden:
    """A secret value as `make diff` compares it: by its keyed digest, never by its value. A side planned by
    code that records no digests (a BASE before them) has none, and then equals any secret."""

    def __init__(self, digest: str | None) -> None:
        self.digest = digest

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Hidden):
            return self.digest is None or other.digest is None or self.digest == other.digest
        return other == SECRET

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return SECRET


def with_digests(value: Any, digests: dict[str, str], path: str = "") -> Any:
    """The inputs with each [secret] leaf replaced by its Hidden digest (digests: path -> digest, as the plan
    recorded them)."""
    if isinstance(value, dict):
        return {k: with_digests(v, digests, join(path, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [with_digests(v, digests, f"{path}[{i}]") for i, v in enumerate(value)]
    return Hidden(digests.get(path)) if value == SECRET else value
