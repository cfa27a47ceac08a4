"""Every policy passes a good resource or stack and flags a bad one with a message that says how to fix it."""
import copy
import subprocess
import sys

import pytest

from gke_ai_batch.model import promises
from gke_ai_batch.offline.views.check import violations
from gke_ai_batch.policies import resource_rules as rr
from gke_ai_batch.policies import stack_rules as sr
from gke_ai_batch.policies.pack import RESOURCE_POLICIES, STACK_POLICIES, policies

from .conftest import ROOT, STACKS, by_type
from .forked_cli import run_module


def inputs(regs, suffix, name):
    return next(r.inputs for r in by_type(regs, suffix) if (r.inputs.get("metadata") or r.inputs).get("name") == name)


def rule(name):
    return next(p.rule for p in RESOURCE_POLICIES if p.name == name)


@pytest.fixture
def dev_pools(plan):
    return {r.inputs["name"]: copy.deepcopy(r.inputs) for r in by_type(plan("dev"), "nodePool:NodePool")}


def test_every_policy_has_a_description_and_level():
    names = [p.name for p in policies()]
    assert len(names) == len(set(names)) == len(RESOURCE_POLICIES) + len(STACK_POLICIES)
    assert all(p.description and p.enforcement_level for p in policies())


def test_tpu_pool_shape(dev_pools):
    good = dev_pools["v5e-train-0"]
    assert rr.tpu_pool_shape(good) == []
    bad = copy.deepcopy(good)
    bad["nodeCount"] = 3
    assert rr.tpu_pool_shape(bad) == ["node pool v5e-train-0: a 2x4 slice on ct5lp-hightpu-4t is 2 VMs; "
                                      "set nodeCount (or autoscaling max) to 2, not 3"]
    bad = copy.deepcopy(good)
    bad["nodeLocations"] = ["us-east5-a", "us-east5-b"]
    bad["placementPolicy"]["type"] = "SPREAD"
    msgs = rr.tpu_pool_shape(bad)
    assert any("COMPACT" in m for m in msgs) and any("one zone" in m for m in msgs)
    bad = copy.deepcopy(good)
    bad["placementPolicy"]["tpuTopology"] = "2x3"
    assert "topology 2x3 does not exist on ct5lp-hightpu-4t" in rr.tpu_pool_shape(bad)[0]
    single = copy.deepcopy(good)
    single["placementPolicy"]["tpuTopology"] = "2x2"
    single["nodeCount"] = 1
    assert "single-host" in rr.tpu_pool_shape(single)[0]


def test_gpu_pool_shape(dev_pools):
    good = dev_pools["h100-dws"]
    assert rr.gpu_pool_shape(good) == []
    bad = copy.deepcopy(good)
    bad["nodeConfig"]["guestAccelerators"][0]["count"] = 4
    assert "carries 8 x nvidia-h100-80gb; set guestAccelerators count to 8" in rr.gpu_pool_shape(bad)[0]
    bad["nodeConfig"]["machineType"] = "g2-standard-12"
    assert "does not come on g2-standard-12" in rr.gpu_pool_shape(bad)[0]


