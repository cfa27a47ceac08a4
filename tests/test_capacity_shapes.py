"""Every capacity shape a platform team runs: autoscaled pools of each kind, flex-start GPUs, queued
TPU slices, CPU workers, Autopilot accelerators, node settings, GPU sharing, several LocalQueues per
team and per-zone flavors; and one clear error for each shape GKE or Kueue would refuse."""
import pytest

from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.plan.platform import build_platform

from .conftest import by_type, config_refusal, platform_of


def pools(regs) -> dict:
    return {r.inputs["name"]: r.inputs for r in by_type(regs, "nodePool:NodePool")}


def objects(regs, kind: str) -> dict:
    return {r.inputs["metadata"]["name"]: r.inputs for r in by_type(regs, f":{kind}")}


def test_autoscaled_spot_slices_scale_as_a_unit(plan):
    """Each spot v5e 2x4 slice is 0 VMs while idle and both when a job comes; capacity counts both."""
    p = pools(plan("prod"))
    for s in ("v5e-spot-0", "v5e-spot-1"):
        assert p[s]["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 2}
        assert p[s]["initialNodeCount"] == 0 and "nodeCount" not in p[s]
        assert p[s]["nodeConfig"]["spot"] is True
    platform = build_platform(platform_of("prod"))
    assert sum(pl.accelerators for pl in platform.pools if pl.source == "v5e-spot") == 16


def test_autoscaled_spot_gpus_over_two_zones_with_a_flavor_per_zone(plan):
    p = pools(plan("prod"))["l4-spot"]
    assert p["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 8, "locationPolicy": "ANY"}
    assert p["nodeConfig"]["localNvmeSsdBlockConfig"] == {"localSsdCount": 2}
    flavors = objects(plan("prod"), "ResourceFlavor")
    for zone in ("us-east5-a", "us-east5-b"):
        labels = flavors[f"l4-spot-{zone}"]["spec"]["nodeLabels"]
        assert labels["topology.kubernetes.io/zone"] == zone and labels["cloud.google.com/gke-spot"] == "true"


def test_flex_start_gpus_without_queueing(plan):
    """GKE's flex-start GPU command: total limits from 0, location policy ANY, no reservation, no repair."""
    p = pools(plan("dev"))["l4-flex"]
    assert p["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 4, "locationPolicy": "ANY"}
    assert p["nodeConfig"]["flexStart"] is True and "queuedProvisioning" not in p
    assert p["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert p["management"]["autoRepair"] is False and p["nodeConfig"]["maxRunDuration"] == "86400s"


def test_queued_tpu_slice_gets_its_own_provisioning_check(plan):
    regs = plan("dev")
    p = pools(regs)["v6e-queued-0"]
    assert p["queuedProvisioning"] == {"enabled": True} and p["nodeConfig"]["flexStart"] is True
    assert p["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 4, "locationPolicy": "ANY"}
    config = objects(regs, "ProvisioningRequestConfig")["dws-config-tpu-4x4"]["spec"]
    assert config["managedResources"] == ["google.com/tpu"] and config["parameters"] == {"tpu-topology": "4x4"}
    # pinned to the nodes provisioned for its request, as the GPU check is (issue 23 item 4)
    assert config["podSetUpdates"] == {"nodeSelector": [{"key": "autoscaling.gke.io/provisioning-request",
                                                         "valueFromProvisioningClassDetail": "ResizeRequestName"}]}
    checks = objects(regs, "ClusterQueue")["research"]["spec"]["admissionChecksStrategy"]["admissionChecks"]
    assert checks == [{"name": "dws-prov", "onFlavors": ["h100-dws"]},
                      {"name": "dws-prov-tpu-4x4", "onFlavors": ["v6e-queued"]}]


def test_cpu_workers_have_a_flavor_of_their_own(plan):
    regs = plan("dev")
    p = pools(regs)["cpu-workers"]
    assert "guestAccelerators" not in p["nodeConfig"] and p["nodeConfig"]["spot"] is True
    assert p["nodeConfig"]["labels"]["workload-class"] == "preprocessing"
    assert p["nodeConfig"]["taints"] == [{"key": "workload-class", "value": "preprocessing", "effect": "NO_SCHEDULE"}]
    assert (p["nodeConfig"]["diskType"], p["nodeConfig"]["diskSizeGb"]) == ("pd-ssd", 200)
    assert p["nodeConfig"]["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 2}
    flavor = objects(regs, "ResourceFlavor")["cpu-workers"]["spec"]
    assert flavor["nodeLabels"] == {"cloud.google.com/gke-spot": "true", "gke-ai-batch.io/flavor": "cpu-workers"}
    assert flavor["tolerations"] == [{"key": "workload-class", "operator": "Equal", "value": "preprocessing",
                                      "effect": "NoSchedule"}]


def test_shared_t4s_count_as_their_clients(plan):
    """Two T4s per VM, each time-shared by 4 containers: 8 nvidia.com/gpu per node, 24 at 3 nodes."""
    p = pools(plan("dev"))["t4-notebooks"]
    (gpu,) = p["nodeConfig"]["guestAccelerators"]
    assert gpu["count"] == 2 and gpu["gpuSharingConfig"] == {"gpuSharingStrategy": "TIME_SHARING",
                                                              "maxSharedClientsPerGpu": 4}
    assert gpu["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "INSTALLATION_DISABLED"}
    plan_ = {pl.name: pl for pl in build_platform(platform_of("dev")).pools}["t4-notebooks"]
    assert (plan_.per_node, plan_.accelerators) == (8, 24)


def test_mig_partitions_count_per_gpu():
    cfg = platform_of("dev")
    cfg["gpu_pools"].append({"name": "a100-mig", "gpu": "nvidia-tesla-a100", "machine_type": "a2-highgpu-2g",
                             "sharing": {"strategy": "mig", "partition_size": "1g.5gb"}})
    plan_ = {pl.name: pl for pl in build_platform(cfg).pools}["a100-mig"]
    assert (plan_.gpus, plan_.per_node) == (2, 14)


@pytest.mark.parametrize("gpu, machine, size, per_gpu", [
    ("nvidia-tesla-a100", "a2-highgpu-1g", "1g.5gb", 7),
    ("nvidia-a100-80gb", "a2-ultragpu-1g", "3g.40gb", 2),
    ("nvidia-h100-80gb", "a3-highgpu-1g", "1g.20gb", 4),  # GKE's device plugin: H100 only
    ("nvidia-h200-141gb", "a3-ultragpu-8g", "1g.18gb", 7),  # GKE's MIG page names H200; the catalog lacked it
    ("nvidia-h200-141gb", "a3-ultragpu-8g", "3g.71gb", 2),
    ("nvidia-b200", "a4-highgpu-8g", "1g.45gb", 4),
])
def test_every_mig_size_gkes_device_plugin_takes_counts_its_instances_per_gpu(gpu, machine, size, per_gpu):
    pool = {"name": "mig", "gpu": gpu, "machine_type": machine, "sharing": {"strategy": "mig", "partition_size": size}}
    if gpu in ("nvidia-h200-141gb", "nvidia-b200"):
        pool.update(capacity="spot", disk_type="hyperdisk-balanced")
    cfg = platform_of("dev")
    cfg["gpu_pools"].append(pool)
    plan_ = {pl.name: pl for pl in build_platform(cfg).pools}["mig"]
    assert plan_.per_node == plan_.gpus * per_gpu


@pytest.mark.parametrize("gpu, machine, size", [
    ("nvidia-h100-80gb", "a3-highgpu-1g", "1g.5gb"),  # another GPU's size
    ("nvidia-h100-80gb", "a3-highgpu-1g", "4g.40gb"),  # NVIDIA lists it; GKE's device plugin refuses it
    ("nvidia-tesla-a100", "a2-highgpu-1g", "4g.20gb"),
    ("nvidia-a100-80gb", "a2-ultragpu-1g", "1g.20gb"),  # the plugin has it for H100 only
])
def test_a_mig_size_gke_does_not_take_is_refused_with_the_sizes_it_does(gpu, machine, size):
    cfg = platform_of("dev")
    cfg["gpu_pools"].append({"name": "mig", "gpu": gpu, "machine_type": machine,
                             "sharing": {"strategy": "mig", "partition_size": size}})
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path.endswith("sharing.partition_size") and "did you mean" in e.value.message


def test_a_team_with_several_local_queues(plan):
    regs = plan("dev")
    lqs = {(m["metadata"]["namespace"], m["metadata"]["name"]): m["spec"]["clusterQueue"]
           for m in (r.inputs for r in by_type(regs, ":LocalQueue"))}
    for ns in ("training", "training-eval"):
        assert (lqs[(ns, "training-queue")], lqs[(ns, "eval")], lqs[(ns, "preprocessing")]) == (
            "training", "training", "cpu-batch")
    labels = objects(regs, "Namespace")["training"]["metadata"]["labels"]
    assert labels["cluster-queue.gke-ai-batch.io/training"] == labels["cluster-queue.gke-ai-batch.io/cpu-batch"]
    names = [r.name for r in by_type(regs, ":LocalQueue") if r.name.startswith("team-training-")]
    assert len(names) == len(set(names)) == 6  # eval in training is not the first queue of training-eval
    assert {"team-training-lq-training", "team-training-lq-training-eval",
            "team-training-lq-training.eval"} <= set(names)


def test_autopilot_flavors_select_what_autopilot_provisions(plan):
    regs = plan("multislice-autopilot")
    assert not by_type(regs, "nodePool:NodePool")
    spot = objects(regs, "ResourceFlavor")["vlp-spot"]["spec"]["nodeLabels"]
    assert spot == {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
                    "cloud.google.com/gke-tpu-topology": "2x4", "cloud.google.com/gke-spot": "true"}
    assert any(r.name == "jobset" for r in regs)  # multislice needs JobSet, on Autopilot too


BAD = [
    ("multi-host slice with min 1", "prod", lambda c: c["tpu_pools"][2].update(autoscaling={"min_nodes": 1}),
     "platform.tpu_pools[2].autoscaling.min_nodes", "1: a multi-host slice of 2 VMs scales as a unit, from 0 to "
     "all 2 VMs (min_nodes 0 or 2, max_nodes 2)"),
    ("multi-host slice with total limits", "prod", lambda c: c["tpu_pools"][2].update(autoscaling={"total": True}),
     "platform.tpu_pools[2].autoscaling.total", "per-zone limits"),
    ("min above max", "prod", lambda c: c["gpu_pools"][2]["autoscaling"].update(min_nodes=9),
     "platform.gpu_pools[2].autoscaling.min_nodes", "9 is above max_nodes 8"),
    ("queued provisioning without autoscaling", "dws-gpu", lambda c: c["gpu_pools"][0].pop("max_nodes"),
     "platform.gpu_pools[0].autoscaling", "a queued-provisioning pool autoscales from 0: give autoscaling.max_nodes"),
    ("fixed size and autoscaling", "prod", lambda c: c["gpu_pools"][2].update(nodes=2),
     "platform.gpu_pools[2].nodes", "give one of them"),
    ("MIG on L4", "prod", lambda c: c["gpu_pools"][2].update(sharing={"strategy": "mig", "partition_size": "1g.5gb"}),
     "platform.gpu_pools[2].sharing.strategy", "nvidia-l4 has no MIG partitions (MIG GPUs: nvidia-tesla-a100, "
     "nvidia-a100-80gb, nvidia-h100-80gb, nvidia-h100-mega-80gb, nvidia-h200-141gb, nvidia-b200)"),
    ("unknown MIG size", "dev",
     lambda c: c["gpu_pools"][0].update(sharing={"strategy": "mig", "partition_size": "1g.5gb"}),
     "platform.gpu_pools[0].sharing.partition_size", "did you mean '1g.10gb'? allowed: "
     "1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 7g.80gb"),
    ("GPU count the machine fixes", "prod", lambda c: c["gpu_pools"][2].update(gpus_per_node=4),
     "platform.gpu_pools[2].gpus_per_node", "(g2-standard-24 has 2 GPUs, which the machine type fixes: give 2 "
     "or leave the count unset)"),
    ("Autopilot with node pools", "batch-teams",
     lambda c: c.update(gpu_pools=[{"name": "l4", "gpu": "nvidia-l4"}]), "platform.gpu_pools",
     "an Autopilot cluster has no node pools"),
    ("Autopilot with a system pool", "batch-teams", lambda c: c.update(system_pool={"machine_type": "e2-standard-8"}),
     "platform.system_pool", "an Autopilot cluster has no node pools"),
    ("Autopilot flavors on Standard", "dev",
     lambda c: c.update(autopilot_flavors=[{"name": "l4", "gpu": "nvidia-l4"}]), "platform.autopilot_flavors",
     "autopilot_flavors are for Autopilot clusters"),
    ("Autopilot flavor of both kinds", "multislice-autopilot",
     lambda c: c["autopilot_flavors"][0].update(gpu="nvidia-l4"), "platform.autopilot_flavors[0]",
     "exactly one of tpu (generation and topology) or gpu"),
    ("LocalQueue to another team's queue", "dev",
     lambda c: c["teams"][1]["local_queues"].append({"name": "steal", "cluster_queue": "research"}),
     "platform.teams[1].local_queues[3].cluster_queue", "'research' is team 'research''s own queue"),
    ("local_queue and local_queues", "dev", lambda c: c["teams"][1].update(local_queue="x"),
     "platform.teams[1].local_queues", "not both"),
    ("user label over the flavor's", "dev",
     lambda c: c["cpu_pools"][0]["node_labels"].update({"gke-ai-batch.io/flavor": "x"}),
     "platform.cpu_pools[0].node_labels.gke-ai-batch.io/flavor", "set by GKE or the platform"),
]


@pytest.mark.parametrize("stack, change, path, words", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_impossible_shapes_are_one_clear_error(stack, change, path, words):
    e = config_refusal(stack, change)
    assert e.path == path and words in e.message, (e.path, e.message)


def test_a_queue_tries_capacity_that_stays_then_queued_then_flex_start_then_spot(plan):
    """dev's research queue listed v6e-flex before v6e-queued, so the queued flavor (admitted only once GKE has
    the nodes) was never tried while flex-start quota (admitted before any node exists) was left."""
    spec = objects(plan("dev"), "ClusterQueue")["research"]["spec"]
    order = [f["name"] for g in spec["resourceGroups"] for f in g["flavors"]]
    assert order == ["v5e-train", "v6e-queued", "h100-dws", "v6e-flex", "l4-flex", "v6e-2x4"]  # a class last


@pytest.mark.parametrize("stack", ["dev", "prod", "batch-teams"])
def test_every_queue_states_what_its_flavor_order_means_under_borrowing_and_preemption(plan, stack):
    """Left to Kueue's defaults, an upgrade that changed them would change admission with no diff here."""
    for name, cq in objects(plan(stack), "ClusterQueue").items():
        assert cq["spec"]["flavorFungibility"] == {"whenCanBorrow": "MayStopSearch",
                                                   "whenCanPreempt": "TryNextFlavor"}, name
