"""Every stack config example in docs/ plans, in its page's own words: each YAML block whose keys are
the platform config's is taken from the .md file and laid over a stack of `stacks/`, as a reader would
paste it, and planned under the mock runtime."""
import copy
import re
from pathlib import Path

import pytest
import yaml

from gke_ai_batch.model.config import PlatformConfig

from .conftest import ROOT, platform_of, run_config

DOCS = ROOT / "docs"
# The stack each page's examples are written against (their names, reservations and channels are its own).
BASE = {
    "compute-classes.md": "dev",
    "observability.md": "prod",
    "scenarios/dynamic-slicing.md": "dynamic-slicing",
    "scenarios/pathways.md": "pathways",
}


def config_blocks(page: Path) -> list[tuple[int, dict]]:
    """(line, parsed block) of each ```yaml block of the page whose top-level keys are all platform
    config keys: the blocks a reader pastes into a stack's `gke-ai-batch:platform`."""
    text = page.read_text()
    out = []
    for m in re.finditer(r"```yaml\n(.*?)```", text, re.S):
        block = yaml.safe_load(m.group(1))
        if isinstance(block, dict) and set(block) <= set(PlatformConfig.model_fields):
            out.append((text[:m.start()].count("\n") + 1, block))
    return out


def laid_over(base, block):
    """The base config with the block laid over it: mappings key by key, lists of named entries by name
    (an example's team or class replaces the keys it names, an unknown name is added), anything else
    replaced."""
    if isinstance(base, dict) and isinstance(block, dict):
        return {**base, **{k: laid_over(base[k], v) if k in base else v for k, v in block.items()}}
    if isinstance(base, list) and isinstance(block, list) and all(isinstance(e, dict) and "name" in e
                                                                   for e in base + block):
        named = {e["name"]: e for e in block}
        kept = [laid_over(e, named.pop(e["name"])) if e["name"] in named else e for e in base]
        return kept + list(named.values())
    return copy.deepcopy(block)


EXAMPLES = [(page, line, block) for page in sorted(DOCS.rglob("*.md"))
            for line, block in config_blocks(page)]


def test_every_page_with_a_config_example_names_its_base_stack():
    pages = {p.relative_to(DOCS).as_posix() for p, _, _ in EXAMPLES}
    assert pages == set(BASE)


def test_the_compute_class_page_shows_a_tpu_and_a_gpu_class():
    """The issue's example: an explicit `count: 8` on a3-ultragpu-8g, which the machine fixes."""
    classes = [c for p, _, b in EXAMPLES if p.name == "compute-classes.md" for c in b.get("compute_classes", [])]
    assert {"tpu", "gpu"} <= {k for c in classes for k in c}
    assert {"type": "nvidia-h200-141gb", "count": 8} in [c.get("gpu") for c in classes]


@pytest.mark.parametrize("page,line,block", EXAMPLES,
                         ids=[f"{p.relative_to(DOCS).as_posix()}:{n}" for p, n, _ in EXAMPLES])
def test_the_example_plans(page, line, block):
    stack = BASE[page.relative_to(DOCS).as_posix()]
    platform = laid_over(platform_of(stack), block)
    run_config(platform, stack)  # a refused example raises its config error here
