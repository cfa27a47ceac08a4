"""A stack or project rename, as `make diff` sees it: every URN holds the stack's and the project's names
(`urn:pulumi:STACK::PROJECT::TYPE::NAME`), so renaming either changes them all, and compared by URN the
change would read as every resource deleted and created again. Where URNs differ only in those two names,
the diff pairs them and says what moves the state instead: `pulumi stack rename` (the whole stack; a
fully-qualified ORG/PROJECT/STACK renames the project too, Pulumi CLI docs, pulumi stack rename) or, for a
part of it, an `aliases` option naming the old stack or project (Pulumi docs, Resource option: aliases).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

Resource = dict[str, Any]
URN = re.compile(r"urn:pulumi:(?P<stack>[^:]+)::(?P<project>[^:]+)::(?P<type>.+)::(?P<name>[^:]*)\Z")
ROOT_STACK = "pulumi:pulumi:Stack"  # named PROJECT-STACK: it moves with the rename, whatever its name


class RenameError(Exception):
    """A rename asked for that the two plans do not show: one line for the user, exit 2."""


@dataclass(frozen=True)
class Renamed:
    """BASE's stack and project, the working tree's, and how many of BASE's resources moved (of all)."""
    old: tuple[str, str]
    new: tuple[str, str]
    moved: int
    total: int

    def advice(self) -> list[str]:
        (old_stack, old_project), (new_stack, new_project) = self.old, self.new
        what = " and ".join(f"{w} {a} -> {b}" for w, a, b in (("stack", old_stack, new_stack),
                                                                ("project", old_project, new_project)) if a != b)
        if self.moved == self.total:
            target = new_stack if old_project == new_project else f"ORG/{new_project}/{new_stack}"
            return [f"renamed: {what}: every one of its {self.total} resources keeps its cloud resource; move the "
                    f"state with `pulumi stack rename {target}` (on stack {old_stack}, before the next "
                    f"`pulumi up`), not {self.total} deletes and {self.total} creates; below, they are compared "
                    "under their new names"]
        alias = ", ".join(f'{w}="{a}"' for w, a, b in (("stack", old_stack, new_stack),
                                                      ("project", old_project, new_project)) if a != b)
        return [f"renamed: {what} for {self.moved} of {self.total} resources: give each "
                f"`aliases=[pulumi.Alias({alias})]` so the engine moves it instead of deleting it and creating it "
                "again; below, they are compared under their new names"]


def short(urn: str | None) -> str:
    """`type name` of a URN (its last type and its name), or (none): how `make diff` names a resource in a
    line, the same on both sides of a rename."""
    if not urn:
        return "(none)"
    types, _, name = urn.rpartition("::")
    return f"{types.rpartition('$')[2].rpartition('::')[2]} {name}"


def _parts(urn: str) -> tuple[str, str] | None:
    found = URN.match(urn)
    return (found["stack"], found["project"]) if found else None


def _moved(urn: str, to: tuple[str, str]) -> str:
    found = URN.match(urn)
    if found is None:
        return urn
    name = f"{to[1]}-{to[0]}" if found["type"] == ROOT_STACK else found["name"]
    return f"urn:pulumi:{to[0]}::{to[1]}::{found['type']}::{name}"


def follow_rename(old: list[Resource], new: list[Resource], asked: bool = False) -> tuple[list[Resource],
                                                                                           Renamed | None]:
    """BASE's resources under the working tree's stack and project names where URNs differ only in those,
    and the rename found. `asked` (the user named the old stack): refused when no URN pairs so."""
    olds = {p for r in old if (p := _parts(r["urn"]))}
    news = {p for r in new if (p := _parts(r["urn"]))}
    if len(olds) != 1 or len(news) != 1 or olds == news:
        return old, None
    (was,), (now,) = olds, news
    have = {r["urn"] for r in new}
    urns = {r["urn"]: _moved(r["urn"], now) for r in old if _moved(r["urn"], now) in have}
    if not urns:
        if asked:
            raise RenameError(f"no resource of stack {was[0]} (project {was[1]}) at BASE is in stack {now[0]} "
                              f"(project {now[1]}) under the same type and name: URNs that differ in type or name "
                              "are not a rename (rename advice covers URNs that differ only in stack and project)")
        return old, None

    def moved(r: Resource) -> Resource:
        parent = r.get("parent")
        return {**r, "urn": urns.get(r["urn"], r["urn"]), "parent": urns.get(parent, parent) if parent else parent,
                "dependencies": [urns.get(d, d) for d in r.get("dependencies", [])]}
    return [moved(r) for r in old], Renamed(was, now, len(urns), len(old))
