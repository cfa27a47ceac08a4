"""GKE's create-time rules: every rule accepts the shipped stacks and refuses a broken variant with one
clear error at its config path; the policy pack refuses the same settings in hand-built resources."""
import copy

import pytest

from gke_ai_batch import vocabulary
from gke_ai_batch.model import disks, promises
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.gke_pool_rules import floor_of, reserved_label_key, version_below
from gke_ai_batch.model.gke_rules import RULES, cluster_findings, pool_findings
from gke_ai_batch.model.maintenance import WindowError, worst_case_hours
from gke_ai_batch.plan.platform import build_platform
from gke_ai_batch.policies import stack_rules as sr

from .conftest import STACKS, by_type, fleet_outputs, platform_of


def variant(stack, change):
    cfg = platform_of(stack)
    change(cfg)
    return cfg


def refused(stack, change) -> ConfigError:
    with pytest.raises(ConfigError) as e:
        build_platform(variant(stack, change))
    return e.value


def window(c, start, end, recurrence):
    c["cluster"]["maintenance_window"] = {"start": start, "end": end, "recurrence": recurrence}


def exclusion(c, start, end, scope="NO_UPGRADES"):
    c["cluster"]["maintenance_exclusions"] = [{"name": "freeze", "start": start, "end": end, "scope": scope}]