def test_gpudirect_networks(dev_pools):
    """An A3 Mega pool without its 8 GPUDirect-TCPXO networks is advised (not refused) what to declare; the
    8 networks, or GKE's automatic accelerator network profile, satisfy it; an L4 pool needs none."""
    assert next(p for p in RESOURCE_POLICIES if p.name == "gpudirect-networks").level.value == "advisory"
    mega = copy.deepcopy(dev_pools["h100-dws"])
    mega["name"] = "h100-mega"
    mega["nodeConfig"]["machineType"] = "a3-megagpu-8g"
    mega["nodeConfig"]["guestAccelerators"][0]["type"] = "nvidia-h100-mega-80gb"
    (msg,) = rule("gpudirect-networks")(mega)
    assert msg.startswith("node pool h100-mega: a3-megagpu-8g needs 8 additional node networks for GPUDirect-TCPXO "
                          "(8 separate VPCs, one subnet each) and the pool declares none. It still works for "
                          "single-node jobs, but multi-node NCCL traffic falls back to the primary NIC.")
    # GKE offers its automatic profile for A3 Ultra, A4 and A4X, not A3 Mega: the advice does not offer it
    assert "enableMultiNetworking true" in msg and "acceleratorNetworkProfile" not in msg
    ultra = copy.deepcopy(mega)
    ultra["nodeConfig"]["machineType"] = "a3-ultragpu-8g"
    assert "`gpudirect: auto` on the stack's pool" in rule("gpudirect-networks")(ultra)[0]
    nets = [{"network": f"mega-net-{i}", "subnetwork": f"mega-sub-{i}"} for i in range(1, 9)]
    mega["networkConfig"] = {"additionalNodeNetworkConfigs": nets[:3]}
    assert "the pool declares 3." in rule("gpudirect-networks")(mega)[0]
    mega["networkConfig"] = {"additionalNodeNetworkConfigs": nets}
    assert rule("gpudirect-networks")(mega) == []
    mega["networkConfig"] = {"acceleratorNetworkProfile": "auto"}
    assert rule("gpudirect-networks")(mega) == []
    l4 = copy.deepcopy(dev_pools["h100-dws"])
    l4["nodeConfig"]["machineType"] = "g2-standard-12"
    l4["nodeConfig"]["guestAccelerators"][0].update(type="nvidia-l4", count=1)
    assert rule("gpudirect-networks")(l4) == [] and rr.gpu_pool_shape(l4) == []
    assert rule("gpudirect-networks")(dev_pools["v5e-train-0"]) == []  # TPU pools are not judged


def test_flex_start_pool(dev_pools):
    good = dev_pools["v6e-flex-0"]
    assert rr.flex_start_pool(good) == []
    bad = copy.deepcopy(good)
    bad["nodeConfig"]["spot"] = True
    bad["nodeConfig"]["reservationAffinity"] = {"consumeReservationType": "ANY_RESERVATION"}
    bad["management"]["autoRepair"] = True
    bad["autoscaling"]["minNodeCount"] = 1
    msgs = rr.flex_start_pool(bad)
    assert len(msgs) == 4 and any("NO_RESERVATION" in m for m in msgs)
    assert any("drop nodeConfig.spot" in m for m in msgs)


def test_queued_provisioning_pool(dev_pools):
    good = dev_pools["h100-dws"]
    assert rr.queued_provisioning_pool(good) == []
    bad = copy.deepcopy(good)
    bad["autoscaling"]["locationPolicy"] = "BALANCED"
    bad["management"]["autoRepair"] = True
    msgs = rr.queued_provisioning_pool(bad)
    assert any("locationPolicy ANY" in m for m in msgs) and any("autoRepair off" in m for m in msgs)


def test_cluster_policies(plan):
    prod = copy.deepcopy(inputs(plan("prod"), "cluster:Cluster", "ml-prod"))
    assert rule("cluster-baseline")(prod) == [] and rule("production-hardening")(prod) == []
    prod["enableLegacyAbac"] = True
    prod["workloadIdentityConfig"] = None
    assert len(rule("cluster-baseline")(prod)) == 2
    prod["deletionProtection"] = False
    prod["masterAuthorizedNetworksConfig"] = {"cidrBlocks": [{"cidrBlock": "0.0.0.0/0"}]}
    msgs = rule("production-hardening")(prod)
    assert any("open to 0.0.0.0/0" in m for m in msgs) and any("deletion protection" in m for m in msgs)
    assert rule("hardening-advisory")(prod) == []  # production findings are mandatory, not advice
    dev = inputs(plan("dev"), "cluster:Cluster", "ml-dev")
    assert rule("production-hardening")(dev) == [] and rule("hardening-advisory")(dev)


def test_required_labels(plan):
    pool = copy.deepcopy(inputs(plan("dev"), "nodePool:NodePool", "system"))
    assert rule("required-labels")(pool) == []
    del pool["nodeConfig"]["resourceLabels"]["owner"]
    assert rule("required-labels")(pool) == ["system: add the label(s) owner"]


