"""What the API server's validation lets an update change in a PersistentVolumeClaim (Kubernetes v1.33
`ValidatePersistentVolumeClaimUpdate`, pkg/apis/core/validation/validation.go): nothing in its spec, except the
volume name the PV controller writes once, and, for a bound claim only, its storage request (a resize, which
ResourceQuota then charges) and volume attributes class. A bound claim is one whose status says so; the status is
the old object's, since an update of the claim keeps it.

So a claim no pod has used yet cannot be grown: GKE's Persistent Disk classes bind a claim when its first pod is
scheduled (`volumeBindingMode: WaitForFirstConsumer`), and until then the request is refused here, before quota."""
from __future__ import annotations

import copy

from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.vocabulary import Obj

IMMUTABLE = ("spec: Forbidden: spec is immutable after creation except resources.requests and "
             "volumeAttributesClassName for bound claims")


def claim_refusal(old: Obj, new: Obj) -> str | None:
    """The validation's error for a claim update changing what it may not, or None."""
    if new.get("kind") != "PersistentVolumeClaim" or old.get("kind") != "PersistentVolumeClaim":
        return None
    before, after = copy.deepcopy(old.get("spec") or {}), copy.deepcopy(new.get("spec") or {})
    if not before.get("volumeName"):
        before.pop("volumeName", None)
        after.pop("volumeName", None)
    if "storageClassName" not in before:  # set once from nil: the retroactive default class
        after.pop("storageClassName", None)
    if (old.get("status") or {}).get("phase") == "Bound":
        for spec in (before, after):
            (spec.get("resources") or {}).get("requests", {}).pop("storage", None)
            spec.pop("volumeAttributesClassName", None)
    if _normal(before) == _normal(after):
        return None
    name = (new.get("metadata") or {}).get("name") or ""
    return f'PersistentVolumeClaim "{name}" is invalid: {IMMUTABLE}'


def _normal(spec: Obj) -> Obj:
    """The spec with its quantities as numbers: `1Ti` and `1024Gi` are one value (apiequality.Semantic)."""
    resources = spec.get("resources") or {}
    numbers = {part: {r: parse_quantity(q) for r, q in (resources.get(part) or {}).items()}
               for part in ("requests", "limits") if resources.get(part)}
    return {**spec, "resources": numbers}
