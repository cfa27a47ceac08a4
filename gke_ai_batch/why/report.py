"""The answer joined up from the live cluster (the Workload, its LocalQueue, its place in the visibility API, its
ProvisioningRequests, the team's recent Workloads) and said in lines or as JSON."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from .estimate import estimate, span, when
from .facts import Obj, conditions, explain, state_of
from .find import local_queue, positions, provisioning_requests
from .kube import Kube
from .quota import asked, cohort_of, quota_lines, quota_tree, rows


def queue_flavors(lq: Obj | None) -> dict[str, list[str]]:
    """The flavors the LocalQueue's ClusterQueue offers and the resources each covers, as Kueue reports them in
    the LocalQueue's status.flavorsReservation (read where the ClusterQueues may not be)."""
    return {f.get("name", ""): [r.get("name", "") for r in f.get("resources") or []]
            for f in ((lq or {}).get("status") or {}).get("flavorsReservation") or []}


@dataclass
class Session:
    """One command's reads: a LocalQueue and its positions are asked for once however many Workloads name it."""

    kube: Kube
    queues: dict[tuple[str, str], Obj | None] = field(default_factory=dict)
    places: dict[tuple[str, str], tuple[dict[str, tuple[int, int]], str]] = field(default_factory=dict)
    tree: tuple[list[Obj], list[Obj], str] | None = None

    def local_queue(self, ns: str, name: str) -> Obj | None:
        if (ns, name) not in self.queues:
            self.queues[ns, name] = local_queue(self.kube, ns, name)
        return self.queues[ns, name]

    def positions(self, ns: str, name: str) -> tuple[dict[str, tuple[int, int]], str]:
        if (ns, name) not in self.places:
            self.places[ns, name] = positions(self.kube, ns, name)
        return self.places[ns, name]

    def quota_tree(self) -> tuple[list[Obj], list[Obj], str]:
        if self.tree is None:
            self.tree = quota_tree(self.kube)
        return self.tree


def clock() -> datetime:
    return datetime.now(UTC)


def gather(session: Session, wl: Obj, all_workloads: list[Obj]) -> dict[str, Any]:
    ns, lq_name = wl["metadata"]["namespace"], (wl.get("spec") or {}).get("queueName", "")
    lq = session.local_queue(ns, lq_name) if lq_name else None
    answer = explain(wl, ((lq or {}).get("spec") or {}).get("clusterQueue", ""))
    if lq_name and lq is None:
        answer.notes.append(f"LocalQueue {ns}/{lq_name} does not exist: Kueue holds the job until it does")
    out: dict[str, Any] = asdict(answer)
    out["flavors"] = queue_flavors(lq) if "Kueue has not written a reason" in answer.notes else {}
    out["position"], out["position_unknown"] = None, ""
    if answer.state == "pending" and lq is not None:
        places, why = session.positions(ns, lq_name)
        if why:
            out["position_unknown"] = why
        elif answer.workload in places:
            out["position"] = {"local_queue": places[answer.workload][0], "cluster_queue": places[answer.workload][1]}
        else:
            out["position_unknown"] = "the visibility API does not list it (Kueue has not queued it)"
    out["provisioning"], out["provisioning_unknown"] = [], ""
    if any(c.state != "Ready" for c in answer.checks):
        prs, why = provisioning_requests(session.kube, wl)
        out["provisioning_unknown"] = why
        out["provisioning"] = [{"name": p["metadata"]["name"],
                                "conditions": [f"{c.get('type')}={c.get('status')} {c.get('reason', '')}".strip()
                                               for c in (p.get("status") or {}).get("conditions") or []]}
                               for p in prs]
    out["quota"], out["quota_unknown"], out["cohort"] = [], "", ""
    if answer.state != "finished" and answer.cluster_queue:
        reasons = [r for m in answer.misfits for rs in m.by_flavor.values() for r in rs]
        out["quota"], out["quota_unknown"], out["cohort"] = quota(session, answer.cluster_queue, asked(wl, reasons))
    out["ahead"] = ahead(wl, all_workloads) if _waiting(wl) else []
    out["estimate"] = estimate(answer, all_workloads, clock())
    return out


def quota(session: Session, cluster_queue: str, wanted: set[tuple[str, str]]) -> tuple[list[Any], str, str]:
    """(rows, why unknown, cohort) of what the ClusterQueue holds, uses and could take now of the (flavor, resource)
    pairs `wanted`; nothing is read when none is."""
    if not wanted:
        return [], "", ""
    cluster_queues, cohorts, why = session.quota_tree()
    if why:
        return [], why, ""
    if not any(cq["metadata"]["name"] == cluster_queue for cq in cluster_queues):
        return [], f"ClusterQueue {cluster_queue} does not exist", ""
    return rows(cluster_queue, cluster_queues, cohorts, wanted), "", cohort_of(cluster_queue, cluster_queues)


