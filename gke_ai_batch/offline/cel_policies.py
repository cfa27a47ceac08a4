"""Would the stack's ValidatingAdmissionPolicies let this object in? admissionregistration.k8s.io/v1, offline.

A pure model (no Pulumi) of the API server's ValidatingAdmissionPolicy plugin at Kubernetes v1.33, read from
k8s.io/apiserver v0.33.13 (kubernetes/kubernetes staging/src/k8s.io/apiserver; paths below are under
pkg/admission/plugin/), with CEL evaluated by cel-python (celpy) instead of cel-go:

- policy/validating/dispatcher.go `Dispatch`: each policy whose matchConstraints match, then each of its
  bindings whose matchResources match; a binding's validationActions decide what a failed validation does:
  Deny refuses the request, Warn is a client warning, Audit an audit annotation. Warn and Audit are both
  reported (`Verdict.warnings`, `Verdict.audits`) and neither refuses. The API server's error names only
  the first denial; `evaluate` returns them all.
- policy/matching/matching.go and webhook/predicates/{rules,namespace,object}: resourceRules and
  excludeResourceRules (apiGroups, apiVersions, resources, operations, scope, resourceNames, "*"),
  namespaceSelector and objectSelector. matchPolicy is taken as Exact: Equivalent only adds resources served
  under another group or version, which none of the workload kinds here are.
- policy/validating/validator.go `Validate` and webhook/matchconditions/matcher.go: matchConditions (any
  false skips the policy, an error falls to failurePolicy), validations with message, messageExpression and
  reason, and failurePolicy (unset means Fail): an evaluation or compilation error under Fail is a denial,
  under Ignore nothing.
- cel/compile.go, cel/condition.go, cel/composition.go: the variables `object`, `oldObject` (null on
  CREATE), `request`, `namespaceObject` (null in matchConditions, as there) and `variables` (each evaluated
  on first use, seeing only the variables declared before it).

Not modelled, and refused with `UnsupportedPolicy` rather than judged wrongly: paramKind/paramRef (so
`params` is undeclared, as the API server has it without paramKind) and the `authorizer` variable.
Omitted: auditAnnotations, the CEL cost budget, type checking against the objects' OpenAPI schemas (only
undeclared names, functions and variables are caught at compile time), and DELETE (object is always the
object given).

CEL is cel-go's where celpy differs in ways a policy here would notice: has(), indexing and equality
(`'8' == 8` is false, `1 == 1.0` true) follow cel-go, and errors are worded as cel-go words them, since the
API server quotes cel-go. Of Kubernetes' CEL libraries (apiserver pkg/cel/environment/base.go), celpy has
the standard functions and macros, and this module adds ext.Strings' split, join, lowerAscii, upperAscii,
trim, replace, indexOf and substring; regex, URL, IP, CIDR, quantity, semver, sets, two-variable
comprehensions and optional types are absent. Left as celpy has them: size(null) is 0 rather than an error,
and an error inside exists() reads "no such overload".
"""
from __future__ import annotations

import datetime
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError, CELFunction, Context, Evaluator, Result, base_functions

from gke_ai_batch.admission.matching import selector_matches

Obj = Mapping[str, Any]

NAME_LABEL = "kubernetes.io/metadata.name"
MAX_MESSAGE_BYTES = 5 * 1024  # apis/cel/config.go MaxEvaluatedMessageExpressionSizeBytes


class UnsupportedPolicy(ValueError):
    """A policy or binding this model cannot judge (params, the authorizer): better no answer than a wrong one."""


@dataclass(frozen=True)
class Denial:
    """One refusal: the policy, the binding, the message and reason the API server would give.

    error: the message is an evaluation, compilation or configuration error that failurePolicy Fail turned
    into a denial, rather than a validation that evaluated to false."""

    policy: str
    binding: str
    message: str
    reason: str = "Invalid"
    error: bool = False

    @property
    def text(self) -> str:
        """dispatcher.go's error message, plus a note of ours when it comes from an error."""
        who = f"ValidatingAdmissionPolicy '{self.policy}'"
        who += f" with binding '{self.binding}'" if self.binding else ""
        note = " (an evaluation error: failurePolicy Fail denies)" if self.error else ""
        return f"{who} denied request: {self.message}{note}"


@dataclass(frozen=True)
class Verdict:
    """Everything the policies say about a request: denials refuse it; warnings and audits do not."""

    denials: tuple[Denial, ...] = ()
    warnings: tuple[str, ...] = ()
    audits: tuple[Denial, ...] = ()