def test_kueue_objects(plan):
    cq = copy.deepcopy(inputs(plan("dev"), ":ClusterQueue", "research"))
    assert rule("kueue-api-version")(cq) == [] and rule("cluster-queue-namespaces")(cq) == []
    cq["apiVersion"] = "kueue.x-k8s.io/v1beta1"
    assert "emit kueue.x-k8s.io/v1beta2" in rule("kueue-api-version")(cq)[0]
    cq["spec"]["namespaceSelector"] = {}
    assert "declare the queue shared" in rule("cluster-queue-namespaces")(cq)[0]
    shared = inputs(plan("batch-teams"), ":ClusterQueue", "cluster-queue")
    assert shared["spec"]["namespaceSelector"] == {} and rule("cluster-queue-namespaces")(shared) == []


def test_priority_value(plan):
    pc = copy.deepcopy(inputs(plan("hotswap"), ":PriorityClass", "high-priority-job"))
    assert rule("priority-class-value")(pc) == []
    pc["value"] = 2_000_000_000
    assert "user classes go up to 1,000,000,000" in rule("priority-class-value")(pc)[0]


def stack(regs):
    return [promises.Res(r.type, r.urn, copy.deepcopy(r.inputs), tuple(r.dependencies)) for r in regs if r.custom]


def test_quota_policies(plan):
    res = stack(plan("prod"))
    assert sr.quota_over_capacity(res) == [] and sr.quota_below_capacity(res) == []
    cq = next(r for r in res if r.type.endswith(":ClusterQueue") and r.name == "research")
    (v5p,) = [f for f in cq.props["spec"]["resourceGroups"][0]["flavors"] if f["name"] == "v5p-res"]
    next(r for r in v5p["resources"] if r["name"] == "google.com/tpu")["nominalQuota"] = 64
    (over,) = sr.quota_over_capacity(res)
    assert "teams are promised 144 google.com/tpu (inference-eval, research, training) but its on-demand/reserved " \
           "pools hold 128" in over[1]
    idle = sr.quota_below_capacity(stack(plan("hotswap")))
    assert "16 of 48 google.com/tpu are in no team's nominal quota" in idle[0][1]


def test_spot_and_flex_capacity_is_not_counted_as_fixed(plan):
    res = stack(plan("prod"))
    caps = promises.flavor_capacity(promises.StackIndex(res))
    tpu = "google.com/tpu"
    assert (caps["v5p-res"][tpu].total, caps["v5p-res"][tpu].fixed) == (128, 128)
    assert (caps["v6e-flex"][tpu].total, caps["v6e-flex"][tpu].fixed) == (32, 0)
    assert (caps["v5e-spot"][tpu].total, caps["v5e-spot"][tpu].fixed) == (16, 0)
    assert caps["h100-dws"]["nvidia.com/gpu"].total == 128
    # 16 nodes of 208 vCPUs, less GKE's reservation (6% of the first core ... 0.25% above the fourth)
    assert caps["h100-dws"]["cpu"].total == 16 * (208 - sr.Decimal("0.59"))


def test_cpu_quota_against_cpu_nodes():
    """cpu promised on a reserved flavor beyond its nodes' allocatable cores is refused; on a spot flavor
    the same promise is advice (the nodes may never come)."""
    from .conftest import platform_of, run_config
    cfg = platform_of("prod")
    cfg["tpu_pools"][0].update(topology="2x2x2", slices=1)  # two ct5p-hightpu-4t VMs: 2 x 208 vCPUs
    cfg["teams"] = [{"name": "training", "queue": {"quotas": {
        "v5p-res": {"google.com/tpu": 8, "cpu": 500, "memory": "100Gi"},
        "v5e-spot": {"google.com/tpu": 16, "cpu": 500, "memory": "100Gi"}}}}]
    found = {(v["policy"], v["level"], v["message"]) for v in violations(run_config(cfg, "prod"))
             if v["policy"] in ("quota-within-capacity", "quota-not-guaranteed")}
    # On v5e-spot the chips themselves are not guaranteed: that finding stands for the cpu that comes with them.
    assert found == {
        ("quota-within-capacity", "mandatory", "flavor v5p-res: teams are promised 500 cpu (training) but its "
         "on-demand/reserved pools hold 414.8; lower the nominal quotas or add nodes"),
        ("quota-not-guaranteed", "advisory", "flavor v5e-spot: teams are promised 16 google.com/tpu (training); its "
         "pools hold 16 at full size, of which 0 guaranteed (spot, flex-start and queued capacity may not come)")}


