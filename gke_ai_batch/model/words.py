"""Words shared by error messages, policy messages and the plan summary: counts with their plurals,
names listed short, a value described, and the closest allowed value."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from difflib import SequenceMatcher

SHOWN = 60  # characters of a bad value echoed back
LISTED = 12  # names listed before "and N more"


def plural(n: int, word: str) -> str:
    """"1 cohort", "2 cohorts": every noun counted takes a plain -s."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def or_list(values: Sequence[object]) -> str:
    """"1, 2, 4 or 8": the allowed values in words."""
    words = [str(v) for v in values]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def describe(value: object) -> str:
    """What a file holds, in words: the kind of a mapping or list, else the value itself, shortened."""
    if value is None:
        return "nothing (the key is empty)"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return shorten(repr(value))


def shorten(text: str, limit: int = SHOWN) -> str:
    """Text cut to `limit` characters, saying how long it was."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def name_list(names: Iterable[str], limit: int = LISTED) -> str:
    """Sorted names, at most `limit` of them, then how many more."""
    ordered = sorted(names)
    if not ordered:
        return "(none)"
    more = len(ordered) - limit
    return ", ".join(ordered[:limit]) + (f" and {more:,} more" if more > 0 else "")


def _likeness(value: str, name: str) -> float:
    return SequenceMatcher(None, value, name).ratio()


def nearest(value: str, allowed: Iterable[str]) -> list[str]:
    """The allowed names, the most like `value` first (difflib's ratio; ties keep their order): the fix of
    a typo leads a long list instead of hiding in it."""
    return sorted(allowed, key=lambda name: -_likeness(value, name))


def close(value: str, allowed: Iterable[str], n: int = 4) -> list[str]:
    """Up to `n` allowed names like `value` (a ratio of 0.6 or more, difflib's own cutoff), the most like it first."""
    return [name for name in nearest(value, allowed)[:n] if _likeness(value, name) >= 0.6]


def closest(value: str, allowed: Iterable[str]) -> str | None:
    match = close(value, allowed, n=1)
    return match[0] if match else None


def did_you_mean(value: str, allowed: Iterable[str], quote: Callable[[str], str] = repr) -> str:
    """"did you mean 'g2-standard-24'? " when an allowed name is close to `value`, else nothing: the one
    wording of a guess, for mistyped keys and mistyped names alike."""
    guess = closest(value, allowed)
    return f"did you mean {quote(guess)}? " if guess else ""


def unknown_key(key: str, allowed: Iterable[str]) -> str:
    """"unknown key `nominl`; did you mean `nominal`? Keys here: ..."."""
    allowed = list(allowed)
    hint = did_you_mean(key, allowed, lambda k: f"`{k}`")
    return f"unknown key `{shorten(key)}`; {hint}keys here: {name_list(allowed, limit=30)}"
