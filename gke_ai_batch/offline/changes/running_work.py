"""Changes that Kueue's own controllers turn against work already on the cluster, for `make diff`: the update
itself is harmless to the API server, but what Kueue then does loses jobs. Read at kubernetes-sigs/kueue v0.19.2:

- Retention shortened or turned on (`objectRetentionPolicies.workloads.afterDeactivatedByKueue`). Kueue reads
  its configuration at startup (offline.changes.kueue_restart), and its job reconciler then meets every Job and JobSet
  again: `handleWorkloadAfterDeactivatedPolicy` (pkg/controller/jobframework/reconciler.go) deletes, with
  background propagation, each job whose Workload Kueue deactivated (Evicted, reason prefix `Deactivated`:
  pkg/workload/evict `IsEvictedDueToDeactivationByKueue`) longer ago than the retention. So a shorter value
  deletes at once every such job older than it. `afterFinished` deletes only the finished Workload
  (pkg/controller/core/workload_controller.go); its Job stays, so a shorter one is a note, not a refusal.
- A ClusterQueue gains an admission check on a flavor it already had (a check renamed, replaced or added).
  The workload reconciler gives every Workload of the queue the checks that apply to its admitted flavors
  (`reconcileSyncAdmissionChecks` -> pkg/workload `AdmissionChecksForWorkload`), a new one as Pending
  (`syncAdmissionCheckConditions`); `SyncAdmittedCondition` (pkg/workload/admissionchecks.go) then sets
  Admitted to False, and the job reconciler suspends a running job whose Workload is not admitted ("Running
  job is not admitted by a cluster queue, suspending"). A provisioning check's controller files a new
  ProvisioningRequest named after the workload and the new check (pkg/controller/admissionchecks/provisioning
  `ProvisioningRequestName`); a failed one turns the check to Retry, which evicts the workload, or to
  Rejected once the retries are spent, which deactivates it (`syncCheckStates`; workload_controller.go).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from gke_ai_batch.vocabulary import HELM_RELEASE, PROVISIONING_CONTROLLER, kueue_type

from .inputs import ABSENT, embedded, object_name

Resource = dict[str, Any]
CONFIGURATION = ("values", "managerConfig", "controllerManagerConfigYaml")
RETENTION = "objectRetentionPolicies.workloads"
DEACTIVATED = f"{RETENTION}.afterDeactivatedByKueue"
FINISHED = f"{RETENTION}.afterFinished"
RETENTION_KEY = "after_deactivated_by_kueue"  # acknowledge: [{retention: after_deactivated_by_kueue}]
CLUSTER_QUEUE = kueue_type("ClusterQueue")
ADMISSION_CHECK = kueue_type("AdmissionCheck")
SOURCE = "kueue v0.19.2"
_GO_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
FINISHED_NOTE = (f"Kueue deletes every finished Workload older than this once its controller restarts "
                 f"({SOURCE} workload_controller.go); their Jobs and JobSets stay")
DEACTIVATED_NOTE = ("Kueue deletes every Job and JobSet it deactivated longer ago than this once its controller "
                    "restarts: refused below without a decision")


def seconds(value: Any) -> float | None:
    """A Go duration's seconds (`1h30m` -> 5400), or None where it is unset (no retention)."""
    if value is None or value is ABSENT:
        return None
    parts = _GO_DURATION.findall(str(value))
    return sum(float(n) * _SECONDS[unit] for n, unit in parts) if parts else None


def _configuration(r: Resource | None) -> dict[str, Any] | None:
    value: Any = (r or {}).get("inputs") or {}
    for key in CONFIGURATION:
        value = value.get(key) if isinstance(value, dict) else None
    return embedded(value)


def _at(doc: dict[str, Any], path: str) -> Any:
    value: Any = doc
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _shorter(was: Any, now: Any) -> bool:
    """Whether a retention now deletes what it kept before: turned on, or made shorter."""
    a, b = seconds(was), seconds(now)
    return b is not None and (a is None or b < a)


def retention_notes(type_: str, paths: list[str], old: dict[str, Any], new: dict[str, Any]) -> dict[str, str]:
    """The note on each retention of Kueue's release that now deletes what it kept before."""
    if type_ != HELM_RELEASE:
        return {}
    docs = _configuration({"inputs": old}), _configuration({"inputs": new})
    if docs[0] is None or docs[1] is None:
        return {}
    notes = {".".join([*CONFIGURATION, field]): note for field, note in ((FINISHED, FINISHED_NOTE),
                                                                         (DEACTIVATED, DEACTIVATED_NOTE))
             if _shorter(_at(docs[0], field), _at(docs[1], field))}
    return {path: note for path, note in notes.items() if path in paths}


