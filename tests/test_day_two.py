"""Day two: what a replacement, a removal or `pulumi destroy` would do to a live platform, as planned.

Before this work no resource carried protect, retainOnDelete, deleteBeforeReplace or replaceOnChanges: a
TPU topology change reported success and changed nothing, a replacement of a named pool or cluster failed
on the duplicate name, and removing a team or destroying the stack deleted namespaces and buckets.
"""
from __future__ import annotations

import pytest

from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.replacement import RECREATES_NODES, REPLACES, recreating_nodes, replacing
from gke_ai_batch.plan.platform import build_platform
from gke_ai_batch.vocabulary import TEAM_LABEL

from .conftest import STACKS, by_type, planned, platform_of, run_config

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
    assert replacing(NODE_POOL, ["placementPolicy.tpuTopology"], {}, {}) == []  # the provider does not say so itself
    assert replacing(NODE_POOL, ["placementPolicy.tpuTopology"], {}, {}, ["placementPolicy.tpuTopology"])


def test_the_table_knows_gkes_node_recreating_updates_from_its_replacements():
    assert recreating_nodes(NODE_POOL, ["nodeConfig.diskSizeGb", "nodeConfig.taints[0].value",
                                        "nodeConfig.labels"], {}, {}) == ["nodeConfig.diskSizeGb"]
    assert [p for p, _ in replacing(NODE_POOL, ["nodeConfig.spot", "placementPolicy", "autoscaling.maxNodeCount"],
                                    {}, {})] == ["nodeConfig.spot", "placementPolicy"]


def test_every_rule_names_its_source_and_a_type_the_program_creates():
    # TpuSlicePool declares a ResourcePolicy for a workload policy, which no shipped stack uses.
    types = {r.type for s in STACKS for r in planned(s)} | {"gcp:compute/resourcePolicy:ResourcePolicy"}
    for rule in REPLACES + RECREATES_NODES:
        assert rule.why and (rule.type in types or rule.type.endswith(":")), rule


def test_kubernetes_objects_are_replaced_where_pulumi_kubernetes_replaces_them():
    assert replacing("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", ["roleRef.name"], {}, {})
    assert replacing("kubernetes:core/v1:Secret", ["type"], {}, {})
    assert replacing("kubernetes:core/v1:Namespace", ["metadata.name"], {}, {})
    assert not replacing("kubernetes:core/v1:Namespace", ["metadata.labels"], {}, {})


# --- decisions: draining a team, acknowledging a deletion or replacement ---------------------------------------

def refused(change) -> tuple[str, str]:
    cfg = platform_of("prod")
    change(cfg)
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    return e.value.path, e.value.message


def team(cfg: dict, name: str) -> dict:
    return next(t for t in cfg["teams"] if t["name"] == name)


def test_a_draining_team_stops_admitting_and_loses_production_protection():
    cfg = platform_of("prod")
    team(cfg, "research")["state"] = "draining"
    regs = run_config(cfg, "prod")
    lqs = [r for r in by_type(regs, ":LocalQueue") if r.inputs["metadata"]["labels"][TEAM_LABEL] == "research"]
    assert lqs and all(r.inputs["spec"]["stopPolicy"] == "HoldAndDrain" for r in lqs)
    queues = {r.inputs["metadata"]["name"]: r.inputs["spec"].get("stopPolicy") for r in by_type(regs, ":ClusterQueue")}
    assert queues["research"] == "HoldAndDrain" and queues["training"] is None
    protected = {r.inputs["metadata"]["name"]: r.options.get("protect", False)
                 for r in by_type(regs, "core/v1:Namespace")}
    assert protected == {"research": False, "research-sandbox": False, "training": True, "training-gpudirect": True,
                         "inference-eval": True}
    kept = {r.inputs["name"]: r.options for r in by_type(regs, ":Bucket")}
    assert "protect" not in kept["acme-ml-prod-research-checkpoints"]
    assert kept["acme-ml-prod-research-checkpoints"]["retainOnDelete"]  # removing it still keeps the data
    assert kept["acme-ml-prod-training-checkpoints"]["protect"]


def test_hold_lets_admitted_work_finish():
    cfg = platform_of("prod")
    team(cfg, "research").update(state="draining", stop_policy="Hold")
    regs = run_config(cfg, "prod")
    assert {r.inputs["spec"].get("stopPolicy") for r in by_type(regs, ":LocalQueue")
            if r.inputs["metadata"]["labels"][TEAM_LABEL] == "research"} == {"Hold"}


def test_an_acknowledgement_lifts_the_protection_of_the_resource_it_names():
    cfg = platform_of("prod")
    cfg["acknowledge"] = [{"node_pool": "v5e-spot", "reason": "reshape to 4x4"},
                          {"release": "kueue", "reason": "reinstall"}]
    regs = run_config(cfg, "prod")
    pools = {r.name: r.options.get("protect", False) for r in by_type(regs, ":TpuSlicePool")}
    assert pools == {"v5e-spot": False, "v6e-flex": True, "v5p-res": True}
    releases = {r.name: (r.options.get("protect", False), r.options.get("retainOnDelete", False))
                for r in by_type(regs, ":Release")}
    assert releases == {"kueue-release": (False, False), "jobset-release": (True, True)}


def test_removing_kueue_from_prod_never_uninstalls_it_so_its_crds_and_workloads_stay():
    """Kueue's chart deletes its CRDs, and every ClusterQueue and Workload, on uninstall: prod's releases are
    retained, so taking an install out of the stack (or `pulumi destroy`) never runs `helm uninstall`."""
    releases = by_type(planned("prod"), ":Release")
    assert {r.name for r in releases} == {"kueue-release", "jobset-release"}
    assert all(r.options.get("protect") and r.options.get("retainOnDelete") for r in releases)
    assert not any(r.options.get("retainOnDelete") for r in by_type(planned("dev"), ":Release"))


@pytest.mark.parametrize("change, path, says", [
    (lambda c: team(c, "research").update(state="retired"), "platform.teams[1].state", "'active' or 'draining'"),
    (lambda c: team(c, "research").update(stop_policy="Hold"), "platform.teams[1]",
     "stop_policy 'Hold' applies to a draining team only"),
    (lambda c: c.update(acknowledge=[{"node_pool": "a", "cluster": "b", "reason": "x"}]), "platform.acknowledge[0]",
     "name exactly one resource (cluster, node_pool, namespace, bucket, release, network, priority, retention, "
     "admission_check, dataset, compute_class); this names 2: "
     "cluster, node_pool"),
    (lambda c: c.update(acknowledge=[{"release": "cert-manager", "reason": "x"}]), "platform.acknowledge[0].release",
     "'kueue' or 'jobset'"),
    (lambda c: c.update(acknowledge=[{"cluster": "ml-prod"}]), "platform.acknowledge[0].reason", "required"),
])
def test_bad_decisions_are_refused_at_their_path(change, path, says):
    where, message = refused(change)
    assert where == path and says in message, (where, message)
