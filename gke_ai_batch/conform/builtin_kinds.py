"""Built-in kinds (Namespace, PriorityClass, RoleBinding, ...) against the Kubernetes OpenAPI schemas the
kubernetes-validate package ships as JSON Schema, in their strict flavour (an unknown field is an error), for
the Kubernetes minors the stacks' GKE versions run; every error of a document, not the first only. A kind is
judged by the oldest of those minors that serves its API version: one the newest serves only is a kind the planner
sends to clusters pinned at it (MutatingAdmissionPolicy v1, plan.runtime_limits). An API version none of them
serves is an error, and so is a beta version of a kind that minor also serves as GA: Kubernetes deprecates a beta
once its GA version exists."""
from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import jsonschema  # type: ignore[import-untyped]
from referencing import Registry, Resource

from gke_ai_batch.conform.structural import join

# The stacks pin GKE 1.33 (stacks/Pulumi.prod.yaml: 1.33.2-gke.1240000; dev's RAPID channel is newer) up to 1.36
# (stacks/Pulumi.dynamic-slicing.yaml: 1.36.0-gke.3712000, sub-slicing's floor).
KUBERNETES_VERSION = "1.33.0"
NEWEST_KUBERNETES_VERSION = "1.36.0"
_GA = ("v1", "v2")


def _schema_file(kind: str, api_version: str, minor: str = KUBERNETES_VERSION) -> Traversable:
    """kubernetes-validate's file for this kind and version (`rolebinding-rbac-v1.json`), which may not exist."""
    group, _, version = api_version.rpartition("/")
    name = f"{kind.lower()}-{group.split('.')[0] + '-' if group else ''}{version}.json"
    return _folder(minor).joinpath(name)


def _folder(minor: str = KUBERNETES_VERSION) -> Traversable:
    return resources.files("kubernetes_validate").joinpath("kubernetes-json-schema", f"v{minor}-local-strict")


def _serving_minor(kind: str, api_version: str) -> str | None:
    """The oldest of the stacks' Kubernetes minors that serves this kind at this version, or None."""
    return next((m for m in (KUBERNETES_VERSION, NEWEST_KUBERNETES_VERSION)
                 if _schema_file(kind, api_version, m).is_file()), None)


@functools.cache
def _definitions(minor: str) -> Registry[Any]:
    """The shared definitions every kind's schema refers to (1.4 MB of JSON: read once)."""
    return Resource.from_contents(json.loads(_folder(minor).joinpath("_definitions.json").read_text())) @ Registry()


@functools.cache
def _validator(kind: str, api_version: str, minor: str) -> Any:
    schema = json.loads(_schema_file(kind, api_version, minor).read_text())
    return jsonschema.Draft202012Validator(schema, registry=Resource.from_contents(schema) @ _definitions(minor))


def _floats(value: Any, path: str) -> Iterator[str]:
    """Paths of floats: no built-in field is a float (a whole number is an integer, a fraction a quantity)."""
    if isinstance(value, float):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _floats(item, join(path, str(key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _floats(item, join(path, i))


def problems(doc: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(path, message) for a built-in kind's document."""
    api, kind = str(doc["apiVersion"]), str(doc["kind"])
    group, _, version = api.rpartition("/")
    minor = _serving_minor(kind, api)
    if minor is None:
        yield "apiVersion", (f"{api} {kind} is not served by Kubernetes {KUBERNETES_VERSION[:4]} (nor "
                             f"{NEWEST_KUBERNETES_VERSION[:4]})")
        return
    if version not in _GA:
        ga = next((f"{group}/{v}".lstrip("/") for v in _GA if _schema_file(kind, f"{group}/{v}", minor).is_file()),
                  None)
        if ga:
            yield "apiVersion", f"{api} is deprecated: Kubernetes {minor[:4]} serves {kind} as {ga}"
    for path in _floats(doc, ""):
        yield path, "a float: Kubernetes has no float fields (write an integer, or a quantity as a string)"
    for err in sorted(_validator(kind, api, minor).iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        yield functools.reduce(join, err.absolute_path, "") or "(root)", str(err.message)
