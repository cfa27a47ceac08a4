"""The public components used directly from Python with plain arguments: the same catalog, rules and
clear errors as the stack config, the component contract (type tokens, child names), and the
policies still judging node pools a program builds by hand."""
import typing

import pulumi
import pulumi_gcp as gcp
import pytest

from gke_ai_batch.components import args as public_args
from gke_ai_batch.components.argument_errors import ComponentArgumentsError
from gke_ai_batch.components.gke_cluster import ClusterSettingsArgs, GkeClusterArgs
from gke_ai_batch.components.gpu_pool import GpuPoolArgs
from gke_ai_batch.components.kueue_layer import KueueLayer, QueueArgs, TeamSpec
from gke_ai_batch.components.platform import Platform, PlatformArgs
from gke_ai_batch.components.system_pool import SystemNodePool, SystemNodePoolArgs
from gke_ai_batch.components.tpu_slice_pool import TpuSlicePool
from gke_ai_batch.model import cluster_config, config, pool_config, team_config
from gke_ai_batch.offline.engine.runtime import record
from gke_ai_batch.offline.views.check import violations
from gke_ai_batch.plan.gke_inputs import node_pool_inputs
from gke_ai_batch.plan.platform import build_platform

from .conftest import by_type, planned, platform_of, run_config

LABELS = {"environment": "dev", "owner": "ml-platform"}
TARGET = dict(project="acme-ml-dev", region="us-east5", cluster="ml-dev", location="us-east5", labels=LABELS,
              service_account="ml-dev-nodes@acme-ml-dev.iam.gserviceaccount.com")
TRAIN = dict(generation="v5e", topology="2x4", slices=2, zones=["us-east5-b"])


def test_component_tokens_and_stable_child_names():
    regs = record(lambda: TpuSlicePool("train", {**TARGET, **TRAIN}), "direct")
    types = {r.name: r.type for r in regs}
    assert types["train"] == "gke-ai-batch:index:TpuSlicePool"
    assert types["train-slice-0"] == types["train-slice-1"] == "gcp:container/nodePool:NodePool"
    pool = next(r for r in regs if r.name == "train-slice-0")
    assert pool.inputs["nodeCount"] == 2 and pool.inputs["placementPolicy"]["tpuTopology"] == "2x4"
    # The pools are sound; alone in a stack they lack the JobSet install multi-host slices need.
    assert [v["policy"] for v in violations(regs) if v["level"] == "mandatory"] == ["jobset-installed"]


@pytest.mark.parametrize("change, message", [
    ({"topology": "2x3"}, "invalid TpuSlicePool 'train' arguments at topology: unknown topology for TPU v5e '2x3'"),
    ({"slices": 0}, "invalid TpuSlicePool 'train' arguments at slices: 0 slices: a pool needs at least 1 slice"),
    ({"capacity": "on demand"}, "invalid TpuSlicePool 'train' arguments at capacity: "
     "'on demand': allowed: 'on-demand', 'spot', 'reservation', 'flex-start' or 'queued-provisioning'"),
    ({"autoscaling": {"min_nodes": 1}}, "invalid TpuSlicePool 'train' arguments at autoscaling.min_nodes: 1: a "
     "multi-host slice of 2 VMs scales as a unit"),
    ({"zones": ["us-west1-a"]}, "invalid TpuSlicePool 'train' arguments at zones[0]"),
])
def test_bad_arguments_are_refused_before_any_resource(change, message):
    registered: list = []

    def program():
        try:
            TpuSlicePool("train", {**TARGET, **TRAIN, **change})
        except Exception as e:  # what `pulumi up` prints, before the component registers
            registered.append(e)

    regs = record(program, "direct")
    assert [r.type for r in regs] == ["pulumi:pulumi:Stack"] and str(registered[0]).startswith(message), registered


def test_kueue_layer_from_plain_arguments():
    team: TeamSpec = {"name": "research", "queue": {"quotas": {"train": {"google.com/tpu": {"nominal": "16"}}}}}
    regs = record(lambda: KueueLayer("batch", {"region": "us-east5", "zones": ["us-east5-b"],
                                               "tpu_pools": [{"name": "train", **TRAIN}], "teams": [team]}),
                  "direct")
    by_kind = {(r.inputs.get("kind"), r.inputs.get("metadata", {}).get("name")) for r in regs}
    assert {("ResourceFlavor", "train"), ("ClusterQueue", "research"), ("LocalQueue", "research-queue")} <= by_kind
    assert {r.type for r in regs if r.name == "jobset-release"} == {"kubernetes:helm.sh/v3:Release"}


