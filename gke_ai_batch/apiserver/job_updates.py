"""The API server's validation of a Job UPDATE (kubernetes/kubernetes pkg/apis/batch/validation/validation.go
`ValidateJobSpecUpdate` -> `validatePodTemplateUpdate`, with the options of pkg/registry/batch/job/strategy.go):
`spec.template` is immutable. Only a Job that is suspended and never started (`spec.suspend` true and no
`status.startTime`) may change its template's scheduling directives: node affinity, nodeSelector, tolerations,
labels, annotations and scheduling gates. Anything else is refused as `spec.template: Invalid value: <the whole
template>: field is immutable` (the value, printed by the API server as a Go struct, is elided here).

Object validation runs after the mutating admission plugins and before the validating ones, so this refusal
comes before Pod Security, the ValidatingAdmissionPolicies, ResourceQuota and Kueue's webhooks. A running Job's
template cannot change at all: Kueue's reconciler never sees such an update."""
from __future__ import annotations

import copy
from typing import Any

from gke_ai_batch.vocabulary import Obj

IMMUTABLE = "spec.template: Invalid value: ...: field is immutable"


def template_refusal(old: Obj, new: Obj) -> str | None:
    """The API server's error for a Job update that changes what its template may not change, or None."""
    if new.get("kind") != "Job" or old.get("kind") != "Job":
        return None
    before, after = _template(old), _template(new)
    if _directives_mutable(old):
        before, after = _without_directives(before), _without_directives(after)
    if before == after:
        return None
    name = (new.get("metadata") or {}).get("name") or ""
    return f'Job.batch "{name}" is invalid: {IMMUTABLE}'


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
