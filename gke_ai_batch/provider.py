"""The public components as a Pulumi component package, for programs in any Pulumi language
(TypeScript, Go, YAML, ...): `pulumi package add <repo>/provider` runs provider/__main__.py, which
serves them through the SDK's component provider host; the same SDK analyzer builds the package
schema checked in as gke_ai_batch/schema.json, shipped in the wheel (tests/test_provider.py keeps it
current).

Platform is Python-only: its argument is the whole typed stack config."""
from __future__ import annotations

import ast
import inspect
import json
import sys
from importlib.metadata import version
from typing import Any

import pulumi
from pulumi.provider import ConstructResult, Provider, main
from pulumi.provider.experimental.analyzer import Analyzer, PropertyDefinition
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.schema import generate_schema
from pulumi.provider.server import ComponentInitError

from gke_ai_batch.components.argument_errors import ComponentArgumentsError
from gke_ai_batch.components.cpu_pool import CpuPool
from gke_ai_batch.components.gke_cluster import GkeCluster
from gke_ai_batch.components.gpu_pool import GpuPool
from gke_ai_batch.components.kueue_layer import KueueLayer
from gke_ai_batch.components.system_pool import SystemNodePool
from gke_ai_batch.components.tpu_slice_pool import TpuSlicePool
from gke_ai_batch.model.words import unknown_key
from gke_ai_batch.vocabulary import PACKAGE

COMPONENTS = [GkeCluster, SystemNodePool, TpuSlicePool, GpuPool, CpuPool, KueueLayer]
NAMESPACE = "gke-ai-batch"


def package_version() -> str:
    return version(PACKAGE)


def _source_bases(typ: type) -> list[type]:
    """The classes `typ`'s source names as its bases, resolved in its module."""
    try:
        tree = ast.parse(inspect.getsource(typ))
    except (OSError, TypeError):
        return []
    scope = vars(sys.modules[typ.__module__])
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef)), None)
    names = [b.id for b in cls.bases if isinstance(b, ast.Name)] if cls else []
    return [scope[n] for n in names if isinstance(scope.get(n), type)]


class InheritingAnalyzer(Analyzer):
    """The SDK's analyzer, reading an inherited argument's docstring from the base that declares it: it reads
    docstrings from the class's own source, and a TypedDict keeps no bases at run time (Python 3.11), so the
    pools' shared arguments (project, region, capacity, topology, ...) went without a description, 125 of the
    schema's 298 properties."""

    def get_docstring(self, typ: type, name: str) -> str | None:
        found = super().get_docstring(typ, name)
        for base in _source_bases(typ) if found is None else ():
            found = found or self.get_docstring(base, name)
        return found


def _schema_of(analyzer: Analyzer) -> tuple[Any, dict[str, Any]]:
    result = analyzer.analyze(COMPONENTS)
    dependencies = sorted(result["dependencies"], key=lambda d: f"{d.name}{d.version}")
    spec = generate_schema(PACKAGE, package_version(), NAMESPACE, result["component_definitions"],
                           result["type_definitions"], dependencies)
    return result, dict(spec.to_json())


def schema() -> dict[str, Any]:
    """The package schema, built exactly as the provider builds the one it serves."""
    return _schema_of(InheritingAnalyzer(PACKAGE))[1]


def schema_text() -> str:
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"


class StrictComponentProvider(ComponentProvider):
    """The SDK's component provider, strict as the components are in Python. Its input mapping keeps only the
    properties the schema names, so a misspelt one would vanish before the component saw it: refused here,
    with the stack file's words. And a component's refusal reaches the engine as an InputPropertiesError (one
    entry per property), where the SDK would wrap it as a failure with a traceback. Its schema comes from the
    InheritingAnalyzer (ComponentProvider.__init__ at pulumi 3.272, with that analyzer)."""

    def __init__(self) -> None:
        self._name = PACKAGE
        self.analyzer = InheritingAnalyzer(PACKAGE)
        result, spec = _schema_of(self.analyzer)
        self._components = {c.__name__: c for c in COMPONENTS}
        self._component_defs = result["component_definitions"]
        self._type_defs = result["type_definitions"]
        self._external_enum_types = result["external_enum_types"]
        self._dependencies = sorted(result["dependencies"], key=lambda d: f"{d.name}{d.version}")
        Provider.__init__(self, package_version(), json.dumps(spec))

    def map_input_properties(self, inputs: pulumi.Inputs, properties: dict[str, PropertyDefinition],
                             mapping: dict[str, str], component_name: str, property_path: str) -> pulumi.Inputs:
        for key in inputs if isinstance(inputs, dict) else ():
            if key not in properties:
                path = f"{property_path}.{key}" if property_path else key
                raise pulumi.InputPropertiesError(
                    f"invalid {component_name} arguments at {path}: {unknown_key(key, properties)}",
                    [{"property_path": path, "reason": unknown_key(key, properties)}])
        return super().map_input_properties(inputs, properties, mapping, component_name, property_path)

    def construct(self, name: str, resource_type: str, inputs: pulumi.Inputs,
                  options: pulumi.ResourceOptions | None = None) -> ConstructResult:
        try:
            return super().construct(name, resource_type, inputs, options)
        except ComponentInitError as e:
            if isinstance(e.inner, ComponentArgumentsError):
                raise pulumi.InputPropertiesError(e.inner.message, e.inner.errors) from None
            raise


def host() -> StrictComponentProvider:
    return StrictComponentProvider()


def serve() -> None:
    """What `component_provider_host` does, with the strict provider: the language host runs
    `python <plugin dir> <engine address> [flags]`."""
    main(host(), sys.argv[1:])
