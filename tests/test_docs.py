"""The scenario pages show the plan summary their stack prints today; the generated docs (GKE rules,
stack schema, the config reference page) match what they are generated from."""
import json
import re
from pathlib import Path

import pytest
import yaml

from gke_ai_batch.offline.views.render import summary

from .conftest import ROOT, STACKS

DOCS = Path(__file__).resolve().parent.parent / "docs" / "scenarios"


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.stem)
def test_scenario_page_shows_the_current_plan(plan, page):
    shown = re.search(r"```text\n(.*?)\n```", page.read_text(), re.S).group(1)
    assert shown == summary(plan(page.stem)), f"regenerate the plan block of {page.name} from `make plan`"


def test_gke_rules_page_is_generated_from_the_table():
    from docs.gke_rules_page import PAGE, render
    assert PAGE.read_text() == render(), "regenerate docs/gke-rules.md with `make docs`"


def test_stack_schema_is_generated_from_the_model():
    from docs.stack_docs import SCHEMA
    from gke_ai_batch.model.schema_docs import schema_text
    assert SCHEMA.read_text() == schema_text(), "regenerate docs/stack.schema.json with `make schema`"


def test_config_reference_page_is_generated_from_the_model():
    from docs.stack_docs import REFERENCE, page_with_reference
    assert REFERENCE.read_text() == page_with_reference(REFERENCE.read_text()), "regenerate it with `make schema`"


def _schema_errors(doc) -> list[str]:
    import jsonschema

    from docs.stack_docs import SCHEMA
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    out = []
    for e in validator.iter_errors(doc):
        while e.context:  # into the anyOf branch that got furthest, as editors show it
            e = max(e.context, key=lambda c: len(c.absolute_path))
        out.append(f"{'/'.join(map(str, e.absolute_path))}: {e.message}")
    return out


@pytest.mark.parametrize("stack", STACKS)
def test_every_shipped_stack_validates_against_the_schema(stack):
    doc = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    assert _schema_errors(doc) == []


@pytest.mark.parametrize("change,where", [
    (lambda p: p["teams"][0]["queue"]["quotas"]["v6e-flex"].update({"google.com/tpu": {"nominl": 8}}),
     "config/gke-ai-batch:platform/teams/0/queue/quotas/v6e-flex/google.com~1tpu"),
    (lambda p: p["tpu_pools"][0].update(capacity="preemptible"), "config/gke-ai-batch:platform/tpu_pools/0/capacity"),
    (lambda p: p["teams"][0].update(name="Research"), "config/gke-ai-batch:platform/teams/0/name"),
    (lambda p: p["tpu_pools"][0].update(generation="v9"), "config/gke-ai-batch:platform/tpu_pools/0/generation"),
    (lambda p: p["gpu_pools"][0].update(gpu="nvidia-k80"), "config/gke-ai-batch:platform/gpu_pools/0/gpu"),
], ids=["misspelt-key", "bad-capacity", "bad-name", "unknown-generation", "unknown-gpu"])
def test_the_schema_flags_what_validation_refuses(change, where):
    """Editors see the mistakes the plan would refuse."""
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    change(doc["config"]["gke-ai-batch:platform"])
    errors = _schema_errors(doc)
    assert errors and any(e.startswith(where.replace("~1", "/")) for e in errors), errors


def test_the_schema_refuses_a_misspelt_platform_key():
    errors = _schema_errors({"config": {"gke-ai-batch:platfrom": {}, "gcp:project": "p"}})
    assert errors and "gke-ai-batch:platfrom" in errors[0]


def test_every_stack_has_a_scenario_page():
    """dev and prod had none, though every other stack did."""
    assert sorted(p.stem for p in DOCS.glob("*.md")) == sorted(STACKS)


def test_components_reference_page_is_generated_from_the_schema():
    from docs.components_docs import PAGE, SCHEMA, page
    assert PAGE.read_text() == page(json.loads(SCHEMA.read_text())), "regenerate it with `make package-schema`"


def _operating_text() -> str:
    """docs/operating.md as one line of prose (its wrapping removed)."""
    return " ".join((ROOT / "docs" / "operating.md").read_text().split())


def test_operating_page_says_what_make_diff_does_to_a_fixed_pool_made_autoscaled():
    """The page once said such a pool "still shows as a replacement"; the diff shows an update, as the
    engine drops the ignored starting size that the old inputs lack."""
    from gke_ai_batch.offline.diff import compare

    from .conftest import platform_of, run_config
    fixed = platform_of("dev")
    pool = next(p for p in fixed["cpu_pools"] if p["name"] == "cpu-workers")
    del pool["autoscaling"]
    pool["nodes"] = 2
    old, new = ([r.as_json() for r in run_config(cfg, "dev")] for cfg in (fixed, platform_of("dev")))
    (op,) = [op for op, r, _ in compare(old, new).steps if r["name"] == "cpu-workers-pool"]
    assert op == "update"
    assert "A fixed pool made autoscaled is resized in place too" in _operating_text()
    assert "still shows as a replacement" not in _operating_text()


def test_operating_page_says_a_manual_control_plane_upgrade_recreates_no_node():
    """GKE's Standard cluster upgrades page: nodes follow the control plane's version except "if the control
    plane was manually upgraded"; they are recreated when the channel's node auto-upgrade reaches them."""
    text = _operating_text()
    assert ("Raising `cluster.version` is a manual upgrade of the control plane, and by itself it recreates no "
            "node") in text
    assert "or if the control plane was manually upgraded" in text
    assert "Raising `cluster.version` therefore evicts" not in text
