"""TPU7x dynamic slicing on stack `dynamic-slicing`: the sub-block pools, GKE's slice controller, the Topology over
the partition labels, the slice controller's admission check on the flavor, the refusals of what GKE does not
support at their config path, and `make admit` placing a slice on a partition as Kueue's TAS would. Before, a TPU7x
reservation could only be carved into fixed slices: `dynamic_slicing` was an unknown key."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from gke_ai_batch.admission.decision import admit_in
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.gke_rules import cluster_findings, pool_findings
from gke_ai_batch.model.topologies import BLOCK, HOSTNAME, PARTITION_4X4X4
from gke_ai_batch.offline.admit import cluster_of
from gke_ai_batch.plan.platform import build_platform

from .conftest import ROOT, by_type, platform_of

TOPOLOGY = "gke-block-partition-2x4x4-2x2x4-2x2x2-2x2x1-hostname"  # the stack's pool allows sub-slicing
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
WORKLOADS = ROOT / "examples" / "workloads"


def _one(regs, suffix: str, name: str):
    return next(r for r in by_type(regs, suffix) if r.inputs["metadata"]["name"] == name)


def test_the_flavor_names_the_partition_topology_and_the_slice_controllers_check(plan):
    regs = plan("dynamic-slicing")
    (topology,) = by_type(regs, ":Topology")
    assert topology.inputs["metadata"]["name"] == TOPOLOGY
    assert [lv["nodeLabel"] for lv in topology.inputs["spec"]["levels"]] == [
        BLOCK, PARTITION_4X4X4, "cloud.google.com/gke-tpu-partition-2x4x4-id",
        "cloud.google.com/gke-tpu-partition-2x2x4-id", "cloud.google.com/gke-tpu-partition-2x2x2-id",
        "cloud.google.com/gke-tpu-partition-2x2x1-id", HOSTNAME]
    flavor = _one(regs, ":ResourceFlavor", "ironwood").inputs["spec"]
    assert flavor["topologyName"] == TOPOLOGY
    # the accelerator, not a slice shape: the slice controller sets the shape when a slice forms
    assert flavor["nodeLabels"]["cloud.google.com/gke-tpu-accelerator"] == "tpu7x"
    assert "cloud.google.com/gke-tpu-topology" not in flavor["nodeLabels"]
    check = _one(regs, ":AdmissionCheck", "dynamic-slicing").inputs
    assert check["spec"] == {"controllerName": "accelerator.gke.io/slice"}
    cq = _one(regs, ":ClusterQueue", "llm").inputs["spec"]
    assert cq["admissionChecksStrategy"] == {"admissionChecks": [{"name": "dynamic-slicing",
                                                                  "onFlavors": ["ironwood"]}]}


def test_sub_blocks_are_node_pools_of_a_provision_only_policy_on_a_cluster_with_the_slice_controller(plan):
    regs = plan("dynamic-slicing")
    (cluster,) = by_type(regs, "cluster:Cluster")
    assert cluster.inputs["addonsConfig"]["sliceControllerConfig"] == {"enabled": True}
    (policy,) = by_type(regs, "resourcePolicy:ResourcePolicy")
    assert policy.inputs["workloadPolicy"] == {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "4x4x4",
                                               "acceleratorTopologyMode": "PROVISION_ONLY"}
    pools = [p for p in by_type(regs, "nodePool:NodePool") if p.inputs["nodeConfig"]["machineType"].startswith("tpu7x")]
    assert sorted(p.inputs["name"] for p in pools) == [f"ironwood-{i}" for i in range(4)]
    assert {p.inputs["nodeCount"] for p in pools} == {16}
    assert {p.inputs["nodeConfig"]["reservationAffinity"]["consumeReservationType"] for p in pools} == \
        {"SPECIFIC_RESERVATION"}


def test_fixed_slice_stacks_send_no_slice_controller_and_no_slice_check(plan):
    regs = plan("multislice")
    (cluster,) = by_type(regs, "cluster:Cluster")
    assert "sliceControllerConfig" not in cluster.inputs["addonsConfig"]
    assert not [r for r in by_type(regs, ":AdmissionCheck")
                if r.inputs["spec"]["controllerName"] == "accelerator.gke.io/slice"]


def ironwood(**change) -> dict:
    cfg = platform_of("dynamic-slicing")
    cfg["tpu_pools"][0].update(change)
    return cfg


@pytest.mark.parametrize("cfg, path, says", [
    (ironwood(generation="v6e"), "platform.tpu_pools[0].generation",
     "'v6e': dynamic slicing is a TPU7x (Ironwood) feature"),
    (ironwood(topology="4x4x8"), "platform.tpu_pools[0].topology",
     "'4x4x8': a dynamically sliced pool is provisioned in sub-blocks of 4x4x4"),
    (ironwood(capacity="on-demand", reservation=None), "platform.tpu_pools[0].capacity",
     "dynamic slicing runs on All Capacity mode reservations only"),
    (ironwood(capacity="spot", reservation=None), "platform.tpu_pools[0].capacity", "'spot': dynamic slicing"),
])
def test_what_dynamic_slicing_does_not_support_is_refused_at_its_path(cfg, path, says):
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == path and says in e.value.message, str(e.value)


def test_autopilot_is_refused_at_the_pools_dynamic_slicing_key():
    cfg = platform_of("dynamic-slicing")
    cfg["cluster"]["mode"] = "autopilot"
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == "platform.tpu_pools[0].dynamic_slicing"
    assert "dynamic slicing runs on GKE Standard clusters only" in e.value.message


def test_the_policy_pack_refuses_a_slice_controller_where_gke_does_not_run_one(plan):
    cluster = copy.deepcopy(by_type(plan("dynamic-slicing"), "cluster:Cluster")[0].inputs)
    assert not list(cluster_findings(cluster))
    autopilot = {**cluster, "enableAutopilot": True}
    assert [r.id for r, _ in cluster_findings(autopilot)] == ["slice-controller-standard"]
    pool = copy.deepcopy(next(p.inputs for p in by_type(plan("dynamic-slicing"), "nodePool:NodePool")
                              if p.inputs["name"] == "ironwood-0"))
    assert not list(pool_findings(pool, cluster))
    pool["nodeConfig"]["imageType"] = "UBUNTU_CONTAINERD"
    ((rule, finding),) = pool_findings(pool, cluster)
    assert rule.id == "slice-controller-os-image" and "run Container-Optimized OS" in finding.message


def workload(path: Path, name: str | None = None) -> dict:
    """The file's workload named `name`, or its first."""
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    return next(d for d in docs if name in (None, d["metadata"]["name"]))


