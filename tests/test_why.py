"""`gke-ai-batch why` and `queue` on Workload JSON (tests/fixtures/why/: recorded from the sandbox's real Kueue
v0.19.2, see its README), kubectl's answers served from those files: each state in plain words, the per-flavor
reasons, the position or why it is unknown, the estimate, and the one-line refusals with exit 2."""
from __future__ import annotations

import json
import shutil
import time
from datetime import datetime
from pathlib import Path

import pytest

from gke_ai_batch.why import cli
from gke_ai_batch.why.estimate import estimate
from gke_ai_batch.why.facts import explain, split_message, state_of
from gke_ai_batch.why.kube import Kube

FIXTURES = Path(__file__).parent / "fixtures" / "why"


def load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def test_kueue_message_is_split_per_pod_set_and_flavor():
    message = ("couldn't assign flavors to pod set main: insufficient unused quota for google.com/tpu in flavor "
               "v5e-train, 8 more needed, insufficient unused quota for google.com/tpu in flavor v6e-flex, 8 more "
               "needed; couldn't assign flavors to pod set workers: flavor h100-dws doesn't match node affinity. "
               "Pending the preemption of 1 workload(s)")
    misfits, preemption = split_message(message)
    assert [(m.pod_set, m.by_flavor) for m in misfits] == [
        ("main", {"v5e-train": ["insufficient unused quota for google.com/tpu in flavor v5e-train, 8 more needed"],
                  "v6e-flex": ["insufficient unused quota for google.com/tpu in flavor v6e-flex, 8 more needed"]}),
        ("workers", {"h100-dws": ["flavor h100-dws doesn't match node affinity"]})]
    assert preemption == "Pending the preemption of 1 workload(s)"


def replay(monkeypatch, name: str, argv: list[str] | None = None) -> tuple[int, list[str], str]:
    """The CLI on a recorded session: each kubectl call answered as the sandbox answered it, at its time."""
    from gke_ai_batch.why import report

    fixture = load(name)
    answers = {json.dumps(c["args"]): c for c in fixture["calls"]}

    def raw(self, args):
        c = answers[json.dumps(args)]
        return c["ok"], c["out"] if isinstance(c["out"], str) else json.dumps(c["out"]), c["err"]

    monkeypatch.setattr(Kube, "raw", raw)
    monkeypatch.setattr(report, "clock", lambda: datetime.fromisoformat(fixture["now"]))
    return fixture["exit"], fixture["argv"] if argv is None else argv, fixture["now"]


def run_cli(monkeypatch, capsys, name: str, *flags: str) -> tuple[int, list[str], str]:
    _, argv, _ = replay(monkeypatch, name)
    code = cli.main([*flags, *argv])
    out = capsys.readouterr()
    return code, out.out.splitlines(), out.err.strip()


@pytest.mark.skipif(shutil.which("kubectl") is None and not Path.home().joinpath(
    ".cache/gke-ai-batch/sandbox/bin/kubectl").exists(), reason="no kubectl")
def test_an_unreachable_cluster_is_one_line_and_exit_2_within_10s(tmp_path, capsys):
    kubectl = shutil.which("kubectl") or str(Path.home() / ".cache/gke-ai-batch/sandbox/bin/kubectl")
    config = tmp_path / "kubeconfig"
    config.write_text("apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: c, cluster: {server: "
                      "'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: t}}]\n"
                      "contexts: [{name: c, context: {cluster: c, user: u}}]\n")
    start = time.monotonic()
    code = cli.main([f"--kubeconfig={config}", f"--kubectl={kubectl}", "why", "research/train"])
    err = capsys.readouterr().err
    assert (code, len(err.splitlines())) == (2, 1)
    assert err.startswith("error: the cluster is unreachable: ")
    assert "127.0.0.1:1 was refused" in err
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("ref", ["research", "research/", "/train", "research/a/b"])
def test_a_job_not_named_namespace_slash_job_is_refused(ref, capsys):
    assert cli.main(["why", ref]) == 2
    assert capsys.readouterr().err == (f"error: {ref!r}: name the job as <namespace>/<job>, for example "
                                       "research/train-llm\n")


