"""Attack (operator, day two): changes Kueue's own controllers turn against work already on the cluster. Each
case edits dev's stack config, plans both sides and asserts the words `make diff` refuses it with (exit 1 when
any line is refused: offline.diff.main), and that the stack file's decision lets it through. Before these, both
changes showed as plain updates and the diff exited 0."""
from __future__ import annotations

import pytest

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.offline.changes.decisions import Decisions
from gke_ai_batch.offline.diff import compare, judge

from .conftest import dev_diff, platform_of, run_config


def _retention(**durations: str) -> dict:
    cfg = platform_of("dev")
    cfg.setdefault("kueue", {})["retention"] = durations
    return cfg


def test_a_shorter_deactivated_retention_is_refused_with_what_kueue_deletes() -> None:
    """Kueue deletes every Job and JobSet it deactivated longer ago than the new value once it restarts."""
    steps, refused = dev_diff(_retention(after_deactivated_by_kueue="24h"))
    assert refused == [
        "kueue.retention.after_deactivated_by_kueue: 168h -> 24h: once Kueue's controller restarts with it, Kueue "
        "deletes every Job and JobSet it deactivated more than 24h ago, with their pods and Workloads (kueue v0.19.2 "
        "pkg/controller/jobframework/reconciler.go handleWorkloadAfterDeactivatedPolicy); the safe way is two steps: "
        "list the Workloads whose Evicted condition's reason starts with Deactivated and is older than 24h, have "
        "their owners reactivate them (spec.active: true) or keep what they need, then land the shorter value; or "
        "add `acknowledge: [{retention: after_deactivated_by_kueue, reason: ...}]` to the stack file, with why"]
    op, lines = steps["kueue-release"]
    assert op == "update"
    assert any(ln.startswith("values.managerConfig.controllerManagerConfigYaml.objectRetentionPolicies.workloads."
                             "afterDeactivatedByKueue: \"168h\" -> \"24h\"  [Kueue deletes every Job and JobSet")
               for ln in lines), lines
    assert dev_diff(_retention(after_deactivated_by_kueue="24h"),
                 (("retention", "after_deactivated_by_kueue"),))[1] == []


def test_a_longer_retention_and_a_shorter_finished_one_are_not_refused() -> None:
    """A longer retention deletes nothing sooner; a shorter afterFinished deletes only finished Workloads (their
    jobs stay), which the line says."""
    assert dev_diff(_retention(after_deactivated_by_kueue="336h"))[1] == []
    steps, refused = dev_diff(_retention(after_finished="24h"))
    assert refused == []
    assert any(ln.endswith("[Kueue deletes every finished Workload older than this once its controller restarts "
                           "(kueue v0.19.2 workload_controller.go); their Jobs and JobSets stay]")
               for ln in steps["kueue-release"][1])


def _renamed_check() -> dict:
    cfg = platform_of("dev")
    cfg.setdefault("kueue", {})["dws_admission_check"] = "dws-prov2"
    return cfg


def test_an_admission_check_renamed_under_admitted_dws_workloads_is_refused() -> None:
    """training's queue gets dws-prov2 on h100-dws: its admitted workloads get it as Pending, and their jobs are
    suspended until a new ProvisioningRequest is provisioned."""
    _, refused = dev_diff(_renamed_check())
    training = [r for r in refused if r.startswith("ClusterQueue training")]
    assert training == [
        "ClusterQueue training gains admission check dws-prov2 in place of dws-prov on flavors h100-dws: Kueue gives "
        "every workload admitted there the new check as Pending, so it is no longer Admitted and Kueue suspends its "
        "running job, stopping its pods (kueue v0.19.2 workload_controller.go syncAdmissionCheckConditions, "
        "pkg/workload SyncAdmittedCondition, pkg/controller/jobframework/reconciler.go); Kueue's provisioning "
        "controller files a new ProvisioningRequest for each (named after the workload and dws-prov2: "
        "pkg/controller/admissionchecks/provisioning), and resumes the job only once it is provisioned: a failed "
        "request evicts the workload, and once its retries are spent deactivates it; the safe way is two steps: "
        "hold the team's queue (`state: draining` with `stop_policy: Hold`) and let the workloads admitted on "
        "h100-dws end, then land the check with the team active again; or add "
        "`acknowledge: [{admission_check: dws-prov2, reason: ...}]` to the stack file, with why"]
    assert sorted(r.split(":")[0] for r in refused) == [
        "ClusterQueue research gains admission check dws-prov2 in place of dws-prov on flavors h100-dws",
        "ClusterQueue research gains admission check dws-prov2-tpu-4x4 in place of dws-prov-tpu-4x4 on flavors "
        "v6e-queued",
        "ClusterQueue training gains admission check dws-prov2 in place of dws-prov on flavors h100-dws"]
    decided = (("admission_check", "dws-prov2"), ("admission_check", "dws-prov2-tpu-4x4"))
    assert dev_diff(_renamed_check(), decided)[1] == []