def test_make_admit_places_a_4x4x4_slice_in_one_partition_behind_the_slice_check(plan):
    result = admit_in(cluster_of(plan("dynamic-slicing")), workload(WORKLOADS / "dynamic-slicing.yaml"))
    assert result.admitted, result.problems
    assert list(result.checks) == ["dynamic-slicing"]


def test_make_admit_refuses_a_slice_a_partition_cannot_hold_in_kueues_words(plan):
    result = admit_in(cluster_of(plan("dynamic-slicing")), workload(ROOT / "examples" / "refused" /
                                                                    "dynamic-slicing-oversize.yaml"))
    assert not result.quota_reserved
    assert result.reason == (f'couldn\'t assign flavors to pod set slice: topology "{TOPOLOGY}" '
                             "allows to fit only 16 out of 32 pod(s)")


def test_a_4x4x8_slice_stitches_two_sub_blocks_of_the_block(plan):
    doc = workload(ROOT / "examples" / "refused" / "dynamic-slicing-oversize.yaml")
    template = doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    template["metadata"]["annotations"][REQUIRED] = BLOCK
    assert admit_in(cluster_of(plan("dynamic-slicing")), doc).admitted


def test_a_slice_of_part_of_a_sub_block_is_refused_as_no_slice_the_controller_forms(plan):
    doc = workload(ROOT / "examples" / "refused" / "dynamic-slicing-oversize.yaml")
    job = doc["spec"]["replicatedJobs"][0]["template"]["spec"]
    job.update(parallelism=24, completions=24)
    job["template"]["metadata"]["annotations"] = {REQUIRED: BLOCK}
    # no slice-topology annotation: the shape is named by the partition label the pods select instead
    job["template"]["spec"]["nodeSelector"]["cloud.google.com/gke-tpu-partition-4x4x4-state"] = "HEALTHY"
    result = admit_in(cluster_of(plan("dynamic-slicing")), doc)
    assert result.quota_reserved and not result.admitted
    assert any("the slice controller forms slices of whole 16-VM sub-blocks" in w for w in result.warnings)