# rule id -> (stack, breaking change, config path, message fragment)
BROKEN = {
    "private-endpoint-private-nodes": ("dev", lambda c: c["cluster"].update(private_nodes=False, ip_endpoint="private"),
                                       "platform.cluster.ip_endpoint", "only on a cluster with private nodes"),
    "maintenance-availability": ("prod", lambda c: window(c, "2025-01-04T02:00:00Z", "2025-01-04T08:00:00Z",
                                                          "FREQ=WEEKLY;BYDAY=SA"),
                                 "platform.cluster.maintenance_window",
                                 "gives 24 h in the worst 32 days; GKE needs 48"),
    "maintenance-exclusion": ("dws-gpu", lambda c: exclusion(c, "tomorrow", "2027-01-01T00:00:00Z"),
                              "platform.cluster.maintenance_exclusions[0]", "'tomorrow' is not an RFC 3339"),
    "private-control-plane-range": ("prod", lambda c: c["cluster"].update(master_ipv4_cidr="172.16.0.0/24"),
                                    "platform.cluster.master_ipv4_cidr", "is a /28"),
    "authorized-networks": ("dev", lambda c: c["cluster"]["master_authorized_networks"][0].update(cidr="10.0.0.0/33"),
                            "platform.cluster.master_authorized_networks[0].cidr", "not an IPv4 CIDR block"),
    "security-group-name": ("dev", lambda c: c["cluster"].update(security_group="rbac@acme.example"),
                            "platform.cluster.security_group", "gke-security-groups@<your domain>"),
    "cluster-resource-labels": ("dev", lambda c: c.update(labels={"Team": "ML Platform"}), "platform.labels",
                                "label key 'Team'"),
    "cluster-zones": ("prod", lambda c: c.update(zones=["us-east5-a", "us-east5-a", "us-east5-c"]),
                      "platform.zones[1]", "listed twice"),
    "slice-controller-standard": None,  # Autopilot is refused at tpu_pools[i].dynamic_slicing: test_dynamic_slicing
    "slice-controller-rapid-channel": ("dynamic-slicing", lambda c: c["cluster"].update(release_channel="REGULAR"),
                                       "platform.cluster.release_channel", "REGULAR: dynamic slicing needs the Rapid"),
    "slice-controller-version": ("dynamic-slicing", lambda c: c["cluster"].update(version="1.35.1-gke.1000000"),
                                 "platform.cluster.version", "dynamic slicing needs GKE 1.35.2-gke.1842000 or later"),
    "sub-slicing-version": ("dynamic-slicing", lambda c: c["cluster"].update(version="1.35.2-gke.1842000"),
                            "platform.cluster.version", "sub-slicing (slices smaller than 4x4x4, on "
                            "platform.tpu_pools[0]) needs GKE 1.36.0-gke.3712000 or later"),
    "slice-controller-os-image": None,  # the planner never sets an image type: test_dynamic_slicing
    "auto-upgrade-with-release-channel": None,  # nothing in the config turns it off: see the policy test
    "node-pool-name": ("dev", lambda c: c["gpu_pools"][0].update(name="8x-h100"),
                       "platform.gpu_pools[0].name", "'8x-h100': at most 40 lowercase letters, digits and '-', "
                       "beginning with a letter"),
    "pool-zones": ("dev", lambda c: c["gpu_pools"][0].update(zones=["us-east5-a", "us-east5-a"]),
                   "platform.gpu_pools[0].zones[1]", "listed twice"),
    "reservation-zone": ("prod", lambda c: c["tpu_pools"][0].update(zones=["us-east5-a", "us-east5-b"],
                                                                    topology="2x2x1"),
                         "platform.tpu_pools[0].zones", "a reservation is zonal"),
    "node-labels": ("dws-gpu", lambda c: c["gpu_pools"][0].update(node_labels={"tier": "-gold-"}),
                    "platform.gpu_pools[0].node_labels.tier", "a Kubernetes label value is"),
    "node-label-prefixes": ("dws-gpu", lambda c: c["gpu_pools"][0].update(
        node_labels={"node-role.kubernetes.io/trainer": ""}),
        "platform.gpu_pools[0].node_labels.node-role.kubernetes.io/trainer",
        "keys under node-role.kubernetes.io/ are managed by GKE or Kubernetes"),
    "node-resource-labels": ("dev", lambda c: c.update(labels={"cost": "x" * 64}), "platform.labels",
                             "at most 63"),
    "max-run-duration": ("dev", lambda c: c["tpu_pools"][1].update(max_run_duration="691200s"),
                         "platform.tpu_pools[1].max_run_duration", "nodes run at most 7 days"),
    "queued-provisioning-flex-start": None,  # the planner always sets it: see the policy test
    "flex-start-tpu-generations": ("dev", lambda c: c["tpu_pools"][1].update(generation="v4", topology="2x2x4"),
                                   "platform.tpu_pools[1].generation", "flex-start TPUs are v5e, v5p, v6e"),
    "flex-start-tpu-zones": ("prod", lambda c: c["tpu_pools"][1].update(zones=["us-east5-c"]),
                             "platform.tpu_pools[1].zones[0]", "zone 'us-east5-c': GKE runs flex-start TPU v6e in "
                             "us-east5-a, us-east5-b or asia-northeast1-b only"),
    "queued-tpu-generations": ("flex-start", lambda c: c["tpu_pools"][0].update(capacity="queued-provisioning",
                                                                                generation="v5e"),
                               "platform.tpu_pools[0].generation",
                               "queued provisioning takes TPU v6e or tpu7x; v5e is not one"),
    "gke-version-floors": ("prod", lambda c: c["cluster"].update(version="1.32.3-gke.1000000"),
                           "platform.tpu_pools[1].generation", "flex-start TPUs need GKE 1.33.0-gke.1712000"),
    "gpu-version-floors": ("dws-gpu", lambda c: c["cluster"].update(version="1.32.1-gke.1000000"),
                           "platform.gpu_pools[0].gpu", "queued-provisioning pools need GKE 1.32.2-gke.1652000"),
    "gpu-capacity-model": ("dws-gpu", lambda c: c["gpu_pools"].append({"name": "h200", "gpu": "nvidia-h200-141gb"}),
                           "platform.gpu_pools[1].capacity", "capacity on-demand: GKE runs nvidia-h200-141gb "
                           "(a3-ultragpu-8g) only on reservation, spot, flex-start or queued-provisioning capacity"),
    "accelerator-network-profile": ("prod", lambda c: c["gpu_pools"][0].update(gpudirect="auto"),
                                    "platform.gpu_pools[0].gpudirect",
                                    "a3-highgpu-8g has no automatic accelerator network profile"),
    "multi-networking": ("prod", lambda c: c["cluster"].update(multi_networking=False),
                         "platform.gpu_pools[1].gpudirect", "needs multi-networking on the cluster"),
    "gpu-time-sharing-clients": None,  # the config caps max_clients at 48: see test_rules_on_hand_built_pools
    "autoscaling-limits": None,  # the planner sends one kind of limits: see test_rules_on_hand_built_pools
    "flex-start-location-policy": ("flex-start", lambda c: c["tpu_pools"][1].update(
        autoscaling={"location_policy": "BALANCED"}), "platform.tpu_pools[1].autoscaling.location_policy",
        "location policy BALANCED: GKE does not support it on flex-start pools"),
    "multi-host-slice-autoscaling": None,  # the planner refuses such limits first (pools._slice_limits)
    "boot-disk-type": ("dws-gpu", lambda c: c["gpu_pools"][0].update(machine_type="a2-highgpu-1g",
                                                                     disk_type="hyperdisk-ml"),
                       "platform.gpu_pools[0].disk_type", "boot disk type 'hyperdisk-ml': GKE boots nodes from "
                       "pd-balanced, pd-standard, pd-ssd"),
    "local-ssd-count": ("dws-gpu", lambda c: c["gpu_pools"][0].update(local_ssd={"count": 3}),
                        "platform.gpu_pools[0].local_ssd.count", "3 local SSDs: a2-highgpu-1g takes 1, 2, 4 or 8"),
    "tpu7x-workload-policy": None,  # the planner always names the policy: see test_tpu7x_slice_*
    "network-range-overlap": ("prod", lambda c: c["network"].update(pods_cidr="10.40.0.0/14"),
                              "platform.network.pods_cidr", "10.40.0.0/14 overlaps the node range 10.40.0.0/20"),
    "network-range-size": ("prod", lambda c: c["network"].update(pods_cidr="10.44.0.0/20"),
                           "platform.network.pods_cidr", "10.44.0.0/20 holds 16 nodes; the pools reach "),
    "cluster-node-limit": ("dev", lambda c: c["gpu_pools"][0].update(max_nodes=1_000_000_000),
                           "platform.gpu_pools[0]", "nodes at full size; a GKE cluster has at most 65,000"),
    # Pathways (stack pathways, team llm); the other two rules cannot be broken from a stack file: see test_pathways
    "pathways-standard-cluster": ("pathways", lambda c: (c["cluster"].update(mode="autopilot"), c.pop("tpu_pools"),
                                                         c.pop("cpu_pools"), c.update(autopilot_flavors=[{
                                                             "name": "vlp-16",
                                                             "tpu": {"generation": "v5e", "topology": "2x4"}}])),
                                  "platform.teams[0].pathways", "Pathways runs on a Standard cluster"),
    "pathways-tpu-generations": None,  # every catalog generation has a Pathways instance type
    "pathways-jobset-version": None,  # model/releases.py lists no JobSet release older than Pathways needs
    "pathways-head-pool": ("pathways", lambda c: c["teams"][0]["pathways"].update(head_pool="vlp"),
                           "platform.teams[0].pathways.head_pool", "'vlp' is a TPU pool (tpu_pools)"),
    "pathways-head-machine": ("pathways", lambda c: c["cpu_pools"][0].update(machine_type="n2-standard-32"),
                              "platform.teams[0].pathways.head_pool", "runs n2-standard-32 (32 vCPUs, 128 GiB)"),
    "pathways-head-nodes": ("pathways", lambda c: c["teams"][0]["pathways"].update(heads=3),
                            "platform.teams[0].pathways.heads", "3 head(s) need as many nodes of 'cpu-np'"),
    # Compute classes (dev's classes 0, v6e-2x4, and 1, h200-8); the class rules run after the pools'.
    "compute-class-version": ("dev", lambda c: (c.update(tpu_pools=[], gpu_pools=[]),
                                                c["cluster"].update(version="1.30.1-gke.1156000")),
                              "platform.cluster.version", "custom compute classes need GKE 1.30.3-gke.1451000"),
    "class-auto-creation": ("dev", lambda c: c["cluster"].update(auto_provisioning={"enabled": False}),
                            "platform.cluster.auto_provisioning", "without cluster-level auto-provisioning only on"),
    "class-flex-start-tpus": ("dev", lambda c: c["compute_classes"][0]["tpu"].update(topology="4x4") or
                              c["compute_classes"][0].pop("machine_type"),
                              "platform.compute_classes[0].priorities[1]", "spans several hosts"),
    "class-gpu-ways": ("dev", lambda c: c["compute_classes"][1]["priorities"].append({"on_demand": True}),
                       "platform.compute_classes[1].priorities[3]", "GKE offers nvidia-h200-141gb as"),
    "class-pool-size": ("dev", lambda c: c["compute_classes"][0].update(max_nodes=1001),
                        "platform.compute_classes[0].max_nodes", "holds at most 1,000"),
    "nap-cpu-memory-limits": None,  # the planner always sends both: see test_compute_classes
    "class-unsupported-defaults": None,  # the planner sets neither: see test_compute_classes
}


