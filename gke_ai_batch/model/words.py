"""Words shared by error messages, policy messages and the plan summary: counts with their plurals,
names listed short, a value described, and the closest allowed value."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from difflib import get_close_matches

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


def closest(value: str, allowed: Iterable[str]) -> str | None:
    match = get_close_matches(value, list(allowed), n=1, cutoff=0.6)
    return match[0] if match else None


def unknown_key(key: str, allowed: Iterable[str]) -> str:
    """"unknown key `nominl`; did you mean `nominal`? Keys here: ..."."""
    allowed = list(allowed)
    guess = closest(key, allowed)
    hint = f"did you mean `{guess}`? " if guess else ""
    return f"unknown key `{shorten(key)}`; {hint}keys here: {name_list(allowed, limit=30)}"
