"""A Workload's JSON in plain words: its state and why, as Kueue v0.19.2 writes them
(apis/kueue/v1beta2/workload_types.go: the QuotaReserved, Admitted, Finished, Evicted, Preempted, PodsReady and
Requeued conditions; status.admissionChecks with the states Pending, Ready, Retry, Rejected of
admissioncheck_types.go). Pure: what kubectl read goes in, an Answer comes out, so each state is tested on recorded
JSON without a cluster."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]

# Kueue's scheduler writes a pod set's misfit as "couldn't assign flavors to pod set <name>: <reasons>", pod sets
# joined by "; ", each pod set's reasons sorted and joined by ", " (pkg/scheduler/flavorassigner/flavorassigner.go,
# Assignment.Message and Status.Message). A reason itself may hold ", " ("..., 5 more needed"), so reasons are split
# where the next one starts with one of the phrases Kueue writes there (same file, Status.appendf calls).
_POD_SET = re.compile(r"couldn't assign flavors to pod set ([^:]+): ")
_REASON_START = re.compile(
    r", (?=insufficient |untolerated taint |flavor \S+ (?:doesn't match|not found|does not provide)|skipping flavor "
    r"|resource \S+ unavailable|could not assign |Flavor \")")
_PREEMPTION = re.compile(r"\. (Pending the preemption of \d+ workload\(s\))$")
_FLAVOR = re.compile(r"(?:in flavor|^flavor|skipping flavor|^Flavor) \"?([A-Za-z0-9._-]+)\"?")


@dataclass(frozen=True)
class PodSetMisfit:
    """One pod set Kueue could not place: its reasons grouped by the flavor each names ("" when none is named)."""

    pod_set: str
    by_flavor: dict[str, list[str]]


@dataclass(frozen=True)
class Check:
    name: str
    state: str
    message: str


@dataclass
class Answer:
    namespace: str
    workload: str
    state: str
    local_queue: str
    cluster_queue: str
    priority: int | None
    created: str
    reason: str = ""
    message: str = ""
    misfits: list[PodSetMisfit] = field(default_factory=list)
    waiting_for_preemption: str = ""
    checks: list[Check] = field(default_factory=list)
    evicted: str = ""
    preempted: str = ""
    pods_ready: str = ""
    requeue: str = ""
    requests: dict[str, dict[str, str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def conditions(wl: Obj) -> dict[str, Obj]:
    return {c.get("type", ""): c for c in (wl.get("status") or {}).get("conditions") or []}


def _true(conds: dict[str, Obj], kind: str) -> bool:
    return (conds.get(kind) or {}).get("status") == "True"


def state_of(wl: Obj) -> str:
    """finished, evicted, admitted, waiting for checks, quota reserved or pending, the first that holds: a
    Workload keeps QuotaReserved while its checks run, and Admitted only when they all are Ready (the Admitted
    condition's comment in workload_types.go)."""
    conds = conditions(wl)
    checks = (wl.get("status") or {}).get("admissionChecks") or []
    if _true(conds, "Finished"):
        return "finished"
    if _true(conds, "Evicted"):
        return "evicted"
    if _true(conds, "Admitted"):
        return "admitted"
    if _true(conds, "QuotaReserved"):
        return "waiting for checks" if any(c.get("state") != "Ready" for c in checks) else "quota reserved"
    return "pending"


def split_message(message: str) -> tuple[list[PodSetMisfit], str]:
    """Kueue's QuotaReserved message split per pod set and per flavor tried, and the preemption it waits for."""
    preemption = ""
    if m := _PREEMPTION.search(message):
        preemption, message = m.group(1), message[: m.start()]
    heads = list(_POD_SET.finditer(message))
    misfits = []
    for i, head in enumerate(heads):
        body = message[head.end(): heads[i + 1].start() if i + 1 < len(heads) else len(message)].removesuffix("; ")
        by_flavor: dict[str, list[str]] = {}
        for reason in _REASON_START.split(body):
            flavor = _FLAVOR.search(reason)
            by_flavor.setdefault(flavor.group(1) if flavor else "", []).append(reason)
        misfits.append(PodSetMisfit(head.group(1), by_flavor))
    return misfits, preemption


def _said(cond: Obj | None) -> str:
    if not cond or cond.get("status") != "True":
        return ""
    return f"{cond.get('reason', '')}: {cond.get('message', '')}".strip(": ")


def requests_of(wl: Obj) -> dict[str, dict[str, str]]:
    """Each pod set's count and the requests of one pod (its containers' requests, or limits where a request is
    not given, as the API server defaults it), as the spec states them: Kueue's own status.resourceRequests is
    written only with the quota it reserves."""
    out = {}
    for ps in (wl.get("spec") or {}).get("podSets") or []:
        spec = (ps.get("template") or {}).get("spec") or {}
        totals: dict[str, str] = {"pods": str(ps.get("count", 1))}
        for c in spec.get("containers") or []:
            res = c.get("resources") or {}
            for k, v in {**(res.get("limits") or {}), **(res.get("requests") or {})}.items():
                totals[k] = v if k not in totals else f"{totals[k]}+{v}"
        if sel := spec.get("nodeSelector"):
            totals["nodeSelector"] = ",".join(f"{k}={v}" for k, v in sorted(sel.items()))
        out[ps.get("name", "main")] = totals
    return out


def explain(wl: Obj, cluster_queue: str = "") -> Answer:
    """The Workload in plain words; `cluster_queue` is the LocalQueue's, for a Workload not yet admitted. PodsReady
    is said only while quota is held: Kueue marks a Workload not yet admitted "WaitForStart" too."""
    meta, spec, status = wl.get("metadata") or {}, wl.get("spec") or {}, wl.get("status") or {}
    conds = conditions(wl)
    admission = status.get("admission") or {}
    answer = Answer(namespace=meta.get("namespace", ""), workload=meta.get("name", ""), state=state_of(wl),
                    local_queue=spec.get("queueName", ""),
                    cluster_queue=admission.get("clusterQueue") or cluster_queue,
                    priority=spec.get("priority"), created=meta.get("creationTimestamp", ""))
    reserved = conds.get("QuotaReserved")
    if reserved and reserved.get("status") != "True":
        answer.reason, answer.message = reserved.get("reason", ""), reserved.get("message", "")
        answer.misfits, answer.waiting_for_preemption = split_message(answer.message)
    answer.checks = [Check(c.get("name", ""), c.get("state", ""), c.get("message", ""))
                     for c in status.get("admissionChecks") or []]
    answer.evicted, answer.preempted = _said(conds.get("Evicted")), _said(conds.get("Preempted"))
    if (ready := conds.get("PodsReady")) and ready.get("status") != "True" and _true(conds, "QuotaReserved"):
        answer.pods_ready = f"{ready.get('reason', '')}: {ready.get('message', '')}".strip(": ")
    answer.requeue = _said(conds.get("Requeued")) if answer.evicted or answer.preempted else ""
    answer.requests = requests_of(wl)
    if answer.state == "pending" and not reserved and not _true(conds, "Finished"):
        answer.notes.append("Kueue has not written a reason")
    return answer
