"""Would Kueue v0.19.2 admit a workload on an empty cluster, and would it then run?

The sample workloads are checked against their planned stacks; everything else uses small
hand-built manifests, so these tests pin Kueue's behaviour and messages, not a stack's details."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gke_ai_batch.admission.cluster import Cluster
from gke_ai_batch.admission.decision import admit_in
from gke_ai_batch.admission.pod_sets import pod_requests
from gke_ai_batch.admission.quantities import format_amount, resource_order
from gke_ai_batch.admission.terms import BLOCK_UNDECLARED, IGNORE_UNDECLARED
from gke_ai_batch.model.pool_facts import pool_facts
from gke_ai_batch.offline.admit import OTHER_STACKS, WorkloadError, cluster_of, main, placement, workloads

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = ROOT / "examples" / "workloads"
TPU, GPU = "google.com/tpu", "nvidia.com/gpu"
V5E = {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice", "cloud.google.com/gke-tpu-topology": "2x4"}
V6E = {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "4x4"}
H100 = {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}
QUEUED = {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "true", "effect": "NoSchedule"}


# --- hand-built objects ---------------------------------------------------------------------

def namespace(name, **labels):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def flavor(name, labels=None, taints=None, tolerations=None):
    spec = {"nodeLabels": labels or {}}
    spec.update({"nodeTaints": taints} if taints else {})
    spec.update({"tolerations": tolerations} if tolerations else {})
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def group(*flavors, covered=(TPU,)):
    """flavors: (name, {resource: nominal or {nominalQuota, borrowingLimit, lendingLimit}})"""
    def res(r, q):
        return {"name": r, **(q if isinstance(q, dict) else {"nominalQuota": q})}
    return {"coveredResources": list(covered),
            "flavors": [{"name": f, "resources": [res(r, q) for r, q in quotas.items()]} for f, quotas in flavors]}


def cluster_queue(name, *groups, selector=None, cohort=None, checks=None, **spec):
    spec = {"resourceGroups": list(groups), "namespaceSelector": {} if selector is None else selector, **spec}
    if cohort:
        spec["cohortName"] = cohort
    if checks:
        spec["admissionChecksStrategy"] = {"admissionChecks": checks}
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def local_queue(ns, name, cq):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"namespace": ns, "name": name}, "spec": {"clusterQueue": cq}}


def dws_check():
    return [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ProvisioningRequestConfig",
             "metadata": {"name": "dws-config"},
             "spec": {"provisioningClassName": "queued-provisioning.gke.io", "managedResources": [GPU]}},
            {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": {"name": "dws-prov"},
             "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request",
                      "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig",
                                     "name": "dws-config"}}}]


def tpu_pool(name, labels=None, topology="2x4", nodes=2):
    return pool_facts({"name": name, "nodeConfig": {"machineType": "ct5lp-hightpu-4t", "labels": labels or {}},
                       "placementPolicy": {"tpuTopology": topology}, "nodeCount": nodes,
                       "nodeLocations": ["us-east5-b"]})


def dws_pool(name="h100-dws", max_nodes=4):
    return pool_facts({"name": name, "queuedProvisioning": {"enabled": True},
                       "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": max_nodes},
                       "nodeConfig": {"machineType": "a3-highgpu-8g",
                                      "guestAccelerators": [{"type": "nvidia-h100-80gb", "count": 8}]},
                       "nodeLocations": ["us-east5-b"]})


def pod(limits=None, requests=None, selector=None, tolerations=None):
    spec = {"restartPolicy": "Never", "nodeSelector": selector or {},
            "containers": [{"name": "main", "image": "busybox",
                            "resources": {"limits": limits or {}, "requests": requests or {}}}]}
    if tolerations:
        spec["tolerations"] = tolerations
    return spec


def job(pod_spec, pods=1, ns="team", queue="q", name="job"):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns, "labels": {"kueue.x-k8s.io/queue-name": queue}},
            "spec": {"parallelism": pods, "completions": pods, "suspend": True, "template": {"spec": pod_spec}}}


def jobset(*replicated, ns="team", queue="q", name="js"):
    """replicated: (name, replicas, pods per replica, pod spec)"""
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "namespace": ns, "labels": {"kueue.x-k8s.io/queue-name": queue}},
            "spec": {"replicatedJobs": [
                {"name": n, "replicas": r, "template": {"spec": {"parallelism": p, "completions": p,
                                                                  "template": {"spec": spec}}}}
                for n, r, p, spec in replicated]}}


CONFIG = {"integrations": {"frameworks": ["batch/job", "jobset.x-k8s.io/jobset"]}}


def config(strategy=None):
    return {**CONFIG, "resources": {"quotaCheckStrategy": strategy}} if strategy else dict(CONFIG)


def tpu_cluster(nominal=16, strategy=None, pools=None, extra=()):
    """One team namespace, one v5e flavor and a ClusterQueue covering only google.com/tpu."""
    manifests = [namespace("team"), flavor("v5e", V5E), local_queue("team", "q", "cq"),
                 cluster_queue("cq", group(("v5e", {TPU: nominal}))), *extra]
    pools = [tpu_pool(f"v5e-{i}") for i in range(2)] if pools is None else pools
    return Cluster.build(manifests, config(strategy), pools)


# --- the sample workloads ---------------------------------------------------------------------

@pytest.mark.parametrize("path", sorted(WORKLOADS.glob("*.yaml")), ids=lambda p: p.stem)
def test_sample_workload_is_admitted_by_its_stack(plan, path):
    cluster = cluster_of(plan(path.stem))
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") in ("Job", "JobSet")]
    assert docs
    for doc in docs:
        result = admit_in(cluster, doc)
        assert result.admitted, result.problems
        assert result.cluster_queue and all(ps.flavors for ps in result.pod_sets), result.problems


# --- Kueue's own decisions --------------------------------------------------------------------

def test_tpu_job_asking_cpu_and_memory_needs_ignore_undeclared():
    spec = pod(limits={TPU: 4}, requests={"cpu": "8", "memory": "32Gi"}, selector=V5E)
    blocked = admit_in(tpu_cluster(strategy=BLOCK_UNDECLARED), job(spec, pods=2))
    # Kueue 0.19.2 iterates requests in FNV-1a hash order, in which memory comes before cpu.
    assert blocked.reason == "couldn't assign flavors to pod set main: resource memory unavailable in ClusterQueue"
    assert not blocked.admitted
    cpu_only = admit_in(tpu_cluster(strategy=BLOCK_UNDECLARED), job(pod(limits={TPU: 4, "cpu": 8}, selector=V5E), 2))
    assert cpu_only.reason == "couldn't assign flavors to pod set main: resource cpu unavailable in ClusterQueue"
    unset = admit_in(tpu_cluster(strategy=None), job(spec, pods=2))  # no quotaCheckStrategy: BlockUndeclared
    assert unset.reason == blocked.reason
    ignored = admit_in(tpu_cluster(strategy=IGNORE_UNDECLARED), job(spec, pods=2))
    assert ignored.admitted, ignored.problems
    assert [(f.flavor, f.resources) for f in ignored.pod_sets[0].flavors] == [("v5e", (TPU,))]


def test_zero_undeclared_request_is_skipped_even_when_blocking():
    spec = pod(limits={TPU: 4}, requests={"cpu": 0}, selector=V5E)
    assert admit_in(tpu_cluster(strategy=BLOCK_UNDECLARED), job(spec, pods=2)).admitted


def cohort_cluster(borrowing_limit=None, lending_limit=8, fungibility=None):
    """Team cq (nominal 16 on v5e) in cohort `ml` with `other` (nominal 16, lends `lending_limit`)."""
    mine = {"nominalQuota": 16, **({"borrowingLimit": borrowing_limit} if borrowing_limit is not None else {})}
    theirs = {"nominalQuota": 16, **({"lendingLimit": lending_limit} if lending_limit is not None else {})}
    extra = {"flavorFungibility": fungibility} if fungibility else {}
    manifests = [namespace("team"), namespace("other"), flavor("v5e", V5E), flavor("v5e-b", V5E),
                 local_queue("team", "q", "cq"),
                 cluster_queue("cq", group(("v5e", {TPU: mine}), ("v5e-b", {TPU: 16})), cohort="ml", **extra),
                 cluster_queue("other", group(("v5e", {TPU: theirs})), cohort="ml")]
    pools = [tpu_pool(f"v5e-{i}") for i in range(4)]
    return Cluster.build(manifests, config(IGNORE_UNDECLARED), pools)


def test_more_chips_than_nominal_plus_borrowable_quota():
    spec = pod(limits={TPU: 4}, selector=V5E)
    result = admit_in(cohort_cluster(), jobset(("slice", 4, 2, spec)))  # 32 chips; v5e: 16 + 8 lent
    assert result.reason == (
        "couldn't assign flavors to pod set slice: insufficient quota for google.com/tpu in flavor v5e, "
        "previously considered podsets requests (0) + current podset request (32) > maximum capacity (24), "
        "insufficient quota for google.com/tpu in flavor v5e-b, previously considered podsets requests (0) "
        "+ current podset request (32) > maximum capacity (16)")
    assert not result.admitted and result.pod_sets == ()


def test_borrowing_from_the_cohort():
    spec = pod(limits={TPU: 4}, selector=V5E)
    result = admit_in(cohort_cluster(), jobset(("slice", 3, 2, spec)))  # 24 chips: 16 own + 8 lent
    assert result.admitted, result.problems
    (choice,) = result.pod_sets[0].flavors
    assert (choice.flavor, choice.borrowing) == ("v5e", True)
    assert placement(result) == "ClusterQueue cq, pod set slice: flavor v5e (borrowing)"
    within = admit_in(cohort_cluster(), jobset(("slice", 2, 2, spec)))  # 16 chips: no borrowing
    assert not within.pod_sets[0].borrowing


def test_borrowing_limit_and_lending_limit_cap_the_cohort():
    spec = pod(limits={TPU: 4}, selector=V5E)
    capped = admit_in(cohort_cluster(borrowing_limit=4), jobset(("slice", 3, 2, spec)))
    assert "current podset request (24) > maximum capacity (20)" in capped.reason
    lends_all = admit_in(cohort_cluster(lending_limit=None), jobset(("slice", 4, 2, spec)))
    assert lends_all.admitted and lends_all.pod_sets[0].borrowing, lends_all.problems


def test_first_fitting_flavor_wins_even_when_borrowing_unless_try_next_flavor():
    spec = pod(limits={TPU: 4}, selector=V5E)
    two_pod_sets = jobset(("slice", 2, 2, spec), ("extra", 1, 2, spec))  # 16 + 8 chips
    default = admit_in(cohort_cluster(), two_pod_sets)
    assert [(ps.name, ps.flavors[0].flavor, ps.borrowing) for ps in default.pod_sets] == [
        ("slice", "v5e", False), ("extra", "v5e", True)]
    averse = admit_in(cohort_cluster(fungibility={"whenCanBorrow": "TryNextFlavor"}), two_pod_sets)
    assert [(ps.name, ps.flavors[0].flavor, ps.borrowing) for ps in averse.pod_sets] == [
        ("slice", "v5e", False), ("extra", "v5e-b", False)]


def test_earlier_pod_sets_count_against_the_same_flavor():
    spec = pod(limits={TPU: 4}, selector=V5E)
    result = admit_in(tpu_cluster(nominal=16), jobset(("a", 1, 2, spec), ("b", 2, 2, spec)))
    assert result.reason == (
        "couldn't assign flavors to pod set b: insufficient quota for google.com/tpu in flavor v5e, "
        "previously considered podsets requests (8) + current podset request (16) > maximum capacity (16)")


def test_namespace_the_cluster_queue_does_not_select():
    selector = {"matchLabels": {"team": "ml"}}
    manifests = [namespace("team", team="ml"), namespace("guest", team="web"), flavor("v5e", V5E),
                 local_queue("team", "q", "cq"), local_queue("guest", "q", "cq"),
                 cluster_queue("cq", group(("v5e", {TPU: 16})), selector=selector)]
    cluster = Cluster.build(manifests, config(IGNORE_UNDECLARED), [tpu_pool("v5e-0")])
    spec = pod(limits={TPU: 4}, selector=V5E)
    assert admit_in(cluster, job(spec, pods=2, ns="team")).admitted
    guest = admit_in(cluster, job(spec, pods=2, ns="guest"))
    assert guest.reason == "workload namespace doesn't match ClusterQueue selector"
    assert guest.cluster_queue == "cq" and not guest.admitted


def test_namespace_selector_expressions_and_the_name_label():
    by_name = {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["team"]}]}
    for selector, admitted in ((by_name, True), (None, False), ({"matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["team"]}]}, False)):
        cq = cluster_queue("cq", group(("v5e", {TPU: 16})))
        cq["spec"]["namespaceSelector"] = selector  # None: Kueue's "nothing" selector
        cluster = Cluster.build([flavor("v5e", V5E), local_queue("team", "q", "cq"), cq], config(), [])
        assert admit_in(cluster, job(pod(limits={TPU: 4}, selector=V5E), 2)).admitted is admitted, selector


def test_missing_local_queue():
    result = admit_in(tpu_cluster(), job(pod(limits={TPU: 4}, selector=V5E), pods=2, queue="nope"))
    assert result.reason == "LocalQueue nope doesn't exist"
    assert result.cluster_queue is None and not result.admitted


def test_missing_cluster_queue_and_inactive_cluster_queue():
    dangling = Cluster.build([local_queue("team", "q", "gone")], config(), [])
    assert admit_in(dangling, job(pod(limits={TPU: 4}))).reason == "ClusterQueue gone doesn't exist"
    no_flavor = Cluster.build([local_queue("team", "q", "cq"), cluster_queue("cq", group(("v5e", {TPU: 16})))],
                              config(), [])
    result = admit_in(no_flavor, job(pod(limits={TPU: 4})))
    assert result.reason == "ClusterQueue cq is inactive"
    assert result.warnings == (
        "ClusterQueue cq: Can't admit new workloads: references missing ResourceFlavor(s): v5e.",)


def test_node_selector_no_flavor_matches():
    manifests = [flavor("v5e", V5E), flavor("v6e", V6E), local_queue("team", "q", "cq"),
                 cluster_queue("cq", group(("v5e", {TPU: 16}), ("v6e", {TPU: 16})))]
    cluster = Cluster.build(manifests, config(), [])
    wrong = dict(V5E, **{"cloud.google.com/gke-tpu-topology": "4x8"})
    result = admit_in(cluster, job(pod(limits={TPU: 4}, selector=wrong), pods=2))
    assert result.reason == ("couldn't assign flavors to pod set main: flavor v5e doesn't match node affinity, "
                             "flavor v6e doesn't match node affinity")
    # Keys a flavor does not label are ignored; the second flavor is used when the first mismatches.
    ok = admit_in(cluster, job(pod(limits={TPU: 4}, selector={**V6E, "example.com/any": "x"}), pods=4))
    assert ok.pod_sets[0].flavors[0].flavor == "v6e"


def test_required_node_affinity_against_flavor_labels():
    manifests = [flavor("v5e", V5E), local_queue("team", "q", "cq"), cluster_queue("cq", group(("v5e", {TPU: 16})))]
    cluster = Cluster.build(manifests, config(), [])
    spec = pod(limits={TPU: 4})

    def with_terms(*terms):
        s = dict(spec, affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": list(t)} for t in terms]}}})
        return admit_in(cluster, job(s, pods=2))
    topo = "cloud.google.com/gke-tpu-topology"
    assert with_terms([{"key": topo, "operator": "In", "values": ["2x4", "4x4"]}]).admitted
    assert with_terms([{"key": topo, "operator": "NotIn", "values": ["2x4"]}]).reason.endswith(
        "flavor v5e doesn't match node affinity")
    # A term with no key the flavor knows matches anything (terms are ORed).
    assert with_terms([{"key": topo, "operator": "In", "values": ["4x4"]}],
                      [{"key": "example.com/zone", "operator": "In", "values": ["a"]}]).admitted


def test_flavor_taints_need_tolerations():
    spot = {"key": "cloud.google.com/gke-spot", "value": "true", "effect": "NoSchedule"}
    manifests = [flavor("spot", V5E, taints=[spot]), local_queue("team", "q", "cq"),
                 cluster_queue("cq", group(("spot", {TPU: 16})))]
    cluster = Cluster.build(manifests, config(), [])
    plain = admit_in(cluster, job(pod(limits={TPU: 4}, selector=V5E), pods=2))
    assert plain.reason == ("couldn't assign flavors to pod set main: "
                            "untolerated taint {cloud.google.com/gke-spot true NoSchedule <nil>} in flavor spot")
    tolerated = pod(limits={TPU: 4}, selector=V5E, tolerations=[{"key": "cloud.google.com/gke-spot",
                                                                 "operator": "Exists", "effect": "NoSchedule"}])
    assert admit_in(cluster, job(tolerated, pods=2)).admitted
    # The flavor's own tolerations count too.
    self_tolerating = Cluster.build([flavor("spot", V5E, taints=[spot], tolerations=[dict(spot, operator="Equal")]),
                                     *manifests[1:]], config(), [])
    assert admit_in(self_tolerating, job(pod(limits={TPU: 4}, selector=V5E), pods=2)).admitted


def test_namespace_not_managed_and_missing_priority_class():
    spec = pod(limits={TPU: 4}, selector=V5E)
    opt_in = {**CONFIG, "managedJobsNamespaceSelector": {"matchLabels": {"kueue": "on"}}}
    manifests = [namespace("team"), flavor("v5e", V5E), local_queue("team", "q", "cq"),
                 cluster_queue("cq", group(("v5e", {TPU: 16})))]
    result = admit_in(Cluster.build(manifests, opt_in, []), job(spec, pods=2))
    assert result.reason.startswith("Namespace not opted in for Kueue management: namespace team")
    opted_in = Cluster.build([namespace("team", kueue="on"), *manifests[1:]], opt_in, [])
    assert admit_in(opted_in, job(spec, pods=2)).admitted
    urgent = job(spec, pods=2)
    urgent["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "urgent"
    assert admit_in(tpu_cluster(), urgent).reason == 'workloadpriorityclasses.kueue.x-k8s.io "urgent" not found'


# --- what Kueue does not check ----------------------------------------------------------------

def dws_cluster(max_nodes=4, quota=64, strategy=IGNORE_UNDECLARED):
    manifests = [namespace("team"), flavor("h100-dws", H100, tolerations=[QUEUED]), *dws_check(),
                 local_queue("team", "q", "cq"),
                 cluster_queue("cq", group(("h100-dws", {GPU: quota}), covered=(GPU,)),
                               checks=[{"name": "dws-prov", "onFlavors": ["h100-dws"]}])]
    return Cluster.build(manifests, config(strategy), [dws_pool(max_nodes=max_nodes)])


def test_dws_job_within_the_pool_maximum_runs_under_the_provisioning_check():
    result = admit_in(dws_cluster(), job(pod(limits={GPU: 8}, requests={"cpu": "16"}, selector=H100), pods=4))
    assert result.admitted, result.problems
    assert result.checks == ("dws-prov",)
    assert placement(result) == ("ClusterQueue cq, pod set main: flavor h100-dws "
                                 "[checks: dws-prov]")


def test_dws_job_needing_more_nodes_than_the_pool_maximum_is_inadmissible():
    result = admit_in(dws_cluster(max_nodes=4), job(pod(limits={GPU: 8}, selector=H100), pods=5))
    assert result.quota_reserved  # 40 GPUs within quota 64: Kueue itself would reserve quota ...
    assert not result.admitted  # ... but the ProvisioningRequest can never be satisfied
    (warning,) = result.warnings
    assert "needs 5 nodes of node pool h100-dws" in warning and "maximum size is 4" in warning
    assert "Kueue issue 5129" in warning and "dws-prov" in warning
    # Pods that do not divide a node evenly: 3 x 3 GPUs per 8-GPU node needs 2 nodes, fits 2.
    assert admit_in(dws_cluster(max_nodes=2), job(pod(limits={GPU: 3}, selector=H100), pods=3)).admitted
    assert not admit_in(dws_cluster(max_nodes=2), job(pod(limits={GPU: 3}, selector=H100), pods=5)).admitted


def test_jobset_asking_for_more_slices_than_pools():
    spec = pod(limits={TPU: 4}, selector=V5E)
    cluster = tpu_cluster(nominal=64, pools=[tpu_pool(f"v5e-{i}") for i in range(3)])
    assert admit_in(cluster, jobset(("slice", 3, 2, spec))).admitted
    result = admit_in(cluster, jobset(("slice", 4, 2, spec)))
    assert result.quota_reserved and not result.admitted
    (warning,) = result.warnings
    assert "4 slices requested but flavor v5e has only 3 node pool(s)" in warning


def test_multi_host_pods_must_fill_one_slice():
    wrong_count = admit_in(tpu_cluster(nominal=64), job(pod(limits={TPU: 4}, selector=V5E), pods=4))
    assert wrong_count.quota_reserved and not wrong_count.admitted
    assert ("4 pods x 4 google.com/tpu = 16 chips per slice in topology 2x4 match no TPU slice"
            in wrong_count.warnings[0])
    wrong_chips = admit_in(tpu_cluster(nominal=64), job(pod(limits={TPU: 2}, selector=V5E), pods=2))
    assert not wrong_chips.admitted


# --- pieces -----------------------------------------------------------------------------------

def test_pod_requests_follow_kubernetes_and_kueue_rules():
    spec = {"containers": [{"name": "a", "resources": {"requests": {"cpu": "500m"}, "limits": {"memory": "1Gi"}}},
                           {"name": "b", "resources": {"limits": {"cpu": "1", TPU: 4}}}],
            "initContainers": [{"name": "init", "resources": {"requests": {"cpu": "4"}}},
                               {"name": "sidecar", "restartPolicy": "Always",
                                "resources": {"requests": {"memory": "1Gi"}}}]}
    assert pod_requests(spec) == {"cpu": 4000, "memory": 2 * 2**30, TPU: 4}
    assert pod_requests(spec, ["google.com/"]) == {"cpu": 4000, "memory": 2 * 2**30}


def test_quantities_print_as_kueue_prints_them():
    assert [format_amount("cpu", v) for v in (500, 10000, 1500, 0)] == ["500m", "10", "1500m", "0"]
    assert [format_amount("memory", v) for v in (4 * 2**30, 10**9, 100)] == ["4Gi", "1G", "100"]
    assert format_amount(TPU, 32) == "32"
    assert resource_order(["cpu", "memory", TPU]) == ["memory", TPU, "cpu"]


def test_a_workload_folder_is_judged_whole_and_what_is_skipped_is_named(tmp_path):
    """A folder once gave only `<stack>.yaml`: a user's vision.yaml beside dev.yaml was skipped, exit 0."""
    job = yaml.safe_dump({"kind": "Job", "metadata": {"name": "j"}})
    for name in ("dev.yaml", "prod.yaml", "vision.yaml", "more.yml"):
        (tmp_path / name).write_text(job)
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "values.yaml").write_text("replicas: 2\n")
    (tmp_path / "sub").mkdir()
    got = workloads([str(tmp_path)], "dev", ["dev", "prod"])
    assert [p.name for p, _ in got.docs] == ["dev.yaml", "more.yml", "vision.yaml"]
    assert {p.name: why for p, why in got.skipped} == {
        "notes.txt": "not a .yaml or .yml file", "prod.yaml": OTHER_STACKS,
        "sub": "a folder (give it as WORKLOAD to judge its files)",
        "values.yaml": "no Kubernetes object in it (no YAML document with a `kind`)"}