def test_kueue_layer_refuses_a_quota_on_a_missing_flavor():
    team: TeamSpec = {"name": "research", "queue": {"quotas": {"h100": {"nvidia.com/gpu": {"nominal": "8"}}}}}
    with pytest.raises(Exception, match=r"invalid KueueLayer 'batch' arguments at teams\[0\]\.queue\.quotas\.h100"):
        record(lambda: KueueLayer("batch", {"region": "us-east5", "teams": [team]}), "direct")


def test_kueue_layer_names_the_pool_argument_at_fault():
    pool = {"name": "train", **TRAIN, "topology": "4x5"}
    with pytest.raises(Exception, match=r"invalid KueueLayer 'batch' arguments at tpu_pools\[0\]\.topology: "):
        record(lambda: KueueLayer("batch", {"region": "us-east5", "tpu_pools": [pool], "teams": []}), "direct")


def test_platform_component_declares_what_the_stack_declares():
    regs = record(lambda: Platform("ml", PlatformArgs(platform_of("dev"))), "dev")
    stack = planned("dev")
    assert sorted((r.type, r.name) for r in regs if r.name != "ml") == sorted((r.type, r.name) for r in stack)
    assert next(r for r in regs if r.name == "gke").parent.endswith("::ml")


def test_policies_guard_node_pools_built_by_hand():
    """A program may declare NodePools without the components: the pack still judges them."""
    plans = {p.name: p for p in build_platform(platform_of("dev")).pools}

    def program():
        inputs = node_pool_inputs(plans["v5e-train-0"], LABELS)
        gcp.container.NodePool("bad-tpu", **{**inputs, "node_count": 3, "node_locations": ["us-east5-a", "us-east5-b"]},
                               cluster="ml-dev", location="us-east5")
        gpu = node_pool_inputs(plans["h100-dws"], {"environment": "dev"})
        gpu["node_config"]["guest_accelerators"][0]["count"] = 4
        gcp.container.NodePool("bad-gpu", **gpu, cluster="ml-dev", location="us-east5")

    found = {(v["policy"], v["message"]) for v in violations(record(program, "direct")) if v["level"] == "mandatory"}
    assert ("tpu-pool-shape", "node pool v5e-train-0: a 2x4 slice on ct5lp-hightpu-4t is 2 VMs; set nodeCount "
            "(or autoscaling max) to 2, not 3") in found
    assert any(p == "tpu-pool-shape" and "lives in one zone" in m for p, m in found)
    assert ("gpu-pool-shape", "node pool h100-dws: a3-highgpu-8g carries 8 x nvidia-h100-80gb; set "
            "guestAccelerators count to 8, not 4") in found
    assert ("required-labels", "h100-dws: add the label(s) owner") in found


PLACEMENT = set(public_args.NodePoolTarget.__annotations__) - {"zones"}


# What a model has that its arguments leave out, and why: a pool's name and zones come from the component's
# name and placement; a GkeCluster declares the cluster alone; a KueueLayer refuses Google Cloud resources
# (the dashboard, alert policies and cost view are the Platform's, so a team's `alerts` are too).
PLATFORM_ONLY = {"acknowledge", "autopilot_flavors", "cohorts", "compute_classes", "cost", "cpu_pools", "fleet",
                 "gpu_pools", "group_domains", "jobset", "kueue", "monitoring", "priorities", "shared_queues",
                 "system_pool", "teams", "tpu_pools"}


@pytest.mark.parametrize("args, model, extra, left_out", [
    # dynamic_slicing (and sub_slicing with it) needs the cluster's slice controller, which only the platform plans
    # (component_plans)
    (public_args.TpuShape, pool_config.TpuPoolConfig, set(), {"name", "zones", "dynamic_slicing", "sub_slicing"}),
    (public_args.GpuShape, pool_config.GpuPoolConfig, set(), {"name", "zones"}),
    (SystemNodePoolArgs, pool_config.SystemPoolConfig, PLACEMENT | {"zones"}, {"name"}),
    (GpuPoolArgs, pool_config.GpuPoolConfig, PLACEMENT, {"name"}),
    (ClusterSettingsArgs, cluster_config.ClusterConfig, set(), set()),
    (GkeClusterArgs, config.PlatformConfig, set(), PLATFORM_ONLY),
    (QueueArgs, team_config.QueueSpec, set(), set()),
    (TeamSpec, team_config.TeamConfig, set(), {"alerts", "buckets", "service_account", "default_priority"}),
])
def test_public_arguments_mirror_the_config_model(args, model, extra, left_out):
    """Every plain argument is a field of the model that validates it (a renamed field would otherwise be
    refused as an unknown key only at run time), and every field is an argument unless it is left out on
    purpose: TeamSpec once lacked state, priorities and pod_security, and ClusterSettingsArgs ip_endpoint."""
    assert set(args.__annotations__) - extra <= set(model.model_fields)
    assert set(model.model_fields) - set(args.__annotations__) == left_out


