"""A Job as the validating admission policies see it on a create or an update: the API server has defaulted it,
Kueue's mutating webhook has suspended it, and the Job strategy has given it its selector, before
`createValidation` runs (k8s.io/apiserver v0.33.13 registry/generic/registry/store.go: BeforeCreate, then the
validation on a copy). So the object-size policy counts these fields too: 586 bytes on a one-container Job, as the
sandbox's kube-apiserver counted them (a template's metadata holds `creationTimestamp: null`, as Go serializes it).

Sources, Kubernetes v1.33.13: pkg/apis/batch/v1/defaults.go `SetDefaults_Job` (JobPodReplacementPolicy is on by
default), pkg/apis/core/v1/defaults.go (`SetDefaults_PodSpec`, `SetDefaults_Container`, probes, volumes), and
pkg/registry/batch/job/strategy.go `generateSelector`; Kueue v0.19.2 pkg/controller/jobs/job/job_webhook.go
`Default` (ApplyDefaultForSuspend). A pod template gets no `enableServiceLinks` and no requests from its limits:
those are `SetDefaults_Pod`'s, which a template never meets."""
from __future__ import annotations

import copy
from typing import Any

from gke_ai_batch.vocabulary import QUEUE_LABEL, Obj

Doc = dict[str, Any]  # a part of the Job's copy, defaulted in place

# the Job's UID, which the selector and the template labels carry; any UID has this length
UID = "00000000-0000-4000-8000-000000000000"
_JOB_NAME_LABELS = ("job-name", "batch.kubernetes.io/job-name")
_UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")
_POD_SPEC: Doc = {"dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "securityContext": {},
             "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler"}
_CONTAINER: Doc = {"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}
_PROBE: Doc = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
_SOURCES_WITH_MODE = ("secret", "configMap", "downwardAPI", "projected")


def as_validated(obj: Obj, created: bool) -> Obj:
    """A Job with what the API server adds before the policies judge it, and Kueue's suspension where `created`
    (its Job webhook mutates creates only); any other object as it is."""
    if obj.get("kind") != "Job" or obj.get("apiVersion") != "batch/v1":
        return obj
    job: Doc = copy.deepcopy(dict(obj))
    meta, spec = job.setdefault("metadata", {}), job.setdefault("spec", {})
    _job_spec(spec, created and bool((meta.get("labels") or {}).get(QUEUE_LABEL)))
    template = spec.setdefault("template", {})
    template.setdefault("metadata", {}).setdefault("creationTimestamp", None)  # a template's ObjectMeta, serialized
    if not meta.get("labels") and (template.get("metadata") or {}).get("labels"):
        meta["labels"] = dict(template["metadata"]["labels"])
    if not spec.get("manualSelector"):
        _selector(spec, template, str(meta.get("name") or meta.get("generateName") or ""))
    _pod_spec(template.setdefault("spec", {}))
    return job


def _job_spec(spec: Doc, suspended: bool) -> None:
    if "completions" not in spec and "parallelism" not in spec:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 2**31 - 1 if "backoffLimitPerIndex" in spec else 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if suspended:
        spec["suspend"] = True
    spec.setdefault("podReplacementPolicy", "Failed" if "podFailurePolicy" in spec else "TerminatingOrFailed")
    spec.setdefault("manualSelector", False)


def _selector(spec: Doc, template: Doc, name: str) -> None:
    labels = template.setdefault("metadata", {}).setdefault("labels", {})
    for key in _JOB_NAME_LABELS:
        labels.setdefault(key, name)
    for key in _UID_LABELS:
        labels.setdefault(key, UID)
    spec.setdefault("selector", {}).setdefault("matchLabels", {}).setdefault(_UID_LABELS[1], UID)


def _pod_spec(spec: Doc) -> None:
    """A pod template's spec defaulted in place."""
    for key, value in _POD_SPEC.items():
        spec.setdefault(key, copy.deepcopy(value))
    if spec.get("serviceAccountName"):
        spec.setdefault("serviceAccount", spec["serviceAccountName"])
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(field) or []:
            _container(container)
    for volume in spec.get("volumes") or []:
        _volume(volume)


def _container(c: Doc) -> None:
    c.setdefault("imagePullPolicy", _pull_policy(str(c.get("image") or "")))
    for key, value in _CONTAINER.items():
        c.setdefault(key, value)
    for port in c.get("ports") or []:
        port.setdefault("protocol", "TCP")
    for env in c.get("env") or []:
        field_ref = (env.get("valueFrom") or {}).get("fieldRef")
        if isinstance(field_ref, dict):
            field_ref.setdefault("apiVersion", "v1")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if isinstance(c.get(probe), dict):
            for key, value in _PROBE.items():
                c[probe].setdefault(key, value)
            _http_get(c[probe])
    for hook in ((c.get("lifecycle") or {}).get(h) for h in ("postStart", "preStop")):
        if isinstance(hook, dict):
            _http_get(hook)


def _http_get(handler: Doc) -> None:
    if isinstance(handler.get("httpGet"), dict):
        handler["httpGet"].setdefault("path", "/")
        handler["httpGet"].setdefault("scheme", "HTTP")


def _pull_policy(image: str) -> str:
    """Always for `:latest` or an image with neither tag nor digest, else IfNotPresent."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _volume(volume: Doc) -> None:
    sources = [k for k in volume if k != "name"]
    if not sources:
        volume["emptyDir"] = {}
    for source in _SOURCES_WITH_MODE:
        if isinstance(volume.get(source), dict):
            volume[source].setdefault("defaultMode", 420)
    for item in (volume.get("projected") or {}).get("sources") or []:
        token: Any = item.get("serviceAccountToken") if isinstance(item, dict) else None
        if isinstance(token, dict):
            token.setdefault("expirationSeconds", 3600)
    if isinstance(volume.get("hostPath"), dict):
        volume["hostPath"].setdefault("type", "")
