"""Time limits: a team's or LocalQueue's max_runtime holds every Job, JobSet and bare Pod of its queues to Kueue's
kueue.x-k8s.io/max-exec-time-seconds label; the default is set by a MutatingAdmissionPolicy from Kubernetes 1.36,
else the job is refused with the value to set. `make admit` applies both."""
import copy

import pytest
import yaml

from gke_ai_batch.apiserver.cel_policies import evaluate
from gke_ai_batch.apiserver.tenant_path import TenantPath
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.offline.admit import cluster_of, describe
from gke_ai_batch.offline.views.render import is_manifest, manifest_of
from gke_ai_batch.offline.views.summary import team_table
from gke_ai_batch.offline.views.view import stack_view
from gke_ai_batch.plan.platform import build_platform

from .conftest import ROOT, planned, platform_of, run_config

LIMIT = "kueue.x-k8s.io/max-exec-time-seconds"


def prod_workloads():
    return [d for d in yaml.safe_load_all((ROOT / "examples" / "workloads" / "prod.yaml").read_text()) if d]


def pretrain(limit=None):
    doc = copy.deepcopy(prod_workloads()[0])
    assert doc["metadata"]["name"] == "llm-pretrain"
    doc["metadata"]["labels"].pop(LIMIT)
    if limit is not None:
        doc["metadata"]["labels"][LIMIT] = limit
    return doc


def tenant_path(regs):
    return TenantPath([manifest_of(r) for r in regs if is_manifest(r)], cluster_of(regs))


def prod_136():
    cfg = platform_of("prod")
    cfg["cluster"]["version"] = "1.36.1-gke.1000000"
    return run_config(cfg, "prod")


def test_below_136_a_jobset_without_a_limit_is_refused_with_the_default_to_set():
    line = describe(tenant_path(planned("prod")).judge(pretrain()))
    assert line == ("refused: training/llm-pretrain: ValidatingAdmissionPolicy gke-ai-batch-runtime-limits: LocalQueue "
                    "training-queue of team training holds every job to at most 604800 s: label it "
                    f"{LIMIT}: \"86400\" (the queue's default), or another number of seconds up to 604800")


def test_from_136_a_jobset_without_a_limit_gets_the_default_and_is_admitted():
    regs = prod_136()
    kinds = {manifest_of(r)["kind"] for r in regs if is_manifest(r)}
    assert {"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"} <= kinds
    passage = tenant_path(regs).judge(pretrain())
    assert not passage.refused and passage.defaulted == f"{LIMIT}=86400"
    assert describe(passage).endswith(f"(set by MutatingAdmissionPolicy: {LIMIT}=86400)")
    # the prod stack as written (1.33) has no MutatingAdmissionPolicy
    assert "MutatingAdmissionPolicy" not in {manifest_of(r)["kind"] for r in planned("prod") if is_manifest(r)}


@pytest.mark.parametrize("version", ["1.33", "1.36"])
def test_a_limit_above_the_maximum_is_refused_at_the_policy_layer(version):
    regs = planned("prod") if version == "1.33" else prod_136()
    passage = tenant_path(regs).judge(pretrain("604801"))
    assert passage.layer == "ValidatingAdmissionPolicy gke-ai-batch-runtime-limits"
    assert passage.reason == ("LocalQueue training-queue of team training holds every job to at most 604800 s; not "
                              f"{LIMIT}: 604801 (the queue's default is 86400)")
    assert tenant_path(regs).judge(pretrain("0")).refused  # Kueue reads 0 as no limit
    assert tenant_path(regs).judge(pretrain("1h")).refused
    assert not tenant_path(regs).judge(pretrain("604800")).refused


def test_a_queues_own_limit_overrides_the_teams():
    doc = pretrain("172800")  # 48h: within training-queue's 168h, above sweeps' 24h
    doc["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "sweeps"
    passage = tenant_path(planned("prod")).judge(doc)
    assert passage.refused and "at most 86400 s" in passage.reason and "default is 14400" in passage.reason


def test_a_tenant_cannot_raise_a_suspended_jobs_limit_by_update():
    """Kueue lets a suspended job's label change; the policy judges updates too."""
    manifests = [manifest_of(r) for r in planned("prod") if is_manifest(r)]
    policies = [m for m in manifests if m["kind"] == "ValidatingAdmissionPolicy"]
    bindings = [m for m in manifests if m["kind"] == "ValidatingAdmissionPolicyBinding"]
    ns = next(m for m in manifests if m["kind"] == "Namespace" and m["metadata"]["name"] == "training")
    old, new = pretrain("3600"), pretrain("9999999")
    denials = evaluate(policies, bindings, new, ns, "UPDATE", {"username": "u", "groups": []}, old)
    assert [d.policy for d in denials] == ["gke-ai-batch-runtime-limits"]


def test_moving_a_suspended_job_to_a_queue_with_a_lower_maximum_is_judged_by_that_queue():
    """Issue 36 review (q_new.yaml --old js_old.yaml): the label kept, the queue changed from training-queue
    (168h) to sweeps (24h); Kueue lets a suspended job change queues, so the new queue's maximum holds."""
    old = pretrain("259200")
    moved = copy.deepcopy(old)
    moved["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "sweeps"
    assert describe(tenant_path(planned("prod")).judge(moved, old)) == (
        "refused: training/llm-pretrain: ValidatingAdmissionPolicy gke-ai-batch-runtime-limits: LocalQueue sweeps "
        f"of team training holds every job to at most 86400 s; not {LIMIT}: 259200 (the queue's default is 14400)")


def test_an_owner_that_is_not_a_controller_does_not_exempt_a_pod():
    """Issue 36 review (t3.yaml): a bare pod naming a ConfigMap as its (non-controller) owner is still its own job,
    held to its queue's limit; only a controller's pod is judged through its owner."""
    bare = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "p", "namespace": "training", "labels": {"kueue.x-k8s.io/queue-name": "sweeps"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "3333"}]},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "python:3.11"}]}}
    assert describe(tenant_path(planned("prod")).judge(bare)) == (
        "refused: training/p: ValidatingAdmissionPolicy gke-ai-batch-runtime-limits: LocalQueue sweeps of team "
        f"training holds every job to at most 86400 s: label it {LIMIT}: \"14400\" (the queue's default), or "
        "another number of seconds up to 86400")


