"""One clean error for bad component arguments, whichever door they came through.

A public component refuses an argument it does not know (a misspelt `capacty` was once dropped in silence,
leaving an on-demand pool) and anything its plan refuses, before any resource registers, with the words,
path and suggestion the stack file gets. The error is both a `pulumi.InputPropertiesError`, one entry per
bad property as the engine shows them, and a `pulumi.RunError`: Pulumi's Python language host prints a
RunError's message alone and a traceback for anything else (pulumi-language-python-exec), and the offline
runtime does the same. The component provider (gke_ai_batch.provider) re-raises it as a plain
InputPropertiesError, since the SDK's Construct handler passes a RunError on as an unexplained failure."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

import pulumi

from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.words import unknown_key


class ComponentArgumentsError(pulumi.InputPropertiesError, pulumi.RunError):
    """A component's arguments refused: `message` is the one line, `errors` the property and reason."""

    def __init__(self, error: ConfigError):
        super().__init__(str(error), [{"property_path": error.path, "reason": error.message}])


def refuse_unknown(args: Mapping[str, Any], known: Iterable[str]) -> None:
    """ConfigError at the first argument `known` (the component's TypedDict keys) does not name."""
    allowed = list(known)
    for key in args:
        if key not in allowed:
            raise ConfigError(str(key), unknown_key(str(key), allowed))


@contextmanager
def arguments_of(component: str, name: str) -> Iterator[None]:
    """Turn a ConfigError about `component` `name`'s arguments into a ComponentArgumentsError."""
    try:
        yield
    except ConfigError as e:
        subject = e.subject if e.subject != "stack config" else f"{component} {name!r} arguments"
        raise ComponentArgumentsError(ConfigError(e.path, e.message, subject)) from None


T = TypeVar("T")


def own_plan(component: str, name: str, args: Mapping[str, Any], arguments: type, plan: Callable[[], T],
             planned: T | None) -> T:
    """The plan a public component declares: the one the Platform component derived with the whole stack
    (`planned`, so a stack is validated and planned once), or its own from its arguments, refused as
    ComponentArgumentsError before anything registers."""
    if planned is not None:
        return planned
    with arguments_of(component, name):
        refuse_unknown(args, arguments.__annotations__)
        return plan()
