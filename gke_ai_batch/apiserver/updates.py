"""What the API server does differently on an UPDATE: which object of the old file a new one updates, the
pod updates Pod Security does not judge, and the updates that give LimitRanger new pods to judge."""
from __future__ import annotations

from typing import Any

from gke_ai_batch.vocabulary import Obj

from .pod_security import pod_specs_of

# https://kubernetes.io/docs/concepts/security/pod-security-admission/#exemptions: "Updates to the following pod
# fields are exempt from policy checks": metadata other than the seccomp and AppArmor annotations,
# .spec.activeDeadlineSeconds and .spec.tolerations.
_EXEMPT_SPEC_FIELDS = ("activeDeadlineSeconds", "tolerations")
_SECURITY_ANNOTATIONS = ("seccomp.security.alpha.kubernetes.io/pod", "container.seccomp.security.alpha.kubernetes.io/",
                         "container.apparmor.security.beta.kubernetes.io/")


def identity(obj: Obj) -> tuple[str, str, str]:
    """(kind, namespace, name): what makes an object of new.yaml an update of one of old.yaml."""
    meta = obj.get("metadata") or {}
    return str(obj.get("kind", "")), str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def pod_security_judges(old: Obj, new: Obj) -> bool:
    """Whether Pod Security judges this update: a workload's template always, a pod unless only exempt fields
    changed."""
    if new.get("kind") != "Pod":
        return True
    spec = {k: v for k, v in (new.get("spec") or {}).items() if k not in _EXEMPT_SPEC_FIELDS}
    old_spec = {k: v for k, v in (old.get("spec") or {}).items() if k not in _EXEMPT_SPEC_FIELDS}
    return spec != old_spec or _security_annotations(new) != _security_annotations(old)


def _security_annotations(obj: Obj) -> dict[str, Any]:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return {k: v for k, v in annotations.items() if k.startswith(_SECURITY_ANNOTATIONS)}


def new_pods(old: Obj, new: Obj) -> bool:
    """Whether the update gives a controller new pods to create: a workload's changed template. LimitRanger
    judges pods on create only (plugin/pkg/admission/limitranger: a pod update is not its), so an updated Pod
    is not judged again."""
    return new.get("kind") != "Pod" and pod_specs_of(old) != pod_specs_of(new)
