"""Attack (operator, day two): a compute class with active migration reordered, or its reservation dropped. GKE
then moves the class's running pods to the way now ranked higher, evicting them; before, `make diff` showed an
update of the ComputeClass and exited 0. Each case edits dev's stack config and asserts the refusal's words."""
from __future__ import annotations

from gke_ai_batch.offline.changes.decisions import Decisions
from gke_ai_batch.offline.diff import compare, judge

from .conftest import platform_of, run_config

SOURCE = ("(activeMigration.optimizeRulePriority: \"workloads ... should be migrated to nodepool defined by higher "
          "priority rule, if possible\" (ComputeClass CRD cloud.google.com/v1; GKE docs, About custom ComputeClasses))")
WAY = ("; the safe way is two steps: set `active_migration: false` on v6e-2x4 and land it, then change its priorities "
       "(and turn active migration back on once the jobs running there have ended); or add "
       "`acknowledge: [{compute_class: v6e-2x4, reason: ...}]` to the stack file, with why")


def _refused(priorities: list[dict], migration: bool = True, acknowledged: tuple = ()) -> list[str]:
    base = platform_of("dev")
    base["compute_classes"][0]["active_migration"] = migration
    cfg = platform_of("dev")
    cfg["compute_classes"][0].update(priorities=priorities, active_migration=migration)
    old = [r.as_json() for r in run_config(base, "dev")]
    new = [r.as_json() for r in run_config(cfg, "dev")]
    steps = compare(old, new).steps
    return judge([(op, r) for op, r, _ in steps], old, new, Decisions(), Decisions(acknowledged))


RESERVED = {"reservation": "v6e-res", "reserved_nodes": 2}
FLEX = {"flex_start": {"max_run_duration": "604800s"}}


def test_spot_ranked_above_on_demand_with_active_migration_is_refused() -> None:
    assert _refused([RESERVED, FLEX, {"on_demand": True}, {"spot": True}]) == [
        "ComputeClass v6e-2x4 with active migration: on-demand now ranked above ways it was below (reservation "
        "v6e-res -> flex-start -> on-demand -> spot, was reservation v6e-res -> flex-start -> spot -> on-demand): "
        "GKE moves the running pods on the nodes of the ways now below to on-demand as soon as it can, evicting "
        f"them {SOURCE}{WAY}"]


def test_a_dropped_reservation_with_active_migration_is_refused() -> None:
    assert _refused([FLEX, {"spot": True}, {"on_demand": True}]) == [
        "ComputeClass v6e-2x4 with active migration: reservation v6e-res dropped: its nodes match no rule of the "
        "class, GKE moves their pods to a way still listed, evicting them, the reservation stays idle and the quota "
        f"it backed is no longer guaranteed {SOURCE}{WAY}"]


def test_without_active_migration_or_with_the_decision_nothing_is_refused() -> None:
    reordered = [RESERVED, FLEX, {"on_demand": True}, {"spot": True}]
    assert _refused(reordered, migration=False) == []
    assert _refused(reordered, acknowledged=(("compute_class", "v6e-2x4"),)) == []
