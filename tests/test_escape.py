"""The escape suite: what a hostile member of a team tries, and the layer that refuses it.

Each attempt is judged as `make admit` judges it (apiserver.tenant_path: RBAC, Pod Security, the stack's
admission policies, then Kueue), asked of `make access`, or given to the stack check. Before the
containment work every one of them got through: Kueue ran IgnoreUndeclared, teams were bound to `edit`,
no namespace enforced Pod Security and no admission policy existed.
"""
from __future__ import annotations

import copy
import functools

import pytest

from gke_ai_batch.apiserver.access import StackAccess
from gke_ai_batch.apiserver.cel_policies import evaluate
from gke_ai_batch.apiserver.tenant_path import TenantPath
from gke_ai_batch.offline.admit import cluster_of, describe, objects_in
from gke_ai_batch.offline.engine.runtime import PlanError
from gke_ai_batch.offline.views.render import is_manifest, manifest_of
from gke_ai_batch.vocabulary import MAX_EXEC_TIME_LABEL

from .conftest import ROOT, STACKS, planned, platform_of, run_config

TPU, GPU = "google.com/tpu", "nvidia.com/gpu"
V5P = {"cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice"}


@functools.cache
def tenant_path(stack: str) -> TenantPath:
    regs = planned(stack)
    return TenantPath((manifest_of(r) for r in regs if is_manifest(r)), cluster_of(regs))


def verdict(stack: str, obj: dict) -> str:
    return describe(tenant_path(stack).judge(obj))


def container(requests: dict | None = None, **extra) -> dict:
    """A container as people write one: cpu and memory requested, an accelerator requested and limited alike
    (the API server refuses an extended resource's request without its limit)."""
    accelerators = {r: q for r, q in (requests or {}).items() if "/" in r}
    resources = {"requests": {"cpu": "1", "memory": "1Gi", **(requests or {})},
                 **({"limits": accelerators} if accelerators else {})}
    return {"name": "x", "image": "busybox", "resources": resources, **extra}


def pod(ns: str, name: str, queue: str | None = None, labels: dict | None = None, **spec) -> dict:
    labels = {**({"kueue.x-k8s.io/queue-name": queue} if queue else {}), **(labels or {})}
    spec.setdefault("containers", [container()])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": spec}


def job(ns: str, name: str, queue: str, pods: int = 1, labels: dict | None = None, **pod_spec) -> dict:
    pod_spec.setdefault("containers", [container()])
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns,
                         "labels": {"kueue.x-k8s.io/queue-name": queue, **(labels or {})}},
            "spec": {"parallelism": pods, "completions": pods,
                     "template": {"spec": {"restartPolicy": "Never", **pod_spec}}}}


# --- quota: nothing runs unmetered ----------------------------------------------------------------

def test_a_tpu_only_team_cannot_take_gpus():
    grab = job("research", "gpu-grab", "research-queue", nodeSelector={"cloud.google.com/gke-accelerator":
                                                                       "nvidia-h200-141gb"},
               tolerations=[{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}],
               containers=[container({GPU: 8}, resources={"requests": {"cpu": "8", "memory": "64Gi", GPU: 8},
                                                           "limits": {GPU: 8}})])
    assert verdict("prod", grab) == ("refused: research/gpu-grab: Kueue: couldn't assign flavors to pod set main: "
                                     "resource nvidia.com/gpu unavailable in ClusterQueue")


def test_a_cpu_flood_is_held_to_the_cpu_quota():
    flood = job("training", "flood", "preprocessing", pods=500,
                tolerations=[{"key": "workload-class", "value": "preprocessing", "effect": "NoSchedule"}],
                containers=[container({"cpu": "4"})])
    line = verdict("dev", flood)
    assert line.startswith("refused: training/flood: Kueue: couldn't assign flavors to pod set main: "), line
    assert "insufficient quota for cpu in flavor cpu-workers" in line


def test_cpu_work_in_a_queue_of_accelerators_is_refused_not_left_pending_on_tpu_nodes():
    line = verdict("prod", job("training", "cpu-only", "training-queue", pods=10,
                               labels={"kueue.x-k8s.io/max-exec-time-seconds": "3600"}))  # prod's training limits jobs
    assert line.startswith("refused: training/cpu-only: Kueue: pod set main requests no google.com/tpu but got "
                           "flavor v5p-res"), line
    assert "google.com/tpu=present:NoSchedule taint: its pods never schedule" in line