# Day two: the same reservation, fixed slices one day and dynamically sliced the next, or back.
def test_turning_dynamic_slicing_off_a_live_flavor_is_refused_as_the_api_server_would(tmp_path):
    from .test_diff_both_sides import FLAVOR, Diffed, edited
    d = Diffed(*edited("dynamic-slicing", lambda c: c["tpu_pools"][0].update(dynamic_slicing=False,
                                                                                      sub_slicing=False)), tmp_path)
    [line] = d.refusals("update ResourceFlavor ironwood")
    assert "immutable when topologyName is set" in line and d.op(FLAVOR, "queues-flavor-ironwood") == "update"


def test_turning_dynamic_slicing_on_replaces_the_sub_blocks_only_with_an_acknowledgement(tmp_path):
    """The VMs of a pool are created with their policy's connection mode: a new policy (its own name) that the
    node pools name, so they are replaced, which the stack file must acknowledge; before, the policy was replaced
    under its old name beneath pools that kept AUTO_CONNECT."""
    from .test_diff_both_sides import NODE_POOL, Diffed
    now = platform_of("dynamic-slicing")
    base = copy.deepcopy(now)
    base["tpu_pools"][0].update(dynamic_slicing=False, sub_slicing=False)
    d = Diffed(base, now, tmp_path)
    assert {d.op(NODE_POOL, f"ironwood-slice-{i}") for i in range(4)} == {"replace"}
    assert any('placementPolicy.policyName: "ironwood-ironwood-wp" -> "ironwood-ironwood-ds-wp"' in ln
               for ln in d.lines(NODE_POOL, "ironwood-slice-0"))
    assert len(d.refusals("replace node pool ironwood", "acknowledge: [{node_pool: ironwood")) == 4
    assert not d.refusals("ResourceFlavor")  # turning topology-aware scheduling on is an update
    # the slice check the queue gains suspends the work admitted on ironwood until the check is Ready (issue 48)
    assert len(d.refusals("ClusterQueue llm gains admission check dynamic-slicing on flavors ironwood")) == 1
    now["acknowledge"] = [{"node_pool": "ironwood", "reason": "the reservation's sub-blocks become dynamically sliced"},
                          {"admission_check": "dynamic-slicing", "reason": "the team is drained first"}]
    (tmp_path / "ack").mkdir()
    assert not Diffed(base, now, tmp_path / "ack").refused


