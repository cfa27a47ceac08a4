"""celpy's evaluator without its casts' typing work (gke_ai_batch.apiserver.cel_casts): it is safe only while
celpy.evaluation uses the rebound names for nothing but a cast's type or an annotation, it must change no answer,
and it must really spare the typing work (issue 49: the suite's time)."""
from __future__ import annotations

import ast
import inspect
import typing

import pytest
from celpy import evaluation, json_to_cel

from gke_ai_batch.apiserver.cel_casts import CAST_TYPE, ERASED
from gke_ai_batch.apiserver.cel_compile import compile_expression, run_program

OBJECT = {"spec": {"containers": [{"name": f"c{i}", "args": ["x"] * (i % 4)} for i in range(200)],
                   "labels": {"team": "research"}, "replicas": 3}}
EXPRESSIONS = (
    "object.spec.containers.map(c, size(c.args)).sum() > 250",
    "object.spec.containers.all(c, c.name.startsWith('c'))",
    "object.spec.containers.exists(c, c.name == 'c199' && size(c.args) == 3)",
    "object.spec.containers.filter(c, size(c.args) == 0).size()",
    "object.spec.labels.team + '/' + string(object.spec.replicas * 2)",
    "has(object.spec.missing) ? 1 : object.spec.replicas / 0",
    "object.spec.containers[200].name",
    "[1, 2, 3].map(x, x * 2) == [2, 4, 6] && {'a': 1}.a in [1]",
)


def _evaluate_all() -> list[str]:
    return [repr(run_program(compile_expression(e, ("object",)), {"object": json_to_cel(OBJECT)}))
            for e in EXPRESSIONS]


def _casts_and_annotations(tree: ast.AST) -> set[int]:
    """The ids of every node under a cast's first argument or under an annotation."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        roots: list[ast.AST] = []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "cast" and node.args:
            roots.append(node.args[0])
        if isinstance(node, ast.AnnAssign | ast.arg) and node.annotation is not None:
            roots.append(node.annotation)
        if isinstance(node, ast.FunctionDef) and node.returns is not None:
            roots.append(node.returns)
        inside.update(id(n) for root in roots for n in ast.walk(root))
    return inside


def test_celpy_uses_the_rebound_names_only_as_a_casts_type_or_an_annotation():
    """Read from the installed celpy: a release that uses `List` or `Tuple` as a value (isinstance, a call) fails
    here before a user's evaluation could go wrong."""
    tree = ast.parse(inspect.getsource(evaluation))
    allowed = _casts_and_annotations(tree)
    bodies = [n for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for stmt in f.body for n in ast.walk(stmt)]
    other_uses = sorted({f"line {n.lineno}: {n.id}" for n in bodies
                         if isinstance(n, ast.Name) and n.id in ERASED and id(n) not in allowed})
    assert other_uses == []


def test_the_names_are_rebound_once_the_package_evaluates_cel():
    assert {name: getattr(evaluation, name) for name in ERASED} == {name: CAST_TYPE for name in ERASED}


def test_every_answer_and_error_is_the_same_with_typings_names(monkeypatch: pytest.MonkeyPatch):
    erased = _evaluate_all()
    for name in ERASED:
        monkeypatch.setattr(evaluation, name, getattr(typing, name))
    assert _evaluate_all() == erased
    assert erased[0] == "BoolType(True)" and erased[3] == "IntType(50)"
    assert "divide by zero" in erased[5]
    assert "out of range" in erased[6]


def test_an_evaluation_hashes_no_typing_union(monkeypatch: pytest.MonkeyPatch):
    """Without the rebinding each visited node hashed celpy's Result Union: thousands of times for a walk over
    200 containers."""
    hashes = 0
    union_hash = typing._UnionGenericAlias.__hash__  # type: ignore[attr-defined]

    def counting(self: object) -> int:
        nonlocal hashes
        hashes += 1
        return union_hash(self)
    program = compile_expression(EXPRESSIONS[0], ("object",))
    activation = {"object": json_to_cel(OBJECT)}
    monkeypatch.setattr(typing._UnionGenericAlias, "__hash__", counting)  # type: ignore[attr-defined]
    assert repr(run_program(program, activation)) == "BoolType(True)"
    assert hashes < 10