def test_a_pod_without_a_queue_name_waits_for_one():
    line = verdict("prod", pod("research", "bare", nodeSelector=V5P,
                               tolerations=[{"key": TPU, "operator": "Exists", "effect": "NoSchedule"}],
                               containers=[container({TPU: 4}, resources={"requests": {TPU: 4},
                                                                          "limits": {TPU: 4}})]))
    assert line.startswith("refused: research/bare: Kueue: no kueue.x-k8s.io/queue-name label and no LocalQueue "
                           "default in namespace research: the job stays gated"), line


# --- placement: team pods stay on the nodes of their flavor ----------------------------------------

PLACEMENT = "refused: research/squat: ValidatingAdmissionPolicy gke-ai-batch-pod-placement: "


@pytest.mark.parametrize("spec, reason", [
    ({"nodeSelector": V5P, "tolerations": [{"key": TPU, "operator": "Exists", "effect": "NoSchedule"}]},
     "a pod that tolerates the google.com/tpu taint of accelerator nodes must request google.com/tpu"),
    ({"tolerations": [{"operator": "Exists"}]}, "a toleration without a key tolerates every taint"),
    ({"tolerations": [{"key": "components.gke.io/gke-managed-components", "operator": "Exists"}]},
     "the system pool (components.gke.io/gke-managed-components) runs GKE's and the platform's controllers"),
])
def test_team_pods_cannot_place_themselves_on_nodes_their_quota_does_not_reach(spec, reason):
    assert verdict("prod", pod("research", "squat", "research-queue", **spec)).startswith(PLACEMENT + reason)


def test_a_pod_kueue_gates_cannot_name_its_node():
    """Kueue's pod webhook gates the pod, then the API server's validation refuses a node with gates, before the
    placement policy (which names the same rule) is asked: the sandbox answered so."""
    squat = pod("research", "squat", "research-queue", nodeName="gke-prod-h200-res-0")
    assert verdict("prod", squat) == ('refused: research/squat: API server: The Pod "squat" is invalid: '
                                      "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been "
                                      "cleared")


def test_the_placement_rules_hold_for_the_pods_a_job_creates():
    squat = job("research", "squat", "research-queue", tolerations=[{"operator": "Exists"}])
    assert verdict("prod", squat).startswith(PLACEMENT + "its pods: a toleration without a key")


def test_a_running_pod_cannot_gain_a_toleration():
    """The API server lets a pod's tolerations be added to on update, so the policy judges updates too; the
    scheduler's nodeName on an update is not the member's doing and passes."""
    manifests = [manifest_of(r) for r in planned("prod") if is_manifest(r)]
    policies = [m for m in manifests if m["kind"] == "ValidatingAdmissionPolicy"]
    bindings = [m for m in manifests if m["kind"] == "ValidatingAdmissionPolicyBinding"]
    namespace = next(m for m in manifests if m["kind"] == "Namespace" and m["metadata"]["name"] == "research")
    running = pod("research", "p", "research-queue", nodeName="gke-prod-cpu-0")
    gained = copy.deepcopy(running)
    gained["spec"]["tolerations"] = [{"key": TPU, "operator": "Exists"}]
    assert evaluate(policies, bindings, running, namespace, "UPDATE", old_object=running) == []
    [denial] = evaluate(policies, bindings, gained, namespace, "UPDATE", old_object=running)
    assert denial.policy == "gke-ai-batch-pod-placement" and "must request google.com/tpu" in denial.message


# --- Pod Security: no host access ------------------------------------------------------------------

@pytest.mark.parametrize("spec, reason", [
    ({"containers": [container(securityContext={"privileged": True})]},
     'privileged (container "x" must not set securityContext.privileged=true)'),
    ({"volumes": [{"name": "kubelet", "hostPath": {"path": "/var/lib/kubelet"}}]},
     'hostPath volumes (volume "kubelet")'),
    ({"hostNetwork": True}, "host namespaces (hostNetwork=true)"),
])
def test_pods_cannot_reach_the_node(spec, reason):
    assert verdict("prod", pod("training", "host", "training-queue", **spec)) == \
        f"refused: training/host: Pod Security baseline: {reason}"


def test_pod_security_judges_the_pods_a_job_will_create():
    line = verdict("prod", job("training", "priv", "training-queue", labels={MAX_EXEC_TIME_LABEL: "86400"},
                               containers=[container(securityContext={"privileged": True})]))
    assert line == ("refused: training/priv: Pod Security baseline: the pods of priv would be refused: "
                    'privileged (container "x" must not set securityContext.privileged=true)')