def test_every_rule_has_a_case():
    assert sorted(BROKEN) == sorted(r.id for r in RULES)


@pytest.mark.parametrize("stack", STACKS)
def test_shipped_stacks_satisfy_every_rule(stack):
    build_platform(platform_of(stack), worker_outputs=fleet_outputs)


@pytest.mark.parametrize("rule_id", [k for k, v in BROKEN.items() if v])
def test_broken_setting_is_refused_at_its_path(rule_id):
    stack, change, path, fragment = BROKEN[rule_id]
    e = refused(stack, change)
    assert (e.path, fragment in e.message) == (path, True), str(e)


@pytest.mark.parametrize("recurrence,start,end,hours", [
    ("FREQ=WEEKLY;BYDAY=SA,SU", "2025-01-04T02:00:00Z", "2025-01-04T06:00:00Z", 32),  # the old default
    ("FREQ=WEEKLY;BYDAY=SA,SU", "2025-01-04T00:00:00Z", "2025-01-04T08:00:00Z", 64),  # the new default
    ("FREQ=WEEKLY;BYDAY=SA", "2025-01-04T02:00:00Z", "2025-01-04T08:00:00Z", 24),  # prod's old window
    ("FREQ=DAILY", "2025-01-04T22:00:00Z", "2025-01-05T04:00:00Z", 192),  # crosses midnight
    ("FREQ=DAILY", "2025-01-04T02:00:00Z", "2025-01-04T05:00:00Z", 0),  # 3 h windows do not count
    ("FREQ=WEEKLY;BYDAY=FR,SA", "2025-01-03T22:00:00+02:00", "2025-01-04T04:00:00+02:00", 48),
])
def test_worst_case_maintenance_hours(recurrence, start, end, hours):
    assert worst_case_hours(start, end, recurrence) == hours


@pytest.mark.parametrize("recurrence,fragment", [
    ("FREQ=MONTHLY;BYSETPOS=1;BYDAY=SA", "use FREQ=DAILY or FREQ=WEEKLY"),
    ("FREQ=WEEKLY;BYDAY=SAT", "unknown day 'SAT'"),
    ("weekends", "not an RFC 5545 RRULE"),
])
def test_windows_the_project_cannot_evaluate_are_refused(recurrence, fragment):
    with pytest.raises(WindowError, match=fragment):
        worst_case_hours("2025-01-04T00:00:00Z", "2025-01-04T08:00:00Z", recurrence)


