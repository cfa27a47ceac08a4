"""What a team member's DELETE may ask for (issue 47): a Job or JobSet goes with its pods, never leaving them behind,
and a pod gets no longer to stop than its team's bound.

No orphans.

Deleting a job while orphaning its dependents (the garbage collector keeps its pods, or a JobSet's Jobs, and only
drops their ownerReference) removes the job and leaves its pods running. Kueue v0.19.2 then finishes the job's
Workload, whose owner is gone (FinishOrphanedWorkloads, beta and on: pkg/controller/core/workload_controller.go
`isOrphanedWorkload`, pkg/workload/workload.go `FinalizeOrphanedWorkload`, reason OwnerNotFound), and releases its
quota. A Job's pods never carry Kueue's `managed` label, so no quota, limit or preemption reaches them again.

A DELETE orphans (k8s.io/apiserver v0.33.13 pkg/registry/generic/registry/store.go `shouldOrphanDependents`) when
its DeleteOptions say `orphanDependents: true` or `propagationPolicy: Orphan`; when they say neither, an `orphan`
finalizer on the object decides, then the resource's default (ORPHAN_BY_DEFAULT: batch/v1 Jobs orphan, JobSets,
custom resources, delete in the background). `kubectl delete` always sends a policy, Background unless
`--cascade` says otherwise (k8s.io/kubectl v0.33.13 pkg/cmd/delete/delete_flags.go, delete.go), but a bare API
DELETE of a Job (client-go's `Delete` with empty DeleteOptions, or curl) sends none and orphans.

The policy refuses, for a member of the namespace's team groups: a DELETE of a Job or JobSet that orphans by those
rules, and a create or update that adds the `orphan` finalizer (which would make a later bare DELETE orphan). The API
server hands a DELETE's options to admission as `request.options` (endpoints/handlers/delete.go builds the
attributes with them, admission/plugin/cel/condition.go `CreateAdmissionRequest` passes them on) and the object as
`oldObject`, with `object` null; a collection delete is admitted object by object with the same options
(store.go `DeleteCollection`). Controllers and Kueue are in no team group: they delete as they always have.

Bounded grace on delete. A DELETE's `gracePeriodSeconds` overrides the pod's `terminationGracePeriodSeconds`
(kubernetes v1.33.13 pkg/registry/core/pod/strategy.go `CheckGracefulDelete`), and the kubelet gives the pod what
the API server set as its `deletionGracePeriodSeconds` (pkg/kubelet/pod_workers.go `calculateEffectiveGracePeriod`),
so `kubectl delete pod --grace-period=2592000` escapes the bound the termination-grace policy holds pod specs to.
The pod is terminating from then on: its Job no longer counts it active and, with the default
podReplacementPolicy TerminatingOrFailed (pkg/apis/batch/v1/defaults.go), makes another, which Kueue's quota
counts in its place, while the first keeps its node for the whole grace period, charged to no queue; a later stop
by Kueue cannot shorten it (the Job controller and the garbage collector delete with no grace period, and a
pending graceful delete is only ever shortened: k8s.io/apiserver v0.33.13 pkg/registry/rest/delete.go
`BeforeDelete`). The policy refuses, for a member of the namespace's team groups, a pod DELETE whose grace period is
above both the namespace's bound and the pod's own `terminationGracePeriodSeconds` (a pod made before the bound was
lowered keeps what it was given). Admission sees the grace period the strategy settled on, not only what the
member sent: store.go `Delete` runs `BeforeDelete` (which fills `options.gracePeriodSeconds` from the pod spec,
0 for an unscheduled or finished pod) before the admission call in `updateForGracefulDeletionAndFinalizers`,
on the same DeleteOptions the request's admission attributes hold (endpoints/handlers/delete.go). Only pods are
deleted gracefully (their strategy alone implements `CheckGracefulDelete`), and the garbage collector deletes a
Job's or JobSet's dependents with DeleteOptions of its own that carry no grace period
(pkg/controller/garbagecollector/operations.go `deleteObject`): a grace period sent with a Job or JobSet reaches
no pod, so those deletes are not held to it.
"""
from __future__ import annotations

from gke_ai_batch.model.team_config import MIN_GRACE_SECONDS
from gke_ai_batch.plan.admission_policies import MEMBER, PREFIX, _policy, _rules, members_only
from gke_ai_batch.vocabulary import (
    GRACE_ANNOTATION,
    JOBSET_API,
    ORPHAN_BY_DEFAULT,
    ORPHAN_FINALIZER,
    Manifest,
)