@pytest.mark.parametrize("shape, says", [
    ("4x8x4", "4x8x4: dimensions are in non-decreasing order (4x4x8)"),
    ("3x3x3", "3x3x3: each dimension is a multiple of 4, or the shape is a sub-slice, 2x4x4, 2x2x4, 2x2x2, 2x2x1 "
              '(the slice controller: "topology dimensions must be divisible by 4: 3x3x3")'),
    ("2x4x4", "the slice controller refuses it: configuration results in 128 TPUs requested, but must be exactly 32 "
              "TPUs (full utilization)"),
    ("4x4x4", "32 pods x 4 google.com/tpu = 128 chips per slice, but cloud.google.com/gke-tpu-slice-topology 4x4x4 "
              "has 64"),
])
def test_a_slice_shape_the_slice_controller_refuses_is_said(plan, shape, says):
    """The Slice reference's rules for a tpu7x topology, and one pod per VM of it."""
    doc = workload(ROOT / "examples" / "refused" / "dynamic-slicing-oversize.yaml")
    annotations = doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]["annotations"]
    annotations.update({REQUIRED: BLOCK, "cloud.google.com/gke-tpu-slice-topology": shape})
    result = admit_in(cluster_of(plan("dynamic-slicing")), doc)
    assert result.quota_reserved and not result.admitted
    assert any(says in w for w in result.warnings), result.warnings


def test_the_slice_references_largest_slice():
    from gke_ai_batch.model.dynamic_slicing import slice_shape_problem
    assert slice_shape_problem("16x24x24") is None  # 9,216 chips, the whole pod
    assert "above the 9,216" in str(slice_shape_problem("16x24x28"))


def test_the_component_door_refuses_dynamic_slicing_which_its_cluster_could_not_serve():
    """GkeCluster plans the slice controller from the platform's pools, which it does not take: a TpuSlicePool or
    KueueLayer that asked for dynamic slicing would get sub-blocks and a check no controller answers."""
    from gke_ai_batch.components.kueue_layer import KueueLayer
    from gke_ai_batch.components.tpu_slice_pool import TpuSlicePool
    from gke_ai_batch.offline.engine.runtime import record

    from .test_components import TARGET
    sliced = {"generation": "tpu7x", "topology": "4x4x4", "capacity": "reservation", "reservation": "r",
              "dynamic_slicing": True}
    errors: list[Exception] = []

    def program():
        for make in (lambda: TpuSlicePool("iw", {**TARGET, **sliced, "zones": ["us-east5-b"]}),
                     lambda: KueueLayer("batch", {"region": "us-east5", "zones": ["us-east5-b"],
                                                  "tpu_pools": [{"name": "iw", **sliced}], "teams": []})):
            try:
                make()
            except Exception as e:  # what `pulumi up` prints, before the component registers
                errors.append(e)

    regs = record(program, "direct")
    assert [r.type for r in regs] == ["pulumi:pulumi:Stack"]
    assert "at dynamic_slicing: unknown key `dynamic_slicing`" in str(errors[0])
    assert "at tpu_pools[0].dynamic_slicing: a KueueLayer beside a GkeCluster cannot turn on" in str(errors[1])


def test_a_slice_check_on_a_cluster_without_the_slice_controller_is_a_mandatory_violation():
    from gke_ai_batch.model.promises import Res
    from gke_ai_batch.offline.views.check import violations
    from gke_ai_batch.policies import stack_rules

    from .conftest import run_config
    regs = run_config(platform_of("dynamic-slicing"), "dynamic-slicing")
    found = [v for v in violations(regs) if v["policy"] == "slice-controller-enabled"]
    assert not found
    # a hand-built program: the same objects, the cluster without the controller
    resources = [Res(r.type, r.urn, copy.deepcopy(r.inputs)) for r in regs if r.custom]
    for r in resources:
        if r.type == "gcp:container/cluster:Cluster":
            r.props["addonsConfig"].pop("sliceControllerConfig")
    [(urn, message)] = stack_rules.slice_controller_enabled(resources)
    assert urn.endswith("queues-check-dynamic-slicing") and "wait forever" in message


# Sub-slicing: part of one sub-block. Before, `sub_slicing` was an unknown key, the Topology had no partition levels
# below 4x4x4, and make admit called every shape smaller than 4x4x4 one the slice controller refuses.
SUB_SLICE = "ironwood-2x4x4"
SUB_LEVELS = [f"cloud.google.com/gke-tpu-partition-{s}-id" for s in ("2x4x4", "2x2x4", "2x2x2", "2x2x1")]