def cond(kind: str, status: str, reason: str = "", message: str = "", at: str = "2026-11-29T07:00:00Z") -> dict:
    return {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": at}


def workload(*conds: dict, checks: tuple[dict, ...] = (), created: str = "2026-11-29T06:00:00Z") -> dict:
    """A Workload as Kueue v0.19.2's v1beta2 types spell it (apis/kueue/v1beta2/workload_types.go)."""
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": "job-train-1a2b3", "namespace": "research", "creationTimestamp": created},
            "spec": {"queueName": "research-queue", "priority": 1000000,
                     "podSets": [{"name": "main", "count": 2, "template": {"spec": {"containers": [
                         {"name": "c", "resources": {"requests": {"google.com/tpu": "4"}}}]}}}]},
            "status": {"conditions": list(conds), "admissionChecks": list(checks)}}


@pytest.mark.parametrize(("conds", "checks", "state"), [
    ((), (), "pending"),
    ((cond("QuotaReserved", "False", "Pending", "x"),), (), "pending"),
    ((cond("QuotaReserved", "True", "QuotaReserved"),), (), "quota reserved"),
    ((cond("QuotaReserved", "True", "QuotaReserved"),), ({"name": "dws", "state": "Retry", "message": ""},),
     "waiting for checks"),
    ((cond("QuotaReserved", "True", "QuotaReserved"), cond("Admitted", "True", "Admitted")), (), "admitted"),
    ((cond("Evicted", "True", "PodsReadyTimeout"), cond("QuotaReserved", "False", "Pending")), (), "evicted"),
    ((cond("Admitted", "True", "Admitted"), cond("Finished", "True", "Succeeded")), (), "finished"),
])
def test_each_state_from_kueues_conditions(conds, checks, state):
    assert state_of(workload(*conds, checks=checks)) == state


def test_pods_not_ready_and_a_rejected_check_are_said():
    wl = workload(cond("QuotaReserved", "True", "QuotaReserved"),
                  cond("PodsReady", "False", "WaitForStart", "Not all pods are ready or succeeded"),
                  checks=({"name": "dws-prov", "state": "Rejected", "message": "no capacity"},))
    a = explain(wl, "research")
    assert (a.pods_ready, [(c.name, c.state, c.message) for c in a.checks]) == (
        "WaitForStart: Not all pods are ready or succeeded", [("dws-prov", "Rejected", "no capacity")])


def test_the_estimate_is_the_median_wait_of_the_queues_recent_admissions_and_says_so():
    now = datetime.fromisoformat("2026-11-29T08:00:00+00:00")
    done = [workload(cond("QuotaReserved", "True", "QuotaReserved", at=f"2026-11-29T07:{m:02d}:00Z"),
                     created="2026-11-29T07:00:00Z") for m in (10, 20, 50)]
    old = workload(cond("QuotaReserved", "True", "QuotaReserved", at="2026-11-27T07:00:00Z"),
                   created="2026-11-27T06:00:00Z")
    pending = explain(workload(cond("QuotaReserved", "False", "Pending", "couldn't assign flavors to pod set main: "
                                    "insufficient unused quota for google.com/tpu in flavor v5e-train, 8 more needed"),
                               created="2026-11-29T07:30:00Z"), "research")
    assert estimate(pending, [*done, old], now) == (
        "median wait 20m00s (creation to quota reserved) of the 3 Workload(s) of LocalQueue research-queue that "
        "reserved quota in the last 24 h; this one has waited 30m00s")
    assert estimate(pending, [old], now) == (
        "no estimate: no Workload of LocalQueue research-queue reserved quota in the last 24 h")


NO_POSITION = ("  position unknown: the visibility API did not answer ((NotFound): the server could not find the "
               "requested resource)")


def test_an_admitted_job_and_what_its_team_holds_uses_and_borrows(monkeypatch, capsys):
    assert run_cli(monkeypatch, capsys, "admitted") == (0, [
        "research/job-why-big-e3454: admitted",
        "  queue: LocalQueue research-queue -> ClusterQueue research, priority 1000000",
        "  quota of research in v5e-train, cpu: holds 223.3 (may borrow up to 223.3), uses 4; free to it now: 442.6 "
        "(223.3 to borrow from cohort ml)",
        "  quota of research in v5e-train, memory: holds 371307Mi (may borrow up to 371307Mi), uses 16Gi; free to it "
        "now: 726230Mi (371307Mi to borrow from cohort ml)",
        "  quota of research in v5e-train, google.com/tpu: holds 8 (may borrow up to 8), uses 16 (8 borrowed); free "
        "to it now: 0",
        "  pods not ready: WaitForStart: Not all pods are ready or succeeded"], "")


