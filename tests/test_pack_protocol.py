"""The policy pack served and called the way the Pulumi engine does (tests/analyzer.py) reports exactly what
the offline check reports; and the offline check feeds the rules what the engine feeds them, so that it
fails where `pulumi preview --policy-pack policies` fails."""
from __future__ import annotations

import copy
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from importlib import metadata
from typing import Any

import pytest

import gke_ai_batch.policies.pack as pack_module
from gke_ai_batch.offline.engine.runtime import RESOURCE_SIG, SECRET_VALUE_SIG, SIG_KEY, analyzer_form
from gke_ai_batch.offline.engine.stackfile import project
from gke_ai_batch.offline.views.check import violations
from gke_ai_batch.policies.pack import PACK_NAME, RESOURCE_POLICIES, STACK_POLICIES
from gke_ai_batch.policies.props import as_declared

from .analyzer import LEVELS, Pack
from .conftest import ROOT, STACKS, planned

STACK_FILES = [*STACKS, pytest.param(str(ROOT / "tests/stacks/Pulumi.broken-prod.yaml"), id="broken-prod")]


@pytest.fixture(scope="module")
def pack() -> Iterator[Pack]:
    """One pack process for the module, as the engine starts one per preview."""
    served = Pack(ROOT / "policies", project(ROOT).name, "test")
    yield served
    assert served.stop() == 0, served.stderr()


def key(v: dict[str, Any]) -> tuple[str, str, str, str]:
    return v["policy"], v["level"], v["urn"] or "", v["message"]


def test_the_pack_stops_when_closed_from_a_run_that_ignores_interrupts() -> None:
    """`make test &` in a shell starts the suite with SIGINT ignored; the pack must still stop when closed,
    as it does under the engine, rather than linger until it is killed."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        served = Pack(ROOT / "policies", project(ROOT).name, "test")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert served.stop(timeout=5) == 0, served.stderr()


def test_pack_lists_every_policy_at_its_level(pack: Pack) -> None:
    info = pack.info()
    assert info.name == PACK_NAME
    assert {p.name: LEVELS[p.enforcementLevel] for p in info.policies} == {
        p.name: p.level.value for p in [*RESOURCE_POLICIES, *STACK_POLICIES]}


@pytest.mark.parametrize("stack", STACK_FILES)
def test_pack_reports_what_the_offline_check_reports(pack: Pack, stack: str) -> None:
    regs = planned(stack)
    assert sorted(pack.check(regs), key=key) == sorted(violations(regs), key=key)


def test_number_rules_fire_on_the_wire(pack: Pack) -> None:
    """PriorityClass values and GPU counts arrive as floats: the rules still judge and print them as ints."""
    regs = copy.deepcopy(planned("dev"))
    for r in regs:
        if r.type.endswith(":PriorityClass"):
            r.wire["value"] = 2e9
        if r.name == "h100-dws-pool":
            r.wire["nodeConfig"]["guestAccelerators"][0]["count"] = 9.0
    found = {(v["policy"], v["message"]) for v in violations(regs)}
    assert ("gpu-pool-shape", "node pool h100-dws: a3-highgpu-8g carries 8 x nvidia-h100-80gb; set guestAccelerators "
            "count to 8, not 9") in found
    assert ("priority-class-value", "PriorityClass high-priority: value 2,000,000,000 is reserved for system-critical "
            "pods; user classes go up to 1,000,000,000") in found
    assert sorted(pack.check(regs), key=key) == sorted(violations(regs), key=key)


def test_offline_check_gives_the_rules_floats_as_the_engine_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the pack's as_declared the quota rules multiply Decimals by floats and fail, as they failed
    under the engine on every stack with pools: the offline check must fail too."""
    monkeypatch.setattr(pack_module, "as_declared", lambda props: props)
    with pytest.raises(TypeError, match="Decimal"):
        violations(planned("hotswap"))


def test_as_declared_reads_integral_floats_as_ints() -> None:
    props = as_declared({"nodeCount": 2.0, "ratio": 0.5, "nodeLocations": ["a"], "spec": {"items": [{"n": 3.0}]}})
    assert props["nodeCount"] == 2 and type(props["nodeCount"]) is int and props["ratio"] == 0.5
    assert type(props["spec"]["items"][0]["n"]) is int and list(props["nodeLocations"]) == ["a"]
    assert props == {"nodeCount": 2, "ratio": 0.5, "nodeLocations": ["a"], "spec": {"items": [{"n": 3}]}}


def test_pack_imports_from_the_installed_package_alone(tmp_path: Any) -> None:
    """`python -I` in an empty folder: no repository on sys.path, no PYTHONPATH; the pack imports through
    the installed package and changes no sys.path."""
    code = ("import sys; before = list(sys.path); import gke_ai_batch.policies.pack; assert sys.path == before, "
            "sys.path; assert not {'policies', 'components'} & set(sys.modules), 'top-level repository import'")
    r = subprocess.run([sys.executable, "-I", "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_pack_requirements_name_the_installed_package() -> None:
    """The pack folder installs the package, at the version the project's venv holds (so that a local
    preview's pip finds it satisfied), instead of pointing at the repository's requirements."""
    lines = [ln.strip() for ln in (ROOT / "policies/requirements.txt").read_text().splitlines()]
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert [ln for ln in lines if ln and not ln.startswith("#")] == [f"gke-ai-batch=={version}"]
    assert metadata.version("gke-ai-batch") == version


def test_wire_form_is_what_the_engine_sends_packs() -> None:
    """Secrets stay wrapped (pulumi_policy unwraps them), references become their ID or else their URN, and
    internal keys go, as the engine's MarshalOptions{KeepUnknowns, KeepSecrets, SkipInternalKeys} do."""
    secret = {SIG_KEY: SECRET_VALUE_SIG, "value": 2.0}
    raw = {"__defaults": [], "nodeCount": 2.0, "password": secret,
           "parent": {SIG_KEY: RESOURCE_SIG, "urn": "urn:pulumi:s::p::t::parent"},
           "network": {SIG_KEY: RESOURCE_SIG, "urn": "urn:pulumi:s::p::t::net", "id": "net-id"}}
    assert analyzer_form(raw) == {"nodeCount": 2.0, "password": secret, "parent": "urn:pulumi:s::p::t::parent",
                                  "network": "net-id"}