def test_default_window_satisfies_gke():
    cfg = platform_of("dev")
    cfg["cluster"].pop("maintenance_window", None)
    w = build_platform(cfg).config.cluster.maintenance_window
    assert worst_case_hours(w.start, w.end, w.recurrence) >= 48


def test_no_upgrades_exclusion_length_and_scopes():
    e = refused("dws-gpu", lambda c: exclusion(c, "2026-12-01T00:00:00Z", "2027-03-15T00:00:00Z"))
    assert e.path == "platform.cluster.maintenance_exclusions[0].end" and "lasts 104 days" in e.message
    build_platform(variant("dws-gpu", lambda c: exclusion(c, "2026-12-01T00:00:00Z", "2027-02-28T00:00:00Z")))


def test_scoped_exclusions_need_a_release_channel(plan):
    cluster = copy.deepcopy(by_type(plan("dws-gpu"), "cluster:Cluster")[0].inputs)
    assert ids(cluster_findings(cluster)) == []
    cluster["releaseChannel"] = {"channel": "UNSPECIFIED"}
    ((rule, finding),) = cluster_findings(cluster)
    assert rule.id == "maintenance-exclusion" and finding.at == "[0].scope"
    assert "needs a release channel" in finding.message


def test_zonal_cluster_without_zones_is_a_config_error():
    e = refused("batch-teams", lambda c: c["cluster"].update(mode="standard", regional=False))
    assert e.path == "platform.zones" and "a zonal cluster needs a zone" in e.message


def test_one_huge_gpu_pool_is_refused():
    e = refused("dev", lambda c: c["gpu_pools"][0].update(capacity="on-demand", nodes=1_000_000_000,
                                                          max_nodes=None))
    assert e.path == "platform.gpu_pools[0]" and "at most 65,000" in e.message


def test_queued_provisioning_is_flex_start_with_auto_upgrade_on(plan):
    (pool,) = [r.inputs for r in by_type(plan("dws-gpu"), "nodePool:NodePool") if r.inputs["name"] == "dws-a100"]
    assert pool["nodeConfig"]["flexStart"] is True and pool["queuedProvisioning"] == {"enabled": True}
    assert pool["management"] == {"autoRepair": False, "autoUpgrade": True}
    assert pool["nodeLocations"] == ["us-central1-a", "us-central1-c"]  # location policy ANY picks the zone


def test_version_comparison():
    assert version_below("1.33.2-gke.1240000", "1.34.0-gke.2201000")
    assert not version_below("1.34.1-gke.1000000", "1.34.0-gke.2201000")
    assert not version_below("1.34", "1.34.0-gke.2201000")  # the newest 1.34 patch
    assert not version_below(None, "1.34.0-gke.2201000") and not version_below("latest", "1.34.0-gke.2201000")


def tpu7x(c, topology="4x4x4", version="1.34.1-gke.1000000"):
    c["cluster"]["version"] = version
    c["tpu_pools"].append({"name": "iron", "generation": "tpu7x", "topology": topology, "slices": 2})


def test_tpu7x_slice_plans_as_a_workload_policy_and_pools_that_name_it():
    from gke_ai_batch.offline.engine.runtime import run_program
    from gke_ai_batch.offline.engine.stackfile import StackFile
    cfg = variant("flex-start", tpu7x)
    regs = run_program(StackFile("iron", None, {"gke-ai-batch:platform": cfg}))
    (policy,) = by_type(regs, "resourcePolicy:ResourcePolicy")
    assert policy.inputs["workloadPolicy"] == {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "4x4x4"}
    assert policy.inputs["region"] == "us-east5" and policy.inputs["name"] == "flex-start-iron-wp"
    from gke_ai_batch.offline.views.check import violations
    assert [v for v in violations(regs) if v["level"] == "mandatory"] == []
    pools = {r.inputs["name"]: r for r in by_type(regs, "nodePool:NodePool")}
    for name in ("iron-0", "iron-1"):
        assert pools[name].inputs["placementPolicy"] == {"type": "", "policyName": "flex-start-iron-wp",
                                                         "tpuTopology": "4x4x4"}
        assert pools[name].inputs["nodeCount"] == 16 and policy.urn in pools[name].dependencies


def test_tpu7x_needs_its_gke_version_and_single_host_needs_no_policy():
    e = refused("flex-start", lambda c: tpu7x(c, version="1.33.2-gke.1000000"))
    assert e.path == "platform.tpu_pools[2].generation" and "TPU tpu7x need GKE 1.34.0-gke.2201000" in e.message
    single = build_platform(variant("flex-start", lambda c: tpu7x(c, topology="1x1x1"))).pools[-1]
    assert (single.machine_type, single.workload_policy, single.multi_host) == ("tpu7x-standard-1t", None, False)


