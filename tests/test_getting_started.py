"""docs/getting-started.md stays true: every command block that needs no cloud project runs here, in a copy
of the project (sharing this checkout's virtualenv), and every other block says that it needs one."""
from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import ROOT

PAGE = ROOT / "docs" / "getting-started.md"
CLOUD = "# needs a Google Cloud project"
PROJECT = ["Pulumi.yaml", "__main__.py", "Makefile", "requirements.txt", "requirements-dev.txt", "pyproject.toml"]


def command_blocks() -> list[str]:
    """Every ```sh block, those indented in a list item too (they once went unseen), dedented."""
    return [textwrap.dedent(block) for block in
            re.findall(r"^[ \t]*```sh\n(.*?)^[ \t]*```", PAGE.read_text(), flags=re.S | re.M)]


def project_copy(tmp: Path) -> Path:
    """The project's files, and this checkout's virtualenv marked current, so make does not set one up."""
    copy = tmp / "project"
    copy.mkdir()
    for name in PROJECT:
        shutil.copy(ROOT / name, copy / name)
    for folder in ("stacks", "examples/workloads"):
        shutil.copytree(ROOT / folder, copy / folder)
    (copy / ".venv").symlink_to(ROOT / ".venv")
    os.utime(ROOT / ".venv" / ".planning")  # newer than the copied requirements: make keeps the environment
    return copy


def test_every_block_runs_offline_or_says_it_needs_a_cloud_project(tmp_path):
    blocks = command_blocks()
    offline = [b for b in blocks if not b.startswith(CLOUD)]
    assert len(blocks) >= 10 and len(offline) >= 1
    copy = project_copy(tmp_path)
    for block in offline:
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=copy, capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, f"{block}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    resources = (copy / "out" / "lab" / "resources.json").read_text()
    assert '"my-ml-lab"' in resources and '"acme-ml-dev"' not in resources  # the walkthrough's own project


# --- Pulumi's own install step, in a fresh virtualenv (about 10 s: pip builds the package) ----------------

CLONE = ["Pulumi.yaml", "__main__.py", "requirements.txt", "pyproject.toml", "README.md"]
PACKAGE = ["gke_ai_batch", "components", "policies"]


def test_pulumis_install_step_lets_the_program_import_in_a_fresh_clone(tmp_path):
    """Before `pulumi up`, Pulumi's Python runtime (toolchain pip, virtualenv .venv) creates the virtualenv and
    runs `python -m pip install -r requirements.txt` in the project's folder (pulumi sdk/python/toolchain/pip.go,
    InstallDependencies). requirements.txt once lacked the package itself: in a clone where `make plan` never
    ran, the program stopped at `No module named 'gke_ai_batch.components'`. Here that step runs in a fresh
    virtualenv in a copy of the sources; to keep it fast, the third-party dependencies come from this checkout's
    virtualenv through a .pth line (pip finds them installed), pip is this checkout's (`pip --python`, no
    ensurepip), and the package is installed from the copy."""
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in CLONE:
        shutil.copy(ROOT / name, clone / name)
    for folder in PACKAGE:
        shutil.copytree(ROOT / folder, clone / folder, ignore=shutil.ignore_patterns("__pycache__"))
    venv = clone / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)  # pip: ours, below
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    ours = subprocess.run([sys.executable, "-c", "import pulumi, pathlib; print(pathlib.Path(pulumi.__file__)"
                           ".parent.parent)"], capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "dependencies.pth").write_text(ours + "\n")
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "-r",
                        "requirements.txt"], cwd=clone,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    imports = sorted({node.module for node in ast.walk(ast.parse((clone / "__main__.py").read_text()))
                      if isinstance(node, ast.ImportFrom) and node.module})
    assert "gke_ai_batch.components.platform" in imports
    probe = f"import importlib, gke_ai_batch; [importlib.import_module(m) for m in {imports!r}]; " \
            "print(gke_ai_batch.__file__)"
    r = subprocess.run([str(python), "-c", probe], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == str(clone / "gke_ai_batch" / "__init__.py")  # the clone's package, not ours


def test_the_pages_cloud_commands_are_the_ones_the_plan_prints():
    """The page's `get-credentials ml-dev --location us-east5 --dns-endpoint` failed on a real project (dev is
    zonal, in us-east5-b); its kubectl line and prod's first-deploy exclusion are now the plan's own."""
    from gke_ai_batch.offline.views.summary import plan_summary

    from .conftest import planned
    page = PAGE.read_text()
    lines = {stack: [b for b in plan_summary(planned(stack)).blocks if isinstance(b, str)] for stack in ("dev", "prod")}
    (dev,) = [b.split(": ", 1)[1] for b in lines["dev"] if b.startswith("kubectl")]
    assert f"\n{dev}\n" in page
    (first,) = [b for b in lines["prod"] if b.startswith("first pulumi up")]
    printed = re.findall(r"pulumi up [^(]*?(?= \(| from a runner)", first)
    assert len(printed) == 2 and [c for c in printed if c not in commands_shown()] == []


def commands_shown() -> set[str]:
    """The page's commands, one per line: continuations joined, comments dropped, spaces collapsed."""
    lines = [line.split(" #")[0] for block in command_blocks() for line in block.replace("\\\n", " ").splitlines()]
    return {re.sub(r"\s+", " ", line).strip() for line in lines if not line.startswith("#")} - {""}


@pytest.mark.parametrize("requirements, step", [("requirements.txt", ".venv/.planning"),
                                                 ("requirements-dev.txt", ".venv/.tools")])
def test_the_first_install_shows_pips_progress(requirements, step):
    """The planning install ran pip with -q: a fresh clone's `make plan` printed nothing for two minutes; then
    `make test` added the test tools with -q, silent for another one and a half."""
    r = subprocess.run(["make", "-n", "-W", requirements, step], cwd=ROOT, capture_output=True, text=True, check=True)
    (install,) = [line for line in r.stdout.splitlines() if f"-r {requirements}" in line]
    assert "pip install" in install and "--progress-bar on" in install and " -q" not in install
