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


def fleet_outputs(fleet) -> dict:
    """A fleet manager's workers' `fleetWorker` outputs, derived from their stack files without a program run
    (the control plane's address and CA as the offline plan gives them)."""
    from gke_ai_batch.offline.runtime import MOCK_CA, MOCK_ENDPOINT
    from gke_ai_batch.plan.fleet_worker import worker_facts
    from gke_ai_batch.plan.platform import build_platform
    out = {}
    for w in fleet.workers:
        p = build_platform(platform_of(w.stack))
        out[w.name] = {**worker_facts(p.config, p.scheduling.flavors, p.frameworks), "server": MOCK_ENDPOINT,
                       "ca_certificate": MOCK_CA}
    return out


def run_config(platform: dict, name: str = "test"):
    return run_program(StackFile(name=name, path=Path(name), config={"gke-ai-batch:platform": platform}))


def by_type(regs, suffix: str) -> list:
    return [r for r in regs if r.type.endswith(suffix)]
