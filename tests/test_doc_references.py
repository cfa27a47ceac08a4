"""What the README and the docs point a newcomer at exists: every relative link and its anchor, every docs page
in the README's list, every `make` target and variable they name (as `make help` lists them)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT

PAGES = sorted({ROOT / "README.md", ROOT / "CHANGELOG.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("examples/**/*.md"),
                *ROOT.glob("provider/*.md"), *ROOT.glob("gke_ai_batch/**/*.md")})
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"```.*?```", re.S)


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation but hyphens dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(CODE.sub("", page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:: not this repository's
        path, _, anchor = target.partition("#")
        where = (page.parent / path) if path else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in {
                slug(h) for h in re.findall(r"^#+ (.*)$", CODE.sub("", where.read_text()), re.M)}:
            broken.append(f"{target}: no such heading")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_a_dead_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# Team isolation\n")
    page = tmp_path / "page.md"
    page.write_text("[a](there.md#team-isolation) [b](gone.md) [c](there.md#gone) [d](https://x.example/y.md)\n"
                    "```sh\n[not a link](nowhere.md)\n```\n")
    assert broken_links(page) == ["gone.md: no such file", "there.md#gone: no such heading"]


def test_the_readme_lists_every_docs_page() -> None:
    readme = ROOT / "README.md"
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in LINK.findall(readme.read_text())}
    assert sorted(p.name for p in (ROOT / "docs").glob("*.md") if p.resolve() not in linked) == []


# --- make targets ------------------------------------------------------------------------------------------------

def make_help() -> dict[str, str]:
    """`make help`: each target and its line."""
    out = subprocess.run(["make", "-s", "-C", str(ROOT), "help"], capture_output=True, text=True, check=True).stdout
    return {line.split()[1].rstrip(":"): line for line in out.splitlines()}


def make_commands(page: Path) -> list[str]:
    """The `make ...` commands a page shows: in backticks, and at the start of a code line."""
    text = page.read_text()
    spans = re.findall(r"`(make [^`]+)`", text) + re.findall(r"^\s*(make [^\n#]+)", text, re.M)
    return [re.sub(r"<[^>]*>", "", re.split(r"[|;&]", span)[0]).strip() for span in spans]


def test_make_help_lists_every_target() -> None:
    phony = re.search(r"^\.PHONY: (.*)$", (ROOT / "Makefile").read_text(), re.M)
    assert phony and sorted(phony.group(1).split()) == sorted(make_help())


@pytest.mark.parametrize("page", [p for p in PAGES if "make " in p.read_text() and p.name != "CHANGELOG.md"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_make_command_in_the_docs_exists(page: Path) -> None:
    """A target and each VAR= it is given are the Makefile's (a `make` in prose, "make sure", is not a command)."""
    helped = make_help()
    makefile = (ROOT / "Makefile").read_text()
    wrong = []
    for command in make_commands(page):
        words = command.split()
        targets = [w for w in words[1:] if re.fullmatch(r"[a-z][a-z-]*", w)]
        variables = [w.split("=")[0] for w in words[1:] if re.fullmatch(r"[A-Z_]+=\S*", w)]
        wrong += [f"{command}: no target {t}" for t in targets if t not in helped]
        wrong += [f"{command}: no variable {v}" for v in variables if f"$({v})" not in makefile]
    assert wrong == []


@pytest.mark.parametrize("page", ["README.md", "docs/operating.md"])
def test_the_lists_of_tools_name_every_target(page: str) -> None:
    shown = " ".join(make_commands(ROOT / page))
    assert [t for t in make_help() if not re.search(rf"\bmake {t}\b", shown)] == []
