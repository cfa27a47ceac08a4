"""Words and tables of the plan summary, in two forms: aligned text for the console and Markdown for a
pull-request comment or a CI job summary. One description of each table feeds both, so the two never
show different plans."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

Row = tuple[str, ...]
FULL_AT = "{full_at}"  # in a console note: where the full summary is (out/<stack>/summary.md)


def more(n: int, word: str) -> str:
    """"... and 1 more team", "... and 970 more teams": what a shortened list leaves out."""
    return f"... and {n:,} more {word}{'' if n == 1 else 's'}"


@dataclass
class Table:
    """A table of the summary. The console shows at most `console_limit` rows (the rest is counted and
    pointed to summary.md), or `console_rows` when the builder shortens it itself."""

    title: str  # the Markdown heading
    caption: str  # what the table shows: the console's line above it, the Markdown paragraph under the heading
    header: Row
    rows: list[Row]
    notes: list[str] = field(default_factory=list)  # lines under the table
    console_limit: int | None = None
    counted: str = "row"  # what a row is, for "... and 970 more teams"
    console_rows: list[Row] | None = None
    console_notes: list[str] = field(default_factory=list)  # lines under the console's form only


Block = str | Table  # a line of text, or a table


def aligned(rows: Sequence[Row], indent: str = "  ") -> list[str]:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return [indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def _console_table(t: Table, full_at: str) -> list[str]:
    rows, hidden = t.console_rows if t.console_rows is not None else t.rows, 0
    if t.console_limit is not None and len(rows) > t.console_limit:
        rows, hidden = rows[:t.console_limit], len(rows) - t.console_limit
    lines = [f"{t.caption}:", *aligned([t.header, *rows])] if rows else [f"{t.caption}: (none)"]
    if hidden:
        lines.append(f"  {more(hidden, t.counted)}; the full table is in {full_at}")
    return lines + [f"  {n}" for n in t.notes] + [f"  {n.replace(FULL_AT, full_at)}" for n in t.console_notes]


def console(blocks: Sequence[Block], full_at: str = "summary.md") -> str:
    """The summary as `make plan` prints it; long tables end in a line that says where the rest is."""
    lines: list[str] = []
    for b in blocks:
        lines += [b] if isinstance(b, str) else _console_table(b, full_at)
    return "\n".join(lines)


def md_cell(text: str) -> str:
    """A table cell's text that Markdown shows as written: pipes, asterisks and tags escaped."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*").replace("<", "&lt;") or " "


def _md_table(t: Table) -> list[str]:
    out = [f"## {t.title}", ""] + ([f"{md_cell(t.caption)}.", ""] if t.caption.lower() != t.title.lower() else [])
    if not t.rows:
        return [*out, "(none)", ""]
    out += ["| " + " | ".join(md_cell(h) for h in t.header) + " |", "|" + "---|" * len(t.header)]
    out += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in t.rows]
    return [*out, "", *[f"{md_cell(n)}  " for n in t.notes], *([""] if t.notes else [])]


def markdown(blocks: Sequence[Block], title: str) -> list[str]:
    """The summary as Markdown lines: text lines as a list, tables in full as Markdown tables."""
    out, in_list = [f"# {title}", ""], False
    for b in blocks:
        if isinstance(b, str):
            out.append(f"- {md_cell(b).strip()}")
            in_list = True
            continue
        if in_list:
            out.append("")
            in_list = False
        out += _md_table(b)
    return out + ([""] if in_list else [])
