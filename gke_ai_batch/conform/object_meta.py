"""metadata, as the API server validates ObjectMeta for every kind: a name (or generateName) that is a DNS-1123
subdomain, a namespace that is a DNS-1123 label, label and annotation keys and label values by Kubernetes'
rules, and no field ObjectMeta does not have."""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gke_ai_batch.model.labels import k8s_key_ok, k8s_label_problem

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_FIELDS = ("name", "generateName", "namespace", "labels", "annotations", "finalizers", "ownerReferences", "uid",
           "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
           "deletionGracePeriodSeconds", "managedFields", "selfLink")


def problems(meta: Any) -> Iterator[tuple[str, str]]:
    """(path, message) for what is wrong with a document's metadata."""
    if not isinstance(meta, dict):
        yield "metadata", "missing, or not a mapping"
        return
    name, namespace = meta.get("name"), meta.get("namespace")
    if not name and not meta.get("generateName"):
        yield "metadata.name", "required field is missing"
    elif name and (not isinstance(name, str) or len(name) > 253 or not _SUBDOMAIN.match(name)):
        yield "metadata.name", f"{name!r} is not a DNS-1123 subdomain (lowercase letters, digits, '-' and '.')"
    if namespace is not None and (not isinstance(namespace, str) or len(namespace) > 63
                                  or not _LABEL.match(namespace)):
        yield "metadata.namespace", f"{namespace!r} is not a DNS-1123 label"
    for key in meta:
        if key not in _FIELDS:
            yield f"metadata.{key}", f"unknown field {key!r}; ObjectMeta has {', '.join(_FIELDS[:7])}, ..."
    for key, value in (meta.get("labels") or {}).items():
        problem = k8s_label_problem(str(key), value) if isinstance(value, str) else f"{value!r} is not a string"
        if problem:
            yield f"metadata.labels.{key}", problem
    for key, value in (meta.get("annotations") or {}).items():
        if not k8s_key_ok(str(key)):
            yield f"metadata.annotations.{key}", "not an annotation key (an optional DNS prefix and '/', then a name)"
        elif not isinstance(value, str):
            yield f"metadata.annotations.{key}", f"{value!r} is not a string"
