"""celpy's evaluator without the typing work of its casts: a third of every CEL evaluation.

celpy's interpreter (cel-python 0.5) states the type of almost every tree node it visits for mypy, as
`cast(Tuple[List[Result], Result], self.visit_children(tree))`. `typing.cast` returns its value unchanged, but
Python builds its first argument first: each `Tuple[...]` and `List[...]` goes through typing's cache, which hashes
celpy's `Result` Union (a frozenset of its members) every time. On the object-size policy's walk over a pod spec
that is 30% of the evaluation's time. `make admit` evaluates the stack's admission policies on every object.

`erase_cast_types` rebinds, in celpy.evaluation only, the typing names that the module's function bodies use for
nothing but a cast's type or an annotation to one object that any subscript returns unchanged. No value, branch or
error of an evaluation changes: a cast ignores its type. `tests/test_cel_casts.py` reads the installed
celpy.evaluation's source and fails if a function body uses one of these names any other way.
"""
from __future__ import annotations

import typing
from types import ModuleType

from celpy import evaluation

ERASED = ("Dict", "Iterable", "List", "Tuple", "Union")


class _CastType:
    """What celpy's casts name as a type: subscripted, it is itself, so no typing object is built or hashed."""

    def __getitem__(self, _: object) -> _CastType:
        return self

    def __repr__(self) -> str:
        return f"<a type for celpy's casts only: {__name__}>"


CAST_TYPE = _CastType()


def erase_cast_types(module: ModuleType = evaluation) -> None:
    """Rebind ERASED in the module to CAST_TYPE; a name already rebound, or bound to something other than
    typing's own object, is left as it is."""
    for name in ERASED:
        if getattr(module, name, None) is getattr(typing, name):
            setattr(module, name, CAST_TYPE)