def sub_slice(replicas: int = 1, pods: int = 8, size: int | None = None) -> dict:
    doc = workload(WORKLOADS / "dynamic-slicing.yaml", SUB_SLICE)
    rj = doc["spec"]["replicatedJobs"][0]
    rj["replicas"] = replicas
    rj["template"]["spec"].update(parallelism=pods, completions=pods)
    rj["template"]["spec"]["template"]["metadata"]["annotations"]["kueue.x-k8s.io/podset-slice-size"] = \
        str(size or pods)
    return doc


def test_a_pool_without_sub_slicing_keeps_the_whole_sub_block_topology():
    cfg = platform_of("dynamic-slicing")
    del cfg["tpu_pools"][0]["sub_slicing"]
    from .conftest import run_config
    (topology,) = by_type(run_config(cfg, "dynamic-slicing"), ":Topology")
    assert topology.inputs["metadata"]["name"] == "gke-block-partition-hostname"
    assert [lv["nodeLabel"] for lv in topology.inputs["spec"]["levels"]] == [BLOCK, PARTITION_4X4X4, HOSTNAME]


def test_sub_slicing_without_dynamic_slicing_is_refused_at_its_key():
    cfg = platform_of("dynamic-slicing")
    cfg["tpu_pools"][0]["dynamic_slicing"] = False
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == "platform.tpu_pools[0].sub_slicing"
    assert "set dynamic_slicing: true as well" in e.value.message


@pytest.mark.parametrize("version", ["1.35.2-gke.1842000", "1.35", "1.36.0-gke.3711999"])
def test_sub_slicing_below_gkes_floor_is_refused_at_the_clusters_version(version):
    cfg = platform_of("dynamic-slicing")
    cfg["cluster"]["version"] = version
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == "platform.cluster.version"
    assert e.value.message == (f"{version}: sub-slicing (slices smaller than 4x4x4, on platform.tpu_pools[0]) needs "
                               "GKE 1.36.0-gke.3712000 or later; pin a later version, or drop sub_slicing")


def test_super_slicing_alone_keeps_its_earlier_floor():
    cfg = platform_of("dynamic-slicing")
    cfg["cluster"]["version"] = "1.35.2-gke.1842000"
    cfg["tpu_pools"][0]["sub_slicing"] = False
    build_platform(cfg)


def test_the_rules_table_states_the_sub_slicing_floor_with_its_source():
    from gke_ai_batch.model.gke_rules import RULES
    (rule,) = [r for r in RULES if r.id == "sub-slicing-version"]
    assert rule.field == "cluster.version" and "1.36.0-gke.3712000" in rule.requirement
    assert "topologies smaller than 4x4x4" in rule.source.title
    assert rule.source.url.endswith("/how-to/use-gke-dynamic-slicing")


def test_make_admit_places_a_2x4x4_sub_slice_in_one_partition_behind_the_slice_check(plan):
    result = admit_in(cluster_of(plan("dynamic-slicing")), sub_slice())
    assert result.admitted, result.problems
    assert list(result.checks) == ["dynamic-slicing"] and not result.warnings


def test_a_sub_block_holds_two_2x4x4_sub_slices_and_kueue_says_so_of_a_third(plan):
    """Required in one 4x4x4 partition, each slice in a 2x4x4 one: Kueue counts slices, not pods, once a pod set
    has them."""
    cluster = cluster_of(plan("dynamic-slicing"))
    doc = sub_slice(replicas=2)
    template = doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    template["metadata"]["annotations"][REQUIRED] = PARTITION_4X4X4
    assert admit_in(cluster, doc).admitted
    doc["spec"]["replicatedJobs"][0]["replicas"] = 3
    result = admit_in(cluster, doc)
    assert not result.quota_reserved
    assert result.reason == (f'couldn\'t assign flavors to pod set slice: topology "{TOPOLOGY}" allows to fit only 2 '
                             "out of 3 slice(s)")


