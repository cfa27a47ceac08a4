"""Kueue's AdmissionChecks: queued provisioning (Dynamic Workload Scheduler) for each queued flavor, and GKE's
slice controller for TPU7x dynamic slicing."""
from __future__ import annotations

from typing import Any

from gke_ai_batch import vocabulary
from gke_ai_batch.model.config import KueueConfig, PlatformConfig
from gke_ai_batch.plan.flavors import FlavorPlan
from gke_ai_batch.vocabulary import KUEUE_API, PROVISIONING_CONTROLLER, QUEUED_PROVISIONING_CLASS, Manifest

# Kueue docs for GKE queued provisioning: pin the pods to the nodes GKE provisioned for the request.
PROVISIONING_NODE_SELECTOR = {"key": "autoscaling.gke.io/provisioning-request",
                              "valueFromProvisioningClassDetail": "ResizeRequestName"}
DWS_RETRY = {"backoffLimitCount": 3, "backoffBaseSeconds": 60, "backoffMaxSeconds": 1800}


def provisioning_check(k: KueueConfig, flavor: FlavorPlan) -> tuple[str, str]:
    """(AdmissionCheck, ProvisioningRequestConfig) names of a queued flavor: one pair for GPUs (source
    page 004's names), and one per TPU topology, since a TPU request names its slice's topology."""
    topology = flavor.node_labels.get(vocabulary.TPU_TOPOLOGY_LABEL)
    if flavor.accelerator_resource != vocabulary.TPU_RESOURCE or topology is None:
        return k.dws_admission_check, k.dws_config
    return f"{k.dws_admission_check}-tpu-{topology}", f"{k.dws_config}-tpu-{topology}"


def _provisioning_pair(check: str, config: str, spec: dict[str, Any]) -> tuple[Manifest, Manifest]:
    return (
        {"apiVersion": KUEUE_API, "kind": "ProvisioningRequestConfig", "metadata": {"name": config},
         "spec": {"provisioningClassName": QUEUED_PROVISIONING_CLASS, **spec, "retryStrategy": dict(DWS_RETRY)}},
        {"apiVersion": KUEUE_API, "kind": "AdmissionCheck", "metadata": {"name": check},
         "spec": {"controllerName": PROVISIONING_CONTROLLER,
                  "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": config}}},
    )


def admission_checks(cfg: PlatformConfig, flavors: dict[str, FlavorPlan]) -> tuple[Manifest, ...]:
    """The queued-provisioning checks: GPUs as source page 004 sets them up; TPUs as Google's Cluster
    Toolkit does (no GKE page shows it): the request names the slice topology in its parameters. Both
    pin the pods to the nodes GKE provisioned for their request (`podSetUpdates`, Kueue's provisioning
    docs: "restrict scheduling of the PodSets' pods to the newly provisioned nodes"); without it a TPU
    slice's pods could land on another request's nodes of the same shape."""
    out: list[Manifest] = []
    queued = {provisioning_check(cfg.kueue, f): f for f in flavors.values() if f.queued}
    pinned = {"podSetUpdates": {"nodeSelector": [dict(PROVISIONING_NODE_SELECTOR)]}}
    for (check, config), flavor in queued.items():
        topology = flavor.node_labels.get(vocabulary.TPU_TOPOLOGY_LABEL)
        if check == cfg.kueue.dws_admission_check:
            spec = {"managedResources": [vocabulary.GPU_RESOURCE], **pinned}
        else:
            spec = {"managedResources": [vocabulary.TPU_RESOURCE], "parameters": {"tpu-topology": topology},
                    **pinned}
        out += _provisioning_pair(check, config, spec)
    if any(f.dynamic_slicing for f in flavors.values()):
        out.append(slice_check())
    return tuple(out)


def slice_check() -> Manifest:
    """The AdmissionCheck of GKE's slice controller: it forms the Slice of sub-blocks Kueue's TAS assigned a
    workload, and the workload's pods start once the slice is ready (model.dynamic_slicing). It takes no
    parameters (Cluster Toolkit's and xpk's checks name none)."""
    return {"apiVersion": KUEUE_API, "kind": "AdmissionCheck", "metadata": {"name": vocabulary.SLICE_ADMISSION_CHECK},
            "spec": {"controllerName": vocabulary.SLICE_CONTROLLER}}
