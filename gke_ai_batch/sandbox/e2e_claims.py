"""A bound claim for a case that updates one. A claim binds when its first pod is scheduled on GKE (its Persistent
Disk classes wait for the first consumer) and no CSI driver runs in the sandbox, so the administrator binds the
test's old claim to a volume made for it: a PersistentVolume naming the claim (`claimRef`), which the controller
manager's PV binder binds, in a StorageClass that allows the resize the member's update asks for (the API server's
PersistentVolumeClaimResize admission refuses growing a claim whose class does not: Kubernetes
plugin/pkg/admission/storage/persistentvolume/resize)."""
from __future__ import annotations

import copy
import uuid

from .e2e_kubectl import Kubectl, Obj

PD_CSI_DRIVER = "pd.csi.storage.gke.io"


def is_bound_claim(obj: Obj) -> bool:
    return obj.get("kind") == "PersistentVolumeClaim" and (obj.get("status") or {}).get("phase") == "Bound"


def with_volume(kc: Kubectl, old: Obj) -> tuple[Obj | None, str]:
    """The old claim to create, bound to a fresh volume of its own (a volume keeps the uid of the claim it was
    bound to, so none is shared between cases), or why it cannot be."""
    claim = copy.deepcopy(old)
    spec, meta = claim["spec"], claim["metadata"]
    spec["volumeName"] = f"{spec.get('volumeName') or 'pv'}-{uuid.uuid4().hex[:8]}"
    made = [_storage_class(str(spec.get("storageClassName") or "")), _volume(spec, meta)]
    for obj in made:
        answer = kc.create(obj)
        if not answer.ok and "AlreadyExists" not in answer.err:
            return None, f"the old claim's volume cannot be made by the administrator: {answer.err}"
    return claim, ""


def _storage_class(name: str) -> Obj:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": PD_CSI_DRIVER, "allowVolumeExpansion": True, "volumeBindingMode": "WaitForFirstConsumer"}


def _volume(spec: Obj, meta: Obj) -> Obj:
    size = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": spec["volumeName"]},
            "spec": {"capacity": {"storage": size}, "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                     "storageClassName": spec.get("storageClassName") or "",
                     "persistentVolumeReclaimPolicy": "Retain",
                     "claimRef": {"namespace": meta["namespace"], "name": meta["name"]},
                     "csi": {"driver": PD_CSI_DRIVER, "volumeHandle": spec["volumeName"]}}}