NO_ORPHANS = f"{PREFIX}-no-orphans"
DELETE_GRACE = f"{PREFIX}-delete-grace"
JOBS = (("batch", "jobs"), (JOBSET_API.split("/")[0], "jobsets"))  # the kinds whose pods Kueue's quota holds
_OPTIONS = "request.options"
_FINALIZED = "(has({o}.metadata.finalizers) && '" + ORPHAN_FINALIZER + "' in {o}.metadata.finalizers)"


def _orphans_by_default() -> str:
    """The request's resource is one the API server orphans for when no policy is given."""
    terms = [f"(request.resource.group == '{g}' && request.resource.version == '{v}' && "
             f"request.resource.resource == '{r}')" for g, v, r in ORPHAN_BY_DEFAULT
             if (g, r) in JOBS]
    return " || ".join(terms) or "false"


# store.go `shouldOrphanDependents`, in its order: orphanDependents, then propagationPolicy, then the finalizer,
# then the default.
ORPHANS = (f"has({_OPTIONS}.orphanDependents) ? {_OPTIONS}.orphanDependents : "
           f"has({_OPTIONS}.propagationPolicy) ? {_OPTIONS}.propagationPolicy == 'Orphan' : "
           f"{_FINALIZED.format(o='oldObject')} || {_orphans_by_default()}")

VALIDATIONS = (
    {"expression": f"request.operation != 'DELETE' || !({ORPHANS})",
     "messageExpression": (
         "'deleting a ' + request.kind.kind + ' ' + "
         f"(has({_OPTIONS}.orphanDependents) ? 'with orphanDependents: true' : "
         f"has({_OPTIONS}.propagationPolicy) ? 'with propagationPolicy: Orphan' : "
         f"{_FINALIZED.format(o='oldObject')} ? 'without a propagationPolicy while it carries the {ORPHAN_FINALIZER} "
         "finalizer' : 'without a propagationPolicy (batch/v1 Jobs orphan by default)') + "
         "' would leave its pods running after Kueue releases its quota: delete with propagationPolicy "
         "Background (kubectl delete sends it) or Foreground'"),
     "reason": "Forbidden"},
    {"expression": f"request.operation == 'DELETE' || !{_FINALIZED.format(o='object')} || "
                   f"(request.operation == 'UPDATE' && {_FINALIZED.format(o='oldObject')})",
     "message": f"the {ORPHAN_FINALIZER} finalizer makes a delete without a propagationPolicy leave the job's pods "
                "running after Kueue releases its quota: the API server sets it itself, on a delete that asks to "
                "orphan",
     "reason": "Forbidden"},
)


def no_orphans_policy() -> tuple[Manifest, Manifest]:
    """Team members' Jobs and JobSets go with their pods. Each expression reads a few fields of the request and
    the object's finalizers, far inside the API server's CEL cost budget."""
    return _policy(NO_ORPHANS, _rules(list(JOBS), ["CREATE", "UPDATE", "DELETE"]), [MEMBER],
                   members_only(VALIDATIONS))


_GRACE = f"{_OPTIONS}.gracePeriodSeconds"
# The pod's own grace period (the API server sets an unset one to 30 s).
_OWN = (f"(has(oldObject.spec.terminationGracePeriodSeconds) ? oldObject.spec.terminationGracePeriodSeconds : "
        f"{MIN_GRACE_SECONDS})")


def delete_grace_policy() -> tuple[Manifest, Manifest]:
    """Team members delete a pod with a grace period at most the namespace's bound (or the pod's own, where that
    is longer)."""
    return _policy(DELETE_GRACE, _rules([("", "pods")], ["DELETE"]), [
        MEMBER,
        {"name": "bound", "expression": f"int(namespaceObject.metadata.annotations['{GRACE_ANNOTATION}'])"},
    ], members_only([
        {"expression": f"!has({_GRACE}) || {_GRACE} <= variables.bound || {_GRACE} <= {_OWN}",
         "messageExpression": "'namespace ' + namespaceObject.metadata.name + ' gives a pod at most ' + "
                              "string(variables.bound) + ' s to stop (teams[].max_termination_grace): a pod "
                              "deleted with a longer grace period keeps its node all that time, while its Job "
                              "counts it gone and makes another, which Kueue\\'s quota holds instead; delete "
                              "with --grace-period=' + "
                              f"string(variables.bound) + ' or less, not ' + string({_GRACE})",
         "reason": "Forbidden"},
    ]))


def delete_policies() -> tuple[Manifest, ...]:
    """Both policies with their bindings, for every team namespace."""
    return (*no_orphans_policy(), *delete_grace_policy())
