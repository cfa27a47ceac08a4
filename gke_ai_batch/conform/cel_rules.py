"""A CRD's `x-kubernetes-validations` rules on one value, evaluated as the API server does on create: with
the project's CEL runtime (cel-go's has(), equality, ext.Strings) plus the Kubernetes URL library's isURL().
Transition rules (those reading oldSelf) judge an update against the stored object, so they have nothing to
judge on a first apply and are counted as not evaluated."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import celpy
from celpy import celtypes
from celpy.evaluation import CELEvalError

from gke_ai_batch.apiserver.cel_runtime import FUNCTIONS, Runner, error_text, to_cel


def _is_url(text: Any) -> celtypes.BoolType:
    """Kubernetes' isURL(): whether Go's url.Parse accepts the string, here urllib's split of it."""
    try:
        urlsplit(str(text))
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


_ENV = celpy.Environment(runner_class=Runner)


@lru_cache(maxsize=512)
def _program(rule: str) -> celpy.Runner:
    return _ENV.program(_ENV.compile(rule), functions={**FUNCTIONS, "isURL": _is_url})


@dataclass(frozen=True)
class Outcome:
    """One rule on one value: None when it holds, else the message the API server would give."""

    message: str | None
    evaluated: bool = True


def _evaluate(rule: str, value: Any) -> Any:
    try:
        return _program(rule).evaluate({"self": to_cel(value)})
    except CELEvalError as err:
        return err


def _message(rule: dict[str, Any], value: Any) -> str:
    """messageExpression's value where it yields a string, else message, else the rule (as the API server)."""
    expression = rule.get("messageExpression")
    if expression:
        text = _evaluate(expression, value)
        if isinstance(text, str) and text:
            return str(text)
    return str(rule.get("message") or f"failed rule: {rule['rule']}")


def outcomes(schema: dict[str, Any], value: Any) -> Iterator[tuple[str, Outcome]]:
    """(field path under this value, outcome) for each rule of this schema node."""
    for rule in schema.get("x-kubernetes-validations", []):
        where = str(rule.get("fieldPath", ""))
        if "oldSelf" in rule["rule"]:
            yield where, Outcome(None, evaluated=False)
            continue
        result = _evaluate(rule["rule"], value)
        if isinstance(result, CELEvalError):
            yield where, Outcome(f"rule {rule['rule']!r} did not evaluate: {error_text(result)}")
        elif not (isinstance(result, celtypes.BoolType) and bool(result)):
            yield where, Outcome(_message(rule, value))
