"""Shared fixtures: each stack is planned once per session under the mock runtime."""
from __future__ import annotations

import copy
import functools
from pathlib import Path

import pytest
import yaml

from gke_ai_batch.offline.runtime import run_program
from gke_ai_batch.offline.stackfile import StackFile, resolve

ROOT = Path(__file__).resolve().parent.parent
STACKS = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))


@functools.cache
def planned(stack: str):
    return run_program(resolve(stack))


@pytest.fixture
def plan():
    return planned


def platform_of(stack: str) -> dict:
    """A deep copy of a stack's platform config, to derive bad variants from."""
    doc = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    return copy.deepcopy(doc["config"]["gke-ai-batch:platform"])


def run_config(platform: dict, name: str = "test"):
    return run_program(StackFile(name=name, path=Path(name), config={"gke-ai-batch:platform": platform}))


def by_type(regs, suffix: str) -> list:
    return [r for r in regs if r.type.endswith(suffix)]
