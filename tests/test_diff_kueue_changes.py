"""Attack (operator, day two): Kueue objects changed under running work. Each case edits dev's stack config as an
operator would, plans both sides and asserts what `make diff` says on the changed line: what Kueue v0.19.2 does
to running and waiting work (offline.changes.queue_changes), and that Kueue's controller restarts when its pod template
changes (offline.changes.kueue_restart). Before these notes each line was a bare value change."""
from __future__ import annotations

import functools
import json

from gke_ai_batch.offline.changes.kueue_restart import POD_RESTART, RESTART
from gke_ai_batch.offline.changes.queue_changes import COHORT, FLAVOR_NOTES, LEFT_COHORT, QUOTA_CUT, QUOTA_RUNBOOK
from gke_ai_batch.offline.diff import compare

from .conftest import platform_of, run_config


@functools.cache
def _dev() -> tuple[dict, ...]:
    return tuple(r.as_json() for r in run_config(platform_of("dev"), "dev"))


def _step(cfg: dict, name: str, back: dict | None = None) -> tuple[str, list[str]]:
    """The diff's step and lines for the resource `name`, from dev (or `back`) to dev edited into `cfg`."""
    new = [r.as_json() for r in run_config(cfg, "dev")]
    old = [r.as_json() for r in run_config(back, "dev")] if back else json.loads(json.dumps(_dev()))
    found = [(op, lines) for op, r, lines in compare(old, new).steps if r["name"] == name]
    assert found, f"{name} does not change"
    return found[0]


def _team(cfg: dict, name: str) -> dict:
    return next(t for t in cfg["teams"] if t["name"] == name)


def test_a_flavor_s_labels_changed_say_running_jobs_keep_the_old_ones() -> None:
    """cpu-workers from spot to on-demand drops `gke-spot` from the flavor's nodeLabels: running jobs keep the
    selector Kueue gave them at start; new ones get the new labels and, on no such node, stay Pending."""
    cfg = platform_of("dev")
    next(p for p in cfg["cpu_pools"] if p["name"] == "cpu-workers")["capacity"] = "on-demand"
    op, lines = _step(cfg, "queues-flavor-cpu-workers")
    assert op == "update"
    assert lines == [f'spec.nodeLabels["cloud.google.com/gke-spot"]: "true" -> (absent)  '
                     f'[{FLAVOR_NOTES["spec.nodeLabels"]}]']
    assert "replacement pods keep selecting the old labels" in lines[0] and "stay Pending" in lines[0]


def test_a_flavor_s_tolerations_changed_say_running_jobs_keep_theirs() -> None:
    """The pool's taint gets another value: the flavor's tolerations follow, and only jobs started from now on
    carry the new toleration."""
    cfg = platform_of("dev")
    pool = next(p for p in cfg["cpu_pools"] if p["name"] == "cpu-workers")
    pool["taints"] = [{**pool["taints"][0], "value": "etl"}]
    op, lines = _step(cfg, "queues-flavor-cpu-workers")
    assert op == "update"
    assert lines and all(ln.endswith(f'[{FLAVOR_NOTES["spec.tolerations"]}]') for ln in lines), lines
    assert any(ln.startswith("spec.tolerations") and '"preprocessing" -> "etl"' in ln for ln in lines)


def test_a_team_moved_to_another_cohort_says_its_borrowing_work_becomes_preemptible() -> None:
    cfg = platform_of("dev")
    cfg["cohorts"].append({"name": "vision"})
    _team(cfg, "research")["queue"]["cohort"] = "vision"
    op, lines = _step(cfg, "queues-cq-research")
    assert op == "update"
    assert lines[0] == f'spec.cohortName: "ml" -> "vision"  [{COHORT}]'
    assert "evicts nothing" in COHORT and "preempts them" in COHORT
    alone = platform_of("dev")
    queue = _team(alone, "research")["queue"]
    del queue["cohort"]
    queue["quotas"]["v5e-train"] = {"google.com/tpu": 8}  # no borrowing or lending limits without a cohort
    op, lines = _step(alone, "queues-cq-research")
    assert f'spec.cohortName: "ml" -> (absent)  [{LEFT_COHORT}]' in lines
    joined = _step(platform_of("dev"), "queues-cq-research", back=alone)[1]
    assert 'spec.cohortName: (absent) -> "ml"' in joined and not any("  [" in ln for ln in joined), joined


def test_a_quota_cut_points_to_the_runbook_and_a_raise_says_nothing() -> None:
    """Kueue evicts nothing when a ClusterQueue's nominalQuota drops below its usage; the line says so and where
    the runbook is. Raising a quota (the other direction) carries no note."""
    cfg = platform_of("dev")
    _team(cfg, "research")["queue"]["quotas"]["v6e-flex"] = {"google.com/tpu": 8}
    op, lines = _step(cfg, "queues-cq-research")
    assert op == "update" and len(lines) == 3  # the chips, and the cpu and memory that follow them
    assert all(ln.endswith(f"[{QUOTA_CUT}]") for ln in lines), lines
    assert any('resources[name="google.com/tpu"].nominalQuota: 16 -> 8' in ln for ln in lines)
    assert QUOTA_RUNBOOK in QUOTA_CUT and "evicts nothing" in QUOTA_CUT
    raised = platform_of("dev")
    _team(raised, "research")["queue"]["quotas"]["v6e-flex"] = {"google.com/tpu": 32}
    assert not any("  [" in ln for ln in _step(raised, "queues-cq-research")[1])


def test_kueue_s_controller_resources_restart_it() -> None:
    """A new `kueue.controller_cpu` changes the controller-manager's pod template: the Deployment rolls."""
    cfg = platform_of("dev")
    cfg.setdefault("kueue", {})["controller_cpu"] = "1"
    op, lines = _step(cfg, "kueue-release")
    assert op == "update"
    assert lines[-1] == POD_RESTART and RESTART not in lines
    assert any(ln.startswith("values.controllerManager.manager.resources.requests.cpu") for ln in lines)


def test_kueue_s_image_restarts_it_but_its_replicas_and_budget_do_not() -> None:
    old = next(r for r in _dev() if r["name"] == "kueue-release")
    def edited(**manager: object) -> list[str]:
        new = json.loads(json.dumps(old))
        for key, value in manager.items():
            target = new["inputs"]["values"]["controllerManager"]
            *path, last = key.split("__")
            for k in path:
                target = target[k]
            target[last] = value
        [(op, _, lines)] = compare([old], [new]).steps
        assert op == "update"
        return lines
    assert edited(manager__image={"repository": "mirror.example/kueue", "tag": "v0.19.2"})[-1] == POD_RESTART
    assert POD_RESTART not in edited(replicas=3, podDisruptionBudget={"enabled": True, "minAvailable": 2})
