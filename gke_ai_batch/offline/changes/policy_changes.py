"""Both sides' policy results for the reviewer of `make diff`: the counts, then by name each violation the
change brings or removes, advisories too, so `12 advisory -> 14 advisory` says which two are new.

A violation is its policy, its resource (type and name, not the URN's stack or project: a renamed stack keeps
its findings) and its message: one whose message changes shows as gone and new. The working tree's mandatory
violations are all listed, new or not, since they fail `pulumi up` (CrossGuard's mandatory level)."""
from __future__ import annotations

from typing import Any

from .renames import short

Violation = dict[str, Any]  # {policy, level, urn, message}, as the offline check writes it


def _key(v: Violation) -> tuple[str, str, str]:
    return v["policy"], short(v["urn"]), v["message"]


def _counts(violations: list[Violation]) -> str:
    mandatory = sum(v["level"] == "mandatory" for v in violations)
    return f"{mandatory} mandatory, {len(violations) - mandatory} advisory"


def _line(v: Violation, mark: str) -> str:
    return f"  {v['level']} {v['policy']}: {short(v['urn'])}: {v['message']}{mark}"


def policy_lines(old: list[Violation], new: list[Violation]) -> list[str]:
    """The counts on both sides; each mandatory violation of the working tree (`(new)` where BASE lacked it);
    each new advisory; each violation BASE had that the working tree does not (`(gone)`)."""
    had, has = {_key(v) for v in old}, {_key(v) for v in new}
    lines = [f"policy check: BASE {_counts(old)} -> working tree {_counts(new)}"]
    lines += [_line(v, "" if _key(v) in had else " (new)") for v in new
              if v["level"] == "mandatory" or _key(v) not in had]
    lines += [_line(v, " (gone)") for v in old if _key(v) not in has]
    return lines
