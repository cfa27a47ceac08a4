"""The e2e runner reads the layer that refused a request from the API server's words, and holds `make admit`'s
verdict to it in the same terms: a wrong reading is a disagreement reported that is none, or one missed."""
from __future__ import annotations

import pytest

from gke_ai_batch.admission.results import AdmissionResult
from gke_ai_batch.apiserver.tenant_path import Passage
from gke_ai_batch.sandbox.e2e_verdicts import Verdict, disagreement, layer_of, offline

# The messages as kubectl prints them (Error from server (...): error when creating "STDIN": <Status message>), in
# the formats of k8s.io/apiserver v0.33.13, pod-security-admission v0.33.13 and Kueue v0.19.2's webhooks.
REAL = {
    'Error from server (Forbidden): error when creating "STDIN": localqueues.kueue.x-k8s.io is forbidden: User '
    '"member-of-research" cannot create resource "localqueues" in API group "kueue.x-k8s.io" in the namespace '
    '"research"': "RBAC",
    'Error from server (Forbidden): error when creating "STDIN": priorityclasses.scheduling.k8s.io is forbidden: User '
    '"member-of-research" cannot create resource "priorityclasses" in API group "scheduling.k8s.io" at the cluster '
    'scope': "RBAC",
    'Error from server (Forbidden): error when creating "STDIN": pods "host" is forbidden: violates PodSecurity '
    '"baseline:latest": host namespaces (hostNetwork=true)': "Pod Security baseline",
    'Error from server (Forbidden): error when creating "STDIN": pods "burst" is forbidden: cpu max limit to request '
    'ratio per Container is 2, but provided ratio is 70.000000': "LimitRange",
    'The Job "over" is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: "4": must be '
    'less than or equal to cpu limit of 2': "validation",
    'Error from server (Forbidden): error when creating "STDIN": services "node-port" is forbidden: exceeded quota: '
    'gke-ai-batch-objects, requested: services.nodeports=1, used: services.nodeports=0, limited: '
    'services.nodeports=0': "ResourceQuota gke-ai-batch-objects",
    'Error from server (Forbidden): error when creating "STDIN": jobs.batch "jump" is forbidden: '
    "ValidatingAdmissionPolicy 'gke-ai-batch-priorities-templates' with binding "
    "'gke-ai-batch-priorities-templates' denied request: team research may use the priorities low-priority": (
        "ValidatingAdmissionPolicy gke-ai-batch-priorities-templates"),
    'Error from server (Forbidden): error when replacing "STDIN": admission webhook "vjob.kb.io" denied the request: '
    'metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: "other": field is immutable': "webhook",
    'Error from server (Forbidden): error when creating "STDIN": services "ext" is forbidden: Use of external IPs is '
    "denied by admission control": "DenyServiceExternalIPs",
    'The Job "j" is invalid: spec.completions: Invalid value: 4: field is immutable': "validation",
    'The JobSet "js" is invalid: spec.replicatedJobs[0].replicas: Invalid value: -1: spec.replicatedJobs[0].replicas '
    'in body should be greater than or equal to 0': "validation",
    'Error from server (NotFound): error when creating "STDIN": namespaces "nowhere" not found':
        "other: Error from server (NotFound): error when creating \"STDIN\": namespaces \"nowhere\" not found",
}


@pytest.mark.parametrize("text", REAL)
def test_the_refusing_layer_is_read_from_the_api_servers_words(text):
    assert layer_of(text) == REAL[text]


def admitted(cq: str) -> AdmissionResult:
    return AdmissionResult("Job", "training", "j", cluster_queue=cq)