# ---------------------------------------------------------------------------------------------
# CEL: values, the has() macro as cel-go has it, the ext.Strings functions
# ---------------------------------------------------------------------------------------------

def to_cel(value: Any) -> Any:
    """A YAML or JSON value as the API server hands it to CEL: the object is unstructured JSON, so integers
    stay CEL ints and only real fractions are doubles; a timestamp YAML parsed is the RFC 3339 string the
    JSON would have carried."""
    if value is None:
        return None
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    if isinstance(value, float):
        return celtypes.DoubleType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    if isinstance(value, datetime.datetime):
        utc = value.astimezone(datetime.UTC) if value.tzinfo else value
        return celtypes.StringType(utc.strftime("%Y-%m-%dT%H:%M:%SZ"))
    if isinstance(value, datetime.date):
        return celtypes.StringType(value.isoformat())
    if isinstance(value, Mapping):
        return celtypes.MapType({celtypes.StringType(str(k)): to_cel(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return celtypes.ListType([to_cel(v) for v in value])
    raise TypeError(f"cannot hand a {type(value).__name__} to CEL: {value!r}")


def _descend(tree: lark.Tree[Any], data: str) -> lark.Tree[Any] | None:
    """The `data` node under a chain of single-child nodes (how lark nests `expr` down to one term), or None."""
    while tree.data != data:
        if len(tree.children) != 1 or not isinstance(tree.children[0], lark.Tree):
            return None
        tree = tree.children[0]
    return tree


class _Evaluator(Evaluator):
    """celpy's interpreter with cel-go's has(): in `has(e.f)` e is evaluated as usual, so a missing e is an
    error (`no such key`), and only then is f looked up. celpy instead maps any error inside has() to false,
    which would hide the error that failurePolicy turns into a denial on a real cluster."""

    def sub_evaluator(self, ast: lark.Tree[Any]) -> Evaluator:
        """Macro bodies (exists, all, ...) get this evaluator too, so has() inside them is cel-go's."""
        return _Evaluator(ast, activation=self.activation)

    def macro_has_eval(self, exprlist: lark.Tree[Any]) -> Result:  # type: ignore[override]  # errors too, as cel-go
        """has(e.f): e's error if e fails, else whether the map e has the key f."""
        select = _descend(exprlist.children[0], "member_dot")
        assert select is not None, "the checker compiles no other has()"
        operand = self.visit(select.children[0])
        if isinstance(operand, CELEvalError):
            return operand
        if isinstance(operand, celtypes.MapType):
            return celtypes.BoolType(str(select.children[1]) in operand)
        return CELEvalError(f"invalid type for field selection: {_type_name(operand)}")


    def member_index(self, tree: lark.Tree[Any]) -> Result:
        """`e[i]` on a map or list: an error in e or i is that error (celpy reports a missing overload instead,
        hiding which key was missing), and a missing key or index is worded as cel-go words it."""
        values: list[Any] = self.visit_children(tree)
        member, index = values
        if isinstance(member, CELEvalError) or isinstance(index, CELEvalError):
            return member if isinstance(member, CELEvalError) else index
        if isinstance(member, dict) and _kind(index) in ("str", "number", "bool"):
            return member[index] if index in member else CELEvalError(f"no such key: {index}")
        if isinstance(member, list) and _kind(index) == "number" and int(index) == index:
            if not 0 <= int(index) < len(member):
                return CELEvalError(f"index '{int(index)}' out of range in list size '{len(member)}'")
            item: Result = member[int(index)]
            return item
        return CELEvalError(f"no matching overload for '_[_]' applied to '({_type_name(member)}, {_type_name(index)})'")


class _Runner(celpy.InterpretedRunner):
    """celpy's interpreted runner, with the evaluator above."""

    def evaluate(self, context: Context) -> celtypes.Value:
        """The expression's value; raises CELEvalError when it is an error."""
        return _Evaluator(ast=self.ast, activation=self.new_activation()).evaluate(context)


def _want(*checks: tuple[Any, type]) -> None:
    """(value, type) pairs: a wrong receiver or argument type raises the TypeError that celpy turns into
    cel-go's `no such overload`."""
    for value, kind in checks:
        if not isinstance(value, kind):
            raise TypeError(f"no such overload for {type(value).__name__}")


def _split(text: str, separator: str, limit: int = -1) -> Result:
    """ext.Strings `split`: Go's strings.SplitN (limit < 0 all parts, 0 none; "" splits into characters)."""
    _want((text, str), (separator, str), (limit, int))
    if limit == 0:
        return celtypes.ListType()
    parts = list(text) if separator == "" else text.split(separator)
    if 0 < limit < len(parts):
        parts = parts[:limit - 1] + [separator.join(parts[limit - 1:])]
    return celtypes.ListType([celtypes.StringType(p) for p in parts])


def _join(items: list[Any], separator: str = "") -> Result:
    """ext.Strings `join` on a list of strings."""
    _want((items, list), (separator, str))
    for item in items:
        _want((item, str))
    return celtypes.StringType(separator.join(items))


_UPPER_TO_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_LOWER_TO_UPPER = str.maketrans(string.ascii_lowercase, string.ascii_uppercase)


def _lower_ascii(text: str) -> Result:
    """ext.Strings `lowerAscii`: only A-Z change."""
    _want((text, str))
    return celtypes.StringType(text.translate(_UPPER_TO_LOWER))


def _upper_ascii(text: str) -> Result:
    """ext.Strings `upperAscii`: only a-z change."""
    _want((text, str))
    return celtypes.StringType(text.translate(_LOWER_TO_UPPER))


def _trim(text: str) -> Result:
    """ext.Strings `trim`: Go's strings.TrimSpace."""
    _want((text, str))
    return celtypes.StringType(text.strip())


def _replace(text: str, old: str, new: str, limit: int = -1) -> Result:
    """ext.Strings `replace`: Go's strings.Replace (limit < 0 replaces all)."""
    _want((text, str), (old, str), (new, str), (limit, int))
    return celtypes.StringType(text.replace(old, new, limit))


def _index_of(text: str, sub: str, offset: int = 0) -> Result:
    """ext.Strings `indexOf`, in code points from offset, -1 if absent."""
    _want((text, str), (sub, str), (offset, int))
    if not 0 <= offset <= len(text):
        return CELEvalError(f"index out of range: {offset}")
    return celtypes.IntType(text.find(sub, offset))


def _substring(text: str, start: int, end: int | None = None) -> Result:
    """ext.Strings `substring`, in code points, [start, end)."""
    _want((text, str), (start, int))
    stop = len(text) if end is None else end
    _want((stop, int))
    if not 0 <= start <= len(text) or stop > len(text):
        return CELEvalError(f"index out of range: {start if not 0 <= start <= len(text) else stop}")
    if stop < start:
        return CELEvalError(f"invalid substring range. start: {start}, end: {stop}")
    return celtypes.StringType(text[start:stop])


def _kind(value: Any) -> str:
    """A value's CEL type, as far as equality cares (celpy's arithmetic can return plain str and float)."""
    if isinstance(value, bool | celtypes.BoolType):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    for kind in (str, bytes, list, dict):
        if isinstance(value, kind):
            return kind.__name__
    return type(value).__name__


def _same(left: Any, right: Any) -> bool:
    """CEL's heterogeneous equality, which cel-go (so Kubernetes) has: numbers compare by value across int,
    uint and double, lists and maps element by element, and values of different types are unequal. celpy
    raises no-such-overload instead, which would turn `'8' == 8` into an error rather than false."""
    kind = _kind(left)
    if kind != _kind(right):
        return False
    if kind == "list":
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right, strict=True))
    if kind == "dict":
        return bool(left.keys() == right.keys()) and all(_same(left[k], right[k]) for k in left)
    if kind == "number":  # as Python's own int and float, which compare exactly (celpy's refuse to mix)
        return (int(left) if isinstance(left, int) else float(left)) == (
            int(right) if isinstance(right, int) else float(right))
    return bool(left == right)


def _equals(left: Result, right: Result) -> Result:
    """`_==_` with heterogeneous equality (an error operand stays the error)."""
    if isinstance(left, CELEvalError) or isinstance(right, CELEvalError):
        return left if isinstance(left, CELEvalError) else right
    return celtypes.BoolType(_same(left, right))


def _not_equals(left: Result, right: Result) -> Result:
    """`_!=_` with heterogeneous equality."""
    equal = _equals(left, right)
    return equal if isinstance(equal, CELEvalError) else celtypes.BoolType(not equal)


def _in(item: Result, container: Result) -> Result:
    """`in` with heterogeneous equality: a list's elements, a map's keys."""
    if isinstance(item, CELEvalError) or isinstance(container, CELEvalError):
        return item if isinstance(item, CELEvalError) else container
    if not isinstance(container, list | dict):
        raise TypeError(f"no such overload for {type(container).__name__}")
    return celtypes.BoolType(any(_same(item, member) for member in container))


# The ext.Strings (version 2, Kubernetes 1.29+) functions celpy lacks, and equality as cel-go has it; celpy's
# own cover the rest of the standard library (size, contains, startsWith, endsWith, matches, conversions).
FUNCTIONS: dict[str, CELFunction] = {
    "_==_": _equals, "_!=_": _not_equals, "_in_": _in,
    "split": _split, "join": _join, "lowerAscii": _lower_ascii, "upperAscii": _upper_ascii, "trim": _trim,
    "replace": _replace, "indexOf": _index_of, "substring": _substring,
}
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
# Names a policy may call: celpy's functions (operators aside), ours, the macros, and the Kubernetes list
# library's min(), which celpy happens to implement.
_CALLABLE = frozenset({n for n in base_functions if n[0] != "_" and n[-1] != "_"} | set(FUNCTIONS) | _MACROS
                      | {"has", "dyn", "min"})
_ROOTS = frozenset({"object", "oldObject", "request", "namespaceObject", "variables"})


_OPERATORS = {"relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_", "relation_ge": "_>=_",
              "relation_eq": "_==_", "relation_ne": "_!=_", "relation_in": "@in", "addition_add": "_+_",
              "addition_sub": "_-_", "multiplication_mul": "_*_", "multiplication_div": "_/_",
              "multiplication_mod": "_%_", "unary_not": "!_", "unary_neg": "-_"}
_TYPE_NAMES = {"IntType": "int", "UintType": "uint", "DoubleType": "double", "StringType": "string",
               "BoolType": "bool", "BytesType": "bytes", "ListType": "list", "MapType": "map", "_Variables": "map",
               "NoneType": "null_type"}


def _type_name(value: Any) -> str:
    """A celpy value's CEL type name, for messages."""
    return _TYPE_NAMES.get(type(value).__name__, type(value).__name__)


def _error_text(err: CELEvalError) -> str:
    """cel-go's wording for a celpy error, as the API server quotes cel-go."""
    text = str(err.args[0]) if err.args else "error"
    if missing := re.fullmatch(r"no such member in mapping: '(.*)'", text):
        return f"no such key: {missing.group(1)}"
    if overload := re.fullmatch(r"found no matching overload for Token\('RULE', '(\w+)'\) applied to '(.*)'", text):
        types = re.sub(r"<class '(?:[\w.]+\.)?(\w+)'>", lambda m: _TYPE_NAMES.get(m[1], m[1]), overload[2])
        return f"no matching overload for '{_OPERATORS.get(overload[1], overload[1])}' applied to '{types}'"
    return text.split(" (in activation")[0]


# ---------------------------------------------------------------------------------------------
# Compiling: parse, then the compile-time errors cel-go would report for names
# ---------------------------------------------------------------------------------------------

class _Checker:
    """The name checks of cel-go's type checker, for an environment where object and friends are dyn:
    undeclared identifiers and functions, has() on something other than a field selection, variables.x for
    an x not declared (before this one, for a variable), and macros without a variable to bind."""

    def __init__(self, variables: Sequence[str]) -> None:
        self.variables = set(variables)
        self.problems: list[str] = []
        self.roots: set[str] = set()

    def visit(self, tree: lark.Tree[Any], bound: frozenset[str]) -> None:
        """Check a subtree; bound holds the macro variables in scope."""
        handler = {"ident": self._ident, "ident_arg": self._call, "member_dot_arg": self._method,
                   "member_dot": self._select}.get(str(tree.data), self._children)
        handler(tree, bound)

    def _children(self, tree: lark.Tree[Any], bound: frozenset[str]) -> None:
        for child in tree.children:
            if isinstance(child, lark.Tree):
                self.visit(child, bound)

    def _ident(self, tree: lark.Tree[Any], bound: frozenset[str]) -> None:
        """A free identifier must be a declared variable (or a type name)."""
        name = str(tree.children[0])
        if name not in bound:
            self.roots.add(name)
            if name not in _ROOTS and name not in _CALLABLE:
                self.problems.append(f"undeclared reference to '{name}'")

    def _call(self, tree: lark.Tree[Any], bound: frozenset[str]) -> None:
        """f(...): a known function; has() takes exactly one field selection."""
        name = str(tree.children[0])
        args = tree.children[1] if len(tree.children) > 1 else None
        if name == "has" and (not isinstance(args, lark.Tree) or len(args.children) != 1
                              or _descend(args.children[0], "member_dot") is None):
            self.problems.append("invalid argument to has() macro")
        elif name not in _CALLABLE:
            self.problems.append(f"undeclared reference to '{name}'")
        self._children(tree, bound)

    def _method(self, tree: lark.Tree[Any], bound: frozenset[str]) -> None:
        """e.f(...): a known function, or a macro whose first argument is the variable its body binds."""
        member, name = tree.children[0], str(tree.children[1])
        args = tree.children[2].children if len(tree.children) > 2 else []
        if name not in _MACROS:
            if name not in _CALLABLE:
                self.problems.append(f"undeclared reference to '{name}'")
            return self._children(tree, bound)
        var = _descend(args[0], "ident") if len(args) in (2, 3) else None
        if var is None:
            self.problems.append(f"{name}() needs a variable name and an expression")
            return self._children(tree, bound)
        self.visit(member, bound)
        for arg in args[1:]:
            self.visit(arg, bound | {str(var.children[0])})

    def _select(self, tree: lark.Tree[Any], bound: frozenset[str]) -> None:
        """e.f: variables.f must name a declared variable (the API server types `variables` as an object)."""
        operand, field = tree.children[0], str(tree.children[1])
        root = _descend(operand, "ident")
        if root is not None and str(root.children[0]) == "variables" and "variables" not in bound \
                and field not in self.variables:
            self.problems.append(f"undefined field '{field}'")
        self.visit(operand, bound)


@dataclass(frozen=True)
class _Program:
    """One compiled expression: a runner, or the compilation error the API server would report."""

    expression: str
    runner: celpy.Runner | None
    problem: str
    roots: frozenset[str]


_ENV = celpy.Environment(runner_class=_Runner)


@lru_cache(maxsize=1024)
def _compile(expression: str, variables: tuple[str, ...]) -> _Program:
    """Parse and check an expression in an environment declaring these variables (cel/compile.go)."""
    try:
        ast = _ENV.compile(expression)
    except CELParseError as err:
        return _Program(expression, None, f"ERROR: <input>:{err.line}:{err.column}: Syntax error", frozenset())
    checker = _Checker(variables)
    checker.visit(ast, frozenset())
    problem = "; ".join(f"ERROR: <input>: {p}" for p in checker.problems)
    runner = None if problem else _ENV.program(ast, functions=FUNCTIONS)
    return _Program(expression, runner, problem, frozenset(checker.roots))


@dataclass(frozen=True)
class _Failure:
    """An expression that did not produce a value, in the API server's words."""

    message: str


def _run(program: _Program, activation: Context) -> Any:
    """The expression's value, or a _Failure worded as cel/activation.go `Evaluate` words it."""
    if program.runner is None:
        return _Failure(f"compilation error: compilation failed: {program.problem}")
    try:
        return program.runner.evaluate(activation)
    except CELEvalError as err:
        return _Failure(f"expression '{program.expression}' resulted in error: {_error_text(err)}")


# ---------------------------------------------------------------------------------------------
# A compiled policy and one request's evaluation of it
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Policy:
    """A policy's spec with every expression compiled (validating/plugin.go `compilePolicy`)."""

    name: str
    spec: Obj
    variables: tuple[tuple[str, _Program], ...]
    conditions: tuple[_Program, ...]
    validations: tuple[tuple[Obj, _Program, _Program | None], ...]  # (validation, expression, messageExpression)

    @property
    def fails_closed(self) -> bool:
        """failurePolicy Fail, the default: errors deny."""
        return bool(self.spec.get("failurePolicy", "Fail") != "Ignore")

    def programs(self) -> list[tuple[str, _Program]]:
        """Every expression with where it sits in the spec."""
        out = [(f"spec.variables[{i}].expression", p) for i, (_, p) in enumerate(self.variables)]
        out += [(f"spec.matchConditions[{i}].expression", p) for i, p in enumerate(self.conditions)]
        for i, (_, expression, message) in enumerate(self.validations):
            out.append((f"spec.validations[{i}].expression", expression))
            out += [(f"spec.validations[{i}].messageExpression", message)] if message else []
        return out


def _compile_policy(policy: Obj) -> _Policy:
    """Compile variables in order (each sees those before it), then conditions, validations and messages."""
    spec = policy.get("spec") or {}
    names = tuple(str(v.get("name", "")) for v in spec.get("variables") or [])
    variables = tuple((name, _compile(str(v.get("expression", "")), names[:i]))
                      for i, (name, v) in enumerate(zip(names, spec.get("variables") or [], strict=True)))
    conditions = tuple(_compile(str(c.get("expression", "")), names) for c in spec.get("matchConditions") or [])
    validations = tuple(
        (v, _compile(str(v.get("expression", "")), names),
         _compile(str(v["messageExpression"]), names) if v.get("messageExpression") else None)
        for v in spec.get("validations") or [])
    return _Policy(str((policy.get("metadata") or {}).get("name", "")), spec, variables, conditions, validations)


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

    def __init__(self, policy: _Policy, inputs: dict[str, Any]) -> None:
        self._variables = dict(policy.variables)
        self._order = [name for name, _ in policy.variables]
        self._inputs = inputs
        self._cache: dict[str, Result] = {}

    def run(self, program: _Program, visible: int | None = None) -> Any:
        """The program's value or _Failure; visible limits `variables` to the first n (for a variable)."""
        names = self._order if visible is None else self._order[:visible]
        return _run(program, {**self._inputs, "variables": _Variables(names, self._value)})

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
                    if isinstance(outcome, _Failure) else outcome
            self._cache[name] = value
        return self._cache[name]


def _aggregate(messages: Sequence[str]) -> str:
    """utilerrors `aggregate.Error`: one message as is, several deduplicated in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else f"[{', '.join(unique)}]"


def _match_conditions(policy: _Policy, inputs: dict[str, Any]) -> bool | _Failure:
    """matchconditions/matcher.go `Match`: any false skips the policy, even if others failed; then any
    failure decides by failurePolicy. namespaceObject is null here, as the matcher passes no namespace."""
    session = _Session(policy, {**inputs, "namespaceObject": None})
    failures = []
    for program in policy.conditions:
        outcome = session.run(program)
        if isinstance(outcome, _Failure):
            failures.append(outcome.message)
        elif isinstance(outcome, celtypes.BoolType) and not outcome:
            return False
    return _Failure(_aggregate(failures)) if failures else True


def _message(validation: Obj, message: _Program | None, session: _Session) -> str:
    """validator.go: a usable messageExpression result (a string, trimmed, non-empty, one line, at most
    5 KiB), else message, else `failed expression: <expression>`. A failing messageExpression falls back."""
    if message is not None:
        text = session.run(message)
        if isinstance(text, str) and "\n" not in text.strip() and 0 < len(text.strip().encode()) <= MAX_MESSAGE_BYTES:
            return text.strip()
    return str(validation.get("message") or "").strip() or f"failed expression: {validation.get('expression', '')}"


def _decisions(policy: _Policy, inputs: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """validator.go `Validate`: (message, reason, is an error) for every validation that denies."""
    matched = _match_conditions(policy, inputs)
    if isinstance(matched, _Failure):
        return [(matched.message, "Invalid", True)] if policy.fails_closed else []
    if not matched:
        return []
    session = _Session(policy, inputs)
    out = []
    for validation, expression, message in policy.validations:
        outcome = session.run(expression)
        if isinstance(outcome, _Failure):
            out += [(outcome.message, "Invalid", True)] if policy.fails_closed else []
        elif not (isinstance(outcome, celtypes.BoolType) and outcome):
            out.append((_message(validation, message, session), str(validation.get("reason") or "Invalid"), False))
    return out


# ---------------------------------------------------------------------------------------------
# The request: attributes for matching, CEL inputs
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Attributes:
    """admission.Attributes as matching reads them."""

    group: str
    version: str
    kind: str
    resource: str
    name: str
    namespace: str
    operation: str
    labels: Obj
    old_labels: Obj | None
    namespace_labels: Obj


def resource_of(kind: str) -> str:
    """The resource (plural) of a kind: apimachinery meta.UnsafeGuessKindToResource, right for every kind
    here (Pod pods, Job jobs, JobSet jobsets, Deployment deployments, StatefulSet statefulsets); the API
    server knows the real one from discovery."""
    lower = kind.lower()
    if lower.endswith("endpoints"):
        return lower
    if lower.endswith("s"):
        return lower + "es"
    return lower[:-1] + "ies" if lower.endswith("y") else lower + "s"


def _attributes(obj: Obj, old: Obj | None, namespace_obj: Obj | None, operation: str) -> _Attributes:
    """The request's attributes. The namespace is the object's, else namespace_obj's (a manifest applied
    with -n carries none): pass namespace_obj=None for a cluster-scoped object."""
    meta = obj.get("metadata") or {}
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    ns_meta = (namespace_obj or {}).get("metadata") or {}
    namespace = str(meta.get("namespace") or ns_meta.get("name") or "")
    ns_labels = {**(ns_meta.get("labels") or {}), NAME_LABEL: namespace} if namespace else {}
    old_labels = ((old.get("metadata") or {}).get("labels") or {}) if old is not None else None
    return _Attributes(group, version, str(obj.get("kind", "")), resource_of(str(obj.get("kind", ""))),
                       str(meta.get("name") or ""), namespace, operation, meta.get("labels") or {}, old_labels,
                       ns_labels)


def _request(attrs: _Attributes, user: Obj | None) -> dict[str, Any]:
    """The `request` variable: cel/condition.go `CreateAdmissionRequest`, as JSON with omitempty fields left out."""
    gvk = {"group": attrs.group, "version": attrs.version, "kind": attrs.kind}
    gvr = {"group": attrs.group, "version": attrs.version, "resource": attrs.resource}
    user_info = {k: (user or {})[k] for k in ("username", "uid", "groups", "extra") if (user or {}).get(k)}
    request = {"kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr, "name": attrs.name,
               "namespace": attrs.namespace, "operation": attrs.operation, "userInfo": user_info, "dryRun": False}
    return {k: v for k, v in request.items() if v != "" or k == "operation"}


_NAMESPACE_METADATA = ("name", "generateName", "namespace", "uid", "resourceVersion", "generation",
                       "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
                       "annotations", "finalizers")


def _namespace_object(namespace_obj: Obj | None, attrs: _Attributes) -> dict[str, Any] | None:
    """cel/condition.go `CreateNamespaceObject`: metadata (its identity, labels, annotations and finalizers),
    spec and status; with the kubernetes.io/metadata.name label the API server sets on every namespace."""
    if namespace_obj is None:
        return None
    meta = namespace_obj.get("metadata") or {}
    kept = {k: meta[k] for k in _NAMESPACE_METADATA if k in meta}
    kept["labels"] = dict(attrs.namespace_labels)
    return {"metadata": kept, "spec": namespace_obj.get("spec") or {}, "status": namespace_obj.get("status") or {}}


# ---------------------------------------------------------------------------------------------
# Matching (policy/matching/matching.go, webhook/predicates)
# ---------------------------------------------------------------------------------------------

def _any_or(items: Sequence[str] | None, value: str) -> bool:
    """rules.go `exactOrWildcard`."""
    return any(item in ("*", value) for item in items or [])


def _rule_matches(rule: Obj, attrs: _Attributes) -> bool:
    """rules.go `Matcher.Matches` (scope, operation, group, version, resource/subresource), then
    matching.go's resourceNames."""
    namespaced = attrs.namespace != "" and not (attrs.resource == "namespaces" and attrs.group == "")
    scope = rule.get("scope") or "*"
    if scope not in ("*", "Namespaced" if namespaced else "Cluster"):
        return False
    if not _any_or(rule.get("operations"), attrs.operation):
        return False
    if not (_any_or(rule.get("apiGroups"), attrs.group) and _any_or(rule.get("apiVersions"), attrs.version)):
        return False
    resources = [r.split("/", 1) + [""] for r in rule.get("resources") or []]
    if not any(r[0] in ("*", attrs.resource) and r[1] in ("*", "") for r in resources):
        return False
    names = rule.get("resourceNames") or []
    return not names or attrs.name in names


