"""What `make e2e` plays on the sandbox for a stack: every sample workload (examples/workloads/<stack>.yaml), and
the hostile creates and updates and the legitimate controls the tests judge on the stack's own plan.

The tests hold their corpus as Python, built by their helpers next to the verdicts they expect; it is read from them
by running them under a recorder (gke_ai_batch.sandbox.e2e_harvest) rather than copied, so a test added is played
too. A recording holds every stack's objects: one serves `make e2e` for each stack. An update is played with its old
object created first.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gke_ai_batch.apiserver.tenant_path import TenantPath
from gke_ai_batch.offline.admit import objects_in

from .e2e_harvest import OUT, fingerprint
from .e2e_kubectl import Obj

# The test files that judge objects as `make admit` does (apiserver.tenant_path), directly or through
# tests/test_escape.py's `verdict`.
CORPUS_TESTS = ("test_escape.py", "test_containment.py", "test_admit_updates.py", "test_kueue_holds.py",
                "test_kueue_fidelity.py", "test_object_size.py", "test_scrape_limits.py", "test_time_limits.py")


class CorpusError(RuntimeError):
    """The tests could not be run to read their corpus."""


@dataclass(frozen=True)
class Case:
    """One object to play: `old` is the object as it is first (then `obj` is an update), `scale` through /scale;
    `source` is the sample file or the test that judges it."""

    source: str
    obj: Obj
    old: Obj | None = None
    scale: bool = False

    @property
    def key(self) -> str:
        """The same request, whoever asks it: duplicates are played once."""
        return json.dumps([self.obj, self.old, self.scale], sort_keys=True)

    def who(self) -> str:
        meta = self.obj.get("metadata") or {}
        where = f"{meta['namespace']}/" if meta.get("namespace") else ""
        how = " (scale)" if self.scale else " (update)" if self.old is not None else ""
        return f"{self.obj.get('kind')} {where}{meta.get('name')}{how} [{self.source}]"


def samples(root: Path, stack: str) -> list[Case]:
    """The stack's sample workloads, each a create."""
    path = root / "examples" / "workloads" / f"{stack}.yaml"
    return [Case(str(path.relative_to(root)), doc) for doc in objects_in(path)] if path.is_file() else []


def record(root: Path, out: Path) -> None:
    """Run the corpus tests under the recorder, into `out` (every object they judge, on any plan)."""
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                          "gke_ai_batch.sandbox.e2e_harvest", *(f"tests/{t}" for t in CORPUS_TESTS)],
                         cwd=root, env={**os.environ, OUT: str(out)}, capture_output=True, text=True)
    if not out.is_file():
        raise CorpusError(f"the corpus tests did not run (exit {run.returncode}): {run.stdout[-2000:]}"
                          f"{run.stderr[-2000:]}")


def from_tests(root: Path, path: TenantPath, recorded: Path | None = None) -> list[Case]:
    """The objects the corpus tests judge on the plan `path` judges with (e2e_harvest.fingerprint), in the order
    they judge them; from `recorded`, an earlier recording, when given (written there first if it is missing)."""
    if recorded is None:
        with tempfile.TemporaryDirectory() as tmp:
            record(root, Path(tmp) / "corpus.jsonl")
            return from_tests(root, path, Path(tmp) / "corpus.jsonl")
    if not recorded.is_file():
        record(root, recorded)
    plan = fingerprint(path)
    calls = (json.loads(line) for line in recorded.read_text().splitlines())
    return [Case(d["test"], d["obj"], d["old"], d["scale"]) for d in calls if d["plan"] == plan]


def corpus(root: Path, stack: str, tested: Sequence[Case]) -> list[Case]:
    """The samples, then the tests' cases, each distinct request once."""
    seen: set[str] = set()
    out = []
    for case in [*samples(root, stack), *tested]:
        if case.key not in seen:
            seen.add(case.key)
            out.append(case)
    return out
