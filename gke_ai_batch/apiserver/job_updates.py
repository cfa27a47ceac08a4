"""The API server's validation of a Job UPDATE (kubernetes/kubernetes pkg/apis/batch/validation/validation.go
`ValidateJobSpecUpdate` -> `validatePodTemplateUpdate`, with the options of pkg/registry/batch/job/strategy.go):
`spec.template` is immutable. Only a Job that is suspended and never started (`spec.suspend` true and no
`status.startTime`) may change its template's scheduling directives: node affinity, nodeSelector, tolerations,
labels, annotations and scheduling gates. Anything else is refused as `spec.template: Invalid value: <the whole
template>: field is immutable` (the value, printed by the API server as a Go struct, is elided here).
`ValidateJobSpecUpdate` also holds `selector`, `completionMode`, `podFailurePolicy`, `backoffLimitPerIndex`,
`managedBy` and `successPolicy` immutable, and `completions` too except on an Indexed Job, whose completions
may change only to equal its parallelism (`validateCompletions`; the ElasticIndexedJob gate is GA since 1.31
and on in 1.30, the platform's floor).

Object validation runs after the mutating admission plugins and before the validating ones, so this refusal
comes before Pod Security, the ValidatingAdmissionPolicies, ResourceQuota and Kueue's webhooks. A running Job's
template cannot change at all: Kueue's reconciler never sees such an update."""
from __future__ import annotations

import copy
from typing import Any

from gke_ai_batch.vocabulary import Obj

IMMUTABLE = "spec.template: Invalid value: ...: field is immutable"
IMMUTABLE_FIELDS = ("selector", "completionMode", "podFailurePolicy", "backoffLimitPerIndex", "managedBy",
                    "successPolicy")


def template_refusal(old: Obj, new: Obj) -> str | None:
    """The API server's error for a Job update that changes what its spec may not change, or None (the first
    error, in `ValidateJobSpecUpdate`'s order)."""
    if new.get("kind") != "Job" or old.get("kind") != "Job":
        return None
    name = (new.get("metadata") or {}).get("name") or ""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    error = _completions_error(spec, old_spec) or _field_error(spec, old_spec, "selector")
    if error is None:
        before, after = _template(old), _template(new)
        if _directives_mutable(old):
            before, after = _without_directives(before), _without_directives(after)
        error = IMMUTABLE if before != after else None
    for key in IMMUTABLE_FIELDS[1:]:
        error = error or _field_error(spec, old_spec, key)
    return f'Job.batch "{name}" is invalid: {error}' if error else None


def _field_error(spec: Obj, old_spec: Obj, key: str) -> str | None:
    if spec.get(key) == old_spec.get(key):
        return None
    value = spec.get(key)
    shown = value if isinstance(value, int) else "..."  # a struct is printed as Go's %#v, elided here
    return f"spec.{key}: Invalid value: {shown}: field is immutable"


def _completions_error(spec: Obj, old_spec: Obj) -> str | None:
    """`validateCompletions`: an Indexed Job may change completions in tandem with parallelism only."""
    completions = spec.get("completions")
    if spec.get("completionMode") != "Indexed":
        return _field_error(spec, old_spec, "completions")
    if completions == old_spec.get("completions") or completions is None:
        return None
    if completions != spec.get("parallelism", 1):
        return f"spec.completions: Invalid value: {completions}: can only be modified in tandem with spec.parallelism"
    return None


def _template(job: Obj) -> dict[str, Any]:
    return copy.deepcopy(dict((job.get("spec") or {}).get("template") or {}))


def _directives_mutable(old: Obj) -> bool:
    """strategy.go: `AllowMutableSchedulingDirectives = suspended && notStarted`."""
    return bool((old.get("spec") or {}).get("suspend")) and not (old.get("status") or {}).get("startTime")


def _without_directives(template: dict[str, Any]) -> dict[str, Any]:
    """The template without what a suspended, never started Job may change."""
    meta = {k: v for k, v in (template.pop("metadata", None) or {}).items() if k not in ("labels", "annotations")}
    if meta:
        template["metadata"] = meta
    spec = template.setdefault("spec", {})
    for key in ("nodeSelector", "tolerations", "schedulingGates"):
        spec.pop(key, None)
    affinity = {k: v for k, v in (spec.pop("affinity", None) or {}).items() if k != "nodeAffinity"}
    if affinity:
        spec["affinity"] = affinity
    return template