def ahead(wl: Obj, all_workloads: list[Obj]) -> list[str]:
    """The namespace's pending Workloads of the same LocalQueue that Kueue tries first: a higher priority, or the
    same priority and older (Kueue v0.19.2 orders a ClusterQueue's heap by priority, then by the queue-order
    timestamp: pkg/cache/queue/cluster_queue.go baseCompareFunc; that is the creation time but for an eviction by
    an admission check or a PodsReady timeout, or a reclaim while borrowing: pkg/workload/workload.go
    GetQueueOrderTimestamp, which this does not follow). Other namespaces' are not readable by a member; the
    visibility API's position counts them."""
    prio, born = _prio(wl), (wl.get("metadata") or {}).get("creationTimestamp", "")
    queue = (wl.get("spec") or {}).get("queueName")
    return [f"{o['metadata']['name']} (priority {_prio(o)})" for o in all_workloads
            if o is not wl and (o.get("spec") or {}).get("queueName") == queue and _waiting(o)
            and (_prio(o) > prio or (_prio(o) == prio and o["metadata"].get("creationTimestamp", "") < born))]


def _waiting(wl: Obj) -> bool:
    """Pending, or evicted and back in the queue (its quota released)."""
    held = (conditions(wl).get("QuotaReserved") or {}).get("status") == "True"
    return state_of(wl) in ("pending", "evicted") and not held


def _prio(wl: Obj) -> int:
    return int((wl.get("spec") or {}).get("priority") or 0)


def _ordinal_place(place: dict[str, int]) -> str:
    return (f"{place['local_queue'] + 1} in the LocalQueue and {place['cluster_queue'] + 1} in the ClusterQueue "
            "(1 is next)")


def lines(r: dict[str, Any]) -> list[str]:
    out = [f"{r['namespace']}/{r['workload']}: {r['state']}",
           f"  queue: LocalQueue {r['local_queue'] or '(none)'} -> ClusterQueue {r['cluster_queue'] or '(unknown)'}"
           + (f", priority {r['priority']}" if r["priority"] is not None else "")]
    out += [f"  note: {n}" for n in r["notes"]]
    if r["flavors"] or "Kueue has not written a reason" in r["notes"]:
        for ps, req in r["requests"].items():
            out.append(f"  requests of pod set {ps}: " + ", ".join(f"{k}={v}" for k, v in req.items()))
        covered = "; ".join(f"{f}: {', '.join(res)}" for f, res in r["flavors"].items()) or "none reported"
        out.append(f"  the LocalQueue's flavors cover: {covered}")
    if r["reason"]:
        out.append(f"  Kueue's reason: {r['reason']}")
    for m in r["misfits"]:
        for flavor, reasons in m["by_flavor"].items():
            out.append(f"  pod set {m['pod_set']}, " + (f"flavor {flavor}: " if flavor else "") + "; ".join(reasons))
    if r["reason"] and not r["misfits"] and r["message"]:
        out.append(f"  Kueue says: {r['message']}")
    if r["waiting_for_preemption"]:
        out.append(f"  preemption: {r['waiting_for_preemption']}")
    out += quota_lines(r["cluster_queue"], r["cohort"], r["quota"])
    if r["quota_unknown"]:
        out.append(f"  quota unknown: {r['quota_unknown']}")
    for c in r["checks"]:
        out.append(f"  admission check {c['name']}: {c['state']}" + (f" ({c['message']})" if c["message"] else ""))
    for p in r["provisioning"]:
        out.append(f"  ProvisioningRequest {p['name']}: {', '.join(p['conditions']) or 'no conditions yet'}")
    if r["provisioning_unknown"]:
        out.append(f"  ProvisioningRequest unknown: {r['provisioning_unknown']}")
    for label, key in (("evicted", "evicted"), ("preempted", "preempted"), ("requeued", "requeue"),
                       ("pods not ready", "pods_ready")):
        if r[key]:
            out.append(f"  {label}: {r[key]}")
    if r["ahead"]:
        out.append(f"  ahead of it in the LocalQueue, of this namespace: {', '.join(r['ahead'])}")
    if r["position"]:
        out.append(f"  position: {_ordinal_place(r['position'])}")
    elif r["position_unknown"]:
        out.append(f"  position unknown: {r['position_unknown']}")
    if r["estimate"]:
        out.append(f"  estimate: {r['estimate']}")
    return out


_NOT_A_REASON = ("queue:", "estimate:", "position", "Kueue's reason:", "ahead of it", "quota")


def one_line(r: dict[str, Any]) -> str:
    """`queue`'s row: name, state, place, age and the first reason."""
    now = clock()
    born = when(r["created"])
    place = str(r["position"]["local_queue"] + 1) if r["position"] else "-"
    said = [ln.strip() for ln in lines(r)[2:] if not ln.strip().startswith(_NOT_A_REASON)]
    first = next((ln for ln in said if "doesn't match node affinity" not in ln), said[0] if said else "")
    return (f"{r['workload']:<48} {r['state']:<18} {place:>3} {span(now - born) if born else '-':>7} "
            f"{r['local_queue']:<16} {first}").rstrip()