def test_kueue_references(plan):
    res = stack(plan("dev"))
    assert sr.kueue_references(res) == []
    lq = next(r for r in res if r.type.endswith(":LocalQueue"))
    lq.props["spec"]["clusterQueue"] = "ghost"
    ac = next(r for r in res if r.type.endswith(":AdmissionCheck"))
    ac.props["spec"]["parameters"]["name"] = "ghost-config"
    msgs = [m for _, m in sr.kueue_references(res)]
    assert any("ClusterQueue 'ghost' does not exist" in m for m in msgs)
    assert any("ProvisioningRequestConfig 'ghost-config' does not exist" in m for m in msgs)


def test_platform_shape_policies(plan):
    res = stack(plan("flex-start"))
    assert sr.plain_pool_present(res) == [] and sr.jobset_installed(res) == [] and sr.kueue_after_release(res) == []
    no_system = [r for r in res if r.props.get("name") != "system"]
    assert "needs one pool without them" in sr.plain_pool_present(no_system)[0][1]
    no_jobset = [r for r in res if not (r.type.endswith("Release") and r.props["name"] == "jobset")]
    assert "install the JobSet chart" in sr.jobset_installed(no_jobset)[0][1]
    cut = [promises.Res(r.type, r.urn, r.props, ()) for r in res]
    assert any("create it after the Kueue release" in m for _, m in sr.kueue_after_release(cut))


def test_one_global_default(plan):
    res = stack(plan("dev"))
    assert sr.one_global_default(res) == []
    for r in res:
        if r.type.endswith(":PriorityClass"):
            r.props["globalDefault"] = True
    assert "keep one" in sr.one_global_default(res)[0][1]


@pytest.mark.parametrize("stack_name", STACKS)
def test_example_stacks_pass_every_mandatory_policy(plan, stack_name):
    assert [v for v in violations(plan(stack_name)) if v["level"] == "mandatory"] == []


def test_levels_are_configurable(plan, tmp_path):
    from gke_ai_batch.offline.views.check import load_levels
    f = tmp_path / "levels.json"
    f.write_text('{"hardening-advisory": "disabled", "quota-idle-capacity": {"enforcementLevel": "mandatory"}}')
    found = violations(plan("hotswap"), load_levels(str(f)))
    assert {v["policy"]: v["level"] for v in found} == {"quota-idle-capacity": "mandatory"}


def test_make_check_fails_on_the_broken_stack(tmp_path):
    r = run_module("gke_ai_batch.offline", "check", "tests/stacks/Pulumi.broken-prod.yaml", "--out", str(tmp_path))
    assert r.returncode == 1, r.stdout + r.stderr
    import json
    found = json.loads((tmp_path / "violations.json").read_text())
    assert sorted(v["policy"] for v in found if v["level"] == "mandatory") == [
        "private-node-egress", "production-hardening", "production-hardening", "quota-within-capacity"]
    text = r.stdout
    assert "open to 0.0.0.0/0" in text and "turn deletion protection on" in text and "promised 16" in text


