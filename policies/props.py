"""Resource properties as the rules read them: with the numbers the program declared.

The engine sends a policy pack every property as a google.protobuf.Struct, and a Struct holds only
doubles: a nodeCount of 2 reaches the pack as 2.0 and a PriorityClass value as 1000000000.0. The rules
multiply Decimals by counts, compare counts with `isinstance(v, int)` and print them in messages, so the
pack's validate wrappers hand them the properties through `as_declared`."""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any


def as_declared(value: Any) -> Any:
    """`value` with integral floats read back as ints, at any depth.

    Mappings and lists are wrapped, not copied: pulumi_policy hands the rules a proxy that raises
    UnknownValueError when a rule reads a value unknown during a preview, and a copy would read them
    all, so that one unknown anywhere would stop every policy on the resource."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return _Props(value)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return _Items(value)
    return value


class _Props(Mapping[str, Any]):
    """A read-only view of a mapping whose values are read through `as_declared`."""

    def __init__(self, target: Mapping[str, Any]) -> None:
        self._target = target

    def __getitem__(self, key: str) -> Any:
        return as_declared(self._target[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._target)

    def __len__(self) -> int:
        return len(self._target)

    def __repr__(self) -> str:
        return repr(dict(self))


class _Items(Sequence[Any]):
    """A read-only view of a list whose items are read through `as_declared`."""

    def __init__(self, target: Sequence[Any]) -> None:
        self._target = target

    def __getitem__(self, index: Any) -> Any:
        return as_declared(self._target[index])

    def __len__(self) -> int:
        return len(self._target)

    def __eq__(self, other: object) -> bool:
        """Equal to a list with equal items, as the rules compare the plain lists of their unit tests."""
        return isinstance(other, (list, _Items)) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # unhashable, like the list it stands for

    def __repr__(self) -> str:
        return repr(list(self))
