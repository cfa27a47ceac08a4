"""The vendored CRDs (schemas/, see its README): for each group and kind, the versions the release serves,
which of them it deprecates, and each version's openAPIV3Schema."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

# GKE's ComputeClass: GKE installs the CRD in every cluster and publishes no file of it; the vendored JSON
# Schema extract (schemas/gke-computeclass/, see the README) carries no scope, and GKE's reference gives it
# as cluster-scoped.
CLUSTER_SCOPED_EXTRACTS = frozenset({("cloud.google.com", "ComputeClass")})


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


def _extract(doc: dict[str, Any], file_name: str, source: str) -> Crd:
    """A CRD's schema as openapi2jsonschema extracts it, `<group>_<kind>_<version>.json`: the kind's spelling is
    the first word of its description (the Go type's doc comment), checked against the file name."""
    group, kind_lower, version = file_name.removesuffix(".json").rsplit("_", 2)
    kind = str(doc.get("description", "")).split(maxsplit=1)[0] if doc.get("description") else ""
    if kind.lower() != kind_lower:
        raise ValueError(f"{source}: its description does not start with the kind {kind_lower!r}")
    return Crd(group, kind, (group, kind) not in CLUSTER_SCOPED_EXTRACTS, source,
               {version: CrdVersion(served=True, deprecated=False, schema=doc)})


# libyaml's parser where PyYAML was built with it (the wheels are): the same safe constructor, and the vendored
# CRDs' 1.3 MB of YAML parse in 0.1 s, not pure Python's 3 s
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def vendored() -> dict[tuple[str, str], Crd]:
    """(group, kind) -> its CRD, from every file under schemas/."""
    found: dict[tuple[str, str], Crd] = {}
    root = resources.files("gke_ai_batch.conform").joinpath("schemas")
    for release in sorted(root.iterdir(), key=lambda p: p.name):
        if not release.is_dir():
            continue
        for file in sorted(release.iterdir(), key=lambda p: p.name):
            if file.name.endswith(".json"):
                crd = _extract(json.loads(file.read_text()), file.name, f"schemas/{release.name}/{file.name}")
                found[(crd.group, crd.kind)] = crd
            elif file.name.endswith(".yaml"):
                for doc in yaml.load_all(file.read_text(), Loader=_LOADER):
                    if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                        crd = _crd(doc, f"schemas/{release.name}/{file.name}")
                        found[(crd.group, crd.kind)] = crd
    return found


def groups() -> frozenset[str]:
    """The API groups whose kinds the vendored CRDs define: a kind of one of them without a CRD is unknown."""
    return frozenset(group for group, _ in vendored())
