"""What a DELETE asks for and what follows it once admitted: the DeleteOptions a member sends, how the garbage
collector treats the object's dependents, and what Kueue v0.19.2 does with a deleted job's Workload.

- Options. `kubectl delete` sends `propagationPolicy: Background` unless `--cascade` says orphan or foreground
  (k8s.io/kubectl v0.33.13 pkg/cmd/delete/delete_flags.go `NewDeleteCommandFlags`, delete.go `DeleteResult`);
  a DELETE without a body (client-go's `Delete` with empty DeleteOptions, curl) sends no policy; the deprecated
  `orphanDependents` is a boolean.
- Propagation (k8s.io/apiserver v0.33.13 pkg/registry/generic/registry/store.go `shouldOrphanDependents`,
  `shouldDeleteDependents`): orphanDependents, else propagationPolicy, else an `orphan` or `foregroundDeletion`
  finalizer on the object, else the resource's default (vocabulary.ORPHAN_BY_DEFAULT), else background.
- Grace (kubernetes v1.33.13 pkg/registry/core/pod/strategy.go `CheckGracefulDelete`, called by k8s.io/apiserver
  v0.33.13 pkg/registry/rest/delete.go `BeforeDelete`): only a pod is deleted gracefully; its grace period is the
  DeleteOptions' `gracePeriodSeconds` (`kubectl delete --grace-period`; negative is 1), else its own
  `terminationGracePeriodSeconds`, and 0 for a pod on no node or one that has finished. The strategy writes it into
  the DeleteOptions before admission runs (registry/store.go `Delete`), so the policies see it in
  `request.options` even when the member sent none. A pod already terminating is not modelled: its grace is only
  ever shortened, and a longer one returns before admission.
- Kueue's Workload is a dependent of its job (jobframework/reconciler.go sets the job as its controller owner).
  Deleted with the job, it loses Kueue's finalizer as the job reconciler finalizes (`finalize`), which releases
  its quota; orphaned, Kueue finishes it with reason OwnerNotFound (FinishOrphanedWorkloads, beta and on:
  core/workload_controller.go `isOrphanedWorkload`), which releases its quota too, while the orphaned pods run on.
"""
from __future__ import annotations

from gke_ai_batch.model.team_config import MIN_GRACE_SECONDS
from gke_ai_batch.vocabulary import ORPHAN_BY_DEFAULT, ORPHAN_FINALIZER, PROPAGATION_POLICIES, Obj

from .vap_matching import resource_of

KUBECTL = "Background"  # what `kubectl delete` sends when --cascade is not given
NO_POLICY = "none"  # a DELETE whose options name no policy
ORPHAN_DEPENDENTS = "orphanDependents"  # the deprecated `orphanDependents: true`
PROPAGATIONS = (*PROPAGATION_POLICIES, NO_POLICY, ORPHAN_DEPENDENTS)
FOREGROUND_FINALIZER = "foregroundDeletion"  # metav1.FinalizerDeleteDependents

# What the garbage collector takes with a deleted object, for the kinds a team makes that own others (their
# controllers set themselves as the controller owner of what they create); a Job's and a JobSet's Workload too.
DEPENDENTS = {"Job": "its pods", "JobSet": "its Jobs and their pods", "CronJob": "its Jobs and their pods",
              "Deployment": "its ReplicaSets and their pods", "StatefulSet": "its pods", "ReplicaSet": "its pods"}
KUEUE_JOBS = ("Job", "JobSet")


class BadPropagation(ValueError):
    """PROPAGATION names none of PROPAGATIONS, or GRACE is not a number of seconds."""


def delete_options(propagation: str) -> dict[str, object]:
    """The DeleteOptions a DELETE carries for PROPAGATION (one of PROPAGATIONS); BadPropagation naming it."""
    if propagation in PROPAGATION_POLICIES:
        return {"propagationPolicy": propagation}
    if propagation == NO_POLICY:
        return {}
    if propagation == ORPHAN_DEPENDENTS:
        return {"orphanDependents": True}
    raise BadPropagation(f"PROPAGATION={propagation}: not a way to delete; give Orphan, Background or Foreground "
                         f"(propagationPolicy; {KUBECTL} is what kubectl delete sends, and the default here), "
                         f"{NO_POLICY} (no policy: the kind's default, as a DELETE without options), or "
                         f"{ORPHAN_DEPENDENTS} (the deprecated orphanDependents: true)")


def grace_option(grace: str) -> dict[str, object]:
    """The DeleteOptions' part for GRACE (`kubectl delete --grace-period`): a whole number of seconds, at least 0;
    BadPropagation naming it otherwise."""
    if not grace.isdigit():
        raise BadPropagation(f"GRACE={grace}: not a grace period; give whole seconds, 0 or more (gracePeriodSeconds, "
                             "as kubectl delete --grace-period sends it)")
    return {"gracePeriodSeconds": int(grace)}


def admitted_options(obj: Obj, options: Obj) -> Obj:
    """The DeleteOptions as admission sees them: for a pod not yet terminating, with the grace period the pod
    strategy settled on (`CheckGracefulDelete`)."""
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    if obj.get("kind") != "Pod" or meta.get("deletionTimestamp"):
        return options
    given = options.get("gracePeriodSeconds")
    period = max(int(given), 1) if given is not None and int(given) < 0 else int(
        given if given is not None else spec.get("terminationGracePeriodSeconds", MIN_GRACE_SECONDS))
    if not spec.get("nodeName") or (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        period = 0
    return {**options, "gracePeriodSeconds": period}


def propagation(obj: Obj, options: Obj) -> str:
    """Orphan, Background or Foreground: what the garbage collector does with obj's dependents (store.go
    `shouldOrphanDependents`, then `shouldDeleteDependents`)."""
    if options.get("orphanDependents") is not None:
        return "Orphan" if options["orphanDependents"] else "Background"
    if options.get("propagationPolicy") in PROPAGATION_POLICIES:
        return str(options["propagationPolicy"])
    for finalizer in (obj.get("metadata") or {}).get("finalizers") or []:
        if finalizer == ORPHAN_FINALIZER:
            return "Orphan"
        if finalizer == FOREGROUND_FINALIZER:
            return "Foreground"
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    return "Orphan" if (group, version, resource_of(str(obj.get("kind", "")))) in ORPHAN_BY_DEFAULT else "Background"


def delete_effect(obj: Obj, options: Obj) -> str | None:
    """What follows an admitted delete of obj (options as admission saw them), or None for a kind that owns nothing
    a team makes."""
    kind = str(obj.get("kind", ""))
    if kind == "Pod" and "gracePeriodSeconds" in options:
        grace = int(str(options["gracePeriodSeconds"]))
        return (f"it has {grace} s to stop, then is removed" if grace else
                "it is on no node or has finished: the API server removes it at once (grace period 0)")
    dependents = DEPENDENTS.get(kind)
    if dependents is None:
        return None
    how = propagation(obj, options)
    workload = kind in KUEUE_JOBS
    if how == "Orphan":
        kueue = (", and Kueue finishes its Workload (OwnerNotFound), releasing its quota while they hold their nodes"
                 if workload else "")
        return f"Orphan: {dependents} run on without an owner{kueue}"
    taken = f"{dependents} and its Workload" if workload else dependents
    released = "; Kueue releases the Workload's quota" if workload else ""
    if how == "Foreground":
        return f"Foreground: it is removed once the garbage collector has deleted {taken}{released}"
    return f"Background: it is removed, and the garbage collector deletes {taken}{released}"