def test_a_job_pending_for_quota_names_each_flavor_tried_and_the_quota_its_team_lent(monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "pending-quota")
    assert (code, err) == (0, "")
    assert out[:2] == ["training/job-why-low-wait-90444: pending",
                       "  queue: LocalQueue training-queue -> ClusterQueue training, priority 1000000"]
    assert "  Kueue's reason: WaitingForQuota" in out
    assert ("  pod set main, flavor v5e-train: insufficient unused quota for google.com/tpu in flavor v5e-train, "
            "16 more needed") in out
    assert "  pod set main, flavor t4-notebooks: flavor t4-notebooks doesn't match node affinity" in out
    assert [line for line in out if line.startswith("  quota")] == [
        "  quota of training in v5e-train, google.com/tpu: holds 8 (may borrow up to 8), uses 0; free to it now: 0 "
        "(8 of its own lent to others in cohort ml)"]
    assert NO_POSITION in out
    assert out[-1] == ("  estimate: no estimate: no Workload of LocalQueue training-queue reserved quota in the "
                       "last 24 h")
    assert not any(line.startswith("  pods not ready") for line in out)


def test_a_job_preempted_by_cohort_reclamation(monkeypatch, capsys):
    code, out, _ = run_cli(monkeypatch, capsys, "preempted", "--json")
    answer = json.loads("\n".join(out))
    assert (code, answer["state"], answer["reason"]) == (0, "evicted", "WaitingForQuota")
    assert answer["evicted"].startswith("Preempted: Preempted to accommodate a workload")
    assert answer["preempted"].startswith("InCohortReclamation: ")
    assert "preemptor path: /ml/training; preemptee path: /ml/research" in answer["preempted"]
    assert answer["misfits"][0]["by_flavor"]["v5e-train"] == [
        "insufficient unused quota for google.com/tpu in flavor v5e-train, 8 more needed"]
    assert answer["quota"] == [{"flavor": "v5e-train", "resource": "google.com/tpu", "borrowing_limit": "8",
                                "nominal": "8", "used": "0", "borrowed": "0", "free_now": "8", "lent_out": "0",
                                "to_borrow": "0"}]
    assert answer["ahead"] == ["job-why-no-flavor-65a95 (priority 1000000)"]
    assert answer["estimate"] == ("median wait 0m00s (creation to quota reserved) of the 1 Workload(s) of LocalQueue "
                                  "research-queue that reserved quota in the last 24 h; this one has waited 0m05s")


def test_the_reclaimer_borrows_what_research_no_longer_uses(monkeypatch, capsys):
    code, out, _ = run_cli(monkeypatch, capsys, "reclaimer")
    assert (code, out[0]) == (0, "training/job-why-reclaim-9d867: admitted")
    assert ("  quota of training in v5e-train, google.com/tpu: holds 8 (may borrow up to 8), uses 8; free to it now: "
            "8 (8 to borrow from cohort ml)") in out


def test_a_dws_check_that_never_provisions(monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "dws-check")
    assert (code, err) == (0, "")
    assert out[:2] == ["research/job-why-dws-c50d1: waiting for checks",
                       "  queue: LocalQueue research-queue -> ClusterQueue research, priority 1000000"]
    assert out[-5:] == [
        "  quota of research in v6e-queued, google.com/tpu: holds 16 (no borrowing limit), uses 16; free to it now: 0",
        "  admission check dws-prov-tpu-4x4: Pending",
        "  ProvisioningRequest job-why-dws-c50d1-dws-prov-tpu-4x4-1: no conditions yet",
        "  pods not ready: WaitForStart: Not all pods are ready or succeeded",
        "  estimate: no estimate: waiting on admission check dws-prov-tpu-4x4, capacity that comes when the cloud "
        "has it (a ProvisioningRequest may never be provisioned)"]


