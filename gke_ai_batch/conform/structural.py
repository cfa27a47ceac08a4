"""A value against a CRD's structural schema (OpenAPI v3 as apiextensions.k8s.io/v1 restricts it), as the API
server judges a create with strict field validation: types (an integer field takes no 24.0), unknown fields,
required fields, enums, patterns, lengths and bounds, list-type uniqueness, and the CEL rules of every node
whose value has the right type."""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from gke_ai_batch.conform import cel_rules
from gke_ai_batch.model.words import closest

Schema = dict[str, Any]
_TYPES: dict[str, tuple[type, ...]] = {"object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
                                       "integer": (int,), "number": (int, float)}


@dataclass
class Findings:
    """What one document breaks, as (field path, message), and how many CEL rules had nothing to judge."""

    problems: list[tuple[str, str]] = field(default_factory=list)
    unevaluated_rules: int = 0

    def add(self, path: str, message: str) -> None:
        self.problems.append((path or "(root)", message))


def join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


@lru_cache(maxsize=512)
def _regex(pattern: str) -> re.Pattern[str]:
    """An RE2 pattern in Python: inline flags anywhere become flags of the whole pattern, \\z is \\Z."""
    flags = 0
    for letters in re.findall(r"\(\?([imsU]+)\)", pattern):
        flags |= re.IGNORECASE if "i" in letters else 0
        flags |= re.MULTILINE if "m" in letters else 0
        flags |= re.DOTALL if "s" in letters else 0
    return re.compile(re.sub(r"\(\?[imsU]+\)", "", pattern).replace(r"\z", r"\Z"), flags)


def _type_ok(schema: Schema, value: Any) -> bool:
    if schema.get("x-kubernetes-int-or-string"):
        return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
    wanted = schema.get("type")
    if wanted is None:
        return True
    if wanted in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES.get(wanted, (object,)))


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _bounds(schema: Schema, value: Any) -> Iterator[str]:
    """Enum, pattern, lengths, numeric bounds and sizes: what a value of the right type may still break."""
    if "enum" in schema and value not in schema["enum"]:
        yield f"{_shown(value)} is not one of {', '.join(map(repr, schema['enum']))}"
    if isinstance(value, str):
        if "pattern" in schema and not _regex(schema["pattern"]).search(value):
            yield f"{_shown(value)} does not match {schema['pattern']!r}"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            yield f"{_shown(value)} is longer than {schema['maxLength']} characters"
        if "minLength" in schema and len(value) < schema["minLength"]:
            yield f"{_shown(value)} is shorter than {schema['minLength']} characters"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "maximum" in schema and (value > schema["maximum"] or
                                    (schema.get("exclusiveMaximum") and value == schema["maximum"])):
            yield f"{value} is above the maximum {schema['maximum']}"
        if "minimum" in schema and (value < schema["minimum"] or
                                    (schema.get("exclusiveMinimum") and value == schema["minimum"])):
            yield f"{value} is below the minimum {schema['minimum']}"
    for key, kind, measure in (("maxItems", list, "items"), ("maxProperties", dict, "properties")):
        if isinstance(value, kind) and key in schema and len(value) > schema[key]:
            yield f"has {len(value)} {measure}, at most {schema[key]}"
    for key, kind, measure in (("minItems", list, "items"), ("minProperties", dict, "properties")):
        if isinstance(value, kind) and key in schema and len(value) < schema[key]:
            yield f"has {len(value)} {measure}, at least {schema[key]}"


def _list_keys(schema: Schema, items: list[Any]) -> Iterator[str]:
    """x-kubernetes-list-type: a set holds no item twice, a map no two items with the same keys."""
    kind = schema.get("x-kubernetes-list-type")
    keys = schema.get("x-kubernetes-list-map-keys") or []
    seen: list[Any] = []
    for item in items:
        ident = tuple((item or {}).get(k) for k in keys) if kind == "map" and isinstance(item, dict) else item
        if kind in ("set", "map") and ident in seen:
            what = ", ".join(f"{k}={v!r}" for k, v in zip(keys, ident, strict=True)) if kind == "map" else _shown(item)
            yield f"duplicate entry ({what}): the list is a {kind}"
        seen.append(ident)


def _object(schema: Schema, value: dict[str, Any], path: str, out: Findings) -> None:
    properties: dict[str, Schema] = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    open_ended = schema.get("x-kubernetes-preserve-unknown-fields") or extra is True
    embedded = {"apiVersion", "kind", "metadata"} if schema.get("x-kubernetes-embedded-resource") else set()
    for name in schema.get("required", []):
        if name not in value:
            out.add(join(path, name), "required field is missing")
    for key, item in value.items():
        where = join(path, key)
        if key in properties:
            check(properties[key], item, where, out)
        elif isinstance(extra, dict):
            check(extra, item, where, out)
        elif not open_ended and key not in embedded:
            near = closest(key, properties)
            out.add(where, f"unknown field {key!r}" + (f" (did you mean {near!r}?)" if near else
                                                       f"; fields: {', '.join(properties) or 'none'}"))


def _combinators(schema: Schema, value: Any, path: str, out: Findings) -> None:
    """allOf, anyOf, oneOf and not: value validations without types, as structural schemas allow them."""
    for sub in schema.get("allOf", []):
        check(sub, value, path, out)
    for key, wanted in (("anyOf", "at least one"), ("oneOf", "exactly one")):
        if key in schema:
            passing = sum(not _problems_of(sub, value) for sub in schema[key])
            if passing == 0 or (key == "oneOf" and passing != 1):
                out.add(path, f"matches {passing} of the {key} schemas, {wanted} allowed")
    if "not" in schema and not _problems_of(schema["not"], value):
        out.add(path, "matches a schema it must not (not)")


def _problems_of(schema: Schema, value: Any) -> list[tuple[str, str]]:
    trial = Findings()
    check(schema, value, "", trial)
    return trial.problems


def check(schema: Schema, value: Any, path: str, out: Findings) -> None:
    """Add to `out` what `value` at `path` breaks in `schema`, its children's schemas and their CEL rules."""
    if value is None:
        if not schema.get("nullable"):
            out.add(path, "null where the schema has no nullable")
        return
    if not _type_ok(schema, value):
        wanted = "integer or string" if schema.get("x-kubernetes-int-or-string") else schema["type"]
        hint = f"; write the integer {int(value)}" if isinstance(value, float) and value.is_integer() else ""
        out.add(path, f"{_shown(value)} is not of type {wanted}{hint}")
        return
    for message in (*_bounds(schema, value), *(_list_keys(schema, value) if isinstance(value, list) else ())):
        out.add(path, message)
    if isinstance(value, dict):
        _object(schema, value, path, out)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            check(schema["items"], item, join(path, i), out)
    _combinators(schema, value, path, out)
    for where, outcome in cel_rules.outcomes(schema, value):
        if not outcome.evaluated:
            out.unevaluated_rules += 1
        elif outcome.message:
            relative = where.lstrip(".")
            out.add(join(path, relative) if relative else path, outcome.message)
