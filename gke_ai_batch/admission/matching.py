"""Whether a pod may land on a flavor's nodes: label selectors, node affinity and taints, evaluated as
Kubernetes and Kueue evaluate them."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gke_ai_batch.vocabulary import Obj

from .results import AssignmentError


def selector_matches(selector: Obj | None, labels: Obj) -> bool:
    """metav1.LabelSelector semantics: nil selects nothing, {} selects everything
    (`LabelSelectorAsSelector`; the ClusterQueue's namespaceSelector documents nil as "nothing")."""
    if selector is None:
        return False
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    return all(_requirement_matches(e, labels) for e in selector.get("matchExpressions") or [])


def _requirement_matches(expr: Obj, labels: Obj) -> bool:
    """In / NotIn / Exists / DoesNotExist, and node selectors' Gt / Lt on integer label values
    (NotIn and DoesNotExist match a missing key, as in k8s labels.Requirement)."""
    key, op, values = expr["key"], expr["operator"], expr.get("values") or []
    has = key in labels
    value: Any = labels.get(key)  # None when the key is missing, which int() refuses below
    if op == "In":
        return has and value in values
    if op == "NotIn":
        return not has or value not in values
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if op in ("Gt", "Lt"):
        try:
            left, right = int(value), int(values[0])
        except (TypeError, ValueError, IndexError):
            raise AssignmentError(f"{op} needs one integer value for key {key}, got {values} "
                                  f"and label value {value!r}") from None
        return has and (left > right if op == "Gt" else left < right)
    raise AssignmentError(f"{op!r} is not a valid node selector operator")


def tolerates(toleration: Obj, taint: Obj) -> bool:
    """k8s api core/v1 `Toleration.ToleratesTaint`: an empty effect or key matches any; Exists
    matches any value; Equal (or no operator) needs equal values; Gt/Lt compare integers."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    theirs: Any = taint.get("value")  # None when unset, which int() refuses below
    ours: Any = toleration.get("value")
    try:
        theirs, ours = int(theirs), int(ours)
    except (TypeError, ValueError):
        return False
    return theirs > ours if op == "Gt" else theirs < ours if op == "Lt" else False


def untolerated_taint(taints: Sequence[Obj], tolerations: Sequence[Obj]) -> Obj | None:
    """The first NoSchedule/NoExecute taint no toleration covers (`FindMatchingUntoleratedTaint`
    with the filter in flavorassigner.go: PreferNoSchedule taints never block)."""
    for taint in taints:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def taint_text(taint: Obj) -> str:
    """Go's %s of a v1.Taint struct, as Kueue prints it: `{key value NoSchedule <nil>}`."""
    return f"{{{taint.get('key', '')} {taint.get('value', '')} {taint.get('effect', '')} <nil>}}"


def affinity_matches(pod: Obj, flavor_labels: Obj) -> bool:
    """flavorassigner.go `flavorSelector`: only keys the flavor labels are kept from nodeSelector and
    from each required term; a term left empty drops all required affinity (terms are ORed); the
    rest must match a fake node carrying just the flavor's labels."""
    for key, value in (pod.get("nodeSelector") or {}).items():
        if key in flavor_labels and flavor_labels[key] != value:
            return False
    required = (((pod.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms: list[list[Obj]] = []
    for term in required.get("nodeSelectorTerms") or []:
        kept = [e for e in term.get("matchExpressions") or [] if e["key"] in flavor_labels]
        if not kept:
            return True
        terms.append(kept)
    return not terms or any(all(_requirement_matches(e, flavor_labels) for e in t) for t in terms)


def flavor_mismatch(flavor_name: str, flavor: Obj | None, pod: Obj) -> str | None:
    """Why a pod set cannot use a flavor, in Kueue's words (flavorassigner.go `checkFlavorForPodSets`):
    the flavor's own tolerations are added to the pod's before its nodeTaints are checked."""
    if flavor is None:
        return f"flavor {flavor_name} not found"
    spec = flavor.get("spec") or {}
    tolerations = list(pod.get("tolerations") or []) + list(spec.get("tolerations") or [])
    taint = untolerated_taint(spec.get("nodeTaints") or [], tolerations)
    if taint is not None:
        return f"untolerated taint {taint_text(taint)} in flavor {flavor_name}"
    if not affinity_matches(pod, spec.get("nodeLabels") or {}):
        return f"flavor {flavor_name} doesn't match node affinity"
    return None