def refused(steps: Iterable[tuple[str, Resource]], old: list[Resource], new: list[Resource],
            acknowledged: tuple[tuple[str, str], ...]) -> list[str]:
    """One line per change Kueue turns against existing work that the stack file does not decide on (a queue
    held at BASE, `stopPolicy` set by draining its team, is left to the change that held it)."""
    before = {r["urn"]: r for r in old}
    provisioning = {object_name(r) for r in new
                    if r["type"] == ADMISSION_CHECK and _controller(r) == PROVISIONING_CONTROLLER}
    out: list[str] = []
    for op, r in steps:
        was = before.get(r["urn"])
        if op != "update" or was is None:
            continue
        if r["type"] == HELM_RELEASE and ("retention", RETENTION_KEY) not in acknowledged:
            out += _retention(was, r)
        if r["type"] == CLUSTER_QUEUE and not _spec(was).get("stopPolicy"):
            out += [_check_line(object_name(r), check, flavors, had, check in provisioning)
                    for check, flavors, had in _new_checks(was, r) if ("admission_check", check) not in acknowledged]
    return out


def _retention(was: Resource, now: Resource) -> list[str]:
    docs = _configuration(was), _configuration(now)
    if docs[0] is None or docs[1] is None:
        return []
    a, b = _at(docs[0], DEACTIVATED), _at(docs[1], DEACTIVATED)
    if not _shorter(a, b):
        return []
    return [f"kueue.retention.after_deactivated_by_kueue: {a or '(unset: kept forever)'} -> {b}: once Kueue's "
            f"controller restarts with it, Kueue deletes every Job and JobSet it deactivated more than {b} ago, with "
            f"their pods and Workloads ({SOURCE} pkg/controller/jobframework/reconciler.go "
            "handleWorkloadAfterDeactivatedPolicy); the safe way is two steps: list the Workloads whose Evicted "
            f"condition's reason starts with Deactivated and is older than {b}, have their owners reactivate them "
            "(spec.active: true) or keep what they need, then land the shorter value; or add "
            f"`acknowledge: [{{retention: {RETENTION_KEY}, reason: ...}}]` to the stack file, with why"]


def _flavor_checks(spec: dict[str, Any]) -> dict[str, set[str]]:
    """Each flavor of a ClusterQueue and the checks that apply to it: a check with no onFlavors applies to every
    flavor of the queue (pkg/util/admissioncheck `NewAdmissionChecks`, which reads admissionChecksStrategy only)."""
    flavors = {str(f.get("name")) for g in spec.get("resourceGroups") or [] for f in g.get("flavors") or []}
    out: dict[str, set[str]] = {f: set() for f in flavors}
    for c in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []:
        for f in c.get("onFlavors") or flavors:
            out.setdefault(str(f), set()).add(str(c.get("name")))
    return out


def _new_checks(was: Resource, now: Resource) -> list[tuple[str, list[str], list[str]]]:
    """(check, flavors, checks they had) for each check the queue now applies to flavors it had at BASE, where
    it did not."""
    before, after = _flavor_checks(_spec(was)), _flavor_checks(_spec(now))
    gained: dict[str, list[str]] = {}
    for flavor, checks in sorted(after.items()):
        for check in sorted(checks - before.get(flavor, checks)):
            gained.setdefault(check, []).append(flavor)
    return [(check, flavors, sorted({c for f in flavors for c in before[f] - after[f]}))
            for check, flavors in gained.items()]


def _check_line(queue: str, check: str, flavors: list[str], had: list[str], provisioning: bool) -> str:
    on = ", ".join(flavors)
    instead = f" in place of {', '.join(had)}" if had else ""
    then = ("Kueue's provisioning controller files a new ProvisioningRequest for each (named after the workload and "
            f"{check}: pkg/controller/admissionchecks/provisioning), and resumes the job only once it is provisioned: "
            "a failed request evicts the workload, and once its retries are spent deactivates it"
            if provisioning else f"the job resumes only once {check}'s controller sets it Ready")
    return (f"ClusterQueue {queue} gains admission check {check}{instead} on flavors {on}: Kueue gives every "
            "workload admitted there the new check as Pending, so it is no longer Admitted and Kueue suspends its "
            f"running job, stopping its pods ({SOURCE} workload_controller.go syncAdmissionCheckConditions, "
            f"pkg/workload SyncAdmittedCondition, pkg/controller/jobframework/reconciler.go); {then}; the safe way "
            f"is two steps: hold the team's queue (`state: draining` with `stop_policy: Hold`) and let the "
            f"workloads admitted on {on} end, then land the check with the team active again; or add "
            f"`acknowledge: [{{admission_check: {check}, reason: ...}}]` to the stack file, with why")


def _spec(r: Resource) -> dict[str, Any]:
    return ((r.get("inputs") or {}).get("spec")) or {}


def _controller(r: Resource) -> str | None:
    spec = (r.get("inputs") or {}).get("spec") or {}
    return str(spec.get("controllerName")) if spec.get("controllerName") else None
