"""Compiling a CEL expression: parse it, then report the compile-time errors cel-go would for undeclared
names, functions and variables."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import celpy
import lark
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError, Context

from gke_ai_batch.apiserver.cel_runtime import CALLABLE, FUNCTIONS, MACROS, ROOTS, Runner, descend, error_text


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
            if name not in ROOTS and name not in CALLABLE:
                self.problems.append(f"undeclared reference to '{name}'")

    def _call(self, tree: lark.Tree[Any], bound: frozenset[str]) -> None:
        """f(...): a known function; has() takes exactly one field selection."""
        name = str(tree.children[0])
        args = tree.children[1] if len(tree.children) > 1 else None
        if name == "has" and (not isinstance(args, lark.Tree) or len(args.children) != 1
                              or descend(args.children[0], "member_dot") is None):
            self.problems.append("invalid argument to has() macro")
        elif name not in CALLABLE:
            self.problems.append(f"undeclared reference to '{name}'")
        self._children(tree, bound)

    def _method(self, tree: lark.Tree[Any], bound: frozenset[str]) -> None:
        """e.f(...): a known function, or a macro whose first argument is the variable its body binds."""
        member, name = tree.children[0], str(tree.children[1])
        args = tree.children[2].children if len(tree.children) > 2 else []
        if name not in MACROS:
            if name not in CALLABLE:
                self.problems.append(f"undeclared reference to '{name}'")
            return self._children(tree, bound)
        var = descend(args[0], "ident") if len(args) in (2, 3) else None
        if var is None:
            self.problems.append(f"{name}() needs a variable name and an expression")
            return self._children(tree, bound)
        self.visit(member, bound)
        for arg in args[1:]:
            self.visit(arg, bound | {str(var.children[0])})

    def _select(self, tree: lark.Tree[Any], bound: frozenset[str]) -> None:
        """e.f: variables.f must name a declared variable (the API server types `variables` as an object)."""
        operand, field = tree.children[0], str(tree.children[1])
        root = descend(operand, "ident")
        if root is not None and str(root.children[0]) == "variables" and "variables" not in bound \
                and field not in self.variables:
            self.problems.append(f"undefined field '{field}'")
        self.visit(operand, bound)


@dataclass(frozen=True)
class Program:
    """One compiled expression: a runner, or the compilation error the API server would report."""

    expression: str
    runner: celpy.Runner | None
    problem: str
    roots: frozenset[str]


_ENV = celpy.Environment(runner_class=Runner)


@lru_cache(maxsize=1024)
def compile_expression(expression: str, variables: tuple[str, ...]) -> Program:
    """Parse and check an expression in an environment declaring these variables (cel/compile.go)."""
    try:
        ast = _ENV.compile(expression)
    except CELParseError as err:
        return Program(expression, None, f"ERROR: <input>:{err.line}:{err.column}: Syntax error", frozenset())
    checker = _Checker(variables)
    checker.visit(ast, frozenset())
    problem = "; ".join(f"ERROR: <input>: {p}" for p in checker.problems)
    runner = None if problem else _ENV.program(ast, functions=FUNCTIONS)
    return Program(expression, runner, problem, frozenset(checker.roots))


@dataclass(frozen=True)
class Failure:
    """An expression that did not produce a value, in the API server's words."""

    message: str


def run_program(program: Program, activation: Context) -> Any:
    """The expression's value, or a Failure worded as cel/activation.go `Evaluate` words it."""
    if program.runner is None:
        return Failure(f"compilation error: compilation failed: {program.problem}")
    try:
        return program.runner.evaluate(activation)
    except CELEvalError as err:
        return Failure(f"expression '{program.expression}' resulted in error: {error_text(err)}")
