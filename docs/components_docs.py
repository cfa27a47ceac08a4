"""docs/components-reference.md from the component package schema (gke_ai_batch/schema.json), the one every
Pulumi language's SDK is generated from: `make package-schema` writes both, and tests/test_docs.py fails when
the page differs from the schema."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "gke_ai_batch" / "schema.json"
PAGE = ROOT / "docs" / "components-reference.md"


def _type(prop: dict[str, Any]) -> str:
    if "$ref" in prop:
        name = prop["$ref"].rsplit(":", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if prop.get("type") == "array":
        return f"list of {_type(prop['items'])}"
    if prop.get("type") == "object" and "additionalProperties" in prop:
        return f"map of {_type(prop['additionalProperties'])}"
    return str(prop.get("type", "any"))


def _table(props: dict[str, Any], required: list[str]) -> list[str]:
    rows = ["| name | type | required | description |", "| --- | --- | --- | --- |"]
    for name, prop in sorted(props.items()):
        text = " ".join(str(prop.get("description", "")).split()).replace("|", "\\|")
        rows.append(f"| `{name}` | {_type(prop)} | {'yes' if name in required else ''} | {text} |")
    return rows


def page(schema: dict[str, Any]) -> str:
    out = ["# Components reference", "",
           "Generated from `gke_ai_batch/schema.json` by `make package-schema`; do not edit. Names are the",
           "schema's (camelCase), as every language's SDK has them; Python programs use the same names in",
           "snake_case. [Using the components](components.md) says how they fit together.", ""]
    for token, res in sorted(schema["resources"].items()):
        out += [f"## {token.rsplit(':', 1)[-1]}", "", " ".join(res.get("description", "").split()), "",
                "Inputs:", "", *_table(res.get("inputProperties", {}), res.get("requiredInputs", [])), "",
                "Outputs:", "", *_table(res.get("properties", {}), res.get("required", [])), ""]
    out += ["## Types", ""]
    for token, typ in sorted(schema["types"].items()):
        name = token.rsplit(":", 1)[-1]
        out += [f"### {name}", "", " ".join(typ.get("description", "").split()), "",
                *_table(typ.get("properties", {}), typ.get("required", [])), ""]
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":
    PAGE.write_text(page(json.loads(SCHEMA.read_text())))
    print(f"updated {PAGE.relative_to(ROOT)}")
