"""The scenario pages show the plan summary their stack prints today."""
import re
from pathlib import Path

import pytest

from gke_ai_batch.offline.render import summary

DOCS = Path(__file__).resolve().parent.parent / "docs" / "scenarios"


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.stem)
def test_scenario_page_shows_the_current_plan(plan, page):
    shown = re.search(r"```text\n(.*?)\n```", page.read_text(), re.S).group(1)
    assert shown == summary(plan(page.stem)), f"regenerate the plan block of {page.name} from `make plan`"


def test_gke_rules_page_is_generated_from_the_table():
    from docs.gke_rules_page import PAGE, render
    assert PAGE.read_text() == render(), "regenerate docs/gke-rules.md with `make docs`"