@pytest.mark.parametrize("make, words", [
    (lambda d: d / "missing", "no such file or folder: {}"),
    (lambda d: d, "folder {} has nothing to judge for stack multislice: it holds no file"),
    (lambda d: (d / "hotswap.yaml").write_text("kind: Job\n") and d,
     "folder {} has nothing to judge for stack multislice (skipped hotswap.yaml: named after another stack"),
    (lambda d: (d / "empty.yaml").write_text("# nothing\n---\nreplicas: 2\n") and d / "empty.yaml",
     "{} holds no Kubernetes object (no YAML document with a `kind`)"),
    (lambda d: (d / "bad.yaml").write_text("kind: [\n") and d / "bad.yaml", "{}: not YAML: while parsing a flow"),
])
def test_a_workload_with_nothing_to_judge_is_one_line_and_exit_2(tmp_path, capsys, make, words):
    path = make(tmp_path)
    assert main(["multislice", str(path)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1, out.err
    assert words.format(path) in out.err


def test_a_folder_of_other_stacks_samples_says_how_to_judge_one(tmp_path, capsys):
    """`make admit STACK=lab` for a stack copied from dev (getting-started) read the default folder and listed
    every sample with the same reason, ten times over, and no way to judge one against lab."""
    for name in ("dev.yaml", "prod.yaml"):
        (tmp_path / name).write_text("kind: Job\n")
    with pytest.raises(WorkloadError) as e:
        workloads([f"{tmp_path}/"], "lab", ["dev", "prod", "lab"])
    assert str(e.value) == (f"folder {tmp_path}/ has nothing to judge for stack lab (skipped dev.yaml, prod.yaml: "
                            f"{OTHER_STACKS}); WORKLOAD={tmp_path}/<file> judges one against stack lab")


def test_cli_exit_codes(tmp_path, capsys):
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text("config:\n  gke-ai-batch:platform: {}\n")
    assert main([str(bad), str(WORKLOADS / "multislice.yaml")]) == 2
    assert "error: stack bad" in capsys.readouterr().err
    assert main(["no-such-stack", str(WORKLOADS)]) == 2


def test_cli_runs_as_a_module(tmp_path):
    missing = dict(yaml.safe_load((WORKLOADS / "multislice.yaml").read_text()))
    missing["metadata"] = {**missing["metadata"], "name": "lost",
                           "labels": {"kueue.x-k8s.io/queue-name": "no-such-queue"}}
    extra = tmp_path / "lost.yaml"
    extra.write_text(yaml.safe_dump(missing))
    run = subprocess.run([sys.executable, "-m", "gke_ai_batch.offline.admit", "multislice", str(WORKLOADS), str(extra)],
                         cwd=ROOT, capture_output=True, text=True)
    lines = run.stdout.splitlines()
    assert run.returncode == 1, run.stderr
    assert lines[0] == f"skipped: {WORKLOADS}/ batch-teams.yaml, dev.yaml, dws-gpu.yaml, dynamic-slicing.yaml, " \
        f"fleet-manager.yaml, flex-start.yaml, hotswap.yaml, multislice-autopilot.yaml, pathways.yaml, prod.yaml: " \
        f"{OTHER_STACKS}"
    assert lines[1].startswith("admitted: default/multislice-job -> ClusterQueue ")
    assert lines[2] == "refused: default/lost: Kueue: LocalQueue no-such-queue doesn't exist"
    assert "Traceback" not in run.stderr


# --- the stacks' own Kueue configuration --------------------------------------------------

TPU_TRAINING_JOB = {
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "train", "namespace": "research", "labels": {"kueue.x-k8s.io/queue-name": "research-queue"}},
    "spec": {"parallelism": 2, "completions": 2, "template": {"spec": {
        "nodeSelector": V5E, "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "jax", "resources": {
            "requests": {"cpu": "8", "memory": "32Gi", TPU: 4}, "limits": {TPU: 4}}}]}}},
}


