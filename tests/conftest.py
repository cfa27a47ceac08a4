"""Shared fixtures: each stack, and each config a test plans, is planned once per session under the mock runtime
(once per worker: `make test` runs test files side by side, each file in one worker).

A plan takes a second or two of the Pulumi SDK's machinery (registrations, serialization); the suite once planned
prod's unchanged config as the BASE side of every `make diff` case, and the same variants in several files. Plans
are kept for the session, keyed by what decides them, and a test that could change what the program does
(`monkeypatch`) plans afresh. `planned` hands every caller the same object and `run_config` a copy; the session
ends in an error if a test changed a shared plan, so no test can pass on what another one left behind."""
from __future__ import annotations

import copy
import functools
import gc
import hashlib
import json
import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from gke_ai_batch.offline.engine.heap import THRESHOLDS
from gke_ai_batch.offline.engine.runtime import Planned, run_program
from gke_ai_batch.offline.engine.stackfile import StackFile, resolve

ROOT = Path(__file__).resolve().parent.parent
STACKS = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))

# Each shared plan, and its pickled form when it was made: the session's last teardown compares them.
_SHARED: dict[str, tuple[Planned, bytes]] = {}
# Whether the running test asks for `monkeypatch`: it may patch what the program calls, so it plans afresh.
_PATCHING = False


def _shared(key: str, plan: Planned) -> Planned:
    _SHARED[key] = (plan, pickle.dumps(plan))
    return plan


@functools.cache
def planned(stack: str) -> Planned:
    """The stack file's plan, one object for the session: read it, never change it."""
    return _shared(f"stack {stack}", run_program(resolve(stack)))


@functools.cache
def _config_plan(name: str, config: str) -> Planned:
    digest = hashlib.sha256(config.encode()).hexdigest()[:12]
    return _shared(f"a config of stack {name} ({digest})", run_config_afresh(json.loads(config), name))


def run_config(platform: dict, name: str = "test") -> Planned:
    """The plan of a platform config under stack `name`: planned once per session for equal configs (a copy
    each time, so the caller may change it), afresh in a test that uses `monkeypatch`."""
    try:
        config = json.dumps(platform)  # key order kept: the program may follow it
    except TypeError:  # not plain data: the test means a program's refusal of it
        return run_config_afresh(platform, name)
    return run_config_afresh(platform, name) if _PATCHING else copy.deepcopy(_config_plan(name, config))


def run_config_afresh(platform: dict, name: str = "test") -> Planned:
    return run_program(StackFile(name=name, path=Path(name), config={"gke-ai-batch:platform": platform}))


def pytest_collection_finish(session: pytest.Session) -> None:
    """What a worker holds once it has collected (the package, the SDKs, the test items) it holds to the end:
    frozen, the collector no longer rescans it in every full collection (16 s of the suite's CPU went to the
    collector), and the collector runs as rarely as a plan makes it run (engine.heap)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


def pytest_runtest_setup(item: pytest.Item) -> None:
    global _PATCHING
    _PATCHING = "monkeypatch" in getattr(item, "fixturenames", ())


@pytest.fixture(scope="session", autouse=True)
def shared_plans_unchanged() -> Iterator[None]:
    yield
    changed = sorted(key for key, (plan, made) in _SHARED.items() if pickle.dumps(plan) != made)
    assert not changed, f"a test changed the shared plan of {', '.join(changed)}: copy it before changing it"


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
    from gke_ai_batch.offline.engine.runtime import MOCK_CA, MOCK_ENDPOINT
    from gke_ai_batch.plan.fleet_worker import worker_facts
    from gke_ai_batch.plan.platform import build_platform
    out = {}
    for w in fleet.workers:
        p = build_platform(platform_of(w.stack))
        out[w.name] = {**worker_facts(p.config, p.scheduling.flavors, p.frameworks), "server": MOCK_ENDPOINT,
                       "ca_certificate": MOCK_CA}
    return out


def config_refusal(stack: str, change):
    """The ConfigError a stack's platform config gets after `change(cfg)` edits a copy of it."""
    from gke_ai_batch.model.errors import ConfigError
    from gke_ai_batch.plan.platform import build_platform
    cfg = platform_of(stack)
    change(cfg)
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    return e.value


@functools.cache
def _dev_resources() -> tuple[dict, ...]:
    return tuple(r.as_json() for r in run_config(platform_of("dev"), "dev"))


def dev_diff(cfg: dict, acknowledged: tuple[tuple[str, str], ...] = ()
             ) -> tuple[dict[str, tuple[str, list[str]]], list[str]]:
    """`make diff` from dev's stack to `cfg`: each changed resource's step and lines by Pulumi name, and the
    refusals, with `acknowledged` as the stack file's decisions."""
    from gke_ai_batch.offline.changes.decisions import Decisions
    from gke_ai_batch.offline.diff import compare, judge
    old = json.loads(json.dumps(_dev_resources()))
    new = [r.as_json() for r in run_config(cfg, "dev")]
    steps = compare(old, new).steps
    refused = judge([(op, r) for op, r, _ in steps], old, new, Decisions(), Decisions(acknowledged))
    return {r["name"]: (op, lines) for op, r, lines in steps}, refused


def by_type(regs, suffix: str) -> list:
    return [r for r in regs if r.type.endswith(suffix)]
