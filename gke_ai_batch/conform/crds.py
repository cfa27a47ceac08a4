"""The vendored CRDs (schemas/, see its README): for each group and kind, the versions the release serves,
which of them it deprecates, and each version's openAPIV3Schema."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml


@dataclass(frozen=True)
class CrdVersion:
    served: bool
    deprecated: bool
    schema: dict[str, Any]


@dataclass(frozen=True)
class Crd:
    group: str
    kind: str
    namespaced: bool
    source: str  # the vendored file, as schemas/<release>/<file>
    versions: dict[str, CrdVersion]

    def served(self) -> list[str]:
        return [name for name, v in self.versions.items() if v.served and not v.deprecated]


def _crd(doc: dict[str, Any], source: str) -> Crd:
    spec = doc["spec"]
    versions = {v["name"]: CrdVersion(bool(v.get("served")), bool(v.get("deprecated")),
                                      v["schema"]["openAPIV3Schema"]) for v in spec["versions"]}
    return Crd(spec["group"], spec["names"]["kind"], spec["scope"] == "Namespaced", source, versions)


@cache
def vendored() -> dict[tuple[str, str], Crd]:
    """(group, kind) -> its CRD, from every file under schemas/."""
    found: dict[tuple[str, str], Crd] = {}
    root = resources.files("gke_ai_batch.conform").joinpath("schemas")
    for release in sorted(root.iterdir(), key=lambda p: p.name):
        if not release.is_dir():
            continue
        for file in sorted(release.iterdir(), key=lambda p: p.name):
            if file.name.endswith(".yaml"):
                for doc in yaml.safe_load_all(file.read_text()):
                    if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                        crd = _crd(doc, f"schemas/{release.name}/{file.name}")
                        found[(crd.group, crd.kind)] = crd
    return found


def groups() -> frozenset[str]:
    """The API groups whose kinds the vendored CRDs define: a kind of one of them without a CRD is unknown."""
    return frozenset(group for group, _ in vendored())