def test_a_2x4x4_job_of_more_pods_than_its_partition_holds_is_refused_in_kueues_words(plan):
    result = admit_in(cluster_of(plan("dynamic-slicing")),
                      workload(ROOT / "examples" / "refused" / "dynamic-slicing-sub-slice-oversize.yaml"))
    assert not result.quota_reserved
    assert result.reason == (f'couldn\'t assign flavors to pod set slice: topology "{TOPOLOGY}" doesn\'t allow to '
                             "fit any of 1 slice(s)")


def test_a_3x3x3_slice_is_refused_in_the_slice_controllers_words(plan):
    result = admit_in(cluster_of(plan("dynamic-slicing")),
                      workload(ROOT / "examples" / "refused" / "dynamic-slicing-3x3x3.yaml"))
    assert result.quota_reserved and not result.admitted
    assert any('"topology dimensions must be divisible by 4: 3x3x3"' in w for w in result.warnings), result.warnings


def test_a_sub_slice_on_a_pool_without_sub_slicing_is_refused_as_kueue_would(plan):
    """Without sub_slicing the Topology has no 2x4x4 level: Kueue takes no flavor for the pod set."""
    cfg = platform_of("dynamic-slicing")
    cfg["tpu_pools"][0]["sub_slicing"] = False
    from .conftest import run_config
    result = admit_in(cluster_of(run_config(cfg, "dynamic-slicing")), sub_slice())
    assert not result.quota_reserved
    assert 'Flavor "ironwood" does not contain the requested level' in str(result.reason), result.reason


def test_a_slice_level_above_the_required_level_is_kueues_reason(plan):
    cluster = cluster_of(plan("dynamic-slicing"))
    doc = sub_slice()
    annotations = doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]["annotations"]
    annotations.update({REQUIRED: SUB_LEVELS[0], "kueue.x-k8s.io/podset-slice-required-topology": PARTITION_4X4X4})
    result = admit_in(cluster, doc)
    assert result.reason == ("couldn't assign flavors to pod set slice: podset slice topology "
                             f"{PARTITION_4X4X4} is above the podset topology {SUB_LEVELS[0]}")


def test_turning_sub_slicing_on_a_live_flavor_is_refused_as_the_api_server_would(tmp_path):
    """The flavor's topologyName changes with the levels: immutable once set (ResourceFlavor CRD at v0.19.2)."""
    from .test_diff_both_sides import FLAVOR, Diffed, edited
    d = Diffed(*edited("dynamic-slicing", lambda c: c["tpu_pools"][0].update(sub_slicing=False)), tmp_path)
    [line] = d.refusals("update ResourceFlavor ironwood")
    assert "topologyName is immutable when topologyName is set" in line
    assert d.op(FLAVOR, "queues-flavor-ironwood") == "update"


def test_sub_slicing_on_a_live_pool_goes_through_a_flavor_of_another_name(tmp_path):
    """The documented way (docs/operating.md): the pool's flavor renamed and the team's quota moved with it in one
    change; the Topology of the new levels is a new object, the old flavor and Topology go once unused."""
    from .test_diff_both_sides import FLAVOR, NODE_POOL, Diffed
    now = platform_of("dynamic-slicing")
    base = copy.deepcopy(now)
    base["tpu_pools"][0]["sub_slicing"] = False
    now["tpu_pools"][0]["flavor"] = "ironwood-sub"
    quotas = now["teams"][0]["queue"]["quotas"]
    quotas["ironwood-sub"] = quotas.pop("ironwood")
    now["teams"][0]["pod_security"][0]["flavors"] = ["ironwood-sub", "cpu-np"]  # the exception follows its flavor
    d = Diffed(base, now, tmp_path)
    assert (d.op(FLAVOR, "queues-flavor-ironwood"), d.op(FLAVOR, "queues-flavor-ironwood-sub")) == ("delete", "create")
    assert {d.op(NODE_POOL, f"ironwood-slice-{i}") for i in range(4)} <= {"update", None}  # the VMs stay
    assert d.refused == []


