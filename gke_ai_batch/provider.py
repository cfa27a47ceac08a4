"""The public components as a Pulumi component package, for programs in any Pulumi language
(TypeScript, Go, YAML, ...): `pulumi package add <repo>/provider` runs provider/__main__.py, which
serves them through the SDK's component provider host; the same SDK analyzer builds the package
schema checked in as provider/schema.json (tests/test_provider.py keeps it current).

Platform is Python-only: its argument is the whole typed stack config."""
from __future__ import annotations

import json
from importlib.metadata import version
from typing import Any

from pulumi.provider.experimental import component_provider_host
from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.schema import generate_schema

from gke_ai_batch.components.cpu_pool import CpuPool
from gke_ai_batch.components.gke_cluster import GkeCluster
from gke_ai_batch.components.gpu_pool import GpuPool
from gke_ai_batch.components.kueue_layer import KueueLayer
from gke_ai_batch.components.system_pool import SystemNodePool
from gke_ai_batch.components.tpu_slice_pool import TpuSlicePool
from gke_ai_batch.vocabulary import PACKAGE

COMPONENTS = [GkeCluster, SystemNodePool, TpuSlicePool, GpuPool, CpuPool, KueueLayer]
NAMESPACE = "gke-ai-batch"


def package_version() -> str:
    return version(PACKAGE)


def schema() -> dict[str, Any]:
    """The package schema, built exactly as the component provider builds the one it serves."""
    result = Analyzer(PACKAGE).analyze(COMPONENTS)
    dependencies = sorted(result["dependencies"], key=lambda d: f"{d.name}{d.version}")
    spec = generate_schema(PACKAGE, package_version(), NAMESPACE, result["component_definitions"],
                           result["type_definitions"], dependencies)
    return dict(spec.to_json())


def schema_text() -> str:
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"


def serve() -> None:
    component_provider_host(components=COMPONENTS, name=PACKAGE, namespace=NAMESPACE, version=package_version())
