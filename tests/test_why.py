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
