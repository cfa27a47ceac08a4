"""Where two sides' inputs of one resource differ, as the paths `make diff` prints (`nodeConfig.diskSizeGb`,
`metadata.labels["kueue.x-k8s.io/queue-name"]`): read by the diff's lines and by the decision gate alike."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import yaml

from gke_ai_batch.model.quantity import parse_quantity

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
SECRET = "[secret]"  # how a plan shows every secret value
DIGEST_KEY = "GKE_AI_BATCH_SECRET_DIGEST_KEY"  # set by `make diff` for both sides' planners, one key per run
READ = "read"  # a plan's option on a resource the program reads (`Resource.get`): the ID it reads


class _Absent:
    """An input key or list item that one side does not have."""

    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Any = _Absent()


# The field that names the items of a list, by the list's own field: what a reader calls the item
# (`resourceLimits[resourceType="nvidia-l4"]`, not `resourceLimits[4]`). Other lists try, in this order, the
# fields that name the items of most lists (a ClusterQueue's flavors and resources, a binding's subjects, a
# policy's variables, containers, authorized networks, taints). A key is used only where it names every item of
# both sides once (identity()); otherwise, and for a list that no key names, items are compared by index.
LIST_KEYS = {
    "resourceLimits": "resourceType",  # a cluster's node auto-provisioning limits
    "maintenanceExclusions": "exclusionName",
    "secondaryIpRanges": "rangeName",
    "guestAccelerators": "type",
    "limits": "type",  # a LimitRange's items, by the kind they limit (core/v1 LimitRangeItem.type: Pod, Container)
    "levels": "nodeLabel",  # a Kueue Topology's (v1beta2 TopologySpec.levels: unique, one nodeLabel each)
}
IDENTITIES = ("name", "displayName", "cidrBlock", "key")
_LIST_NAME = re.compile(r"(?:^|\.)([A-Za-z_][A-Za-z0-9_]*)\Z")


def changes(old: Any, new: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """The leaf paths where two input values differ: dict keys by name, lists of objects by the name their
    items carry (`flavors[name="v5p-res"]`, identity()) or else by index, lists of plain values as a whole (a
    namespace list reads better whole than item by item), and a YAML document held in a string (Kueue's
    configuration in the Helm values) key by key, as if it were inputs."""
    if old == new:
        return
    if (docs := (embedded(old), embedded(new)))[0] is not None and docs[1] is not None:
        yield from changes(*docs, path)
    elif isinstance(old, dict) and isinstance(new, dict):
        for key in [*old, *(k for k in new if k not in old)]:
            yield from changes(old.get(key, ABSENT), new.get(key, ABSENT), join(path, str(key)))
    elif isinstance(old, list) and isinstance(new, list) and (field := identity(old, new, path)) is not None:
        yield from _named_changes(old, new, path, field)
    elif isinstance(old, list) and isinstance(new, list) and any(isinstance(v, dict | list) for v in old + new):
        for i in range(max(len(old), len(new))):
            yield from changes(old[i] if i < len(old) else ABSENT, new[i] if i < len(new) else ABSENT,
                               f"{path}[{i}]")
    else:
        yield path, old, new


def identity(old: list[Any], new: list[Any], path: str) -> str | None:
    """The field that names every item of both lists at `path`, once per list (LIST_KEYS, else IDENTITIES);
    None when none does (then items are compared by index). Removing the first of three named items is then
    one removal, not three changes."""
    items = old + new
    own = LIST_KEYS.get(m.group(1)) if (m := _LIST_NAME.search(path)) else None
    for field in (own,) if own else IDENTITIES:
        if items and all(isinstance(v, dict) and isinstance(v.get(field), str) for v in items) and \
                all(len({v[field] for v in side}) == len(side) for side in (old, new)):
            return field
    return None


def _named_changes(old: list[Any], new: list[Any], path: str, field: str) -> Iterator[tuple[str, Any, Any]]:
    """Each item's changes under its name, old items first in their order, then the added ones; and the order
    of the items both sides hold, where it changed (a ClusterQueue tries its flavors in order)."""
    was, now = {v[field]: v for v in old}, {v[field]: v for v in new}
    for name in [*was, *(n for n in now if n not in was)]:
        yield from changes(was.get(name, ABSENT), now.get(name, ABSENT), f"{path}[{field}={json.dumps(name)}]")
    kept = ([n for n in was if n in now], [n for n in now if n in was])
    if kept[0] != kept[1]:
        yield f"{path}[*].{field} (order)", kept[0], kept[1]


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


def under(path: str, prefix: str) -> bool:
    """Whether `path` is `prefix` or a field or item inside it (`spec.tolerations[0].key` under `spec.tolerations`)."""
    return path == prefix or path.startswith((f"{prefix}.", f"{prefix}["))


def amount(value: Any) -> Decimal | None:
    """A changed input's quantity (a quota, a ratio, a size), or None where that side has none."""
    return None if value is ABSENT or value is None else parse_quantity(str(value))


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


def object_name(r: dict[str, Any]) -> str:
    """A Kubernetes object's own name (its metadata's), else the resource's Pulumi name."""
    return str(((r.get("inputs") or {}).get("metadata") or {}).get("name", r["name"]))
