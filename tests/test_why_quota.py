"""What `gke-ai-batch why` says a team holds, uses and could take now: Kueue v0.19.2's `available` over the cohort
tree (pkg/cache/scheduler/resource_node.go), on dev's shape, research and training holding 8 v5e chips each in
cohort ml and each allowed to borrow 8 (stacks/Pulumi.dev.yaml)."""
from __future__ import annotations

from gke_ai_batch.why.quota import asked, quota_lines, rows

TPU = "google.com/tpu"


def cq(name: str, nominal: int, used: int = 0, borrowing: int | None = 8, lending: int | None = None,
       cohort: str = "ml") -> dict:
    quota = {"name": TPU, "nominalQuota": str(nominal),
             **({"borrowingLimit": str(borrowing)} if borrowing is not None else {}),
             **({"lendingLimit": str(lending)} if lending is not None else {})}
    return {"metadata": {"name": name},
            "spec": {"cohortName": cohort, "resourceGroups": [{"coveredResources": [TPU],
                                                               "flavors": [{"name": "v5e-train",
                                                                            "resources": [quota]}]}]},
            "status": {"flavorsReservation": [{"name": "v5e-train", "resources": [{"name": TPU,
                                                                                   "total": str(used)}]}]}}


def said(name: str, queues: list[dict], cohorts: list[dict] | None = None) -> str:
    return quota_lines(name, "ml", rows(name, queues, cohorts or [], {("v5e-train", TPU)}))[0].strip()


def test_an_idle_cohort_lends_the_team_up_to_its_borrowing_limit():
    assert said("research", [cq("research", 8), cq("training", 8)]) == (
        "quota of research in v5e-train, google.com/tpu: holds 8 (may borrow up to 8), uses 0; "
        "free to it now: 16 (8 to borrow from cohort ml)")


def test_a_team_borrowing_all_the_cohort_has_has_nothing_free_and_its_lender_sees_its_own_lent():
    queues = [cq("research", 8, used=16), cq("training", 8)]
    assert said("research", queues) == ("quota of research in v5e-train, google.com/tpu: holds 8 (may borrow up to "
                                        "8), uses 16 (8 borrowed); free to it now: 0")
    assert said("training", queues) == ("quota of training in v5e-train, google.com/tpu: holds 8 (may borrow up to "
                                        "8), uses 0; free to it now: 0 (8 of its own lent to others in cohort ml)")


def test_the_borrowing_limit_caps_what_an_idle_cohort_gives():
    queues = [cq("research", 8, borrowing=2), cq("training", 8), cq("infer", 8)]
    assert said("research", queues).endswith("free to it now: 10 (2 to borrow from cohort ml)")


def test_a_lending_limit_keeps_part_of_the_quota_out_of_the_cohorts_reach():
    """research lends at most 4: training, using 12, cannot have research's other 4 (`localQuota`)."""
    queues = [cq("research", 8, lending=4), cq("training", 8, used=12)]
    assert said("research", queues).endswith("free to it now: 4 (4 of its own lent to others in cohort ml)")


def test_a_cohort_with_quota_of_its_own_lends_it_too():
    root = {"metadata": {"name": "ml"}, "spec": {"resourceGroups": [{"coveredResources": [TPU], "flavors": [
        {"name": "v5e-train", "resources": [{"name": TPU, "nominalQuota": "4"}]}]}]}}
    queues = [cq("research", 8, used=8, borrowing=None), cq("training", 8, used=8)]
    assert said("research", queues, [root]) == ("quota of research in v5e-train, google.com/tpu: holds 8 (no "
                                                "borrowing limit), uses 8; free to it now: 4 (4 to borrow from "
                                                "cohort ml)")


def test_a_held_workload_gets_its_own_flavors_and_a_waiting_one_those_short_of_quota():
    held = {"status": {"admission": {"podSetAssignments": [{"flavors": {TPU: "v5e-train", "cpu": "v5e-train"}}]}}}
    assert asked(held, []) == {("v5e-train", TPU), ("v5e-train", "cpu")}
    assert asked({}, ["insufficient unused quota for google.com/tpu in flavor v6e-flex, 8 more needed",
                      "flavor h100-dws doesn't match node affinity"]) == {("v6e-flex", TPU)}


def test_a_flavor_that_can_never_give_the_resource_gets_no_line():
    """Kueue already says "maximum capacity (0)" there; holds 0, free 0 says nothing more."""
    queues = [cq("research", 0, borrowing=None), cq("training", 0)]
    assert rows("research", queues, [], {("v5e-train", TPU)}) == []