def with_config(cluster: Cluster, **changes) -> Cluster:
    return dataclasses.replace(cluster, config={**cluster.config, **changes})


def test_dev_admits_a_tpu_job_that_asks_for_cpu_and_memory(plan):
    """Under Kueue's default BlockUndeclared a training pod's cpu and memory need quota too: the queues
    cover them on each accelerator flavor, derived from the chips; with chips only (the old queues)
    the same job was never admitted."""
    dev = cluster_of(plan("dev"))
    assert dev.config["resources"]["quotaCheckStrategy"] == BLOCK_UNDECLARED
    admitted = admit_in(dev, TPU_TRAINING_JOB)
    assert admitted.admitted and set(admitted.pod_sets[0].flavors[0].resources) == {"cpu", "memory", TPU}


BARE_TPU_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sneaky", "namespace": "research"},
                "spec": {"nodeSelector": V5E, "containers": [{"name": "main", "image": "jax", "resources": {
                    "limits": {TPU: 4}}}]}}


def test_a_bare_tpu_pod_in_a_team_namespace_is_held(plan):
    """Without Kueue's pod integration such a Pod ran on the accelerator nodes outside every quota."""
    dev = cluster_of(plan("dev"))
    held = admit_in(dev, BARE_TPU_POD)
    assert not held.admitted and "stays gated (scheduling gate kueue.x-k8s.io/admission)" in held.reason
    old = with_config(dev, integrations={"frameworks": ["batch/job", "jobset.x-k8s.io/jobset"]})
    assert admit_in(old, BARE_TPU_POD).reason == ("Kueue does not manage Pods: integration pod is not in "
                                              "integrations.frameworks")
    queued = {**BARE_TPU_POD, "metadata": {**BARE_TPU_POD["metadata"], "labels": {
        "kueue.x-k8s.io/queue-name": "research-queue"}}}
    # With its queue's label it is a workload under quota like any other (one pod cannot fill a 2-VM slice,
    # which the physical check says; Kueue itself reserves the quota).
    assert admit_in(dev, queued).quota_reserved
