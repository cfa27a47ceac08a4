"""The stack file's JSON Schema and its config reference (docs/config-reference.md), both generated from the config
model, so the documentation cannot drift from what validation accepts (`make schema` writes them;
tests keep them current)."""
from __future__ import annotations

import json
from typing import Any

from gke_ai_batch.model.config import CONFIG_KEY, PlatformConfig
from gke_ai_batch.model.kubernetes_only import KUBERNETES_ONLY_KEY, KubernetesOnlyConfig
from gke_ai_batch.vocabulary import PACKAGE

SCHEMA_ID = "https://github.com/acme/gke-ai-batch/docs/stack.schema.json"
STACK_FILE = {  # what a Pulumi stack file holds besides `config:`
    "secretsprovider": {"type": "string", "description": "Pulumi's secrets provider for this stack."},
    "encryptedkey": {"type": "string", "description": "The data key of a cloud secrets provider."},
    "encryptionsalt": {"type": "string", "description": "The salt of the passphrase secrets provider."},
    "environment": {"description": "Pulumi ESC environments to import."},
}


def stack_schema() -> dict[str, Any]:
    """A JSON Schema (2020-12) for Pulumi.<stack>.yaml: the platform key and the kubernetesOnly key validated by
    their models, other providers' keys (`gcp:project`...) allowed, and any other key of this project refused."""
    platform = PlatformConfig.model_json_schema()
    defs = platform.pop("$defs")
    keys = {f"{PACKAGE}:{CONFIG_KEY}": platform,
            f"{PACKAGE}:{KUBERNETES_ONLY_KEY}": KubernetesOnlyConfig.model_json_schema()}
    config = {"type": "object", "description": "Stack config: `namespace:key: value`.", "properties": keys,
              "propertyNames": {"not": {"pattern": f"^{PACKAGE}:(?!({CONFIG_KEY}|{KUBERNETES_ONLY_KEY})$)"}}}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            "title": f"Pulumi stack file of {PACKAGE}", "type": "object",
            "properties": {"config": config, **STACK_FILE}, "additionalProperties": False, "$defs": defs}


def schema_text() -> str:
    return json.dumps(stack_schema(), indent=2) + "\n"


class _Reference:
    """Markdown tables, one per block of the config, in the order a stack file reads."""

    def __init__(self, root: dict[str, Any]):
        self.defs: dict[str, Any] = root["$defs"]
        self.sections: list[str] = []
        self.seen: dict[str, str] = {}  # definition name -> the path documented first

    def block(self, path: str, schema: dict[str, Any]) -> None:
        rows = ["| key | allowed | default | meaning |", "| --- | --- | --- | --- |"]
        nested: list[tuple[str, str]] = []
        required = set(schema.get("required", ()))
        for name, prop in schema["properties"].items():
            allowed, child = self.allowed(f"{path}.{name}", prop)
            default = "**required**" if name in required else _default(prop.get("default"))
            rows.append(f"| `{name}` | {allowed} | {default} | {_one_line(prop.get('description', ''))} |")
            if child:
                nested.append(child)
        doc = _one_line(schema.get("description", ""))
        self.sections.append("\n".join([f"## `{path}`", "", *([doc, ""] if doc else []), *rows]))
        for child_path, ref in nested:
            if ref not in self.seen:
                self.seen[ref] = child_path
                self.block(child_path, self.defs[ref])

    def allowed(self, path: str, prop: dict[str, Any]) -> tuple[str, tuple[str, str] | None]:
        """The allowed values in words, and a nested block to document (its path and definition)."""
        rule = {k: prop[k] for k in ("x-rule", "maxLength") if k in prop}  # kept beside anyOf by pydantic
        options = [{**rule, **p} for p in prop.get("anyOf", [prop]) if p.get("type") != "null"]
        if len(options) > 1:
            return " or ".join(self.allowed(path, p)[0] for p in options), None
        p = options[0]
        if "$ref" in p:
            ref = p["$ref"].rsplit("/", 1)[-1]
            target = self.defs[ref]
            if "enum" in target:
                return _enum(target["enum"]), None
            return self._block_ref(path, ref), (path, ref)
        if p.get("type") == "object" and "anyOf" in p.get("additionalProperties", {}).get("additionalProperties", {}):
            quota = self.seen.get("QuotaSpec", f"{path}.<flavor>.<resource>")
            return (f"per flavor, per resource: a quantity (the nominal quota), or a block, see `{quota}`",
                    (quota, "QuotaSpec"))
        if p.get("type") == "array" and "$ref" in p.get("items", {}):
            ref = p["items"]["$ref"].rsplit("/", 1)[-1]
            return f"list of blocks, see `{self.seen.get(ref, path + '[]')}`", (path + "[]", ref)
        return _scalar(p), None

    def _block_ref(self, path: str, ref: str) -> str:
        return f"a block, see `{self.seen.get(ref, path)}`"


def _scalar(p: dict[str, Any]) -> str:
    if "enum" in p:
        return _enum(p["enum"])
    if "x-rule" in p:
        return str(p["x-rule"]) + (f", at most {p['maxLength']} characters" if "maxLength" in p else "")
    kind = p.get("type")
    if kind == "integer":
        bounds = [f"at least {p['minimum']}" if "minimum" in p else "", f"at most {p['maximum']}" if "maximum" in p
                  else ""]
        return ", ".join(["a whole number", *[b for b in bounds if b]])
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        return f"list of {_scalar(p.get('items', {}))}"
    if kind == "object":
        inner = p.get("additionalProperties")
        return "mapping of names to " + _scalar(inner if isinstance(inner, dict) else {})
    return {"string": "text", "number": "a number"}.get(str(kind), "any")


def _enum(values: list[Any]) -> str:
    return ", ".join(f"`{v}`" for v in values)


def _default(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, dict) and value:
        return "each key's default"
    return f"`{json.dumps(value)}`" if not isinstance(value, dict) or value else "`{}`"


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def config_reference() -> str:
    """The stack config reference (docs/config-reference.md), one table per block."""
    root = PlatformConfig.model_json_schema()
    ref = _Reference(root)
    ref.block("platform", root)
    ref.block(KUBERNETES_ONLY_KEY, KubernetesOnlyConfig.model_json_schema())
    return "\n\n".join(ref.sections) + "\n"
