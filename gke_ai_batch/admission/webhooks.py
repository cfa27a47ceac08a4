"""Kueue v0.19.2's validating webhooks, in their words (a field path, then `Forbidden:` or `Invalid value:`):
what they refuse on create and on update before any Workload exists."""
from __future__ import annotations

from gke_ai_batch.vocabulary import PRIORITY_LABEL, QUEUE_LABEL, Obj

from .topology import PREFERRED, REQUIRED

ELASTIC_ANNOTATION = "kueue.x-k8s.io/elastic-job"  # pkg/workloadslicing EnabledAnnotationKey
# ElasticJobsViaWorkloadSlices is Beta and on by default from 0.18 (pkg/features/kube_features.go); of the
# kinds here only batch/v1 Job is in jobframework/validation.go `supportedElasticJobGVKs`.
ELASTIC_GATE = "ElasticJobsViaWorkloadSlices"
ELASTIC_KINDS = ("Job",)
_TEMPLATE_PATH = "spec.template.metadata.annotations"  # job_webhook.go replicaMetaPath


def _gvk(obj: Obj) -> str:
    """schema.GroupVersionKind.String(): `group/version, Kind=Kind` (a core kind: `/v1, Kind=Pod`)."""
    api = str(obj.get("apiVersion", ""))
    return f"{api if '/' in api else '/' + api}, Kind={obj.get('kind')}"


def workload_slicing(config: Obj) -> bool:
    """Whether Kueue's Configuration (the stack's, `Cluster.config`) leaves the elastic-jobs gate on: its
    `featureGates` map, else the gate's default, on."""
    return bool((config.get("featureGates") or {}).get(ELASTIC_GATE, True))


def elastic(obj: Obj, slicing: bool) -> bool:
    """workloadslicing.Enabled (v0.19.2): the gate is on (`slicing`) and the annotation's value is "true". With the
    gate off Kueue ignores the annotation everywhere: no webhook refusal, an ordinary job to the reconciler."""
    return slicing and ((obj.get("metadata") or {}).get("annotations") or {}).get(ELASTIC_ANNOTATION) == "true"


def create_errors(obj: Obj, slicing: bool) -> list[str]:
    """jobframework.ValidateJobOnCreate's elastic-job rule (validation.go `ValidateElasticJobAnnotation`) and the
    Job webhook's refusal of an elastic job with a required or preferred topology (job_webhook.go
    `validateTopologyRequest`: "only unconstrained is supported"); both only with the gate on (`slicing`)."""
    if not elastic(obj, slicing):
        return []
    if obj.get("kind") not in ELASTIC_KINDS:
        return [f'metadata.annotations[{ELASTIC_ANNOTATION}]: Forbidden: elastic job is not supported for '
                f'"{_gvk(obj)}"']
    annotations = ((((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("annotations")) or {}
    for key, mode in ((REQUIRED, "required"), (PREFERRED, "preferred")):
        if key in annotations:
            return [f"{_TEMPLATE_PATH}[{key}]: Forbidden: {mode} topology is not supported with elastic jobs"]
    return []


def suspended(obj: Obj) -> bool:
    return bool((obj.get("spec") or {}).get("suspend"))


def _label(obj: Obj, key: str) -> str:
    return str(((obj.get("metadata") or {}).get("labels") or {}).get(key) or "")


def update_errors(old: Obj, new: Obj, slicing: bool) -> list[str]:
    """Kueue's webhooks on UPDATE: the create rules on the new object, then jobframework/validation.go
    `ValidateJobOnUpdate` (queue name of a running job or a pod, WorkloadPriorityClass, the elastic toggle)."""
    errors = create_errors(new, slicing)
    running = new.get("kind") == "Pod" or not suspended(new)  # a pod is never suspended
    queue, old_queue = _label(new, QUEUE_LABEL), _label(old, QUEUE_LABEL)
    if running and queue != old_queue:
        errors.append(f'metadata.labels[{QUEUE_LABEL}]: Invalid value: "{queue}": field is immutable')
    wpc, old_wpc = _label(new, PRIORITY_LABEL), _label(old, PRIORITY_LABEL)
    if running and not old_wpc and wpc:
        errors.append(f'metadata.labels[{PRIORITY_LABEL}]: Invalid value: "{wpc}": WorkloadPriorityClass cannot be '
                      "added to a non-suspended workload")
    if old_wpc and not wpc:
        errors.append(f'metadata.labels[{PRIORITY_LABEL}]: Invalid value: "": WorkloadPriorityClass cannot be '
                      "removed from a workload")
    if elastic(old, slicing) != elastic(new, slicing):
        errors.append(f"metadata.annotations[{ELASTIC_ANNOTATION}]: Invalid value: "
                      f"{str(elastic(new, slicing)).lower()}: "
                      "field is immutable")
    return errors
