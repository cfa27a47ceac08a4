"""The CRDs a GKE cluster has that the stack's objects use, for the sandbox: Managed Prometheus's and the GKE
networking API's vendored release files as they are, ProvisioningRequest from the cluster-autoscaler APIs module
Kueue itself builds against, and ComputeClass made from the vendored extract of GKE's installed CRD (GKE publishes
no file of it: gke_ai_batch/conform/schemas/README.md)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gke_ai_batch.conform.crds import Crd, vendored

from .build import module_dir

AUTOSCALER_APIS = "k8s.io/autoscaler/cluster-autoscaler/apis"
PROVISIONING_REQUEST_CRD = "config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml"
FROM_CLUSTER = ("monitoring.googleapis.com", "networking.gke.io", "cloud.google.com")


def _structural(schema: Any) -> Any:
    """The extract's schema as a CRD takes it: openapi2jsonschema adds `additionalProperties: false` beside
    `properties`, which a structural schema may not have; the API server's strict field validation refuses unknown
    fields without it."""
    if isinstance(schema, dict):
        return {k: _structural(v) for k, v in schema.items()
                if not (k == "additionalProperties" and v is False)}
    if isinstance(schema, list):
        return [_structural(v) for v in schema]
    return schema


def _from_extract(crd: Crd) -> dict[str, Any]:
    (version, only), = crd.versions.items()
    plural = crd.kind.lower() + "es" if crd.kind.endswith("s") else crd.kind.lower() + "s"
    schema = _structural(only.schema)
    schema.pop("description", None)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{crd.group}"},
            "spec": {"group": crd.group, "scope": "Namespaced" if crd.namespaced else "Cluster",
                     "names": {"kind": crd.kind, "plural": plural, "singular": crd.kind.lower(),
                               "listKind": f"{crd.kind}List"},
                     "versions": [{"name": version, "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}, "subresources": {"status": {}}}]}}


def _vendored_files(crd: Crd) -> list[dict[str, Any]]:
    root = Path(__file__).resolve().parents[1] / "conform"
    return [d for d in yaml.safe_load_all((root / crd.source).read_text())
            if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"]


def gke_crds() -> list[dict[str, Any]]:
    """Every CRD above, ready to apply."""
    docs: list[dict[str, Any]] = []
    for crd in vendored().values():
        if crd.group in FROM_CLUSTER:
            docs += _vendored_files(crd) if crd.source.endswith(".yaml") else [_from_extract(crd)]
    return [*_unique(docs), *_provisioning_request()]


def _unique(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list({d["metadata"]["name"]: d for d in docs}.values())


def _provisioning_request() -> list[dict[str, Any]]:
    path = module_dir("kueue", AUTOSCALER_APIS) / PROVISIONING_REQUEST_CRD
    return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