def test_every_exported_component_takes_plain_arguments():
    for component in (TpuSlicePool, KueueLayer):
        hints = component.__init__.__annotations__
        assert typing.is_typeddict(hints["args"]) and hints["opts"] == pulumi.ResourceOptions | None


def test_a_kueue_layer_drains_a_team_and_holds_its_pod_security_exception():
    """The team fields TeamSpec now types reach the plan through the component door, not only the stack file."""
    from gke_ai_batch.plan import component_plans
    platform = component_plans.scheduling("layer", {"region": "us-east5", "teams": [
        {"name": "a", "state": "draining", "stop_policy": "Hold", "queue": {"quotas": {}},
         "pod_security": [{"namespace": "a", "level": "restricted", "reason": "no host paths at all"}]}]}).platform
    (team,) = platform.scheduling.teams
    assert {q["spec"].get("stopPolicy") for q in team.local_queue_manifests} == {"Hold"}
    (ns,) = team.namespace_manifests
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


@pytest.mark.parametrize("component, args, path", [
    (TpuSlicePool, {"capacty": "spot"}, "capacty"),
    (KueueLayer, {"team": []}, "team"),  # teams, misspelt at the top level, was dropped too
    (SystemNodePool, {"version": "1.33"}, "version"),  # what Platform passed its pools in place of cluster_version
])
def test_a_component_refuses_an_argument_it_does_not_know(component, args, path):
    base = {"project": "acme-ml-dev", "region": "us-east5", "cluster": "ml", "location": "us-east5",
            "zones": ["us-east5-b"]}
    base = {**base, "generation": "v5e", "topology": "2x4"} if component is TpuSlicePool else \
        {"region": "us-east5"} if component is KueueLayer else base
    with pytest.raises(ComponentArgumentsError) as e:
        record(lambda: component("x", {**base, **args}), "test")
    assert isinstance(e.value, pulumi.InputPropertiesError) and isinstance(e.value, pulumi.RunError)
    (error,) = e.value.errors
    assert error["property_path"] == path and error["reason"].startswith(f"unknown key `{path}`")
    assert e.value.message.startswith(f"invalid {component.__name__} 'x' arguments at {path}: unknown key")


def shape_twice(layer_topology: str | None):
    """A v5e 2x4 pool, and a KueueLayer given its shape again (with `layer_topology`) or the pool's `spec`."""
    def program():
        target = {"project": "acme-ml-dev", "region": "us-east5", "cluster": "ml", "location": "us-east5",
                  "zones": ["us-east5-b"], "labels": {"environment": "dev", "owner": "ml"}}
        pool = TpuSlicePool("v5e", {**target, "generation": "v5e", "topology": "2x4", "slices": 2})
        stated = {"name": "v5e", "generation": "v5e", "topology": layer_topology, "zones": ["us-east5-b"]}
        KueueLayer("layer", {"region": "us-east5", "zones": ["us-east5-b"],
                             "tpu_pools": [stated if layer_topology else pool.spec],
                             "teams": [{"name": "a", "queue": {"quotas": {"v5e": {"google.com/tpu": 16}}}}]})
    return [v for v in violations(record(program, "direct")) if v["policy"] == "flavor-has-nodes"]


def test_a_shape_stated_once_through_the_pools_spec_cannot_disagree():
    """Stated twice, the layer's 4x4 made a flavor select `gke-tpu-topology: 4x4`, which no node had, and the
    check passed; the pool's `spec` states it once, and the policy catches the plain-value form that differs."""
    assert shape_twice(None) == []
    (found,) = shape_twice("4x4")
    assert found["level"] == "mandatory" and "flavor v5e selects nodes no node pool of the stack has" in \
        found["message"] and "cloud.google.com/gke-tpu-topology=4x4" in found["message"]


def test_the_whole_stack_is_validated_and_planned_once(monkeypatch):
    """Platform dumped each block back to JSON and every component validated and planned it again, with
    hand-made seams (the FUSE driver and multi-networking re-injected into the cluster block): now the
    components take the platform's plans, and the golden plans stay byte-identical."""
    from gke_ai_batch.plan import component_plans

    def again(*_: object) -> None:
        raise AssertionError("a component planned its block again")
    for step in ("cluster", "system_pool", "tpu_slices", "gpu_pool", "cpu_pool"):
        monkeypatch.setattr(component_plans, step, again)
    regs = run_config(platform_of("prod"), "prod")  # not the cached plan other tests share
    assert len(by_type(regs, ":NodePool")) >= 8 and by_type(regs, "gcp:container/cluster:Cluster")