# Pathways over dynamic slices. Before, the dynamic-slicing stack had no Pathways team: its ClusterQueue held
# no head quota and a Pathways JobSet's head found no flavor.
def _quotas(cq: dict) -> dict[str, dict[str, object]]:
    return {f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]}
            for group in cq["resourceGroups"] for f in group["flavors"]}


def test_the_pathways_heads_quota_joins_the_queue_of_the_sliced_tpus_and_not_the_slice_check(plan):
    cq = _one(plan("dynamic-slicing"), ":ClusterQueue", "llm").inputs["spec"]
    quotas = _quotas(cq)
    # one head (proxy 16 cpu + 100G, resource manager 8 cpu + 32G) plus the team's own 24 cpu and 100G for the client
    assert quotas["cpu-np"] == {"cpu": 48, "memory": "232G", "google.com/tpu": 0}
    assert quotas["ironwood"]["google.com/tpu"] == 256
    assert cq["admissionChecksStrategy"]["admissionChecks"] == [{"name": "dynamic-slicing", "onFlavors": ["ironwood"]}]


def test_make_admit_admits_the_pathways_jobset_head_on_cpu_np_and_workers_on_a_super_slice(plan):
    result = admit_in(cluster_of(plan("dynamic-slicing")), workload(WORKLOADS / "dynamic-slicing.yaml",
                                                                    "pathways-4x4x8"))
    assert result.admitted, result.problems
    assert {p.name: (p.count, [f.flavor for f in p.flavors]) for p in result.pod_sets} == {
        "pathways-head": (1, ["cpu-np"]), "worker": (32, ["ironwood"])}
    # Kueue's checks are per workload: the slice check comes with the ironwood flavor the workers got
    assert list(result.checks) == ["dynamic-slicing"]


def test_a_job_on_the_head_pool_alone_waits_for_no_slice_controller(plan):
    doc = workload(WORKLOADS / "dynamic-slicing.yaml", "pathways-4x4x8")
    doc["spec"]["replicatedJobs"] = doc["spec"]["replicatedJobs"][:1]  # the head only
    result = admit_in(cluster_of(plan("dynamic-slicing")), doc)
    assert result.admitted, result.problems
    assert result.checks == ()


def test_a_pathways_head_above_the_teams_head_quota_is_refused_in_kueues_words(plan):
    doc = workload(WORKLOADS / "dynamic-slicing.yaml", "pathways-4x4x8")
    client = doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    client["resources"]["limits"]["cpu"] = "25"
    result = admit_in(cluster_of(plan("dynamic-slicing")), doc)
    assert not result.quota_reserved
    assert "insufficient quota for cpu in flavor cpu-np" in (result.reason or "")


def test_the_pathways_resource_manager_names_the_super_slices_tpu7x_type():
    doc = workload(WORKLOADS / "dynamic-slicing.yaml", "pathways-4x4x8")
    head, worker = doc["spec"]["replicatedJobs"]
    rm = next(c for c in head["template"]["spec"]["template"]["spec"]["initContainers"] if c["name"] == "pathways-rm")
    shape = worker["template"]["spec"]["template"]["metadata"]["annotations"]["cloud.google.com/gke-tpu-slice-topology"]
    assert f"--instance_type=tpu7x:{shape}" in rm["args"]
    assert f"--instance_count={worker['replicas']}" in rm["args"]


