"""docs/getting-started.md stays true: every command block that needs no cloud project runs here, in a copy
of the project (sharing this checkout's virtualenv), and every other block says that it needs one."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from .conftest import ROOT

PAGE = ROOT / "docs" / "getting-started.md"
CLOUD = "# needs a Google Cloud project"
PROJECT = ["Pulumi.yaml", "__main__.py", "Makefile", "requirements.txt", "requirements-dev.txt", "pyproject.toml"]


def command_blocks() -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```", PAGE.read_text(), flags=re.S | re.M)


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
    assert len(blocks) >= 6 and len(offline) >= 1
    copy = project_copy(tmp_path)
    for block in offline:
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=copy, capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, f"{block}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    resources = (copy / "out" / "lab" / "resources.json").read_text()
    assert '"my-ml-lab"' in resources and '"acme-ml-dev"' not in resources  # the walkthrough's own project