def test_a_node_selector_matching_no_flavor_has_no_estimate_and_no_quota_line(monkeypatch, capsys):
    code, out, _ = run_cli(monkeypatch, capsys, "no-flavor")
    assert code == 0
    assert "  pod set main, flavor v5e-train: flavor v5e-train doesn't match node affinity" in out
    assert not any(line.startswith("  quota") for line in out)  # no flavor of research can ever give it v4 chips
    assert out[-1] == ("  estimate: no estimate: as written, the job fits no flavor of its ClusterQueue; waiting will "
                       "not change that")


def test_kueue_writing_no_reason_shows_the_requests_against_the_queues_flavors(monkeypatch, capsys):
    code, out, _ = run_cli(monkeypatch, capsys, "no-reason")
    assert code == 0
    assert out[:5] == [
        "training/job-why-no-reason-6ce3b: pending",
        "  queue: LocalQueue preprocessing -> ClusterQueue cpu-batch, priority 1000000",
        "  note: Kueue has not written a reason",
        "  requests of pod set main: pods=1, nvidia.com/gpu=1, cpu=1, memory=4Gi",
        "  the LocalQueue's flavors cover: cpu-workers: cpu, ephemeral-storage, memory"]


def test_queue_lists_the_namespaces_workloads_with_a_reason_each(monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "queue")
    assert (code, err) == (0, "")
    assert [line[:71] for line in out[1:4]] == [
        "job-why-no-flavor-65a95                          pending              -",
        "job-why-dws-c50d1                                waiting for checks   -",
        "job-why-big-e3454                                evicted              -"]
    assert out[3].endswith("research-queue   pod set main, flavor v5e-train: insufficient unused quota for "
                           "google.com/tpu in flavor v5e-train, 8 more needed")
    assert out[2].endswith("admission check dws-prov-tpu-4x4: Pending")


def test_a_missing_job_and_a_missing_permission_are_one_line_and_exit_2(monkeypatch, capsys):
    assert run_cli(monkeypatch, capsys, "not-found") == (2, [], "error: job research/nope does not exist (no Job, "
                                                         "JobSet, Pod, Deployment or StatefulSet of that name)")
    assert run_cli(monkeypatch, capsys, "forbidden") == (2, [], (
        "error: no access: finding job research/why-dws needs 'get' on jobs (batch API group) in namespace research, "
        "which your account lacks; the platform grants it to its teams' groups (make access)"))


def test_unreadable_cluster_queues_leave_the_rest_of_the_answer(monkeypatch, capsys):
    """A member whose account lacks the queue-viewer binding gets the answer with `quota unknown`."""
    _, argv, _ = replay(monkeypatch, "admitted")
    answered = Kube.raw

    def raw(self, args):
        if args[1] == "clusterqueues.kueue.x-k8s.io":
            return False, "", ('Error from server (Forbidden): clusterqueues.kueue.x-k8s.io is forbidden: User "u" '
                               'cannot list resource "clusterqueues" in API group "kueue.x-k8s.io" at the cluster '
                               'scope')
        return answered(self, args)

    monkeypatch.setattr(Kube, "raw", raw)
    assert cli.main(argv) == 0
    assert ("  quota unknown: no access: what the team holds and could borrow needs 'list' on clusterqueues "
            "(kueue.x-k8s.io API group), which your account lacks; the platform grants it to its teams' groups "
            "(make access)") in capsys.readouterr().out.splitlines()


def test_a_job_kueue_does_not_manage_is_one_line_and_exit_2(monkeypatch, capsys):
    fixture = load("admitted")
    monkeypatch.setattr(Kube, "raw", lambda self, args: (
        (True, json.dumps(fixture["calls"][0]["out"]), "") if args[1].startswith("jobs.batch/")
        else (True, json.dumps({"kind": "WorkloadList", "items": []}), "")))
    assert cli.main(["why", "research/why-big"]) == 2
    assert capsys.readouterr().err == ("error: Job research/why-big has no Workload: Kueue does not manage it (it "
                                       "names no LocalQueue in a namespace Kueue skips, or Kueue has not seen it "
                                       "yet)\n")