def test_a_queued_pool_added_as_a_new_flavor_is_not_refused() -> None:
    """A flavor the queue did not have at BASE has no admitted workload for the check to suspend."""
    cfg = platform_of("dev")
    base = platform_of("dev")
    pool = next(p for p in base["gpu_pools"] if p.get("capacity") == "queued-provisioning")
    base["gpu_pools"].remove(pool)
    for t in base["teams"]:
        t["queue"]["quotas"].pop(pool["name"], None)
    old = [r.as_json() for r in run_config(base, "dev")]
    new = [r.as_json() for r in run_config(cfg, "dev")]
    steps = compare(old, new).steps
    refused = judge([(op, r) for op, r, _ in steps], old, new, Decisions(), Decisions())
    assert not [r for r in refused if "gains admission check" in r], refused


@pytest.mark.parametrize("kind, name", [("retention", "after_deactivated_by_kueue"),
                                        ("admission_check", "dws-prov2")])
def test_the_new_decisions_are_read_from_the_stack_file(kind: str, name: str) -> None:
    cfg = platform_of("dev")
    cfg["acknowledge"] = [{kind: name, "reason": "owners told"}]
    assert PlatformConfig.model_validate(cfg).acknowledge[0].name == name


def test_a_decision_for_a_change_the_diff_no_longer_shows_is_stale() -> None:
    """The retention change was undone but its acknowledgement kept: one line names it, and the diff exits 1."""
    cfg = platform_of("dev")
    cfg["priorities"][0]["description"] = "any change, so the stack changes"
    _, refused = dev_diff(cfg, (("retention", "after_deactivated_by_kueue"), ("node_pool", "cpu-workers")))
    assert refused == [
        "acknowledge[0].retention: 'after_deactivated_by_kueue' is stale: this change no longer shows the Kueue "
        "retention change it decides on; remove it",
        "acknowledge[1].node_pool: 'cpu-workers' is stale: this change no longer shows the node pool change it "
        "decides on; remove it"]


def test_a_decision_still_needed_is_not_stale() -> None:
    _, refused = dev_diff(_retention(after_deactivated_by_kueue="24h"), (("retention", "after_deactivated_by_kueue"),))
    assert refused == []


def _cost(create: bool) -> dict:
    cfg = platform_of("dev")
    cfg["cost"] = {"billing_export_table": f"{cfg['project']}.billing_export.gcp_billing_export_resource_v1_01A2B3",
                   "create_export_dataset": create}
    return cfg


def _handed_over(acknowledged: tuple[tuple[str, str], ...] = ()) -> tuple[list, list[str]]:
    """From a stack deployed before the export dataset was retained (BASE's state has no retainOnDelete)."""
    old = [r.as_json() for r in run_config(_cost(True), "dev")]
    for r in old:
        (r.get("options") or {}).pop("retainOnDelete", None)
    new = [r.as_json() for r in run_config(_cost(False), "dev")]
    steps = compare(old, new).steps
    return steps, judge([(op, r) for op, r, _ in steps], old, new, Decisions(), Decisions(acknowledged))


def test_a_billing_export_dataset_handed_over_is_refused_and_offers_state_delete() -> None:
    """create_export_dataset true -> false: BigQuery refuses to delete a dataset holding the export's tables;
    the way out is `pulumi state delete`, never the delete `pulumi up` would attempt."""
    steps, refused = _handed_over()
    gone = [r for op, r, _ in steps if op == "delete"]
    assert [r["name"] for r in gone] == ["team-cost-export"]
    assert refused == [
        f"delete BigQuery dataset billing_export (gcp:bigquery/dataset:Dataset team-cost-export): BigQuery refuses to "
        "delete a dataset that holds tables (deleteContentsOnDestroy is not set), so `pulumi up` fails on a "
        "non-empty one, and deletes an empty one (a billing export then has no target); to hand it over and keep "
        f"it, take it out of the state before this change: `pulumi state delete '{gone[0]['urn']}'` (the engine "
        "then only stops managing it), and add `acknowledge: [{dataset: billing_export, reason: ...}]` to the "
        "stack file, with why"]
    assert _handed_over((("dataset", "billing_export"),))[1] == []