def test_the_policies_on_a_job_refuse_it_before_pod_security_meets_its_pods():
    """The API server judges the Job's own request (the policies among it); Pod Security enforces on pods only,
    when the Job controller creates them. The sandbox refused this Job by runtime-limits where `make admit` named
    Pod Security."""
    line = verdict("prod", job("training", "priv", "training-queue",
                               containers=[container(securityContext={"privileged": True})]))
    assert line.startswith("refused: training/priv: ValidatingAdmissionPolicy gke-ai-batch-runtime-limits: "
                           "LocalQueue training-queue of team training holds every job to at most 604800 s")


# --- priorities: a team uses only its own ---------------------------------------------------------

def test_a_team_cannot_jump_the_queue_with_another_teams_priority():
    jump = job("research", "jump", "research-queue", labels={"kueue.x-k8s.io/priority-class": "high-priority"})
    assert verdict("prod", jump) == ("refused: research/jump: ValidatingAdmissionPolicy "
                                     "gke-ai-batch-priorities-templates: team research may use the priorities "
                                     "low-priority; not high-priority")


def test_a_pod_cannot_name_another_teams_priority_class():
    line = verdict("prod", pod("research", "jump", "research-queue", priorityClassName="high-priority"))
    assert line == ("refused: research/jump: ValidatingAdmissionPolicy gke-ai-batch-priorities-pods: team research "
                    "may use the priorities low-priority; not high-priority")


# --- RBAC: the platform's objects stay the platform's --------------------------------------------

@pytest.mark.parametrize("obj, reason", [
    ({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
      "metadata": {"name": "steal", "namespace": "research"}, "spec": {"clusterQueue": "training"}},
     "team research may not create localqueues.kueue.x-k8s.io in namespace research"),
    ({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
      "metadata": {"name": "friends", "namespace": "research"},
      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
      "subjects": [{"kind": "Group", "name": "system:authenticated"}]},
     "team research may not create rolebindings.rbac.authorization.k8s.io in namespace research"),
    ({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "more", "namespace": "research"}},
     "team research may not create resourcequotas in namespace research"),
])
def test_a_team_cannot_change_its_own_limits(obj, reason):
    assert verdict("prod", obj) == f"refused: research/{obj['metadata']['name']}: RBAC: {reason}"


def test_no_team_can_create_a_priority_class():
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "mine"},
            "value": 100000000}
    assert verdict("prod", high) == ("refused: mine: RBAC: no team of this stack may create "
                                     "priorityclasses.scheduling.k8s.io (cluster scope)")


def test_a_team_cannot_work_in_another_teams_namespace():
    access = tenant_path("prod").access
    assert access.may("research", "create", "jobs.batch", "research")
    assert not access.may("research", "create", "jobs.batch", "training")
    assert not access.may("research", "get", "secrets", "training")


def test_a_namespace_that_is_no_teams_is_refused():
    line = verdict("prod", job("kube-system", "sneak", "training-queue"))
    assert line.startswith("refused: kube-system/sneak: RBAC: namespace kube-system belongs to no team of this stack")


@pytest.mark.parametrize("group", ["system:authenticated", "system:serviceaccounts"])
def test_everyone_cannot_be_a_team(group):
    platform = platform_of("prod")
    platform["teams"][1]["groups"] = [group]
    with pytest.raises(PlanError, match=r"platform\.teams\[1\]\.groups"):
        run_config(platform)


def test_a_team_without_groups_has_no_members():
    platform = platform_of("prod")
    platform["teams"][1]["groups"] = []
    regs = run_config(platform, "no-groups")
    path = TenantPath((manifest_of(r) for r in regs if is_manifest(r)), cluster_of(regs))
    line = describe(path.judge(job("research", "j", "research-queue")))
    assert line == ("refused: research/j: RBAC: team research names no groups (teams[].groups), so no member of it "
                    "may create jobs.batch in namespace research; only cluster administrators can")
    assert StackAccess(manifest_of(r) for r in regs if is_manifest(r)).groups("research") == frozenset()


# --- and what teams are for still works ----------------------------------------------------------

@pytest.mark.parametrize("stack", [s for s in STACKS if (ROOT / "examples" / "workloads" / f"{s}.yaml").is_file()])
def test_every_sample_workload_passes_the_whole_path(stack):
    for obj in objects_in(ROOT / "examples" / "workloads" / f"{stack}.yaml"):
        line = verdict(stack, obj)
        assert line.startswith(("admitted: ", "created: ")), line


@pytest.mark.parametrize("stack", STACKS)
def test_every_team_of_every_stack_has_the_access_it_needs_and_no_more(stack):
    access = tenant_path(stack).access
    for team in access.teams:
        wrong = [(c.verb, c.resource, ns, c.expected) for c, ns in access.standard(team)
                 if access.may(team, c.verb, c.resource, ns) != c.expected]
        assert wrong == [], f"{stack}/{team}"
