"""What an UPDATE meets that a create does not: Pod Security's exemptions for pod updates, Kueue v0.19.2's
update validation, and what Kueue's job reconciler then does with the changed object.

The old object stands for what runs on the cluster: a Job or JobSet with `spec.suspend: true` is taken as
still queued (Kueue unsuspends what it admits), one without it as admitted and running.
"""
from __future__ import annotations

from typing import Any

from gke_ai_batch.admission.pod_sets import pod_sets_of
from gke_ai_batch.vocabulary import PRIORITY_LABEL, QUEUE_LABEL, Obj

ELASTIC_ANNOTATION = "kueue.x-k8s.io/elastic-job"  # pkg/workloadslicing EnabledAnnotationKey
# Pod updates Pod Security does not judge (https://kubernetes.io/docs/concepts/security/pod-security-admission/
# #exemptions): metadata other than the seccomp and AppArmor annotations, activeDeadlineSeconds, tolerations.
_EXEMPT_SPEC_FIELDS = ("activeDeadlineSeconds", "tolerations")
_SECURITY_ANNOTATIONS = ("seccomp.security.alpha.kubernetes.io/pod", "container.seccomp.security.alpha.kubernetes.io/",
                         "container.apparmor.security.beta.kubernetes.io/")


def identity(obj: Obj) -> tuple[str, str, str]:
    """(kind, namespace, name): what makes an object of new.yaml an update of one of old.yaml."""
    meta = obj.get("metadata") or {}
    return str(obj.get("kind", "")), str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def pod_security_judges(old: Obj, new: Obj) -> bool:
    """Whether Pod Security judges this update of a pod: not when only its exempt fields changed."""
    if new.get("kind") != "Pod":
        return True
    spec = {k: v for k, v in (new.get("spec") or {}).items() if k not in _EXEMPT_SPEC_FIELDS}
    old_spec = {k: v for k, v in (old.get("spec") or {}).items() if k not in _EXEMPT_SPEC_FIELDS}
    return spec != old_spec or _security_annotations(new) != _security_annotations(old)


def _security_annotations(obj: Obj) -> dict[str, Any]:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return {k: v for k, v in annotations.items() if k.startswith(_SECURITY_ANNOTATIONS)}


def suspended(obj: Obj) -> bool:
    return bool((obj.get("spec") or {}).get("suspend"))


def _label(obj: Obj, key: str) -> str:
    return str(((obj.get("metadata") or {}).get("labels") or {}).get(key) or "")


def _elastic(obj: Obj) -> bool:
    """workloadslicing.Enabled: the annotation's value is "true"."""
    return ((obj.get("metadata") or {}).get("annotations") or {}).get(ELASTIC_ANNOTATION) == "true"


def kueue_update_errors(old: Obj, new: Obj) -> list[str]:
    """Kueue's webhooks on UPDATE (pkg/controller/jobframework/validation.go `ValidateJobOnUpdate`), in its words;
    the pod webhook's managed-label rule is the create one (pod_webhook.go `validateManagedLabel`)."""
    errors = []
    running = new.get("kind") != "Pod" and not suspended(new)
    queue, old_queue = _label(new, QUEUE_LABEL), _label(old, QUEUE_LABEL)
    if (running or new.get("kind") == "Pod") and queue != old_queue:  # a pod is never suspended
        errors.append(f'metadata.labels[{QUEUE_LABEL}]: Invalid value: "{queue}": field is immutable')
    wpc, old_wpc = _label(new, PRIORITY_LABEL), _label(old, PRIORITY_LABEL)
    if running and not old_wpc and wpc:
        errors.append(f'metadata.labels[{PRIORITY_LABEL}]: Invalid value: "{wpc}": WorkloadPriorityClass cannot be '
                      "added to a non-suspended workload")
    if old_wpc and not wpc:
        errors.append(f'metadata.labels[{PRIORITY_LABEL}]: Invalid value: "": WorkloadPriorityClass cannot be '
                      "removed from a workload")
    if _elastic(old) != _elastic(new):
        errors.append(f"metadata.annotations[{ELASTIC_ANNOTATION}]: Invalid value: {str(_elastic(new)).lower()}: "
                      "field is immutable")
    return errors


def _pod_counts(obj: Obj) -> list[tuple[str, int]]:
    return [(ps.name, ps.count) for ps in pod_sets_of(obj)]


def reconciler_effect(old: Obj, new: Obj) -> str | None:
    """What Kueue's job reconciler does with an updated object (pkg/controller/jobframework/reconciler.go,
    v0.19.2); None when Kueue judges its workload afresh: a job still queued, or an elastic job's new slice."""
    if new.get("kind") not in ("Job", "JobSet"):
        return "updated in place: Kueue's pod reconciler keeps it as its gates and labels say"
    if suspended(new):
        return None
    if suspended(old):  # step 8: "Running job is not admitted by a cluster queue, suspending"
        if _elastic(new):
            return ("left running: Kueue leaves an unsuspended elastic job to its scheduling gates "
                    "(WorkloadSliceEnabled), without charging its quota")
        return "Kueue suspends it again: Not admitted by cluster queue"
    if _pod_counts(old) != _pod_counts(new) or _templates(old) != _templates(new):
        if _elastic(new):
            return None  # a new workload slice for the new counts, admitted or not like a new workload
        return "Kueue suspends it: job with no matching workload (its pods no longer match the admitted workload)"
    return "left running: its admitted workload still matches"


def _templates(obj: Obj) -> list[Obj]:
    return [ps.spec for ps in pod_sets_of(obj)]
