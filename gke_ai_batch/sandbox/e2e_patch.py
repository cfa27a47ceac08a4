"""An update as the tests write it (the old object and the new one) carried onto the object as the cluster holds
it: the JSON merge patch (RFC 7386) from old to new, applied to the live object, which keeps what the API server
and the webhooks set (defaults, Kueue's labels and gates, the resourceVersion) where the test did not change it."""
from __future__ import annotations

from typing import Any


def merge_patch(old: Any, new: Any) -> Any:
    """The patch that turns old into new: changed keys, None for removed ones, lists whole."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return new
    patch = {k: None for k in old if k not in new}
    for k, v in new.items():
        if k not in old:
            patch[k] = v
        elif old[k] != v:
            patch[k] = merge_patch(old[k], v)
    return patch


def apply_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: None removes a key, a dict merges, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = apply_patch(out.get(k), v)
    return out
