"""The request as the policy sees it (attributes for matching, the CEL inputs) and whether a policy or a
binding matches it (policy/matching/matching.go, webhook/predicates)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gke_ai_batch.admission.matching import selector_matches
from gke_ai_batch.apiserver.vap_terms import NAME_LABEL
from gke_ai_batch.vocabulary import Obj


@dataclass(frozen=True)
class Attributes:
    """admission.Attributes as matching reads them."""

    group: str
    version: str
    kind: str
    resource: str
    name: str
    namespace: str
    operation: str
    labels: Obj
    old_labels: Obj | None
    namespace_labels: Obj
    subresource: str = ""  # e.g. "scale": then group, version and resource are the parent's (apps v1 deployments)
    kind_api: tuple[str, str] | None = None  # the kind's (group, version) where it differs: Scale's autoscaling v1


def resource_of(kind: str) -> str:
    """The resource (plural) of a kind: apimachinery meta.UnsafeGuessKindToResource, right for every kind
    here (Pod pods, Job jobs, JobSet jobsets, Deployment deployments, StatefulSet statefulsets); the API
    server knows the real one from discovery."""
    lower = kind.lower()
    if lower.endswith("endpoints"):
        return lower
    if lower.endswith("s"):
        return lower + "es"
    return lower[:-1] + "ies" if lower.endswith("y") else lower + "s"


def attributes_of(obj: Obj, old: Obj | None, namespace_obj: Obj | None, operation: str,
                  subresource: tuple[str, str, str] | None = None) -> Attributes:
    """The request's attributes. The namespace is the object's, else namespace_obj's (a manifest applied
    with -n carries none): pass namespace_obj=None for a cluster-scoped object. `subresource`: (the parent's
    apiVersion, resource, subresource) for a request to one, e.g. ("apps/v1", "deployments", "scale") with a
    Scale object."""
    meta = obj.get("metadata") or {}
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    ns_meta = (namespace_obj or {}).get("metadata") or {}
    namespace = str(meta.get("namespace") or ns_meta.get("name") or "")
    ns_labels = {**(ns_meta.get("labels") or {}), NAME_LABEL: namespace} if namespace else {}
    old_labels = ((old.get("metadata") or {}).get("labels") or {}) if old is not None else None
    kind_api = None
    resource, sub = resource_of(str(obj.get("kind", ""))), ""
    if subresource:
        kind_api = (group, version)
        (group, _, version), resource, sub = subresource[0].rpartition("/"), subresource[1], subresource[2]
    return Attributes(group, version, str(obj.get("kind", "")), resource, str(meta.get("name") or ""), namespace,
                      operation, meta.get("labels") or {}, old_labels, ns_labels, sub, kind_api)


def request_of(attrs: Attributes, user: Obj | None, options: Obj | None = None) -> dict[str, Any]:
    """The `request` variable: cel/condition.go `CreateAdmissionRequest`, as JSON with omitempty fields left out.
    `options`: a DELETE's DeleteOptions (endpoints/handlers/delete.go hands them to admission as the operation's
    options, typed meta.k8s.io/v1 DeleteOptions); left out on a create or update, whose options no policy here
    reads."""
    group, version = attrs.kind_api or (attrs.group, attrs.version)
    gvk = {"group": group, "version": version, "kind": attrs.kind}
    gvr = {"group": attrs.group, "version": attrs.version, "resource": attrs.resource}
    user_info = {k: (user or {})[k] for k in ("username", "uid", "groups", "extra") if (user or {}).get(k)}
    request = {"kind": gvk, "resource": gvr, "subResource": attrs.subresource, "requestKind": gvk,
               "requestResource": gvr, "requestSubResource": attrs.subresource, "name": attrs.name,
               "namespace": attrs.namespace, "operation": attrs.operation, "userInfo": user_info, "dryRun": False,
               **({"options": {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", **options}}
                  if options is not None else {})}
    return {k: v for k, v in request.items() if v != "" or k == "operation"}


_NAMESPACE_METADATA = ("name", "generateName", "namespace", "uid", "resourceVersion", "generation",
                       "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
                       "annotations", "finalizers")


def namespace_object(namespace_obj: Obj | None, attrs: Attributes) -> dict[str, Any] | None:
    """cel/condition.go `CreateNamespaceObject`: metadata (its identity, labels, annotations and finalizers),
    spec and status; with the kubernetes.io/metadata.name label the API server sets on every namespace."""
    if namespace_obj is None:
        return None
    meta = namespace_obj.get("metadata") or {}
    kept = {k: meta[k] for k in _NAMESPACE_METADATA if k in meta}
    kept["labels"] = dict(attrs.namespace_labels)
    return {"metadata": kept, "spec": namespace_obj.get("spec") or {}, "status": namespace_obj.get("status") or {}}


# ---------------------------------------------------------------------------------------------
# Matching (policy/matching/matching.go, webhook/predicates)
# ---------------------------------------------------------------------------------------------

def _any_or(items: Sequence[str] | None, value: str) -> bool:
    """rules.go `exactOrWildcard`."""
    return any(item in ("*", value) for item in items or [])


def _rule_matches(rule: Obj, attrs: Attributes) -> bool:
    """rules.go `Matcher.Matches` (scope, operation, group, version, resource/subresource), then
    matching.go's resourceNames."""
    namespaced = attrs.namespace != "" and not (attrs.resource == "namespaces" and attrs.group == "")
    scope = rule.get("scope") or "*"
    if scope not in ("*", "Namespaced" if namespaced else "Cluster"):
        return False
    if not _any_or(rule.get("operations"), attrs.operation):
        return False
    if not (_any_or(rule.get("apiGroups"), attrs.group) and _any_or(rule.get("apiVersions"), attrs.version)):
        return False
    resources = [r.split("/", 1) + [""] for r in rule.get("resources") or []]
    if not any(r[0] in ("*", attrs.resource) and r[1] in ("*", attrs.subresource) for r in resources):
        return False
    names = rule.get("resourceNames") or []
    return not names or attrs.name in names


def matches(criteria: Obj, attrs: Attributes) -> bool:
    """matching.go `Matches`: namespaceSelector (only for namespaced requests), objectSelector (the object's or
    the old object's labels), excludeResourceRules, resourceRules (none means all). An unset selector is the
    {} the API server defaults it to."""
    if attrs.namespace and not selector_matches(criteria.get("namespaceSelector") or {}, attrs.namespace_labels):
        return False
    selector = criteria.get("objectSelector") or {}
    if not (selector_matches(selector, attrs.labels)
            or (attrs.old_labels is not None and selector_matches(selector, attrs.old_labels))):
        return False
    if any(_rule_matches(rule, attrs) for rule in criteria.get("excludeResourceRules") or []):
        return False
    rules = criteria.get("resourceRules") or []
    return not rules or any(_rule_matches(rule, attrs) for rule in rules)