def _matches(criteria: Obj, attrs: _Attributes) -> bool:
    """matching.go `Matches`: namespaceSelector (only for namespaced requests), objectSelector (the object's or
    the old object's labels), excludeResourceRules, resourceRules (none means all). An unset selector is the
    {} the API server defaults it to."""
    if attrs.namespace and not selector_matches(criteria.get("namespaceSelector") or {}, attrs.namespace_labels):
        return False
    selector = criteria.get("objectSelector") or {}
    if not (selector_matches(selector, attrs.labels)
            or (attrs.old_labels is not None and selector_matches(selector, attrs.old_labels))):
        return False
    if any(_rule_matches(rule, attrs) for rule in criteria.get("excludeResourceRules") or []):
        return False
    rules = criteria.get("resourceRules") or []
    return not rules or any(_rule_matches(rule, attrs) for rule in rules)


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------

def _refuse_unsupported(policy: _Policy, bindings: Sequence[Obj]) -> None:
    """Raise UnsupportedPolicy for params or the authorizer, which would otherwise be judged wrongly."""
    if policy.spec.get("paramKind") is not None or any((b.get("spec") or {}).get("paramRef") for b in bindings):
        raise UnsupportedPolicy(f"ValidatingAdmissionPolicy {policy.name!r} takes params (paramKind/paramRef), "
                                "which the offline model does not support")
    if any("authorizer" in program.roots for _, program in policy.programs()):
        raise UnsupportedPolicy(f"ValidatingAdmissionPolicy {policy.name!r} uses the authorizer, "
                                "which the offline model does not support")


