"""Pydantic's first error as one ConfigError in the words of the stack file: the path, the value
(shortened), and what is allowed, with no class names, regexes or `None`."""
from __future__ import annotations

from types import UnionType
from typing import Any, Union, get_args, get_origin

from annotated_types import MaxLen
from pydantic import BaseModel, ValidationError

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ROOT, ConfigError
from gke_ai_batch.model.field_rules import RULES_IN_WORDS
from gke_ai_batch.model.words import describe

_EXPECTED = {  # pydantic error type -> what the key should hold
    "model_type": "a mapping of keys to values (`key: value` lines)",
    "model_attributes_type": "a mapping of keys to values (`key: value` lines)",
    "dict_type": "a mapping of keys to values (`key: value` lines)",
    "list_type": "a list (`- item` lines or [a, b])",
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "float_type": "a number",
}


def _path(loc: tuple[int | str, ...], root: str = ROOT) -> str:
    out = root
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("int", "str") or "[" in str(part):
            continue  # union branch names pydantic adds to the location, e.g. function-after[...]
        else:
            out += f".{part}"
    return out


def _short_form(raw: Any, loc: tuple[int | str, ...]) -> bool:
    """True when a quota was written as a bare quantity (`cpu: 4`), so `.nominal` is not in the file."""
    node = raw
    for part in loc[:-1]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
    return bool(loc) and loc[-1] == "nominal" and not isinstance(node, dict)


def _message(err: Any, model: type[BaseModel]) -> str:
    kind, ctx, value = err["type"], err.get("ctx") or {}, err.get("input")
    if kind == "unknown_key":
        return str(ctx["words"])
    if kind == "missing":
        return "required, and missing"
    if kind in _EXPECTED:
        return f"should be {_EXPECTED[kind]}, not {describe(value)}"
    if kind == "string_pattern_mismatch":
        words = RULES_IN_WORDS.get(ctx.get("pattern", ""), "the allowed form")
        longest = _max_length(model, tuple(err["loc"]))
        limit = f", at most {longest} characters" if longest else ""
        return f"{describe(value)} is not allowed: use {words}{limit}"
    if kind == "string_too_long":
        return f"{describe(value)} is {len(str(value))} characters; at most {ctx['max_length']} are allowed"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if kind in ("enum", "literal_error"):
        return f"{describe(value)}: " + msg.replace("Input should be", "allowed:")
    if isinstance(value, dict | list) or value is None:
        return msg
    return f"{describe(value)}: {msg}"


def _optional_of(annotation: Any) -> Any:
    """X for `X | None`; anything else as it is."""
    args = [a for a in get_args(annotation) if a is not type(None)]
    return args[0] if get_origin(annotation) in (UnionType, Union) and len(args) == 1 else annotation


def _max_length(model: type[BaseModel], loc: tuple[int | str, ...]) -> int | None:
    """The max_length of the field at `loc`, found by walking the model's annotations (pydantic
    reports a pattern mismatch without the field's other constraints)."""
    annotation: Any = model
    info = None
    for part in loc:
        annotation = _optional_of(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            info = annotation.model_fields.get(str(part))
            annotation = info.annotation if info else None
        else:  # a list's item or a mapping's value
            annotation = (get_args(annotation) or (None,))[-1]
    limits = [m.max_length for m in (info.metadata if info else []) if isinstance(m, MaxLen)]
    return limits[0] if limits else None


def config_error(e: ValidationError, raw: Any = None, model: type[BaseModel] = PlatformConfig,
                 root: str = ROOT) -> ConfigError:
    """The first pydantic error as a ConfigError: path, value, and what is allowed (`model`: what
    was validated, to find the field's length limit; `root`: the config key it is under)."""
    err = e.errors()[0]
    loc = tuple(err["loc"])
    if _short_form(raw, loc):
        loc = loc[:-1]
    if err["type"] == "unknown_key":
        loc = (*loc, err["ctx"]["key"])
    return ConfigError(_path(loc, root), _message(err, model))