def test_shared_reservation_plans_with_label_safe_values():
    from gke_ai_batch.model.labels import k8s_value_ok
    long = "projects/acme-shared-capacity-01/reservations/" + "v5p-" * 12 + "x/reservationBlocks/block-0001"
    for reservation in ("projects/acme-shared/reservations/v5p-prod", long):
        def reserve(c, reservation=reservation):
            c["tpu_pools"][0].update(reservation=reservation)
        plan = build_platform(variant("prod", reserve)).pools[1]
        value = plan.node_labels["gke-ai-batch.io/reservation"]
        assert k8s_value_ok(value) and len(value) <= 63 and value.endswith(("v5p-prod", "block-0001"))
        flavor = build_platform(variant("prod", reserve))
        assert flavor.scheduling.flavors["v5p-res"].node_labels["gke-ai-batch.io/reservation"] == value
    e = refused("prod", lambda c: c["tpu_pools"][0].update(reservation="projects/acme/reservation/x"))
    assert e.path == "platform.tpu_pools[0].reservation" and "projects/OWNER_PROJECT/reservations/NAME" in e.message


def cluster_and_pool(plan, stack, pool):
    regs = plan(stack)
    cluster = copy.deepcopy(by_type(regs, "cluster:Cluster")[0].inputs)
    pool = copy.deepcopy(next(r.inputs for r in by_type(regs, "nodePool:NodePool") if r.inputs["name"] == pool))
    return cluster, pool


def ids(findings):
    return [rule.id for rule, _ in findings]


def test_policy_refuses_what_the_planner_never_writes(plan):
    cluster, pool = cluster_and_pool(plan, "dws-gpu", "dws-a100")
    assert ids(cluster_findings(cluster)) == [] and ids(pool_findings(pool, cluster)) == []
    pool["management"]["autoUpgrade"] = False
    pool["nodeConfig"]["flexStart"] = False
    pool["nodeConfig"]["labels"] = {"gke-ai-batch.io/reservation": "projects/a/reservations/b"}
    assert ids(pool_findings(pool, cluster)) == ["auto-upgrade-with-release-channel", "node-labels",
                                                 "queued-provisioning-flex-start"]
    cluster["releaseChannel"] = {"channel": "UNSPECIFIED"}
    assert "auto-upgrade-with-release-channel" not in ids(pool_findings(pool, cluster))


def test_policy_refuses_a_compact_tpu7x_slice(plan):
    cluster, pool = cluster_and_pool(plan, "hotswap", "v6e-0")
    pool["nodeConfig"]["machineType"] = "tpu7x-standard-4t"
    pool["placementPolicy"] = {"type": "COMPACT", "tpuTopology": "4x4x4"}
    assert ids(pool_findings(pool, cluster)) == ["tpu7x-workload-policy"]


def test_gke_rules_policy_reports_hand_built_resources(plan):
    res = [promises.Res(r.type, r.urn, copy.deepcopy(r.inputs), tuple(r.dependencies))
           for r in plan("prod") if r.custom]
    assert sr.gke_rules(res) == []
    for r in res:
        if r.type == vocabulary.CLUSTER:
            r.props["maintenancePolicy"]["recurringWindow"]["recurrence"] = "FREQ=WEEKLY;BYDAY=SA"
        if r.type == vocabulary.NODE_POOL and r.props["name"] == "v5p-res-0":
            r.props["nodeLocations"] = ["us-east5-a", "us-east5-b"]
    messages = [m for _, m in sr.gke_rules(res)]
    assert any(m.startswith("cluster ml-prod: FREQ=WEEKLY;BYDAY=SA from") and "(maintenance-availability)" in m
               for m in messages)
    assert any(m.startswith("node pool v5p-res-0:") and "(reservation-zone)" in m for m in messages)


# Node pool props as the engine sees them, for the rules the planner cannot reach or reaches only
# through other checks: rule id -> (pool, cluster) refused, message fragment, (pool, cluster) accepted.
V6E, V5E = {"machineType": "ct6e-standard-4t"}, {"machineType": "ct5lp-hightpu-4t"}
SLICE_4X4 = {"type": "COMPACT", "tpuTopology": "4x4"}  # 4 VMs of ct6e-standard-4t
QUEUED = {"enabled": True}


def gpu(kind, machine, count, **extra):
    return {"machineType": machine, "guestAccelerators": [{"type": kind, "count": count, **extra}]}


def shared(clients):
    return gpu("nvidia-l4", "g2-standard-8", 1, gpuSharingConfig={"gpuSharingStrategy": "TIME_SHARING",
                                                                  "maxSharedClientsPerGpu": clients})