def _policy_verdict(policy: _Policy, bindings: Sequence[Obj], attrs: _Attributes, inputs: dict[str, Any]) -> Verdict:
    """dispatcher.go `Dispatch` for one policy and its bindings."""
    constraints = policy.spec.get("matchConstraints")
    if constraints is None:
        message = "failed to configure policy: policy contained no match constraints, a required field"
        return Verdict(denials=(Denial(policy.name, "", message, error=True),) if policy.fails_closed else ())
    if not _matches(constraints, attrs):
        return Verdict()
    denials, warnings, audits = [], [], []
    for binding in bindings:
        criteria, name = (binding.get("spec") or {}).get("matchResources"), (binding.get("metadata") or {}).get("name")
        if criteria is not None and not _matches(criteria, attrs):
            continue
        for message, reason, error in _decisions(policy, inputs):
            denial = Denial(policy.name, str(name or ""), message, reason, error)
            actions = (binding.get("spec") or {}).get("validationActions") or []
            denials += [denial] if "Deny" in actions else []
            audits += [denial] if "Audit" in actions else []
            warnings += [f"Validation failed for ValidatingAdmissionPolicy '{policy.name}' with binding "
                         f"'{denial.binding}': {message}"] if "Warn" in actions else []
    return Verdict(tuple(denials), tuple(warnings), tuple(audits))


