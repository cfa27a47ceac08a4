"""How long a pending job may wait, from the team's own recent history: the waits (creation to quota reserved) of
the Workloads of the same LocalQueue that reserved quota in the last WINDOW. Only the namespace's Workloads are
readable with a team member's rights, and a Workload lives only as long as its job, so this is a sample of what is
still there, said with its size; docs/why-pending.md says when it is wrong."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from statistics import median

from .facts import Answer, Obj, conditions

WINDOW = timedelta(hours=24)


def when(stamp: str) -> datetime | None:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None


def span(d: timedelta) -> str:
    s = int(d.total_seconds())
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def recent_waits(workloads: list[Obj], local_queue: str, now: datetime) -> list[timedelta]:
    waits = []
    for wl in workloads:
        reserved = conditions(wl).get("QuotaReserved") or {}
        at, born = when(reserved.get("lastTransitionTime", "")), when(wl["metadata"].get("creationTimestamp", ""))
        if ((wl.get("spec") or {}).get("queueName") == local_queue and reserved.get("status") == "True"
                and at and born and now - at <= WINDOW):
            waits.append(at - born)
    return waits


def never_fits(answer: Answer) -> str:
    """Why waiting alone will not admit the job, or ""."""
    if "Kueue has not written a reason" in answer.notes:
        return ("Kueue has not written a reason yet; if that lasts past its first try, the job asks for a resource "
                "its ClusterQueue does not cover (Kueue 0.19.2 then writes none), and waiting will not change that")
    reasons = [r for m in answer.misfits for rs in m.by_flavor.values() for r in rs]
    if reasons and all("doesn't match node affinity" in r or "unavailable in ClusterQueue" in r
                       or "untolerated taint" in r or "maximum capacity" in r for r in reasons):
        return "as written, the job fits no flavor of its ClusterQueue; waiting will not change that"
    return ""


def estimate(answer: Answer, workloads: list[Obj], now: datetime | None = None) -> str:
    now = now or datetime.now(UTC)
    if answer.state not in ("pending", "evicted", "waiting for checks") or (answer.state == "evicted"
                                                                         and not answer.reason):
        return ""  # admitted, finished, or evicted with its quota still held: nothing to wait for
    if answer.state == "waiting for checks":
        pending = [c.name for c in answer.checks if c.state != "Ready"]
        return (f"no estimate: waiting on admission check {', '.join(pending)}, capacity that comes when the cloud "
                "has it (a ProvisioningRequest may never be provisioned)")
    if why := never_fits(answer):
        return f"no estimate: {why}"
    waits = recent_waits(workloads, answer.local_queue, now)
    if not waits:
        return (f"no estimate: no Workload of LocalQueue {answer.local_queue} reserved quota in the last "
                f"{int(WINDOW.total_seconds() // 3600)} h")
    born = when(answer.created)
    waited = f"; this one has waited {span(now - born)}" if born else ""
    typical = timedelta(seconds=median(w.total_seconds() for w in waits))
    return (f"median wait {span(typical)} (creation to quota reserved) of the {len(waits)} Workload(s) of "
            f"LocalQueue {answer.local_queue} that reserved quota in the last "
            f"{int(WINDOW.total_seconds() // 3600)} h{waited}")