PINNED = {"minMasterVersion": "1.33.2-gke.1000000"}
AUTO = {"acceleratorNetworkProfile": "auto"}
PROPS = {
    "accelerator-network-profile": (
        ({"nodeConfig": {"machineType": "a3-ultragpu-8g"}, "networkConfig": AUTO},
         {"datapathProvider": "LEGACY_DATAPATH"}),
        "needs GKE Dataplane V2 on the cluster",
        ({"nodeConfig": {"machineType": "a3-ultragpu-8g"}, "networkConfig": AUTO},
         {"datapathProvider": "ADVANCED_DATAPATH", "minMasterVersion": "1.34.1-gke.1829001"})),
    "autoscaling-limits": (
        ({"autoscaling": {"minNodeCount": 0, "maxNodeCount": 2, "totalMaxNodeCount": 4}}, {}),
        "per-zone limits (minNodeCount 0, maxNodeCount 2) and total limits (totalMaxNodeCount 4); GKE takes one",
        ({"autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 4, "locationPolicy": "ANY"}}, {})),
    "flex-start-location-policy": (
        ({"nodeConfig": {"flexStart": True}, "autoscaling": {"maxNodeCount": 2, "locationPolicy": "BALANCED"}}, {}),
        "location policy BALANCED: GKE does not support it on flex-start pools (queued provisioning included); "
        "use ANY",
        ({"nodeConfig": {"flexStart": True}, "autoscaling": {"maxNodeCount": 2, "locationPolicy": "ANY"}}, {})),
    "multi-host-slice-autoscaling": (
        ({"nodeConfig": V6E, "placementPolicy": SLICE_4X4,
          "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 4}}, {}),
        "a multi-host slice of 4 VMs takes per-zone limits: GKE sizes the slice by maxNodeCount",
        ({"nodeConfig": V6E, "placementPolicy": SLICE_4X4, "autoscaling": {"minNodeCount": 0, "maxNodeCount": 4}},
         {})),
    "gpu-version-floors": (
        ({"nodeConfig": gpu("nvidia-gb200", "a4x-highgpu-4g", 4)}, PINNED),
        "nvidia-gb200 GPUs need GKE 1.32.8-gke.1108000 or later on 1.32, 1.33.4-gke.1036000 or later from 1.33; "
        "the cluster pins 1.33.2-gke.1000000",
        ({"nodeConfig": gpu("nvidia-gb200", "a4x-highgpu-4g", 4)}, {"minMasterVersion": "1.33.4-gke.1036000"})),
    "flex-start-tpu-zones": (
        ({"nodeConfig": {**V5E, "flexStart": True}}, {"location": "us-east5-a"}),
        "zone 'us-east5-a': GKE runs flex-start TPU v5e in us-west4-a only",
        ({"nodeConfig": {**V5E, "flexStart": True}, "nodeLocations": ["us-west4-a"]}, {"location": "us-west4"})),
    "queued-tpu-generations": (
        ({"nodeConfig": {**V6E, "flexStart": True}, "queuedProvisioning": QUEUED}, PINNED),
        "queued-provisioning TPUs need GKE 1.35 or later; the cluster pins 1.33.2-gke.1000000",
        ({"nodeConfig": {**V6E, "flexStart": True}, "queuedProvisioning": QUEUED},
         {"minMasterVersion": "1.35.0-gke.1000000"})),
    "gpu-capacity-model": (
        ({"nodeConfig": {**gpu("nvidia-gb200", "a4x-highgpu-4g", 4), "spot": True}}, {}),
        "capacity spot: GKE runs nvidia-gb200 (a4x-highgpu-4g) only on reservation capacity",
        ({"nodeConfig": {**gpu("nvidia-gb200", "a4x-highgpu-4g", 4),
                         "reservationAffinity": {"consumeReservationType": "SPECIFIC_RESERVATION"}}}, {})),
    "boot-disk-type": (
        ({"nodeConfig": {"machineType": "a4-highgpu-8g", "diskType": "pd-balanced"}}, {}),
        "boot disk type 'pd-balanced' on a4-highgpu-8g: A3 Ultra, A4, A4X, G4, C4, C4A, C4D, N4 and TPU v6e "
        "machines (Hyperdisk only) boot from hyperdisk-balanced",
        ({"nodeConfig": {"machineType": "a4-highgpu-8g", "diskType": "hyperdisk-balanced"}}, {})),
    "local-ssd-count": (
        ({"nodeConfig": {"machineType": "n2-standard-32", "ephemeralStorageLocalSsdConfig": {"localSsdCount": 2}}},
         {}),
        "2 local SSDs: n2-standard-32 takes 4, 8, 16 or 24",
        ({"nodeConfig": {"machineType": "n2-standard-32", "localNvmeSsdBlockConfig": {"localSsdCount": 4}}}, {})),
    "gpu-time-sharing-clients": (
        ({"nodeConfig": shared(64)}, {}),
        "64 clients per GPU: time-sharing shares one GPU among 2 to 48 containers",
        ({"nodeConfig": shared(48)}, {})),
    "node-label-prefixes": (
        ({"nodeConfig": {"labels": {"cloud.google.com/compute-class": "Accelerator"}}}, {}),
        "label key 'cloud.google.com/compute-class': keys under cloud.google.com/ are managed by GKE or Kubernetes",
        ({"nodeConfig": {"labels": {"example.com/compute-class": "Accelerator"}}}, {})),
}


def messages(rule_id, pool, cluster):
    (rule,) = [r for r in RULES if r.id == rule_id]
    return [f.message for f in rule.check(pool, cluster)]


@pytest.mark.parametrize("rule_id", PROPS)
def test_rules_on_hand_built_pools(rule_id):
    (bad, bad_cluster), fragment, (good, good_cluster) = PROPS[rule_id]
    (message,) = messages(rule_id, bad, bad_cluster)
    assert fragment in message, message
    assert messages(rule_id, good, good_cluster) == []


def test_a_slice_scales_from_zero_to_all_its_vms():
    pool = {"nodeConfig": V6E, "placementPolicy": SLICE_4X4, "autoscaling": {"minNodeCount": 0, "maxNodeCount": 8}}
    (message,) = messages("multi-host-slice-autoscaling", pool, {})
    assert message.startswith("minNodeCount 0, maxNodeCount 8: a multi-host slice of 4 VMs scales as a unit")
    pool["autoscaling"] = {"minNodeCount": 4, "maxNodeCount": 4}
    assert messages("multi-host-slice-autoscaling", pool, {}) == []
    single = {"nodeConfig": V6E, "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 8}}
    assert messages("multi-host-slice-autoscaling", single, {}) == []  # single-host VMs scale one by one


FLOORS = ("1.32.8-gke.1108000", "1.33.4-gke.1036000")


@pytest.mark.parametrize("version,floor", [
    ("1.31.9-gke.1000000", "1.32.8-gke.1108000"),  # a minor below every floor
    ("1.32.7-gke.1000000", "1.32.8-gke.1108000"),
    ("1.32.8-gke.1108000", None),
    ("1.33.2-gke.1000000", "1.33.4-gke.1036000"),  # 1.32's floor does not hold on 1.33
    ("1.33", None),  # the newest 1.33 patch
    ("1.34.0-gke.1000000", None),
    ("latest", None), (None, None),
])
def test_a_version_takes_the_floor_of_its_minor(version, floor):
    assert floor_of(version, FLOORS) == floor


def test_gpu_floors_by_capacity():
    flex = {"nodeConfig": {**gpu("nvidia-l4", "g2-standard-8", 1), "flexStart": True}}
    queued = {**flex, "queuedProvisioning": QUEUED}
    cluster = {"minMasterVersion": "1.32.5-gke.1000000"}
    (message,) = messages("gpu-version-floors", flex, cluster)
    assert message == ("flex-start pools without queued provisioning need GKE 1.33.0-gke.1712000 or later; the "
                       "cluster pins 1.32.5-gke.1000000")
    assert messages("gpu-version-floors", queued, cluster) == []
    tpu = {"nodeConfig": {**V6E, "flexStart": True}}  # TPU floors are gke-version-floors'
    assert messages("gpu-version-floors", tpu, cluster) == []


@pytest.mark.parametrize("machine,count,gpu_type,fragment", [
    ("a3-ultragpu-8g", 16, None, "a3-ultragpu-8g comes with 32 (bundled), give 32"),
    ("ct6e-standard-4t", 1, None, "ct6e-standard-4t has no local SSDs"),
    ("e2-standard-8", 2, None, "e2-standard-8 has no local SSDs"),
    ("n1-standard-8", 24, "nvidia-tesla-t4", "n1-standard-8 with T4 GPUs takes 1, 2, 3, 4, 5, 6, 7, 8 or 16"),
    ("g2-standard-24", 1, "nvidia-l4", "g2-standard-24 takes 2"),
    ("n2-standard-128", 8, None, "n2-standard-128 takes 16 or 24"),
    # Series the full machine catalog added (the GKE cluster autoscaler's machine-type table)
    ("n2d-standard-32", 1, None, "n2d-standard-32 takes 2, 4, 8, 16 or 24"),
    ("c2-standard-60", 4, None, "c2-standard-60 takes 8"),
    ("c3-standard-8", 1, None, "c3-standard-8 has no local SSDs"),
    ("m3-ultramem-32", 3, None, "m3-ultramem-32 takes 4 or 8"),
])
def test_local_ssd_counts(machine, count, gpu_type, fragment):
    assert fragment in (disks.local_ssd_problem(machine, count, gpu_type) or "")


@pytest.mark.parametrize("machine,count,gpu_type", [
    ("a3-ultragpu-8g", 32, None), ("a3-ultragpu-8g", 0, None),  # 0: the bundled disks
    ("n1-standard-8", 24, None), ("g4-standard-384", 32, "nvidia-rtx-pro-6000"),
    ("n2d-standard-224", 24, None), ("c2d-standard-2", 8, None), ("m3-ultramem-32", 4, None),
    ("n2-custom-8-16384", 3, None),  # custom types: not known here, not judged
])
def test_local_ssd_counts_accepted(machine, count, gpu_type):
    assert disks.local_ssd_problem(machine, count, gpu_type) is None


@pytest.mark.parametrize("machine,disk,ok", [
    ("g2-standard-8", "pd-standard", False), ("a3-highgpu-8g", "pd-standard", False),
    ("ct6e-standard-4t", "pd-balanced", False), ("c4a-standard-8", "pd-ssd", False),
    ("n2-standard-8", "pd-fast", False),
    ("g2-standard-8", "pd-balanced", True), ("a3-ultragpu-8g", "hyperdisk-balanced", True),
    ("n2-standard-8", "pd-standard", True), ("ct5lp-hightpu-4t", "pd-balanced", True),
    ("c3-standard-8", "pd-standard", False), ("c3d-highmem-8", "hyperdisk-extreme", False),
    ("h3-standard-88", "pd-ssd", False), ("h3-standard-88", "pd-balanced", True), ("c3-standard-8", "pd-ssd", True),
])
def test_boot_disk_types(machine, disk, ok):
    assert (disks.boot_disk_problem(machine, disk) is None) == ok


@pytest.mark.parametrize("key,reserved", [
    ("kubernetes.io/role", True), ("node-role.kubernetes.io/trainer", True), ("k8s.io/x", True),
    ("sig.k8s.io/x", True), ("cloud.google.com/gke-spot", True), ("cloud.google.com/compute-class", True),
    ("cloud.google.com/gke-networking-dra-driver", False),  # GKE's DRA page sets it on the node pool
    ("sandbox.gke.io/runtime", True),  # the API: "reserved for gke sandbox"
    ("notkubernetes.io/x", False), ("example.com/role", False), ("gke-ai-batch.io/flavor", False), ("tier", False),
])
def test_reserved_node_label_keys(key, reserved):
    assert reserved_label_key(key) == reserved


def gb200(c, version):
    c["cluster"]["version"] = version
    c["gpu_pools"].append({"name": "gb200", "gpu": "nvidia-gb200", "capacity": "reservation", "reservation": "gb"})


# What the planner ships for each new rule passes it: (rule id, stack, change).
SHIPPED = [
    ("accelerator-network-profile", "prod", lambda c: (c["cluster"].update(version="1.34.1-gke.1829001"),
                                                       c["gpu_pools"][1].update(gpudirect="auto"))),
    ("autoscaling-limits", "dws-gpu", lambda c: c["gpu_pools"].append(
        {"name": "l4", "gpu": "nvidia-l4", "autoscaling": {"max_nodes": 2, "total": True}})),
    ("flex-start-location-policy", "flex-start", lambda c: c["tpu_pools"][1].update(
        autoscaling={"location_policy": "ANY"})),
    ("multi-host-slice-autoscaling", "prod", lambda c: c["tpu_pools"][2].update(autoscaling={})),  # spot v5e 0..2
    ("gpu-version-floors", "dws-gpu", lambda c: gb200(c, "1.33.4-gke.1036000")),
    ("gpu-version-floors", "dws-gpu", lambda c: gb200(c, "1.32.8-gke.1108000")),
    ("flex-start-tpu-zones", "flex-start", lambda c: None),  # v6e in us-east5-a
    ("flex-start-tpu-zones", "multislice", lambda c: (c["cluster"].update(version="1.33.0-gke.1712000"),
                                                      c["tpu_pools"][0].update(capacity="flex-start"))),
    ("queued-tpu-generations", "flex-start", lambda c: (c["cluster"].update(version="1.35"),
                                                        c["tpu_pools"][1].update(capacity="queued-provisioning"))),
    ("gpu-capacity-model", "dws-gpu", lambda c: c["gpu_pools"].append(
        {"name": "h200", "gpu": "nvidia-h200-141gb", "capacity": "spot", "disk_type": "hyperdisk-balanced"})),
    ("boot-disk-type", "dws-gpu", lambda c: c["gpu_pools"][0].update(disk_type="pd-ssd")),
    ("local-ssd-count", "dws-gpu", lambda c: c["gpu_pools"][0].update(local_ssd={"count": 4})),
    ("gpu-time-sharing-clients", "dws-gpu", lambda c: c["gpu_pools"].append(
        {"name": "l4", "gpu": "nvidia-l4", "sharing": {"strategy": "time-sharing", "max_clients": 48}})),
    ("node-label-prefixes", "dws-gpu", lambda c: c["gpu_pools"][0].update(node_labels={"example.com/team": "cv"})),
]


@pytest.mark.parametrize("rule_id,stack,change", SHIPPED, ids=[f"{r}-{s}" for r, s, _ in SHIPPED])
def test_what_the_planner_ships_passes(rule_id, stack, change):
    build_platform(variant(stack, change))


def test_queued_tpus_need_gke_1_35():
    e = refused("flex-start", lambda c: c["tpu_pools"][1].update(capacity="queued-provisioning"))
    assert e.path == "platform.tpu_pools[1].generation", str(e)
    assert "queued-provisioning TPUs need GKE 1.35 or later; the cluster pins 1.33.0-gke.1712000" in e.message


def test_flex_start_gpus_need_the_how_to_s_version():
    def flex_l4(c):
        c["cluster"]["version"] = "1.32.5-gke.1000000"  # enough for the queued A100s, not for flex-start
        c["gpu_pools"].append({"name": "l4", "gpu": "nvidia-l4", "capacity": "flex-start",
                               "autoscaling": {"max_nodes": 2}})
    e = refused("dws-gpu", flex_l4)
    assert e.path == "platform.gpu_pools[1].gpu" and "need GKE 1.33.0-gke.1712000 or later" in e.message


def test_planned_slices_and_flex_start_pools_autoscale_as_gke_takes_them(plan):
    cluster, pool = cluster_and_pool(plan, "flex-start", "v6e-multi-0")
    assert pool["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 4, "locationPolicy": "ANY"}
    assert ids(pool_findings(pool, cluster)) == []


def test_gkes_automatic_networks_are_refused_beside_declared_ones():
    """Cluster Toolkit's check: the automatic profile creates the networks itself, so declared ones conflict."""
    pool = {"nodeConfig": {"machineType": "a4-highgpu-8g"},
            "networkConfig": {**AUTO, "additionalNodeNetworkConfigs": [{"network": "n", "subnetwork": "s"}]}}
    assert messages("accelerator-network-profile", pool, {"datapathProvider": "ADVANCED_DATAPATH"}) == [
        "the automatic accelerator network profile creates the networks itself: declare no additional node "
        "networks with it"]