def test_policy_pack_serves_under_the_sdk():
    """`pulumi preview --policy-pack policies` runs policies/__main__.py: it must build the pack and
    start the analyzer server, which prints its port first."""
    proc = subprocess.Popen([sys.executable, "policies/__main__.py"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        port = proc.stdout.readline().strip()
        assert port.isdigit(), proc.stderr.read() if proc.poll() is not None else port
    finally:
        proc.kill()
        proc.wait()


def test_every_namespaced_local_queue_is_checked(plan):
    """training and training-eval each hold a LocalQueue named training-queue: both are judged."""
    res = stack(plan("dev"))
    cut = [promises.Res(r.type, r.urn, r.props, ()) if r.type.endswith(":LocalQueue") and
           r.props["metadata"]["namespace"] == "training-eval" and
           r.props["metadata"]["name"] == "training-queue" else r for r in res]
    (found,) = sr.kueue_after_release(cut)
    assert found[0].endswith("team-training-lq-training-eval") and "LocalQueue training-queue" in found[1]
    ghost = [promises.Res(r.type, r.urn, {**r.props, "spec": {"clusterQueue": "ghost"}}, r.dependencies)
             if r.urn == found[0] else r for r in res]
    assert [u for u, _ in sr.kueue_references(ghost)] == [found[0]]


def test_kueue_controller_size_is_advice_not_a_restart():
    """The controller's size is config, so onboarding teams never changes the release; past its size
    an advisory says what to set."""
    from bench.synthetic import platform

    from .conftest import run_config
    cfg = platform(200)
    assert not [v for v in violations(run_config(cfg, "bench")) if v["policy"] == "kueue-controller-size"]
    cfg["kueue"] = {"controller_memory": "512Mi"}  # set by hand: sized for about 7,000 workloads
    found = [v for v in violations(run_config(cfg, "bench")) if v["policy"] == "kueue-controller-size"]
    assert [(v["level"], v["message"]) for v in found] == [(
        "advisory", "400 queues and up to 200,000 workloads and 12,938Mi of their objects' text (the teams' object "
        "quotas: count x object_size, per replica): the Kueue controller asks for 512Mi of memory; set "
        "kueue.controller_memory to at least 28160Mi, or leave it unset to size it from the quotas (and raise "
        "controller_cpu)")]


def test_kueue_memory_is_sized_by_bytes_not_only_by_count():
    """500 Jobs of ~1 MiB each once fit the 512Mi sized by count alone, and OOM-killed both replicas: the
    advisory now counts count x object_size per namespace, and the derived size follows it."""
    from gke_ai_batch.plan.installs import cached_text_bytes, recommended_memory

    from .conftest import platform_of, run_config
    cfg = platform_of("prod")
    cfg["teams"][0]["object_quotas"] = {"object_size": 262144}  # training: 2 namespaces of 256 KiB objects
    cfg["kueue"] = {**cfg.get("kueue", {}), "controller_memory": "1024Mi"}
    found = [v["message"] for v in violations(run_config(cfg, "prod")) if v["policy"] == "kueue-controller-size"]
    assert found == ["10 queues and up to 5,000 workloads and 2,030Mi of their objects' text (the teams' object "
                     "quotas: count x object_size, per replica): the Kueue controller asks for 1024Mi of memory; set "
                     "kueue.controller_memory to at least 2560Mi, or leave it unset to size it from the quotas (and "
                     "raise controller_cpu)"]
    from gke_ai_batch.model.team_config import TeamConfig
    teams = [TeamConfig.model_validate(t) for t in cfg["teams"]]
    assert recommended_memory(0, 5000, cached_text_bytes(teams)) == 2560


def test_on_demand_quota_is_judged_against_on_demand_pools_only():
    """An on-demand 2x4 flavor beside spot ones once selected their nodes too, so its capacity was
    not all fixed and 64 chips promised on 16 passed."""
    from .conftest import platform_of, run_config
    cfg = platform_of("prod")
    cfg["tpu_pools"].append({"name": "v5e-od", "generation": "v5e", "topology": "2x4", "slices": 2,
                             "zones": ["us-east5-c"]})
    cfg["teams"][2]["queue"]["quotas"]["v5e-od"] = {"google.com/tpu": 64}
    found = [v for v in violations(run_config(cfg, "prod")) if v["policy"] == "quota-within-capacity"]
    assert [v["message"] for v in found] == ["flavor v5e-od: teams are promised 64 google.com/tpu (inference-eval) "
                                             "but its on-demand/reserved pools hold 16; lower the nominal quotas "
                                             "or add nodes"]


def test_default_flavor_cpu_quota_needs_nodes_of_its_own():
    """A label-less default flavor on Standard let cpu work land on any node it tolerated, the system
    pool's included; now it selects only pools that name it, and a quota with none is refused."""
    from gke_ai_batch.offline.engine.runtime import PlanError

    from .conftest import platform_of, run_config
    cfg = platform_of("multislice")
    cfg.pop("shared_queues")
    cfg["teams"] = [{"name": "batch", "queue": {"quotas": {"default-flavor": {"cpu": 100, "memory": "64Gi"}}}}]
    with pytest.raises(PlanError, match="flavor 'default-flavor' has no node pool: on a Standard cluster"):
        run_config(cfg, "multislice")
    cfg["cpu_pools"] = [{"name": "workers", "machine_type": "n2-standard-8", "nodes": 2, "flavor": "default-flavor"}]
    regs = run_config(cfg, "multislice")
    (flavor,) = [r.inputs for r in regs if r.type.endswith(":ResourceFlavor") and r.name.endswith("default-flavor")]
    assert flavor["spec"]["nodeLabels"] == {"gke-ai-batch.io/flavor": "default-flavor"}


def test_no_node_pool_runs_as_the_default_compute_account(plan):
    """Not only production: a lab's default-account nodes hold the project's Editor role all the same."""
    for name in ("prod", "dev"):
        res = stack(plan(name))
        assert sr.node_service_account(res) == []
        pool = next(r for r in res if r.type.endswith("nodePool:NodePool") and r.props["name"] == "system")
        pool.props["nodeConfig"].pop("serviceAccount")
        other = next(r for r in res if r.type.endswith("nodePool:NodePool") and r.props["name"] != "system")
        other.props["nodeConfig"]["serviceAccount"] = "123-compute@developer.gserviceaccount.com"
        found = dict(sr.node_service_account(res))
        assert set(found) == {pool.urn, other.urn}, name
        assert "runs as the Compute Engine default service account (serviceAccount unset)" in found[pool.urn]
        assert "(123-compute@developer.gserviceaccount.com)" in found[other.urn]


def test_autopilot_auto_provisioned_nodes_must_not_run_as_the_default_compute_account(plan):
    res = stack(plan("batch-teams"))
    assert sr.node_service_account(res) == []
    cluster = next(r for r in res if r.type == "gcp:container/cluster:Cluster")
    cluster.props["clusterAutoscaling"]["autoProvisioningDefaults"].pop("serviceAccount")
    assert [urn for urn, _ in sr.node_service_account(res)] == [cluster.urn]


def test_private_nodes_without_cloud_nat_are_refused(plan):
    res = stack(plan("prod"))
    assert sr.private_node_egress(res) == []
    no_nat = [r for r in res if not r.type.endswith("routerNat:RouterNat")]
    found = sr.private_node_egress(no_nat)
    assert len(found) == 1 and "private nodes and no Cloud NAT in us-east5" in found[0][1]
    assert sr.private_node_egress(stack(plan("dws-gpu"))) == []  # public nodes need no NAT


def test_node_pools_hide_the_node_credentials_from_pods(dev_pools):
    pool = copy.deepcopy(next(iter(dev_pools.values())))
    assert rr.node_workload_metadata(pool) == []
    pool["nodeConfig"]["workloadMetadataConfig"] = {"mode": "GCE_METADATA"}
    assert "set nodeConfig.workloadMetadataConfig.mode GKE_METADATA (has GCE_METADATA)" in \
        rr.node_workload_metadata(pool)[0]


def test_buckets_stay_private(plan):
    bucket = copy.deepcopy(inputs(plan("prod"), "storage/bucket:Bucket", "acme-ml-prod-training-checkpoints"))
    assert bucket["uniformBucketLevelAccess"] is True and rr.bucket_private(bucket) == []
    bucket.update(uniformBucketLevelAccess=False, publicAccessPrevention="inherited")
    assert len(rr.bucket_private(bucket)) == 2
    grant = {"bucket": "acme-ml-datasets", "role": "roles/storage.objectViewer", "member": "allUsers"}
    assert "allUsers in roles/storage.objectViewer makes its objects public" in rr.bucket_not_public(grant)[0]
    assert rr.bucket_not_public({**grant, "member": "group:ml@acme.example"}) == []


def test_the_gke_rules_policy_judges_a_subnet_built_by_hand(plan):
    res = stack(plan("prod"))
    assert sr.gke_rules(res) == []
    subnet = next(r for r in res if r.type.endswith("subnetwork:Subnetwork"))
    subnet.props["secondaryIpRanges"][0]["ipCidrRange"] = "10.44.0.0/22"  # the Pods range: 4 nodes
    subnet.props["ipCidrRange"] = "10.44.0.0/20"  # overlaps it
    found = sr.gke_rules(res)
    assert [urn for urn, _ in found] == [subnet.urn, subnet.urn]
    assert "10.44.0.0/22 overlaps the node range 10.44.0.0/20" in found[0][1]
    assert "(network-range-overlap)" in found[0][1]
    assert "holds 4 nodes; the pools reach 89 nodes" in found[1][1]


def test_per_zone_flavors_of_a_pool_with_a_total_limit_stay_within_it_together(plan):
    """prod once promised 16 + 16 L4s on l4-spot, whose total limit of 8 g2-standard-24 holds 16: each zone's
    flavor matched no pool (the zone label is not a pool label), so nothing was flagged."""
    from .conftest import platform_of, run_config
    cfg = platform_of("prod")
    quotas = next(t for t in cfg["teams"] if t["name"] == "inference-eval")["queue"]["quotas"]
    quotas["l4-spot-us-east5-a"] = quotas["l4-spot-us-east5-b"] = {"nvidia.com/gpu": 16}
    found = [(v["level"], v["message"]) for v in violations(run_config(cfg, "prod"))
             if v["policy"] == "quota-within-capacity"]
    assert found == [("mandatory", "pool l4-spot: its per-zone flavors l4-spot-us-east5-a, l4-spot-us-east5-b are "
                      "promised 32 nvidia.com/gpu together, but its total autoscaling limit holds 16 in all zones; "
                      "lower their nominal quotas")]
    caps = promises.flavor_capacity(promises.StackIndex(stack(plan("prod"))))
    assert caps["l4-spot-us-east5-a"]["nvidia.com/gpu"].total == 16  # every node may land in one zone


def test_a_flavor_without_node_labels_counts_only_nodes_without_accelerators(plan):
    """GKE taints TPU and GPU nodes; pods that ask for no accelerator (the default flavor's cpu) stay off them,
    so the default flavor's cpu is the system and cpu pools', not the accelerator hosts'."""
    pools = {p.name: p for _, p in promises.StackIndex(stack(plan("prod"))).pools}
    default = {"nodeLabels": {}}
    assert {name for name, p in pools.items() if p.serves(default)} == {
        name for name, p in pools.items() if p.kind == "cpu"}
    assert not pools["h100-dws"].serves(default) and not pools["v5p-res-0"].serves(default)


def test_kueue_controller_size_reads_quota_counts_in_the_api_servers_canonical_form(plan):
    """A real `pulumi preview --policy-pack` hands the pack each ResourceQuota as the API server returns it, 1000
    as `1k`: the advisory once failed with "invalid literal for int() with base 10: '1k'" (found by the sandbox)."""
    res = stack(plan("prod"))

    def canonical(r: promises.Res) -> promises.Res:
        if r.type != "kubernetes:core/v1:ResourceQuota":
            return r
        hard = {k: (f"{int(v) // 1000}k" if str(v).isdigit() and int(v) % 1000 == 0 else v)
                for k, v in r.props["spec"]["hard"].items()}
        return promises.Res(r.type, r.urn, {**r.props, "spec": {**r.props["spec"], "hard": hard}}, r.dependencies)

    assert sr.kueue_controller_size([canonical(r) for r in res]) == sr.kueue_controller_size(res)


def test_a_quota_above_a_spot_flavors_full_size_is_its_own_advisory():
    """Issue 49: 40 GPUs promised on a spot flavor that holds 4 got only the generic not-guaranteed advice."""
    from .conftest import platform_of, run_config
    cfg = platform_of("prod")
    pool = next(p for p in cfg["gpu_pools"] if p["name"] == "l4-spot")
    pool.update(machine_type="g2-standard-4", zone_flavors=False, autoscaling={"max_nodes": 4, "total": True},
                local_ssd={"count": 1, "use": "raw-block"})
    cfg["teams"][2]["queue"]["quotas"] = {"l4-spot": {"nvidia.com/gpu": 40}}
    found = {(v["policy"], v["level"], v["message"]) for v in violations(run_config(cfg, "prod"))
             if v["policy"] in ("quota-over-capacity", "quota-not-guaranteed") and "l4-spot" in v["message"]}
    assert found == {("quota-over-capacity", "advisory", "flavor l4-spot: teams are promised 40 nvidia.com/gpu "
                      "(inference-eval) but its pools hold 4 at full size, even if every node comes; lower the "
                      "nominal quotas or raise the pools' max nodes")}
