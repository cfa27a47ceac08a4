"""The Kueue layer: quotas match pools, references resolve, flavors come from the pools."""
import pytest
import yaml

from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.plan.installs import kueue_manager_config
from gke_ai_batch.plan.platform import build_platform

from .conftest import ROOT, STACKS, by_type, platform_of


def objects(regs, kind):
    return {r.inputs["metadata"]["name"]: r.inputs for r in by_type(regs, f":{kind}")}


MULTISLICE_MEMORY = "1113921Mi"  # 24 chips x a ct5lp-hightpu-4t VM's allocatable memory / 4 chips, whole MiB


def quota_of(cq_spec, flavor, resource):
    """One flavor's quota of one resource in a ClusterQueue's (single) resource group."""
    (group,) = cq_spec["resourceGroups"]
    (f,) = [f for f in group["flavors"] if f["name"] == flavor]
    return next(r for r in f["resources"] if r["name"] == resource)


def test_multislice_quota_is_the_three_slices(plan):
    regs = plan("multislice")
    flavor = objects(regs, "ResourceFlavor")["vlp-24"]
    assert flavor["spec"]["nodeLabels"] == {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
                                            "cloud.google.com/gke-tpu-topology": "2x4",
                                            "gke-ai-batch.io/flavor": "vlp-24"}
    cq = objects(regs, "ClusterQueue")["cluster-queue"]["spec"]
    assert cq["namespaceSelector"] == {} and cq["queueingStrategy"] == "BestEffortFIFO"
    assert cq["preemption"] == {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
    chips = sum(p.inputs["nodeCount"] * 4 for p in by_type(regs, "nodePool:NodePool") if p.name.startswith("vlp"))
    assert quota_of(cq, "vlp-24", "google.com/tpu") == {"name": "google.com/tpu", "nominalQuota": 24} and chips == 24
    # cpu and memory come with the chips: 24 x the 111.65 allocatable cores of a 4-chip ct5lp-hightpu-4t / 4
    assert quota_of(cq, "vlp-24", "cpu")["nominalQuota"] == "669900m"
    assert quota_of(cq, "vlp-24", "memory")["nominalQuota"] == MULTISLICE_MEMORY
    assert objects(regs, "PriorityClass")["low-priority"]["value"] == 100
    lq = objects(regs, "LocalQueue")["multislice-queue"]
    assert lq["metadata"]["namespace"] == "default" and lq["spec"]["clusterQueue"] == "cluster-queue"


def test_references_resolve_in_every_stack(plan):
    for stack in STACKS:
        regs = plan(stack)
        cqs, flavors = objects(regs, "ClusterQueue"), objects(regs, "ResourceFlavor")
        checks = objects(regs, "AdmissionCheck")
        for r in by_type(regs, ":LocalQueue"):
            assert r.inputs["spec"]["clusterQueue"] in cqs, stack
        for cq in cqs.values():
            for group in cq["spec"]["resourceGroups"]:
                for f in group["flavors"]:
                    assert f["name"] in flavors, stack
                    assert [r["name"] for r in f["resources"]] == group["coveredResources"]
            for check in cq["spec"].get("admissionChecksStrategy", {}).get("admissionChecks", []):
                assert check["name"] in checks, stack


def test_dws_admission_check_on_the_queued_flavor_only(plan):
    regs = plan("dev")
    flavors = objects(regs, "ResourceFlavor")
    assert flavors["h100-dws"]["spec"]["tolerations"] == [
        {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "true", "effect": "NoSchedule"}]
    assert "tolerations" not in flavors["v5e-train"]["spec"]
    research = objects(regs, "ClusterQueue")["research"]["spec"]
    assert research["admissionChecksStrategy"] == {"admissionChecks": [
        {"name": "dws-prov", "onFlavors": ["h100-dws"]}, {"name": "dws-prov-tpu-4x4", "onFlavors": ["v6e-queued"]}]}
    prc = objects(regs, "ProvisioningRequestConfig")["dws-config"]["spec"]
    assert prc["provisioningClassName"] == "queued-provisioning.gke.io"
    assert prc["managedResources"] == ["nvidia.com/gpu"]
    check = objects(regs, "AdmissionCheck")["dws-prov"]["spec"]
    assert check["controllerName"] == "kueue.x-k8s.io/provisioning-request"
    assert check["parameters"]["name"] == "dws-config"


def test_capacity_labels_on_flavors(plan):
    flavors = objects(plan("prod"), "ResourceFlavor")
    assert flavors["v6e-flex"]["spec"]["nodeLabels"]["cloud.google.com/gke-flex-start"] == "true"
    assert flavors["v5e-spot"]["spec"]["nodeLabels"]["cloud.google.com/gke-spot"] == "true"
    assert flavors["v5p-res"]["spec"]["nodeLabels"]["gke-ai-batch.io/reservation"] == "v5p-prod-reservation"
    pool = {r.inputs["name"]: r.inputs for r in by_type(plan("prod"), "nodePool:NodePool")}["v5p-res-0"]
    assert pool["nodeConfig"]["labels"] == {"gke-ai-batch.io/reservation": "v5p-prod-reservation",
                                            "gke-ai-batch.io/flavor": "v5p-res"}


def test_each_flavor_selects_exactly_its_own_pools():
    """An on-demand v5e 2x4 flavor must not select spot or reserved 2x4 nodes, nor 8-chip VMs: with
    GKE's labels alone its nodeLabels were a subset of theirs, so its quota landed on their nodes."""
    from gke_ai_batch.model.pool_facts import pool_facts
    from gke_ai_batch.plan.gke_inputs import engine_form, node_pool_inputs
    cfg = platform_of("prod")
    cfg["tpu_pools"] += [{"name": "v5e-od", "generation": "v5e", "topology": "2x4", "zones": ["us-east5-c"]},
                         {"name": "v5e-8t", "generation": "v5e", "topology": "2x4", "machine_type": "ct5lp-hightpu-8t",
                          "zones": ["us-east5-c"]}]
    p = build_platform(cfg)
    facts = {pl.name: pool_facts(engine_form(node_pool_inputs(pl, {}))) for pl in p.pools}
    for flavor in p.scheduling.flavors.values():
        selected = {name for name, f in facts.items() if f.selected_by(flavor.node_labels)}
        assert selected == {pl.name for pl in flavor.pools}, flavor.name


def test_team_queue_admits_only_its_namespaces(plan):
    regs = plan("dev")
    cq = objects(regs, "ClusterQueue")["training"]["spec"]
    assert cq["namespaceSelector"] == {"matchLabels": {"cluster-queue.gke-ai-batch.io/training": "true"}}
    labelled = {n for n, ns in objects(regs, "Namespace").items()
                if ns["metadata"]["labels"].get("cluster-queue.gke-ai-batch.io/training") == "true"}
    assert labelled == {"training", "training-eval"}
    assert cq["cohortName"] == "ml"
    assert quota_of(cq, "v5e-train", "google.com/tpu") == {"name": "google.com/tpu", "nominalQuota": 8,
                                                            "borrowingLimit": 8}


def test_team_rbac_and_namespaces(plan):
    regs = plan("dev")
    rbs = [r.inputs for r in by_type(regs, ":RoleBinding") if r.inputs["metadata"]["name"] == "training-member"]
    assert sorted(rb["metadata"]["namespace"] for rb in rbs) == ["training", "training-eval"]
    assert rbs[0]["roleRef"]["name"] == "gke-ai-batch-team"
    assert rbs[0]["subjects"][0]["name"] == "ml-training@acme.example"
    ns = objects(regs, "Namespace")["training"]
    # team and cost-center split the bill under GKE cost allocation; Pod Security baseline is enforced
    assert ns["metadata"]["labels"] == {"gke-ai-batch.io/team": "training",
                                        "cluster-queue.gke-ai-batch.io/training": "true",
                                        "cluster-queue.gke-ai-batch.io/cpu-batch": "true",
                                        "team": "training", "cost-center": "ml-research",
                                        "pod-security.kubernetes.io/enforce": "baseline",
                                        "pod-security.kubernetes.io/enforce-version": "v1.33",
                                        "pod-security.kubernetes.io/warn": "restricted",
                                        "pod-security.kubernetes.io/warn-version": "v1.33",
                                        "pod-security.kubernetes.io/audit": "restricted",
                                        "pod-security.kubernetes.io/audit-version": "v1.33"}
    # the team's groups, whose requests the kueue-holds, no-orphans and delete-grace policies judge; the global
    # default (low-priority) and below: not high-priority
    assert ns["metadata"]["annotations"] == {"gke-ai-batch.io/groups": "ml-training@acme.example",
                                             "gke-ai-batch.io/priorities": "low-priority",
                                             "gke-ai-batch.io/object-size": "16384",
                                             "gke-ai-batch.io/scrape-samples": "10000",
                                             "gke-ai-batch.io/scrape-interval": "30",
                                             "gke-ai-batch.io/termination-grace": "600"}
    (default,) = [r for r in by_type(plan("multislice"), "Namespace") + by_type(plan("multislice"), "NamespacePatch")
                  if r.inputs["metadata"]["name"] == "default"]
    assert default.type == "kubernetes:core/v1:NamespacePatch"  # it exists already: labelled, never created


def test_hotswap_priorities(plan):
    regs = plan("hotswap")
    pcs, wpcs = objects(regs, "PriorityClass"), objects(regs, "WorkloadPriorityClass")
    assert {n: p["value"] for n, p in pcs.items()} == {"low-priority-job": 1000000, "high-priority-job": 2000000,
                                                       "gke-ai-batch-controllers": 1_000_000_000}
    assert {n: p["value"] for n, p in wpcs.items()} == {"low-priority-job": 1000000, "high-priority-job": 2000000}
    cq = objects(regs, "ClusterQueue")["tpu-training-cq"]["spec"]
    assert quota_of(cq, cq["resourceGroups"][0]["flavors"][0]["name"], "google.com/tpu")["nominalQuota"] == 32


def test_batch_teams_default_flavor(plan):
    regs = plan("batch-teams")
    assert objects(regs, "ResourceFlavor")["default-flavor"]["spec"] == {}
    group = objects(regs, "ClusterQueue")["cluster-queue"]["spec"]["resourceGroups"][0]
    assert group["coveredResources"] == ["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu"]
    assert {r["name"]: r["nominalQuota"] for r in group["flavors"][0]["resources"]} == {
        "cpu": 10, "memory": "10Gi", "ephemeral-storage": "10Gi", "nvidia.com/gpu": 10}
    assert sorted(objects(regs, "LocalQueue")) == ["lq-team-a", "lq-team-b"]


def test_kueue_objects_wait_for_the_release(plan):
    regs = plan("dev")
    release = next(r.urn for r in regs if r.type == "kubernetes:helm.sh/v3:Release" and r.inputs["name"] == "kueue")
    for r in regs:
        if r.type.startswith("kubernetes:kueue.x-k8s.io/"):
            assert release in r.dependencies, r.name


def test_kueue_controller_config(plan):
    (kueue,) = [r for r in plan("dev") if r.type.endswith("Release") and r.inputs["name"] == "kueue"]
    assert kueue.inputs["chart"] == "oci://registry.k8s.io/kueue/charts/kueue"
    assert kueue.inputs["version"] == "0.19.2" and kueue.inputs["namespace"] == "kueue-system"
    conf = yaml.safe_load(kueue.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert conf["integrations"]["frameworks"] == ["batch/job", "jobset.x-k8s.io/jobset", "pod", "deployment",
                                                  "statefulset"]
    assert conf["waitForPodsReady"]["timeout"] == "30m" and conf["waitForPodsReady"]["blockAdmission"] is False
    assert conf["manageJobsWithoutQueueName"] is True
    assert conf["managedJobsNamespaceSelector"] == {"matchExpressions": [
        {"key": "gke-ai-batch.io/team", "operator": "Exists"}]}
    assert conf["resources"] == {"quotaCheckStrategy": "BlockUndeclared"}
    jobset = [r for r in plan("dev") if r.type.endswith("Release") and r.inputs["name"] == "jobset"]
    assert jobset[0].inputs["chart"] == "oci://registry.k8s.io/jobset/charts/jobset"


def test_no_jobset_without_multi_host_and_pods_ready_stated_everywhere():
    """Kueue 0.19 waits for ready pods by default (a 30 minute timeout); the stack states its own."""
    p = build_platform(platform_of("dws-gpu"))
    assert not p.install_jobset
    ready = kueue_manager_config(p)["waitForPodsReady"]
    assert ready["timeout"] == "30m" and ready["requeuingStrategy"]["backoffLimitCount"] == 5


def test_kueues_configuration_is_the_charts_with_only_the_stacks_changes():
    """A stack's Configuration replaces the chart's whole block: it once dropped groupKindConcurrency (each kind
    reconciled one at a time) and lowered the API client from qps 300 / burst 500 to 50 / 100."""
    import yaml

    from gke_ai_batch.plan.kueue_configuration import CHANGES, CHART_CONFIGURATION
    conf = kueue_manager_config(build_platform(platform_of("prod")))
    chart = yaml.safe_load(CHART_CONFIGURATION)
    assert conf["controller"]["groupKindConcurrency"]["Workload.kueue.x-k8s.io"] == 10
    assert conf["clientConnection"] == {"qps": 300, "burst": 500}
    changed = {c.path.split(".")[0] for c in CHANGES}
    assert {k: v for k, v in conf.items() if k not in changed} == {k: v for k, v in chart.items() if k not in changed}
    assert "ray.io/rayjob" not in conf["integrations"]["frameworks"]  # the cluster has no Ray CRDs
    page = (ROOT / "docs" / "queues.md").read_text()
    assert all(f"`{c.path}" in page for c in CHANGES), "docs/queues.md lists every change with its reason"


def test_nested_cohorts_and_fair_sharing():
    cfg = platform_of("dev")
    cfg["cohorts"] = [{"name": "org", "fair_sharing_weight": 1}, {"name": "ml", "parent": "org",
                                                                   "fair_sharing_weight": "0.5"}]
    cohorts = {c["metadata"]["name"]: c["spec"] for c in build_platform(cfg).scheduling.cohorts}
    assert cohorts == {"org": {"fairSharing": {"weight": 1}},
                       "ml": {"parentName": "org", "fairSharing": {"weight": "0.5"}}}


def test_cohort_cycles_and_unknown_parents_are_refused():
    import pytest as _pytest

    from gke_ai_batch.model.errors import ConfigError
    cfg = platform_of("dev")
    cfg["cohorts"] = [{"name": "ml", "parent": "org"}, {"name": "org", "parent": "ml"}]
    with _pytest.raises(ConfigError, match="its own ancestor"):
        build_platform(cfg)
    cfg["cohorts"] = [{"name": "ml", "parent": "nowhere"}]
    with _pytest.raises(ConfigError, match=r"platform.cohorts\[0\].parent.*'nowhere' does not exist"):
        build_platform(cfg)


def test_controller_limits_never_below_its_requests():
    """The chart's cpu limit of 2 stayed while the request grew: at 1,000 queues the pod was invalid."""
    from gke_ai_batch.plan.installs import controller_resources, recommended_memory
    r = controller_resources("4", "8Gi")
    assert r["requests"] == r["limits"] == {"cpu": "4", "memory": "8Gi"}
    assert recommended_memory(10) == 512 and recommended_memory(1000) == 3072


def test_a_flavor_name_made_twice_is_refused_not_overwritten():
    """A pool's flavor named like another pool's per-zone flavor replaced that ResourceFlavor in silence."""
    cfg = platform_of("prod")
    cfg["gpu_pools"].append({"name": "l4b", "gpu": "nvidia-l4", "machine_type": "g2-standard-24", "capacity": "spot",
                             "zones": ["us-east5-a"], "flavor": "l4-spot-us-east5-a"})
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == "platform.gpu_pools[3].flavor"
    assert "'l4-spot-us-east5-a' is made twice, by platform.gpu_pools[2] and platform.gpu_pools[3]" in str(e.value)
