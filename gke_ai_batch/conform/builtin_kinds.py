"""Built-in kinds (Namespace, PriorityClass, RoleBinding, ...) against the Kubernetes OpenAPI schemas the
kubernetes-validate package ships, in their strict flavour (an unknown field is an error), for the Kubernetes
minor the stacks' GKE versions run. An API version that minor does not serve is an error, and so is a beta
version of a kind that minor also serves as GA: Kubernetes deprecates a beta once its GA version exists."""
from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]

# The stacks pin GKE 1.33 (stacks/Pulumi.prod.yaml: 1.33.2-gke.1240000; dev's RAPID channel is newer).
KUBERNETES_VERSION = "1.33.0"
_GA = ("v1", "v2")


def _schema_exists(kind: str, api_version: str) -> bool:
    """Whether kubernetes-validate ships a schema of this kind and version for KUBERNETES_VERSION."""
    group, _, version = api_version.rpartition("/")
    folder = f"v{KUBERNETES_VERSION}-local-strict"
    name = f"{kind.lower()}-{group.split('.')[0] + '-' if group else ''}{version}.json"
    return resources.files("kubernetes_validate").joinpath("kubernetes-json-schema", folder, name).is_file()


def _floats(value: Any, path: str) -> Iterator[str]:
    """Paths of floats: no built-in field is a float (a whole number is an integer, a fraction a quantity)."""
    if isinstance(value, float):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _floats(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _floats(item, f"{path}[{i}]")


def problems(doc: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(path, message) for a built-in kind's document."""
    api, kind = str(doc["apiVersion"]), str(doc["kind"])
    group, _, version = api.rpartition("/")
    if not _schema_exists(kind, api):
        yield "apiVersion", f"{api} {kind} is not served by Kubernetes {KUBERNETES_VERSION[:4]}"
        return
    if version not in _GA:
        ga = next((f"{group}/{v}" if group else v for v in _GA if _schema_exists(kind, f"{group}/{v}")), None)
        if ga:
            yield "apiVersion", f"{api} is deprecated: Kubernetes {KUBERNETES_VERSION[:4]} serves {kind} as {ga}"
    for path in _floats(doc, ""):
        yield path, "a float: Kubernetes has no float fields (write an integer, or a quantity as a string)"
    try:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as err:
        yield ".".join(map(str, err.path)) or "(root)", str(err.message)
