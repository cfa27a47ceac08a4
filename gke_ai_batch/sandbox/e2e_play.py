"""One case of the corpus played on the sandbox as a team member, and the real answer in the shared terms
(e2e_verdicts): the API server's, then, for a workload it accepted, what Kueue and the controllers make of it.

An update first creates the old object as the administrator, with the status and the unsuspension the test's old
object has (what Kueue and the controllers would have done), then sends the member's change as an update (PUT, RBAC's
`update`) of the live object. `kubectl scale` goes through /scale. What the member's request leaves is deleted after
each case with what it owns, so that one case's quota use does not judge the next.

What becomes of an accepted workload is watched for BOUND seconds: its Workload's QuotaReserved condition (Kueue's
admission, before any admission check: the sandbox has no ProvisioningRequest controller), and the pods its
controller creates, refused with a FailedCreate event (the Job, ReplicaSet and StatefulSet controllers' words) by
Pod Security, LimitRanger, ResourceQuota or a policy, as `make admit` judges them at the object's create.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from .e2e_claims import is_bound_claim, with_volume
from .e2e_corpus import Case
from .e2e_kubectl import Answer, Kubectl, Member, Obj
from .e2e_patch import apply_patch, merge_patch
from .e2e_verdicts import ACCEPTED, PENDING, Verdict, layer_of, pods_refused, refused, reserved

BOUND = 30.0  # seconds to wait for Kueue's decision and the pods
SETTLE = 6.0  # seconds a QuotaReserved=False must hold before it is read as pending
WATCHED = "pods,jobs.batch,replicasets.apps,jobsets.jobset.x-k8s.io,workloads.kueue.x-k8s.io,events"
# JobSet's pod webhook refuses an exclusive-placement follower pod until its leader pod is scheduled, and the Job
# controller retries it: "an expected, transient error" (jobset v0.12.0 pkg/webhooks/pod_webhook.go ValidateCreate).
FOLLOWER_WAITS = ("follower pod node selector", "leader pod not yet scheduled")


@dataclass(frozen=True)
class Played:
    """The real verdict, or why the case could not be set up (`setup`), and the API server's words."""

    verdict: Verdict | None
    words: str = ""
    setup: str = ""
    made: Obj | None = None  # the object as the cluster holds it after an accepted request (a generated name)


def _uid(obj: Obj | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("uid") or "")


