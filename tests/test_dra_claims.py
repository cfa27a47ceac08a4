"""Pods that ask for devices through DRA resource claims, judged as Kueue v0.19.2's workload reconciler judges them
before the scheduler (admission.claims; issue 47): a missing ResourceClaimTemplate, a DeviceClass no quota
resource maps, and a claim by name are each held in Kueue's words. Not in make e2e's corpus: the sandbox's
kube-apiserver v1.33 runs without DRA and drops a template's resourceClaims (docs/e2e.md)."""
from __future__ import annotations

from gke_ai_batch.apiserver.updates import identity
from gke_ai_batch.offline.admit import describe

from .test_escape import container, job, tenant_path, verdict

TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-nic", "namespace": "research"},
            "spec": {"spec": {"devices": {"requests": [{"name": "nic", "exactly": {
                "deviceClassName": "mrdma.google.com", "allocationMode": "ExactCount", "count": 1}}]}}}}


def claiming(**claim) -> dict:
    """research's v5e Job, admitted as it is, with one resource claim."""
    j = tpu_job()
    j["spec"]["template"]["spec"]["resourceClaims"] = [{"name": "nic", **claim}]
    return j


def tpu_job() -> dict:
    return job("research", "dra", "research-queue", pods=2, containers=[container({"google.com/tpu": "4"})],
               nodeSelector={"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
                             "cloud.google.com/gke-tpu-topology": "2x4"})


def judged(obj: dict, *others: dict) -> str:
    return describe(tenant_path("dev").judge(obj, None, {identity(o): o for o in others}))


def test_the_job_without_claims_is_admitted():
    assert verdict("dev", tpu_job()).startswith("admitted: research/dra -> ClusterQueue research")


def test_a_missing_claim_template_is_held_in_kueues_words():
    assert judged(claiming(resourceClaimTemplateName="one-nic")) == (
        "refused: research/dra: Kueue: spec.podSets[0].template.spec.resourceClaims[0]: Internal error: failed to "
        "get claim spec for ResourceClaimTemplate one-nic in podset main: "
        'resourceclaimtemplates.resource.k8s.io "one-nic" not found')


def test_a_device_class_no_quota_resource_maps_is_held_in_kueues_words():
    assert judged(claiming(resourceClaimTemplateName="one-nic"), TEMPLATE) == (
        "refused: research/dra: Kueue: spec.podSets[0].template.spec.resourceClaims[0].resourceClaimTemplateName: "
        'Not found: "DeviceClass mrdma.google.com is not mapped in DRA configuration for podset main"')


def test_a_claim_by_name_is_not_counted_so_the_workload_is_held():
    assert judged(claiming(resourceClaimName="shared-nic")) == (
        "refused: research/dra: Kueue: KueueDRAIntegration feature does not support use of resource claims")