@pytest.mark.parametrize("sub_slicing", [True, False])
def test_an_unpinned_cluster_is_refused_at_its_version(sub_slicing):
    """GKE creates an unpinned cluster at the Rapid channel's default, which nothing says is at the floor: before,
    the plan passed and the sub-blocks could land on a version without dynamic (or sub-) slicing."""
    cfg = platform_of("dynamic-slicing")
    del cfg["cluster"]["version"]
    cfg["tpu_pools"][0]["sub_slicing"] = sub_slicing
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == "platform.cluster.version"
    assert e.value.message == ("dynamic slicing needs GKE 1.35.2-gke.1842000 or later (sub-slicing, slices smaller "
                               "than 4x4x4, 1.36.0-gke.3712000); the cluster pins no version: pin one")


def _without(doc: dict, where: str, key: str) -> dict:
    template = doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    del (template["metadata"]["annotations"] if where == "annotations" else template["spec"]["nodeSelector"])[key]
    return doc


SLICE_TOPOLOGY, ACCELERATOR = "cloud.google.com/gke-tpu-slice-topology", "cloud.google.com/gke-tpu-accelerator"


@pytest.mark.parametrize(("where", "key", "missing"), [
    ("annotations", SLICE_TOPOLOGY, f"no {SLICE_TOPOLOGY} annotation"),
    ("nodeSelector", ACCELERATOR, f"no nodeSelector {ACCELERATOR}: tpu7x"),
])
def test_a_slice_the_slice_controller_would_skip_is_not_admitted(plan, where, key, missing):
    """The slice controller skips a workload with no pod set naming a slice topology and tpu7x: its check stays
    Pending and the job holds its quota forever. Before, `make admit` admitted such a job."""
    doc = _without(workload(WORKLOADS / "dynamic-slicing.yaml"), where, key)
    result = admit_in(cluster_of(plan("dynamic-slicing")), doc)
    assert result.quota_reserved and not result.admitted
    assert result.warnings == (f"pod set slice: {missing}: GKE's slice controller forms no Slice for it (a workload "
                               "with no pod set naming both is skipped, its admission check left Pending: it holds "
                               "its quota and never starts)",)


def test_a_partition_node_selector_names_the_slice_as_the_annotation_does(plan):
    """The slice controller also reads the shape from a partition label the pod selects (TopologyFromNodeSelector
    OrAffinity, beta, on by default)."""
    doc = _without(workload(WORKLOADS / "dynamic-slicing.yaml"), "annotations", SLICE_TOPOLOGY)
    template = doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    template["nodeSelector"]["cloud.google.com/gke-tpu-partition-4x4x4-state"] = "HEALTHY"
    assert admit_in(cluster_of(plan("dynamic-slicing")), doc).admitted


def test_an_autoscaled_sub_block_pool_is_refused_at_its_autoscaling():
    """Kueue's TAS places jobs on nodes that exist: a sub-block autoscaled to zero would never get a job (make admit
    says "no topology domains at level"). Before, the plan took it."""
    cfg = platform_of("dynamic-slicing")
    cfg["tpu_pools"][0]["autoscaling"] = {"max_nodes": 16}
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == "platform.tpu_pools[0].autoscaling"
    assert e.value.message.endswith("so a sub-block scaled to zero never gets a job that would scale it up: drop "
                                    "autoscaling")


def test_pools_sharing_a_flavor_with_different_topologies_are_told_so():
    """Before, the error said the pools had "different nodes (tpu7x-standard-4t, reservation)", which both have."""
    cfg = platform_of("dynamic-slicing")
    cfg["tpu_pools"].append({**cfg["tpu_pools"][0], "name": "ironwood2", "sub_slicing": False, "flavor": "ironwood"})
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == "platform.tpu_pools[1].flavor"
    assert e.value.message == (f"flavor 'ironwood' is already used by platform.tpu_pools[0], whose flavor names the "
                               f"Topology {TOPOLOGY}; this pool's would name gke-block-partition-hostname (a flavor "
                               "names one Topology, which dynamic_slicing, sub_slicing and topology_levels decide): "
                               "name another flavor")
