"""The real engine's verdicts in `make e2e`: the policy pack through `pulumi preview --policy-pack policies/` (the
real CLI, on the deployed stack) against the offline check of the same program. `pulumi preview --diff` after a
change against `make diff` (engine_compare, `preview_diffs`) runs by hand: its first run on dev disagreed on every
ClusterQueue of every scenario, which is not yet told apart from an artefact of the comparison, so `make e2e` does
not count it yet (docs/e2e.md). Each returns (verdicts compared, disagreement lines)."""
from __future__ import annotations

from pathlib import Path

from gke_ai_batch.offline.engine.runtime import run_program
from gke_ai_batch.offline.engine.stackfile import StackFile, resolve
from gke_ai_batch.offline.views.check import violations
from gke_ai_batch.policies.pack import policies

from . import deploy, engine_compare


def policy_pack(stack: str, sandbox_dir: Path, kubeconfig: Path, bin_dir: Path) -> tuple[int, list[str]]:
    """Every (policy, resource, level) the real CLI reports, and the offline check's for the same program (the
    stack with the sandbox's kubernetesOnly key): one verdict per policy of the pack, a disagreement where the two
    sets differ for it."""
    real = {(v.policy, v.urn.rsplit("::", 1)[-1], v.level.lower())
            for v in deploy.preview_policy(stack, sandbox_dir, kubeconfig, bin_dir)}
    file = resolve(stack)
    regs = run_program(StackFile(file.name, file.path, deploy.stack_config(stack, kubeconfig)))
    mine = {(v["policy"], v["urn"].rsplit("::", 1)[-1], str(v["level"]).lower()) for v in violations(regs)}
    names = sorted({p.name for p in policies()} | {p for p, _, _ in real})
    lines = [f"policy {name}: offline {sorted(r for p, r, _ in mine if p == name)}; real "
             f"{sorted(r for p, r, _ in real if p == name)}"
             for name in names if {x for x in mine if x[0] == name} != {x for x in real if x[0] == name}]
    return len(names), lines


def preview_diffs(stack: str, sandbox_dir: Path, kubeconfig: Path, bin_dir: Path) -> tuple[int, list[str]]:
    return engine_compare.compare_all(stack, sandbox_dir, kubeconfig, bin_dir)
