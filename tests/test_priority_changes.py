"""Attack (operator, day two): a priority's value changed under running work. Kubernetes lets neither a
PriorityClass's value nor its preemption policy change (ValidatePriorityClassUpdate), so the program replaces
the class and `make diff` says so, with the window in which the API server refuses every pod naming it, and
refuses the change unless the stack file decides on it. A WorkloadPriorityClass's value changes in place."""
from __future__ import annotations

import functools
import json

from gke_ai_batch.offline.changes.decisions import Decisions
from gke_ai_batch.offline.diff import compare, judge

from .conftest import by_type, dev_diff, platform_of, run_config


def _raised(name: str = "high-priority", value: int = 3000000) -> dict:
    cfg = platform_of("dev")
    next(p for p in cfg["priorities"] if p["name"] == name)["value"] = value
    return cfg


def test_a_priority_class_value_changed_is_a_replacement_that_states_the_window() -> None:
    steps, _ = dev_diff(_raised())
    op, lines = steps["priorities-pc-high-priority"]
    assert op == "replace"
    assert lines[0] == "order: delete first, then create (deleteBeforeReplace)"
    assert lines[1].startswith("value: 2000000 -> 3000000  [forces replacement: Kubernetes ValidatePriorityClassUpdate")
    assert "the API server refuses every pod naming it" in lines[1]


def test_a_priority_class_replacement_is_refused_without_a_decision_and_says_the_safe_way() -> None:
    _, refused = dev_diff(_raised())
    assert refused == [
        "replace priority class high-priority (kubernetes:scheduling.k8s.io/v1:PriorityClass priorities-pc-high-"
        "priority): its value or preemption policy cannot change in place (ValidatePriorityClassUpdate), so it is "
        "deleted and created again; in between the API server refuses every pod naming high-priority (\"no "
        "PriorityClass with name high-priority was found\"): a running job cannot replace a failed pod and a new "
        "job's pods are refused, while the pods already running keep their priority; the safe way is two changes: "
        "add a priority under another name with the new value and move the teams and jobs to it, then remove "
        "high-priority once no job names it; or add `acknowledge: [{priority: high-priority, reason: ...}]` to the "
        "stack file, with why"]
    _, decided = dev_diff(_raised(), acknowledged=(("priority", "high-priority"),))
    assert decided == []


def test_a_preemption_policy_changed_is_a_replacement_too() -> None:
    cfg = platform_of("dev")
    cfg["priorities"][1]["preemption_policy"] = "Never"
    steps, refused = dev_diff(cfg)
    assert steps["priorities-pc-low-priority"][0] == "replace"
    assert any(r.startswith("replace priority class low-priority") for r in refused)


def test_a_workload_priority_class_value_stays_an_in_place_update() -> None:
    steps, refused = dev_diff(_raised())
    assert steps["priorities-wpc-high-priority"] == ("update", ["value: 2000000 -> 3000000"])
    assert not [r for r in refused if "wpc" in r]


def test_the_program_replaces_a_priority_class_when_its_value_changes(plan) -> None:
    """pulumi-kubernetes has no forceNew for PriorityClass: without replaceOnChanges `pulumi up` would send an
    update the API server refuses."""
    classes = by_type(plan("dev"), "scheduling.k8s.io/v1:PriorityClass")
    assert classes and all(set(c.options.get("replaceOnChanges", ())) == {"value", "preemptionPolicy"}
                           and c.options.get("deleteBeforeReplace") for c in classes), classes


@functools.cache
def _prod(training_priorities: tuple[str, ...]) -> tuple[dict, ...]:
    cfg = platform_of("prod")
    next(t for t in cfg["teams"] if t["name"] == "training")["priorities"] = list(training_priorities)
    return tuple(r.as_json() for r in run_config(cfg, "prod"))


def _without_high(acknowledged: tuple[tuple[str, str], ...] = (),
                  base: tuple[str, ...] = ("high-priority", "low-priority")) -> list[str]:
    """The refusals of removing prod's high-priority and, in the same change, training's naming it."""
    cfg = platform_of("prod")
    cfg["priorities"] = [p for p in cfg["priorities"] if p["name"] != "high-priority"]
    next(t for t in cfg["teams"] if t["name"] == "training")["priorities"] = ["low-priority"]
    old = json.loads(json.dumps(_prod(base)))
    new = [r.as_json() for r in run_config(cfg, "prod")]
    steps = compare(old, new).steps
    return judge([(op, r) for op, r, _ in steps], old, new, Decisions(), Decisions(acknowledged))


def test_a_priority_removed_in_the_change_in_which_teams_stop_naming_it_is_refused() -> None:
    """training's jobs named high-priority at BASE: once the class is gone their replacement pods are refused."""
    refused = [r for r in _without_high() if "high-priority" in r]
    assert refused == [
        "delete priority class high-priority: at BASE the team namespaces training, training-gpudirect may name it, "
        "so jobs running there may; once it is gone the API server refuses their new and replacement pods (\"no "
        "PriorityClass with name high-priority was found\"): take it out of the teams' `priorities` first, land that "
        "change and wait for the jobs naming it to end, then remove it (docs/operating.md, \"Removing a priority "
        "class that running work names\"); or add `acknowledge: [{priority: high-priority, reason: ...}]` to the "
        "stack file, with why"]
    assert not [r for r in _without_high((("priority", "high-priority"),)) if "high-priority" in r]


def test_a_priority_no_team_named_at_base_goes_without_a_decision() -> None:
    """The two-change way: training stopped naming high-priority in a change before this one."""
    assert not [r for r in _without_high(base=("low-priority",)) if "high-priority" in r]
