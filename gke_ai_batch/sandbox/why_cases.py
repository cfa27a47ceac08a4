"""The six live cases of issue 50, on dev's sandbox with real Kueue v0.19.2: `gke-ai-batch why` run as a research
member (impersonated, with the team role's rights only) on jobs brought into each state, its --json answer held to
the facts: the state, the queues, the flavor Kueue names and why, the check, the eviction, what the team holds, uses
and has free. A case whose facts differ is a disagreement of `make e2e` (exit 1).

research's and training's ClusterQueues each hold 8 v5e chips in cohort ml and may borrow 8 (stacks/Pulumi.dev.yaml),
so: a research job of 16 chips is admitted by borrowing; a second one waits for quota; a training job of 8 then
reclaims training's own quota and preempts the first (reclaimWithinCohort), which waits again ahead of the second
(same priority, older: Kueue orders a Workload preempted so by its creation); a 4x4 v6e job on the queued flavor
waits for its DWS check (no ProvisioningRequest controller runs); a job selecting a TPU no pool has matches no
flavor. dev lets no team name a priority above the global default (the priorities policy refuses high-priority even
to an administrator), so preemption there is by cohort reclamation, and "behind" is behind an older job of the same
priority, not a higher one."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from .e2e_kubectl import Kubectl, Member, Obj

STACK, TEAM, LENDER = "dev", "research", "training"
NS, QUEUE, CQ = "research", "research-queue", "research"
V5E = {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice", "cloud.google.com/gke-tpu-topology": "2x4",
       "gke-ai-batch.io/flavor": "v5e-train"}
V6E_QUEUED = {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "4x4",
              "gke-ai-batch.io/flavor": "v6e-queued"}
NO_POOL = {"cloud.google.com/gke-tpu-accelerator": "tpu-v4-podslice", "cloud.google.com/gke-tpu-topology": "2x2x1"}


def job(name: str, priority: str, pods: int, selector: dict[str, str], ns: str = NS, queue: str = QUEUE) -> Obj:
    """A Job of `pods` pods of 4 chips each (v5e 2x4 and v6e 4x4 hosts hold 4)."""
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns, "labels": {"kueue.x-k8s.io/queue-name": queue,
                                                                   "kueue.x-k8s.io/priority-class": priority}},
            "spec": {"parallelism": pods, "completions": pods, "completionMode": "Indexed", "suspend": True,
                     "template": {"spec": {"restartPolicy": "Never", "nodeSelector": selector,
                                           "containers": [{"name": "train", "image": "python:3.11",
                                                           "command": ["true"],
                                                           "resources": {"requests": {"cpu": "1", "memory": "4Gi",
                                                                                      "google.com/tpu": 4},
                                                                         "limits": {"google.com/tpu": 4}}}]}}}}


Answer = dict[str, Any]


def tpu_quota(answer: Answer) -> dict[str, str]:
    """The answer's quota row of v5e-train's chips."""
    return next((r for r in answer["quota"] if (r["flavor"], r["resource"]) == ("v5e-train", "google.com/tpu")), {})


def why(kc: Kubectl, member: Member, name: str) -> tuple[int, Answer | str]:
    command = [sys.executable, "-m", "gke_ai_batch.why", f"--kubeconfig={kc.kubeconfig}", f"--kubectl={kc.kubectl}",
               *member.flags(), "--json", "why", f"{NS}/{name}"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=60)
    return run.returncode, json.loads(run.stdout) if run.returncode == 0 else run.stderr.strip()


def _reasons(a: Answer) -> list[str]:
    return [r for m in a["misfits"] for rs in m["by_flavor"].values() for r in rs]


def _wait(kc: Kubectl, member: Member, name: str, holds: Callable[[Answer], bool], seconds: float = 40) -> Answer:
    """The answer once it holds (Kueue acts within seconds of a change), or the last one."""
    deadline, last = time.monotonic() + seconds, {}
    while time.monotonic() < deadline:
        code, answer = why(kc, member, name)
        if code == 0 and isinstance(answer, dict):
            last = answer
            if holds(answer):
                break
        time.sleep(2)
    return last


# Each case: its name, the job asked about, the facts that must hold (a name for each); SETUP: what is created first,
# as which team's member.
Fact = tuple[str, Callable[[Answer], bool]]
CASES: list[tuple[str, str, list[Fact]]] = [
    ("admitted", "why-big", [
        ("state admitted", lambda a: a["state"] == "admitted"),
        ("queues", lambda a: (a["local_queue"], a["cluster_queue"]) == (QUEUE, CQ)),
        ("holds 8, uses 16 with 8 borrowed", lambda a: (tpu_quota(a)["nominal"], tpu_quota(a)["used"],
                                                        tpu_quota(a)["borrowed"]) == ("8", "16", "8"))]),
    ("pending for quota", "why-quota", [
        ("state pending", lambda a: a["state"] == "pending"),
        ("no quota in v5e-train", lambda a: a["misfits"][0]["by_flavor"]["v5e-train"] == [
            "insufficient unused quota for google.com/tpu in flavor v5e-train, 16 more needed"]),
        ("position unknown without the visibility API", lambda a: a["position"] is None
         and a["position_unknown"].startswith("the visibility API did not answer")),
        ("nothing free", lambda a: tpu_quota(a)["free_now"] == "0")]),
    ("preempted", "why-big", [
        ("evicted, by preemption", lambda a: a["state"] == "evicted" and a["evicted"].startswith("Preempted: ")),
        ("reclaimed by training", lambda a: a["preempted"].startswith("InCohortReclamation: ")
         and "preemptor path: /ml/training" in a["preempted"]),
        ("8 free, its own", lambda a: (tpu_quota(a)["used"], tpu_quota(a)["free_now"], tpu_quota(a)["to_borrow"])
         == ("0", "8", "0"))]),
    ("pending behind another", "why-quota", [
        ("behind why-big", lambda a: any(x.startswith("job-why-big-") for x in a["ahead"]))]),
    ("DWS check never provisions", "why-dws", [
        ("state waiting for checks", lambda a: a["state"] == "waiting for checks"),
        ("check pending", lambda a: [(c["name"], c["state"]) for c in a["checks"]] == [("dws-prov-tpu-4x4",
                                                                                         "Pending")]),
        ("its ProvisioningRequest, no conditions", lambda a: [p["conditions"] for p in a["provisioning"]] == [[]]),
        ("no estimate", lambda a: a["estimate"].startswith("no estimate: waiting on admission check"))]),
    ("node selector matches no flavor", "why-no-flavor", [
        ("state pending", lambda a: a["state"] == "pending"),
        ("no TPU flavor matches", lambda a: a["misfits"][0]["by_flavor"]["v5e-train"] == [
            "flavor v5e-train doesn't match node affinity"]),
        ("no estimate", lambda a: a["estimate"].startswith("no estimate: as written, the job fits no flavor"))]),
]
SETUP: dict[str, list[tuple[str, Obj]]] = {
    "admitted": [(TEAM, job("why-big", "low-priority", 4, V5E))],
    "pending for quota": [(TEAM, job("why-quota", "low-priority", 4, V5E))],
    "preempted": [(LENDER, job("why-reclaim", "low-priority", 2, V5E, "training", "training-queue"))],
    "pending behind another": [],
    "DWS check never provisions": [(TEAM, job("why-dws", "low-priority", 4, V6E_QUEUED))],
    "node selector matches no flavor": [(TEAM, job("why-no-flavor", "low-priority", 1, NO_POOL))],
}


def run(kc: Kubectl, members: dict[str, Member]) -> tuple[int, list[str]]:
    """(cases played, a line per case whose facts do not hold), asked as a research member."""
    bad, member = [], members[TEAM]
    for case, name, facts in CASES:
        for team, obj in SETUP[case]:
            made = kc.create(obj, members[team])
            if not made.ok:
                bad.append(f"why {case}: {obj['metadata']['name']} was refused: {made.err}")
        answer = _wait(kc, member, name, _all(facts))
        failed = [label for label, f in facts if not _holds(f, answer)]
        if failed:
            bad.append(f"why {case}: {NS}/{name} does not show {', '.join(failed)}: {json.dumps(answer)[:600]}")
    for _, obj in (o for objs in SETUP.values() for o in objs):
        kc.delete(obj)
    return len(CASES), bad


def _all(facts: list[Fact]) -> Callable[[Answer], bool]:
    return lambda a: all(_holds(f, a) for _, f in facts)


def _holds(fact: Callable[[Answer], bool], answer: Answer) -> bool:
    try:
        return bool(answer) and fact(answer)
    except (KeyError, IndexError, TypeError):  # a part Kueue has not written yet
        return False