def judge(policies: Sequence[Obj], bindings: Sequence[Obj], obj: Obj, namespace_obj: Obj | None,
          operation: str = "CREATE", user: Obj | None = None, old_object: Obj | None = None) -> Verdict:
    """Everything the policies say about creating (or updating, with old_object) obj in namespace_obj.

    user: the requester's userInfo ({"username": ..., "groups": [...]}). Raises UnsupportedPolicy for a
    policy or binding that needs params or the authorizer."""
    attrs = _attributes(obj, old_object, namespace_obj, operation)
    inputs = {"object": to_cel(obj), "oldObject": to_cel(old_object), "request": to_cel(_request(attrs, user)),
              "namespaceObject": to_cel(_namespace_object(namespace_obj, attrs))}
    denials: list[Denial] = []
    warnings: list[str] = []
    audits: list[Denial] = []
    for raw in policies:
        policy = _compile_policy(raw)
        own = [b for b in bindings if (b.get("spec") or {}).get("policyName") == policy.name]
        _refuse_unsupported(policy, own)
        verdict = _policy_verdict(policy, own, attrs, inputs)
        denials += verdict.denials
        warnings += verdict.warnings
        audits += verdict.audits
    return Verdict(tuple(denials), tuple(warnings), tuple(audits))


def evaluate(policies: Sequence[Obj], bindings: Sequence[Obj], obj: Obj, namespace_obj: Obj | None,
             operation: str = "CREATE", user: Obj | None = None, old_object: Obj | None = None) -> list[Denial]:
    """The denials (bindings with validationActions Deny) of `judge`: empty means the policies admit obj."""
    return list(judge(policies, bindings, obj, namespace_obj, operation, user, old_object).denials)


def static_problems(policy: Obj) -> list[str]:
    """What the API server would refuse in this policy, or this model cannot judge: every expression's parse
    and name errors (undeclared identifiers, functions and variables), a missing matchConstraints, an
    unknown failurePolicy, params and the authorizer. [] for a policy that compiles."""
    compiled = _compile_policy(policy)
    problems = [f"{where}: {program.problem}" for where, program in compiled.programs() if program.problem]
    if compiled.spec.get("matchConstraints") is None:
        problems.append("spec.matchConstraints: Required value")
    if compiled.spec.get("failurePolicy", "Fail") not in ("Fail", "Ignore"):
        problems.append(f"spec.failurePolicy: Unsupported value: {compiled.spec['failurePolicy']!r}")
    try:
        _refuse_unsupported(compiled, [])
    except UnsupportedPolicy as err:
        problems.append(str(err))
    return problems