@pytest.mark.parametrize("passage, verdict", [
    (Passage("Pod", "research", "p", "RBAC", "team research may not ..."), Verdict("refused by RBAC")),
    (Passage("Pod", "research", "p", "LimitRange gke-ai-batch-containers", "cpu max limit ..."),
     Verdict("refused by LimitRange")),
    # a Job's pods are refused when its controller creates them, after Kueue admits it
    (Passage("Job", "training", "priv", "Pod Security baseline", "the pods of priv would be refused: privileged"),
     Verdict("accepted", "its pods refused by Pod Security baseline")),
    (Passage("Job", "research", "squat", "ValidatingAdmissionPolicy gke-ai-batch-pod-placement", "its pods: x"),
     Verdict("accepted", "its pods refused by ValidatingAdmissionPolicy gke-ai-batch-pod-placement")),
    (Passage("Job", "research", "j", "Kueue webhook", "field is immutable"), Verdict("refused by webhook")),
    (Passage("Job", "training", "j", "API server", "field is immutable"), Verdict("refused by validation")),
    (Passage("Service", "research", "ext", "API server (DenyServiceExternalIPs)", "denied"),
     Verdict("refused by DenyServiceExternalIPs")),
    (Passage("Job", "training", "flood", "Kueue", "couldn't assign flavors"), Verdict("accepted", "pending")),
    (Passage("Job", "training", "j", admission=admitted("cpu-batch")),
     Verdict("accepted", "quota reserved in ClusterQueue cpu-batch")),
    # a CronJob's Jobs come at its schedule: only the CronJob's create is compared
    (Passage("CronJob", "training", "nightly", "Kueue", "no quota", created=True, children="Jobs"),
     Verdict("accepted")),
    (Passage("CronJob", "training", "nightly", "ValidatingAdmissionPolicy gke-ai-batch-pod-placement", "its pods: x",
             created=True), Verdict("accepted")),
    (Passage("CronJob", "training", "nightly", "ValidatingAdmissionPolicy gke-ai-batch-runtime-limits", "label it"),
     Verdict("refused by ValidatingAdmissionPolicy gke-ai-batch-runtime-limits")),
    (Passage("Service", "research", "headless"), Verdict("accepted")),
])
def test_make_admits_verdict_in_the_shared_terms(passage, verdict):
    assert offline(passage) == verdict


def test_a_different_layer_or_outcome_is_a_disagreement_and_a_side_that_says_nothing_is_not():
    pending = Verdict("accepted", "pending")
    assert disagreement(pending, Verdict("accepted", "quota reserved in ClusterQueue cpu-batch"))
    assert disagreement(Verdict("refused by RBAC"), Verdict("refused by webhook"))
    assert not disagreement(Verdict("accepted"), pending)
    assert not disagreement(pending, Verdict("accepted"))


def test_a_physical_refusal_after_kueue_reserved_the_quota_compares_as_reserved():
    """dev's research/elastic: a cpu-only Job on the TPU flavor. Kueue reserves the quota (the sandbox did); `make
    admit` refuses it for what follows (its pods never schedule on tainted TPU nodes). Compared as Kueue's part."""
    physical = AdmissionResult("Job", "research", "elastic", cluster_queue="research",
                               warnings=("its pods never schedule",))
    passage = Passage("Job", "research", "elastic", "Kueue", "its pods never schedule", admission=physical)
    assert offline(passage) == Verdict("accepted", "quota reserved in ClusterQueue research")
    pending = AdmissionResult("Job", "research", "elastic", cluster_queue="research", reason="no quota")
    assert offline(Passage("Job", "research", "elastic", "Kueue", "no quota", admission=pending)).then == "pending"


def test_any_of_the_policies_that_deny_a_request_is_the_same_refusal():
    """prod's training-gpudirect/root breaks two policies (privileged-flavors and runtime-limits). The API server
    evaluates policies in a map's order and names the first denial: CI's run named runtime-limits where the run
    before named privileged-flavors. Either is `make admit`'s verdict; a third policy is not."""
    passage = Passage("Pod", "training-gpudirect", "root", "ValidatingAdmissionPolicy gke-ai-batch-privileged-flavors",
                      "namespace training-gpudirect is privileged", also=(
                          "ValidatingAdmissionPolicy gke-ai-batch-runtime-limits",))
    mine = offline(passage)
    for named in ("privileged-flavors", "runtime-limits"):
        assert not disagreement(mine, Verdict(f"refused by ValidatingAdmissionPolicy gke-ai-batch-{named}"))
    assert disagreement(mine, Verdict("refused by ValidatingAdmissionPolicy gke-ai-batch-pod-placement"))
    assert disagreement(mine, Verdict("accepted"))