def test_unlimited_queues_and_controller_pods_are_not_held():
    path = tenant_path(planned("prod"))
    evaluation = prod_workloads()[1]
    assert evaluation["metadata"]["namespace"] == "inference-eval" and LIMIT not in evaluation["metadata"]["labels"]
    assert not path.judge(evaluation).refused  # inference-eval sets no max_runtime


def test_the_summary_shows_the_limits():
    rows = {r[0]: r for r in team_table(stack_view(planned("prod"))).rows}
    assert rows["training"][2] == ("sweeps (weight 1; jobs up to 24h, default 4h), training-queue (weight 2; jobs up "
                                   "to 168h, default 24h)")


def team(cfg, name):
    return next(t for t in cfg["teams"] if t["name"] == name)


BAD = [
    ("a runtime of zero", lambda c: team(c, "training").update(max_runtime="0s"),
     "platform.teams[0].max_runtime", "'0s' is 0 s; allowed: 1 s to 2147483647 s"),
    ("an unparseable runtime", lambda c: team(c, "training").update(max_runtime="a week"),
     "platform.teams[0].max_runtime", "a whole number followed by s, m or h"),
    ("a negative runtime", lambda c: team(c, "training").update(default_runtime="-1h"),
     "platform.teams[0].default_runtime", "a whole number followed by s, m or h"),
    ("a default above the maximum", lambda c: team(c, "training").update(default_runtime="200h"),
     "platform.teams[0].default_runtime", "'200h' is above max_runtime '168h'"),
    ("a queue's default above its maximum",
     lambda c: team(c, "training")["local_queues"][1].update(default_runtime="25h"),
     "platform.teams[0].local_queues[1].default_runtime", "'25h' is above max_runtime '24h'"),
    ("a default without a maximum", lambda c: team(c, "research").update(default_runtime="1h"),
     "platform.teams[1].default_runtime", "needs a max_runtime"),
]


@pytest.mark.parametrize("label,change,path,fragment", BAD, ids=[b[0] for b in BAD])
def test_bad_time_limits_are_one_error_at_their_path(label, change, path, fragment):
    cfg = platform_of("prod")
    change(cfg)
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == path
    assert fragment in str(e.value)


def test_lowering_a_maximum_never_blocks_updates_of_work_already_admitted():
    """An operator lowers training's maximum to 24h while a 72h job runs: Kueue's and the JobSet controller's
    updates keep the label and pass; a tenant changing the label is judged against the new maximum."""
    cfg = platform_of("prod")
    team(cfg, "training").update(max_runtime="24h", default_runtime="4h")
    manifests = [manifest_of(r) for r in run_config(cfg, "prod") if is_manifest(r)]
    policies = [m for m in manifests if m["kind"] == "ValidatingAdmissionPolicy"]
    bindings = [m for m in manifests if m["kind"] == "ValidatingAdmissionPolicyBinding"]
    ns = next(m for m in manifests if m["kind"] == "Namespace" and m["metadata"]["name"] == "training")
    kueue = {"username": "system:serviceaccount:kueue-system:kueue-controller-manager", "groups": []}
    running = pretrain("259200")
    unsuspended = copy.deepcopy(running)
    unsuspended["spec"]["suspend"] = False
    assert evaluate(policies, bindings, unsuspended, ns, "UPDATE", kueue, running) == []
    raised = pretrain("259201")
    assert [d.policy for d in evaluate(policies, bindings, raised, ns, "UPDATE", kueue, running)] == \
        ["gke-ai-batch-runtime-limits"]
    assert evaluate(policies, bindings, pretrain("259200"), ns, "CREATE", kueue) != []  # a new one: 24h now


def serving(kind: str, namespace: str, queue: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {
        "name": "serve", "namespace": namespace, "labels": {"kueue.x-k8s.io/queue-name": queue}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "serve"}}, "template": {
            "metadata": {"labels": {"app": "serve", LIMIT: "2592000"}},
            "spec": {"containers": [{"name": "c", "image": "python:3.11", "resources": {
                "requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}}]}}}}


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
def test_a_serving_workload_is_refused_by_a_limited_queue_and_taken_by_an_unlimited_one(kind):
    """Issue 36, second review: a Deployment's or StatefulSet's pods are its controller's, which the time limit
    exempts, so one on a limited queue held its quota without end (30 days on `sweeps`, whose maximum is 24h)."""
    path = tenant_path(planned("prod"))
    assert describe(path.judge(serving(kind, "training", "sweeps"))) == (
        "refused: training/serve: ValidatingAdmissionPolicy gke-ai-batch-runtime-limits: LocalQueue sweeps of team "
        f"training holds every job to at most 86400 s, and a {kind} serves until it is scaled down, which no time "
        "limit holds: name a LocalQueue without max_runtime")
    unlimited = path.judge(serving(kind, "inference-eval", "inference-eval-queue"))  # no max_runtime there
    assert "runtime-limits" not in (unlimited.layer or "")
