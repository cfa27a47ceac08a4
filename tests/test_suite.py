"""The suite itself (issue 49): it says why it skipped, it plans each config once, and the test tools install
without pip trying and refusing release after release."""
from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import version

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from . import conftest
from .conftest import ROOT, platform_of, run_config


def test_make_test_prints_the_reason_of_each_skip(tmp_path):
    """`make test` said "15 skipped" and not why: the promtool and Chromium tests need Debian packages."""
    reason = "promtool not installed (Debian: apt-get install prometheus)"
    (tmp_path / "test_one.py").write_text(f"import pytest\n\n\ndef test_x():\n    pytest.skip({reason!r})\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
                        "-p", "no:cacheprovider", str(tmp_path / "test_one.py")],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-2000:]
    assert f"SKIPPED [1] test_one.py:5: {reason}" in r.stdout


def test_an_equal_config_is_planned_once_and_each_caller_gets_its_own_copy(monkeypatch):
    """Each `make diff` case planned prod's unchanged config again as its BASE side."""
    calls: list[str] = []
    real = conftest.run_program

    def counted(stack, *args):
        calls.append(stack.name)
        return real(stack, *args)
    cfg = platform_of("dev")
    cfg["teams"][0]["name"] = "cached-once"  # a config no other test plans
    monkeypatch.setattr(conftest, "run_program", counted)
    monkeypatch.setattr(conftest, "_PATCHING", False)  # this test patches the counter only
    first, second = run_config(cfg, "dev"), run_config(platform_of("dev") | {"teams": cfg["teams"]}, "dev")
    assert calls == ["dev"] and first is not second
    first[0].inputs["changed"] = True
    assert "changed" not in second[0].inputs and "changed" not in run_config(cfg, "dev")[0].inputs


# The first release of each that needs protobuf 6, which pulumi-policy's pin (~=5.29.5) refuses: pip tried each
# newer release before it (28 of grpcio-status). From PyPI's metadata (Requires-Dist) of these releases.
NEEDS_PROTOBUF_6 = {"grpcio-status": "1.72.0", "google-api-core": "2.34.0", "googleapis-common-protos": "1.75.1",
                    "proto-plus": "1.28.3", "google-cloud-monitoring": "2.32.0",
                    "google-cloud-monitoring-dashboards": "3.0.0"}


def requirements() -> dict[str, Requirement]:
    lines = [ln.split("#")[0].strip() for ln in (ROOT / "requirements-dev.txt").read_text().splitlines()]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    reqs = [Requirement(r) for r in [*filter(None, lines), *project]]
    return {canonicalize_name(r.name): r for r in reqs}


@pytest.mark.parametrize("name, first_refused", NEEDS_PROTOBUF_6.items())
def test_the_test_tools_are_bounded_below_the_first_release_protobuf_refuses(name, first_refused):
    req = requirements()[canonicalize_name(name)]
    assert not req.specifier.contains(first_refused), (req, first_refused)
    assert req.specifier.contains(version(name)) and Version(version(name)) < Version(first_refused)


def test_make_test_runs_files_side_by_side_and_each_file_in_one_worker(tmp_path):
    """The suite took 12 minutes one test at a time on 2 cores. `make test` now runs test files side by side,
    and a file's tests stay in one worker, so a module-scoped plan (a `make diff` run, the served pack) is made
    once. Two files that each record their process: each file in one, the two in two."""
    command = subprocess.run(["make", "-s", "-n", "-o", "setup", "test", "PY=python"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    assert command[:3] == ["python", "-m", "pytest"], command
    test = "\n\ndef test_{}():\n    time.sleep(0.2)\n    open('pids', 'a').write(f'{{__name__}} {{os.getpid()}}\\n')\n"
    for name in ("a", "b"):
        (tmp_path / f"test_{name}.py").write_text("import os, time\n" + "".join(test.format(i) for i in range(6)))
    r = subprocess.run([sys.executable, *command[1:], "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
                        "-p", "no:cacheprovider", "-n", "2", str(tmp_path)],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-2000:]
    pids: dict[str, set[str]] = {}
    for module, pid in (line.split() for line in (tmp_path / "pids").read_text().splitlines()):
        pids.setdefault(module, set()).add(pid)
    assert all(len(p) == 1 for p in pids.values()) and len(set.union(*pids.values())) == 2, pids