def _bare(obj: Obj) -> Obj:
    """The object as a create takes it: no status, no server-set metadata."""
    meta = {k: v for k, v in (obj.get("metadata") or {}).items()
            if k not in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")}
    return {k: v for k, v in {**obj, "metadata": meta}.items() if k != "status"}


def _set_up_old(kc: Kubectl, old: Obj) -> tuple[Obj | None, str]:
    """The old object as the test has it on the cluster: created, started if it runs, its status set."""
    if is_bound_claim(old):
        bound, why = with_volume(kc, old)
        if bound is None:
            return None, why
        old = bound
    made = kc.create(_bare(old))
    if not made.ok:
        return None, f"the old object cannot be created by the administrator: {made.err}"
    if (old.get("spec") or {}).get("suspend") is False and not _started_by_kueue(kc, old):
        unsuspend = json.dumps({"spec": {"suspend": False}})
        running = kc.run(["patch", "-f", "-", "--type=merge", "-p", unsuspend], _bare(old))
        if not running.ok:
            return None, f"the old object cannot be unsuspended by the administrator: {running.err}"
    held = (kc.get(old) or {}).get("status") or {}
    status = {k: v for k, v in (old.get("status") or {}).items() if k not in held}  # what its controller has not set
    if status:
        patched = kc.run(["patch", "-f", "-", "--subresource=status", "--type=merge", "-p",
                          json.dumps({"status": status})], _bare(old))
        if not patched.ok:
            return None, f"the old object's status cannot be set: {patched.err}"
    live = kc.get(old)
    return (live, "") if live else (None, "the old object is gone after its create")


def _started_by_kueue(kc: Kubectl, old: Obj) -> bool:
    """A running old job is Kueue's to start: its webhook suspends it at the create, and it unsuspends it when it
    admits its workload. Waited for BOUND seconds; a job Kueue does not start is unsuspended by the administrator."""
    start = time.monotonic()
    while time.monotonic() - start < BOUND:
        if ((kc.get(old) or {}).get("spec") or {}).get("suspend") is False:
            return True
        time.sleep(1)
    return False


def send(kc: Kubectl, case: Case, member: Member) -> Played | Obj | None:
    """The member's request: the live object it leaves on success, else the real refusal (or a setup failure)."""
    if case.old is None:
        answer = kc.create(case.obj, member)
    else:
        live, why = _set_up_old(kc, case.old)
        if live is None:
            return Played(None, setup=why)
        if case.scale:
            replicas = (case.obj.get("spec") or {}).get("replicas", 1)
            answer = kc.run(["scale", "-f", "-", f"--replicas={replicas}", "-o", "json"], _bare(case.old), member)
        else:
            updated = _update(kc, case, live, member)
            if isinstance(updated, str):
                return Played(None, setup=updated)
            answer = updated
    if not answer.ok:
        return Played(Verdict(refused(layer_of(answer.err))), answer.err)
    return kc.get(case.obj) if case.old is not None else answer.json()


def _update(kc: Kubectl, case: Case, live: Obj, member: Member) -> Answer | str:
    """The member's change onto the live object, sent again on a conflict (a controller wrote in between); why not,
    if the cluster moved the old object on where the change lands or in whether it runs (Kueue admitted it and took
    its gates off, unsuspended it): the test's update is then not the one the member would send."""
    patch = merge_patch(case.old, case.obj)
    for _ in range(5):
        held = [*leaves(patch), *(["spec.suspend"] if at(case.old, "spec.suspend") is not None else [])]
        moved = [p for p in held if not within(at(case.old, p), at(live, p))]
        if moved:
            return f"the cluster changed the old object's {', '.join(moved)} before the member's update"
        answer = kc.replace(apply_patch(live, patch), member)
        if answer.ok or "(Conflict)" not in answer.err:
            return answer
        live = kc.get(case.obj) or live
    return answer


def leaves(patch: Any, path: str = "") -> list[str]:
    """The dotted paths a merge patch sets or removes."""
    if not isinstance(patch, dict):
        return [path]
    return [leaf for k, v in patch.items() for leaf in leaves(v, f"{path}.{k}" if path else k)]


def within(given: Any, held: Any) -> bool:
    """The test's value as the cluster holds it, give or take the fields the API server defaults (a container's
    imagePullPolicy, terminationMessagePath): every key given has its value there, lists item by item."""
    if isinstance(given, dict) and isinstance(held, dict):
        return all(within(v, held.get(k)) for k, v in given.items())
    if isinstance(given, list) and isinstance(held, list):
        return len(given) == len(held) and all(within(a, b) for a, b in zip(given, held, strict=True))
    return bool(given == held)


NOTHING = "no Workload and no pod within the bound"
# A Workload Kueue does not reserve quota for, whose reason it cannot write: Kueue 0.19.2's scheduler gives a
# resource its ClusterQueue does not cover ("resource nvidia.com/gpu unavailable in ClusterQueue") an empty
# condition reason, which the Workload CRD refuses (`conditions[0].reason in body should be at least 1 chars
# long`, in the manager's log), so the Workload stays without a QuotaReserved condition until the bound.
UNWRITTEN = "a Workload with no QuotaReserved condition within the bound (Kueue could not write its reason)"


def at(obj: Any, path: str) -> Any:
    for key in path.split("."):
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def play(kc: Kubectl, case: Case, member: Member, watch: bool) -> Played:
    """The real verdict; with `watch`, what becomes of an accepted workload too."""
    sent = send(kc, case, member)
    if isinstance(sent, Played):
        return sent
    if not watch or sent is None:
        return Played(Verdict(ACCEPTED), made=sent)
    then, words = outcome(kc, sent)
    if then == NOTHING and kc.get(sent) is None and (sent.get("metadata") or {}).get("ownerReferences"):
        return Played(None, setup="the garbage collector deleted it: its owner is not on the cluster")
    return Played(Verdict(ACCEPTED, then), words, made=sent)


def outcome(kc: Kubectl, obj: Obj) -> tuple[str, str]:
    """What Kueue and the controllers make of an accepted workload within BOUND seconds, with the words."""
    ns, root = obj["metadata"].get("namespace", ""), _uid(obj)
    start, pending_since = time.monotonic(), None
    state = (NOTHING, "")
    while time.monotonic() - start < BOUND:
        items = kc.items(ns, WATCHED)
        mine = descendants(items, root)
        failed = [e for e in items if e.get("kind") == "Event" and e.get("reason") == "FailedCreate"
                  and (e.get("involvedObject") or {}).get("uid") in mine and not _follower_waits(e)]
        if failed:
            return pods_refused(layer_of(failed[-1].get("message", ""))), failed[-1].get("message", "")
        workloads = [i for i in items if i.get("kind") == "Workload" and _uid(i) in mine]
        pods = [i for i in items if i.get("kind") == "Pod" and _uid(i) in mine]
        conditions = [_condition(w, "QuotaReserved") for w in workloads]
        if workloads and all(c.get("status") == "True" for c in conditions):
            cq = ((workloads[0].get("status") or {}).get("admission") or {}).get("clusterQueue", "")
            state = (reserved(cq), "")
            if pods or obj.get("kind") == "Pod":
                return state
        elif any(c.get("status") == "False" for c in conditions):
            pending_since = pending_since or time.monotonic()
            state = (PENDING, "; ".join(str(c.get("message", "")) for c in conditions if c.get("status") == "False"))
            if time.monotonic() - pending_since >= SETTLE:
                return state
        elif workloads:
            state = (PENDING, UNWRITTEN)
        time.sleep(1)
    return state


def _follower_waits(event: Obj) -> bool:
    message = event.get("message", "")
    return "x-k8s.io" in message and any(words in message for words in FOLLOWER_WAITS)


def _condition(obj: Obj, kind: str) -> Obj:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind), {})


def descendants(items: list[Obj], root: str) -> set[str]:
    """The uids owned, at any depth, by the object `root` (itself included): its Jobs, ReplicaSets, pods, Workloads."""
    owners = {_uid(i): {r.get("uid") for r in (i.get("metadata") or {}).get("ownerReferences") or []} for i in items}
    found, grew = {root}, True
    while grew:
        more = {uid for uid, of in owners.items() if of & found} - found
        found |= more
        grew = bool(more)
    return found
