"""One policy compiled, and one request's evaluation of it: variables evaluated on first use, matchConditions,
validations with their messages (validator.go `Validate`, matchconditions/matcher.go)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError, Result

from gke_ai_batch.apiserver.cel_compile import Failure, Program, compile_expression, run_program
from gke_ai_batch.apiserver.vap_terms import MAX_MESSAGE_BYTES
from gke_ai_batch.vocabulary import Obj


@dataclass(frozen=True)
class Policy:
    """A policy's spec with every expression compiled (validating/plugin.go `compilePolicy`)."""

    name: str
    spec: Obj
    variables: tuple[tuple[str, Program], ...]
    conditions: tuple[Program, ...]
    validations: tuple[tuple[Obj, Program, Program | None], ...]  # (validation, expression, messageExpression)

    @property
    def fails_closed(self) -> bool:
        """failurePolicy Fail, the default: errors deny."""
        return bool(self.spec.get("failurePolicy", "Fail") != "Ignore")

    def programs(self) -> list[tuple[str, Program]]:
        """Every expression with where it sits in the spec."""
        out = [(f"spec.variables[{i}].expression", p) for i, (_, p) in enumerate(self.variables)]
        out += [(f"spec.matchConditions[{i}].expression", p) for i, p in enumerate(self.conditions)]
        for i, (_, expression, message) in enumerate(self.validations):
            out.append((f"spec.validations[{i}].expression", expression))
            out += [(f"spec.validations[{i}].messageExpression", message)] if message else []
        return out


def compile_policy(policy: Obj) -> Policy:
    """Compile variables in order (each sees those before it), then conditions, validations and messages."""
    spec = policy.get("spec") or {}
    names = tuple(str(v.get("name", "")) for v in spec.get("variables") or [])
    variables = tuple((name, compile_expression(str(v.get("expression", "")), names[:i]))
                      for i, (name, v) in enumerate(zip(names, spec.get("variables") or [], strict=True)))
    conditions = tuple(compile_expression(str(c.get("expression", "")), names)
                       for c in spec.get("matchConditions") or [])
    validations = tuple(
        (v, compile_expression(str(v.get("expression", "")), names),
         compile_expression(str(v["messageExpression"]), names) if v.get("messageExpression") else None)
        for v in spec.get("validations") or [])
    return Policy(str((policy.get("metadata") or {}).get("name", "")), spec, variables, conditions, validations)


class _Variables(celtypes.MapType):
    """The `variables` map: a variable is evaluated when first read and then remembered, as
    cel/composition.go's lazy map does; its failure is the reading expression's error."""

    def __init__(self, names: Sequence[str], value_of: Callable[[str], Result]) -> None:
        super().__init__({celtypes.StringType(n): None for n in names})
        self._value_of = value_of

    def __getitem__(self, key: Any) -> Any:
        return self._value_of(str(key))


class _Session:
    """One filter's evaluation for one request (a composition context): the inputs and the variables' cache."""

    def __init__(self, policy: Policy, inputs: dict[str, Any]) -> None:
        self._variables = dict(policy.variables)
        self._order = [name for name, _ in policy.variables]
        self._inputs = inputs
        self._cache: dict[str, Result] = {}

    def run(self, program: Program, visible: int | None = None) -> Any:
        """The program's value or Failure; visible limits `variables` to the first n (for a variable)."""
        names = self._order if visible is None else self._order[:visible]
        return run_program(program, {**self._inputs, "variables": _Variables(names, self._value)})

    def _value(self, name: str) -> Result:
        """A variable's value, evaluated once; a failure becomes composition.go's error for its readers."""
        if name not in self._cache:
            program = self._variables[name]
            if program.runner is None:
                value: Result = CELEvalError(f'composited variable "{name}" fails to compile: '
                                     f'compilation failed: {program.problem}')
            else:
                outcome = self.run(program, self._order.index(name))
                value = CELEvalError(f'composited variable "{name}" fails to evaluate: {outcome.message}') \
                    if isinstance(outcome, Failure) else outcome
            self._cache[name] = value
        return self._cache[name]


def _aggregate(messages: Sequence[str]) -> str:
    """utilerrors `aggregate.Error`: one message as is, several deduplicated in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else f"[{', '.join(unique)}]"


def _match_conditions(policy: Policy, inputs: dict[str, Any]) -> bool | Failure:
    """matchconditions/matcher.go `Match`: any false skips the policy, even if others failed; then any
    failure decides by failurePolicy. namespaceObject is null here, as the matcher passes no namespace."""
    session = _Session(policy, {**inputs, "namespaceObject": None})
    failures = []
    for program in policy.conditions:
        outcome = session.run(program)
        if isinstance(outcome, Failure):
            failures.append(outcome.message)
        elif isinstance(outcome, celtypes.BoolType) and not outcome:
            return False
    return Failure(_aggregate(failures)) if failures else True


def _message(validation: Obj, message: Program | None, session: _Session) -> str:
    """validator.go: a usable messageExpression result (a string, trimmed, non-empty, one line, at most
    5 KiB), else message, else `failed expression: <expression>`. A failing messageExpression falls back."""
    if message is not None:
        text = session.run(message)
        if isinstance(text, str) and "\n" not in text.strip() and 0 < len(text.strip().encode()) <= MAX_MESSAGE_BYTES:
            return text.strip()
    return str(validation.get("message") or "").strip() or f"failed expression: {validation.get('expression', '')}"


def decisions(policy: Policy, inputs: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """validator.go `Validate`: (message, reason, is an error) for every validation that denies."""
    matched = _match_conditions(policy, inputs)
    if isinstance(matched, Failure):
        return [(matched.message, "Invalid", True)] if policy.fails_closed else []
    if not matched:
        return []
    session = _Session(policy, inputs)
    out = []
    for validation, expression, message in policy.validations:
        outcome = session.run(expression)
        if isinstance(outcome, Failure):
            out += [(outcome.message, "Invalid", True)] if policy.fails_closed else []
        elif not (isinstance(outcome, celtypes.BoolType) and outcome):
            out.append((_message(validation, message, session), str(validation.get("reason") or "Invalid"), False))
    return out
