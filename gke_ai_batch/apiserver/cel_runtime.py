"""CEL as cel-go has it where celpy differs: values converted to CEL, the has() macro, equality and `in`,
the ext.Strings functions celpy lacks, and errors worded as cel-go words them."""
from __future__ import annotations

import datetime
import re
import string
from collections.abc import Mapping
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.evaluation import CELEvalError, CELFunction, Context, Evaluator, Result, base_functions

from gke_ai_batch.apiserver.cel_casts import erase_cast_types

erase_cast_types()  # every CEL evaluation of the package runs celpy's evaluator through this module


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


def descend(tree: lark.Tree[Any], data: str) -> lark.Tree[Any] | None:
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
        select = descend(exprlist.children[0], "member_dot")
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


class Runner(celpy.InterpretedRunner):
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
def _sum(items: list[Any]) -> Result:
    """The Kubernetes CEL list library's sum() of ints (an empty list sums to 0)."""
    _want((items, list))
    return celtypes.IntType(sum(int(i) for i in items))


FUNCTIONS: dict[str, CELFunction] = {
    "_==_": _equals, "_!=_": _not_equals, "_in_": _in,
    "split": _split, "join": _join, "lowerAscii": _lower_ascii, "upperAscii": _upper_ascii, "trim": _trim,
    "replace": _replace, "indexOf": _index_of, "substring": _substring, "sum": _sum,
}
MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
# Names a policy may call: celpy's functions (operators aside), ours, the macros, and the Kubernetes list
# library's min(), which celpy happens to implement.
CALLABLE = frozenset({n for n in base_functions if n[0] != "_" and n[-1] != "_"} | set(FUNCTIONS) | MACROS
                      | {"has", "dyn", "min"})
ROOTS = frozenset({"object", "oldObject", "request", "namespaceObject", "variables"})


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


def error_text(err: CELEvalError) -> str:
    """cel-go's wording for a celpy error, as the API server quotes cel-go."""
    text = str(err.args[0]) if err.args else "error"
    if missing := re.fullmatch(r"no such member in mapping: '(.*)'", text):
        return f"no such key: {missing.group(1)}"
    if overload := re.fullmatch(r"found no matching overload for Token\('RULE', '(\w+)'\) applied to '(.*)'", text):
        types = re.sub(r"<class '(?:[\w.]+\.)?(\w+)'>", lambda m: _TYPE_NAMES.get(m[1], m[1]), overload[2])
        return f"no matching overload for '{_OPERATORS.get(overload[1], overload[1])}' applied to '{types}'"
    return text.split(" (in activation")[0]
