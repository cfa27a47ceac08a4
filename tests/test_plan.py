"""What the offline plan declares, read from the registrations as resources.json stores them."""
import json

import pytest

from gke_ai_batch.offline.views.render import is_manifest, write_outputs

from .conftest import STACKS, by_type, platform_of, run_config
from .forked_cli import run_module


def pools(regs) -> dict:
    return {r.inputs["name"]: r.inputs for r in by_type(regs, "nodePool:NodePool")}


def test_multislice_pools_one_per_slice(plan):
    p = pools(plan("multislice"))
    slices = [p[f"vlp-{i}"] for i in range(3)]
    for s in slices:
        assert s["nodeConfig"]["machineType"] == "ct5lp-hightpu-4t"
        assert s["nodeCount"] == 2
        assert s["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "2x4"}
        assert s["nodeLocations"] == ["us-west4-a"]


def test_v6e_4x4_slice_is_four_nodes(plan):
    p = pools(plan("hotswap"))
    assert [p[f"v6e-{i}"]["nodeCount"] for i in range(3)] == [4, 4, 4]


def test_v5p_reserved_slices(plan):
    p = pools(plan("prod"))["v5p-res-0"]
    assert p["nodeCount"] == 16 and p["placementPolicy"]["tpuTopology"] == "4x4x4"
    assert p["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "SPECIFIC_RESERVATION",
                                                      "key": "compute.googleapis.com/reservation-name",
                                                      "values": ["v5p-prod-reservation"]}


def test_flex_start_pools(plan):
    p = pools(plan("flex-start"))
    single, multi = p["v6e-single-0"], p["v6e-multi-0"]
    # per-zone limits (GKE sizes a slice by them) and ANY, flex-start's only location policy
    assert single["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 1, "locationPolicy": "ANY"}
    assert "placementPolicy" not in single
    assert multi["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 4, "locationPolicy": "ANY"}
    assert multi["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x4"}
    for pool in (single, multi):
        assert pool["nodeConfig"]["flexStart"] is True
        assert pool["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
        assert pool["management"]["autoRepair"] is False
        assert pool["initialNodeCount"] == 0
    assert p["system"]["nodeConfig"].get("flexStart") is None  # GKE needs one plain pool


def test_queued_provisioning_gpu_pool(plan):
    p = pools(plan("dws-gpu"))["dws-a100"]
    assert p["queuedProvisioning"] == {"enabled": True}
    assert p["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 10, "locationPolicy": "ANY"}
    assert p["management"] == {"autoRepair": False, "autoUpgrade": True}  # GKE refuses it off on a channel
    nc = p["nodeConfig"]
    assert nc["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert nc["guestAccelerators"] == [{"type": "nvidia-tesla-a100", "count": 1,
                                        "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}]
    assert nc["gvnic"] == {"enabled": True}


def test_spot_pool(plan):
    assert pools(plan("prod"))["v5e-spot-0"]["nodeConfig"]["spot"] is True


def test_cluster_secure_defaults(plan):
    (c,) = by_type(plan("prod"), "cluster:Cluster")
    i = c.inputs
    assert i["workloadIdentityConfig"] == {"workloadPool": "acme-ml-prod.svc.id.goog"}
    assert i["enableShieldedNodes"] is True and i["enableLegacyAbac"] is False
    assert i["datapathProvider"] == "ADVANCED_DATAPATH" and i["removeDefaultNodePool"] is True
    assert i["masterAuth"] == {"clientCertificateConfig": {"issueClientCertificate": False}}
    assert i["privateClusterConfig"]["enablePrivateNodes"] is True and i["deletionProtection"] is True
    assert i["resourceLabels"]["environment"] == "prod" and i["resourceLabels"]["cost-center"] == "ml-infra"
    assert i["authenticatorGroupsConfig"] == {"securityGroup": "gke-security-groups@acme.example"}


def test_autopilot_has_no_node_pools(plan):
    regs = plan("batch-teams")
    assert by_type(regs, "nodePool:NodePool") == []
    (c,) = by_type(regs, "cluster:Cluster")
    assert c.inputs["enableAutopilot"] is True


def test_kubeconfig_is_a_secret_using_the_auth_plugin(plan):
    (provider,) = [r for r in plan("dev") if r.type == "pulumi:providers:kubernetes"]
    assert provider.inputs["kubeconfig"] == "[secret]"
    from gke_ai_batch.components.gke_cluster import kubeconfig
    assert "command: gke-gcloud-auth-plugin" in kubeconfig("c", "1.2.3.4", "Q0E=")


# IAM and VPC resources have no labels.
UNLABELLED = ("gcp:serviceaccount/account:Account", "gcp:projects/iAMMember:IAMMember", "gcp:compute/network:Network",
              "gcp:compute/subnetwork:Subnetwork", "gcp:compute/router:Router", "gcp:compute/routerNat:RouterNat")


def test_every_gcp_resource_is_labelled(plan):
    for r in plan("dev"):
        labels = (r.inputs.get("resourceLabels") or (r.inputs.get("nodeConfig") or {}).get("resourceLabels")
                  or r.inputs.get("userLabels") or json.loads(r.inputs.get("dashboardJson", "{}")).get("labels"))
        if r.type.startswith("gcp:") and r.type not in UNLABELLED:
            expected = {"environment": "dev", "owner": "ml-platform", "cost-center": "ml-research"}
            assert expected.items() <= labels.items()


def test_kubernetes_objects_use_the_cluster_provider(plan):
    for r in plan("dev"):
        if r.type.startswith("kubernetes:"):
            assert r.provider == "gke-k8s", r.urn


def test_children_are_parented_to_their_component(plan):
    regs = {r.urn: r for r in plan("dev")}
    slices = [r for r in regs.values() if r.name.startswith("v5e-train-slice-")]
    assert {regs[r.parent].type for r in slices} == {"gke-ai-batch:index:TpuSlicePool"}


def test_make_plan_writes_resources_and_manifests(tmp_path):
    out = tmp_path / "out"
    r = run_module("gke_ai_batch.offline", "plan", "tests/stacks/Pulumi.broken-prod.yaml", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "v5p-res-0" in r.stdout and "total tpu-v5p-slice (google.com/tpu): 8" in r.stdout
    resources = json.loads((out / "resources.json").read_text())
    assert {"urn", "type", "name", "parent", "custom", "inputs"} <= set(resources[0])
    assert (out / "manifests" / "09-clusterqueue-a.yaml").exists()  # after namespaces, service accounts, flavors
    assert (out / "helm" / "kueue.yaml").exists()


def test_onboarding_a_team_is_one_block():
    cfg = platform_of("dev")
    cfg["teams"].append({"name": "vision", "groups": ["vision@acme.example"],
                         "queue": {"cohort": "ml", "quotas": {"v6e-flex": {"google.com/tpu": 16}}}})
    regs = run_config(cfg)
    assert "vision" in {r.inputs["metadata"]["namespace"] for r in by_type(regs, ":LocalQueue")}
    assert any(r.inputs["metadata"]["name"] == "vision" for r in by_type(regs, ":ClusterQueue"))


@pytest.mark.parametrize("stack", STACKS)
def test_every_declared_node_pool_reads_back_to_its_plan(plan, stack):
    """Node pool inputs are written in one place (plan.gke_inputs) and read back in one place
    (model.pool_facts), which the plan summary and the policies use: the two must agree."""
    from gke_ai_batch.model.pool_facts import pool_facts
    from gke_ai_batch.offline.engine.stackfile import resolve
    from gke_ai_batch.offline.views.render import cluster_zones
    from gke_ai_batch.plan.platform import build_platform

    from .conftest import fleet_outputs
    raw = resolve(stack).config["gke-ai-batch:platform"]
    plans = {p.name: p for p in build_platform(raw, worker_outputs=fleet_outputs).pools}
    declared = [r for r in plan(stack) if r.type == "gcp:container/nodePool:NodePool"]
    assert sorted(r.inputs["name"] for r in declared) == sorted(plans)
    for r in declared:
        facts, p = pool_facts(r.inputs, cluster_zones(plan(stack))), plans[r.inputs["name"]]
        assert (facts.machine_type, facts.capacity, facts.accelerators, facts.multi_host) == (
            p.machine_type, p.capacity, p.accelerators, p.multi_host), p.name
        assert facts.provides() == p.provides() and p.node_labels.items() <= facts.node_labels.items(), p.name


def test_nodes_run_as_a_dedicated_service_account_with_only_the_node_role(plan):
    """GKE docs: node service accounts need roles/container.defaultNodeServiceAccount; the default
    Compute Engine account (usually the project's Editor) is what they run as when none is named."""
    regs = plan("prod")
    account = next(r for r in regs if r.type == "gcp:serviceaccount/account:Account")
    email = f"{account.inputs['accountId']}@acme-ml-prod.iam.gserviceaccount.com"
    roles = [r.inputs for r in regs if r.type == "gcp:projects/iAMMember:IAMMember"]
    assert roles == [{"member": f"serviceAccount:{email}", "project": "acme-ml-prod",
                      "role": "roles/container.defaultNodeServiceAccount"}]
    pools = [r for r in regs if r.type == "gcp:container/nodePool:NodePool"]
    assert pools and all(p.inputs["nodeConfig"]["serviceAccount"] == email for p in pools)
    cluster = next(r for r in regs if r.type == "gcp:container/cluster:Cluster")
    assert account.urn in cluster.dependencies  # nodes never start before their identity exists


def test_autopilot_nodes_take_the_service_account_from_the_cluster(plan):
    cluster = next(r for r in plan("batch-teams") if r.type == "gcp:container/cluster:Cluster")
    defaults = cluster.inputs["clusterAutoscaling"]["autoProvisioningDefaults"]
    assert defaults["serviceAccount"] == "kueue-autopilot-nodes@acme-batch-teams.iam.gserviceaccount.com"


def test_an_existing_node_service_account_is_used_and_nothing_is_created():
    from .conftest import platform_of, run_config
    cfg = platform_of("dev")
    cfg["cluster"]["node_service_account"] = "gke-nodes@acme-ml-dev.iam.gserviceaccount.com"
    regs = run_config(cfg)
    assert not [r for r in regs if r.type.startswith(("gcp:serviceaccount", "gcp:projects"))]
    assert {r.inputs["nodeConfig"]["serviceAccount"] for r in regs if r.type == "gcp:container/nodePool:NodePool"} == {
        "gke-nodes@acme-ml-dev.iam.gserviceaccount.com"}


def test_production_refuses_the_default_compute_account():
    from gke_ai_batch.model.errors import ConfigError
    from gke_ai_batch.plan.platform import build_platform

    from .conftest import platform_of
    cfg = platform_of("prod")
    cfg["cluster"]["node_service_account"] = "123456789-compute@developer.gserviceaccount.com"
    with pytest.raises(ConfigError, match="Compute Engine default service account") as e:
        build_platform(cfg)
    assert e.value.path == "platform.cluster.node_service_account"


@pytest.mark.parametrize("stack", STACKS)
def test_every_resource_has_its_own_urn(plan, stack):
    """The engine refuses a second resource with a URN already registered (a team's `eval` queue in
    namespace training once met the first queue of namespace training-eval); the mocks do not."""
    urns = [r.urn for r in plan(stack)]
    assert len(urns) == len(set(urns)), sorted(u for u in urns if urns.count(u) > 1)


def test_every_kubernetes_object_has_its_own_manifest_file(tmp_path):
    """LocalQueue nightly-train in asr and train in asr-nightly once both wrote 10-localqueue-asr-nightly-train.yaml,
    and `kubectl apply -f manifests/` then applied one of them."""
    cfg = platform_of("dev")
    cfg["teams"] += [
        {"name": "asr", "namespaces": ["asr"], "local_queue": "nightly-train",
         "queue": {"quotas": {"v6e-flex": {"google.com/tpu": 4}}}},
        {"name": "asr-nightly", "namespaces": ["asr-nightly"], "local_queue": "train",
         "queue": {"quotas": {"v6e-flex": {"google.com/tpu": 4}}}}]
    regs = run_config(cfg)
    write_outputs(regs, tmp_path)
    assert len(list((tmp_path / "manifests").glob("*.yaml"))) == sum(map(is_manifest, regs))
    assert (tmp_path / "manifests" / "10-localqueue-asr.nightly-train.yaml").exists()
    assert (tmp_path / "manifests" / "10-localqueue-asr-nightly.train.yaml").exists()


def test_each_registration_keeps_its_own_options_when_another_lands_in_between(monkeypatch):
    """The SDK sends registrations from an executor's threads. CI once planned prod's JobSetInstall without
    its protection: the monitor set a registration's options after appending it, on `registrations[-1]`, which
    another thread's registration could be by then."""
    from gke_ai_batch.offline.engine import runtime
    monitor = runtime.RecordingMonitor(runtime.PlanMocks({}))

    def request(name: str, protect: bool):
        return runtime.resource_pb2.RegisterResourceRequest(type="pkg:index:Thing", name=name, protect=protect)
    real, others = runtime.day_two_options, [request("other", False)]

    def options_while_another_registers(req):
        if others:
            monitor.RegisterResource(others.pop())
        return real(req)
    monkeypatch.setattr(runtime, "day_two_options", options_while_another_registers)
    monitor.RegisterResource(request("protected", True))
    assert {r.name: r.options for r in monitor.registrations} == {"other": {}, "protected": {"protect": True}}
