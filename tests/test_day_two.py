"""Day two: what a replacement, a removal or `pulumi destroy` would do to a live platform, as planned.

Before this work no resource carried protect, retainOnDelete, deleteBeforeReplace or replaceOnChanges: a
TPU topology change reported success and changed nothing, a replacement of a named pool or cluster failed
on the duplicate name, and removing a team or destroying the stack deleted namespaces and buckets.
"""
from __future__ import annotations

import pytest

from gke_ai_batch.model.replacement import RECREATES_NODES, REPLACES, recreating_nodes, replacing

from .conftest import STACKS, planned

NODE_POOL, CLUSTER, BUCKET = "gcp:container/nodePool:NodePool", "gcp:container/cluster:Cluster", \
    "gcp:storage/bucket:Bucket"


def of_type(stack: str, type_: str) -> list:
    return [r for r in planned(stack) if r.type == type_]


def test_prod_protects_what_running_work_and_data_live_on():
    regs = planned("prod")
    assert all(r.options.get("protect") for r in of_type("prod", CLUSTER))
    pools = {r.name: r.options.get("protect", False) for r in of_type("prod", NODE_POOL)}
    assert pools.pop("system-pool") is False  # no team work runs there: it may be replaced freely
    assert pools and all(pools.values())
    namespaces = [r for r in regs if r.type == "kubernetes:core/v1:Namespace"]
    assert namespaces and all(r.options.get("protect") for r in namespaces)
    buckets = of_type("prod", BUCKET)
    assert buckets and all(r.options.get("protect") and r.options.get("retainOnDelete") for r in buckets)


def test_local_queues_and_policies_stay_unprotected_so_teams_can_change():
    regs = planned("prod")
    assert not any(r.options.get("protect") for r in regs if r.type.endswith((":LocalQueue", ":RoleBinding")))


@pytest.mark.parametrize("stack", [s for s in STACKS if s != "prod"])
def test_other_environments_protect_nothing(stack):
    assert not any(r.options.get("protect") for r in planned(stack))


@pytest.mark.parametrize("stack", STACKS)
def test_named_gke_resources_are_replaced_delete_first(stack):
    """GKE refuses a second cluster or node pool of the same name, so create-first would fail."""
    named = of_type(stack, CLUSTER) + of_type(stack, NODE_POOL) + of_type(stack, BUCKET)
    assert named and all(r.options.get("deleteBeforeReplace") for r in named)


def test_every_tpu_slice_is_replaced_when_its_topology_changes():
    tpu = [r for r in of_type("prod", NODE_POOL) if "placementPolicy" in r.inputs
           and r.inputs["placementPolicy"].get("tpuTopology")]
    assert tpu and all(r.options["replaceOnChanges"] == ["placementPolicy.tpuTopology"] for r in tpu)
    assert replacing(NODE_POOL, ["placementPolicy.tpuTopology"]) == []  # the provider does not say so itself
    assert replacing(NODE_POOL, ["placementPolicy.tpuTopology"], ["placementPolicy.tpuTopology"])


def test_the_table_knows_gkes_node_recreating_updates_from_its_replacements():
    assert recreating_nodes(NODE_POOL, ["nodeConfig.diskSizeGb", "nodeConfig.taints[0].value",
                                        "nodeConfig.labels"]) == ["nodeConfig.diskSizeGb"]
    assert [p for p, _ in replacing(NODE_POOL, ["nodeConfig.spot", "placementPolicy", "autoscaling.maxNodeCount"])] \
        == ["nodeConfig.spot", "placementPolicy"]


def test_every_rule_names_its_source_and_a_type_the_program_creates():
    # TpuSlicePool declares a ResourcePolicy for a workload policy, which no shipped stack uses.
    types = {r.type for s in STACKS for r in planned(s)} | {"gcp:compute/resourcePolicy:ResourcePolicy"}
    for rule in REPLACES + RECREATES_NODES:
        assert rule.why and (rule.type in types or rule.type.endswith(":")), rule


def test_kubernetes_objects_are_replaced_where_pulumi_kubernetes_replaces_them():
    assert replacing("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", ["roleRef.name"])
    assert replacing("kubernetes:core/v1:Secret", ["type"])
    assert replacing("kubernetes:core/v1:Namespace", ["metadata.name"])
    assert not replacing("kubernetes:core/v1:Namespace", ["metadata.labels"])
