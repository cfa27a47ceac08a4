"""Pathways heads moved to another pool (issue 48): the privileged namespace's flavors lose the old pool, and the
privileged-flavors policy would refuse the replacement of a running head pod there. `make diff` refuses it unless
decided, and names the two steps."""
from __future__ import annotations

from gke_ai_batch.offline.changes.decisions import Decisions
from gke_ai_batch.offline.diff import compare, judge

from .conftest import platform_of, run_config

STACK = "dynamic-slicing"


def _diff(after: dict, acknowledged: tuple[tuple[str, str], ...] = (), before: dict | None = None) -> list[str]:
    old = [r.as_json() for r in run_config(before or platform_of(STACK), STACK)]
    new = [r.as_json() for r in run_config(after, STACK)]
    steps = compare(old, new).steps
    return judge([(op, r) for op, r, _ in steps], old, new, Decisions(), Decisions(acknowledged))


def _heads_moved(keep_old_flavor: bool) -> dict:
    cfg = platform_of(STACK)
    cfg["cpu_pools"].append({"name": "cpu-np2", "machine_type": "n2-standard-64", "autoscaling": {"max_nodes": 1}})
    [team] = cfg["teams"]
    team["pathways"]["head_pool"] = "cpu-np2"
    team["queue"]["quotas"]["cpu-np2"] = team["queue"]["quotas"].pop("cpu-np")
    team["pod_security"][0]["flavors"] = ["ironwood", *(["cpu-np"] if keep_old_flavor else []), "cpu-np2"]
    return cfg


def test_moving_pathways_heads_and_dropping_the_old_flavor_is_refused_with_the_two_steps():
    [line] = [r for r in _diff(_heads_moved(keep_old_flavor=False)) if r.startswith("namespace llm")]
    assert line.startswith("namespace llm is privileged for ironwood, cpu-np2 only after this change, no longer for "
                           "cpu-np: the gke-ai-batch-privileged-flavors policy then refuses every new pod there that "
                           "selects cpu-np, so a running job on cpu-np (a Pathways head before `head_pool` moved) "
                           "cannot replace a failed pod")
    assert "keep cpu-np in the namespace's `pod_security[].flavors` in this change" in line
    assert line.endswith("once the jobs running there have ended, drop cpu-np with `acknowledge: [{namespace: llm, "
                         "reason: ...}]` saying so (make diff cannot see running jobs, so it asks then too); or add "
                         "that acknowledgement now to take the risk, with why")


def test_the_second_step_is_refused_until_acknowledged_as_its_message_says():
    """Dropping the old flavor once the heads have moved: make diff cannot tell whether jobs still run there."""
    moved = _heads_moved(keep_old_flavor=True)
    dropped = _heads_moved(keep_old_flavor=False)
    assert [r for r in _diff(dropped, before=moved) if r.startswith("namespace llm")]
    assert not [r for r in _diff(dropped, (("namespace", "llm"),), before=moved) if r.startswith("namespace llm")]


def test_keeping_the_old_flavor_for_one_change_moves_the_heads_without_a_refusal():
    assert not [r for r in _diff(_heads_moved(keep_old_flavor=True)) if r.startswith("namespace llm")]


def test_an_acknowledged_move_is_not_refused():
    refused = _diff(_heads_moved(keep_old_flavor=False), (("namespace", "llm"),))
    assert not [r for r in refused if r.startswith("namespace llm") or "acknowledge[" in r]
