"""Kueue's Topology Aware Scheduling on prod's reserved H200s: the Topology and flavor the plan declares, the
refusals of bad level lists at their config path, and `make admit` judging topology requests as Kueue would.
Before, no flavor had a topologyName and no stack could ask for TAS."""
from __future__ import annotations

import copy

import pytest
import yaml

from gke_ai_batch.admission.decision import admit_in
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.topologies import BLOCK, GPU_LEVELS, HOST, HOSTNAME, SUBBLOCK
from gke_ai_batch.offline.admit import cluster_of
from gke_ai_batch.offline.views.check import violations
from gke_ai_batch.plan.platform import build_platform

from .conftest import ROOT, by_type, platform_of, run_config

TOPOLOGY = "gke-block-subblock-host-hostname"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"


def test_prods_h200_flavor_names_a_topology_of_gkes_levels_created_before_it(plan):
    regs = plan("prod")
    (topology,) = by_type(regs, ":Topology")
    assert topology.inputs["metadata"]["name"] == TOPOLOGY
    assert [lv["nodeLabel"] for lv in topology.inputs["spec"]["levels"]] == list(GPU_LEVELS)
    flavors = {r.inputs["metadata"]["name"]: r for r in by_type(regs, ":ResourceFlavor")}
    assert flavors["h200-res"].inputs["spec"]["topologyName"] == TOPOLOGY
    assert topology.urn in flavors["h200-res"].dependencies
    assert [n for n, f in flavors.items() if "topologyName" in f.inputs["spec"]] == ["h200-res"]
    # Kueue's CRDs make a Topology's levels and a TAS flavor's labels immutable, and Kueue holds both while
    # in use: never replaced by the program (a delete-first replacement would hang), refused by `make diff`
    assert not topology.options and not flavors["h200-res"].options


def h200(**change):
    cfg = platform_of("prod")
    pool = next(p for p in cfg["gpu_pools"] if p["name"] == "h200-res")
    pool.update(change)
    return cfg, f"platform.gpu_pools[{cfg['gpu_pools'].index(pool)}]"


@pytest.mark.parametrize("change, field, says", [
    ({"topology_levels": [BLOCK, BLOCK, HOSTNAME]}, "topology_levels", "a level appears twice"),
    ({"topology_levels": [HOSTNAME, BLOCK]}, "topology_levels", "kubernetes.io/hostname must be the last level"),
    ({"topology_levels": [f"example.com/l{i}" for i in range(17)]}, "topology_levels", "at most 16"),
    ({"topology_levels": ["cloud.google.com/gke-nodepool", HOSTNAME]}, "topology_levels",
     "cloud.google.com/gke-nodepool: not a label GKE puts on a3-ultragpu-8g nodes"),
    ({"topology_levels": []}, "topology_levels", "no levels"),
    ({"topology_aware": False, "topology_levels": [HOST]}, "topology_levels", "levels without topology_aware"),
])
def test_bad_level_lists_are_refused_at_their_path(change, field, says):
    cfg, path = h200(**change)
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == f"{path}.{field}" and says in e.value.message


@pytest.mark.parametrize("change, drop, field, capacity", [
    ({"autoscaling": {"min_nodes": 0, "max_nodes": 2}}, ["nodes"], "autoscaling.min_nodes", "reservation"),
    ({"nodes": 0}, [], "nodes", "reservation"),
    ({"capacity": "flex-start", "max_nodes": 2}, ["nodes", "reservation"], "capacity", "flex-start"),
])
def test_a_topology_aware_pool_that_can_reach_zero_nodes_is_refused(change, drop, field, capacity):
    """Kueue's TAS places jobs only on nodes that exist, and waits for nodes only behind a ProvisioningRequest
    check: once such a pool is at zero, no job is admitted on it again (issue 48)."""
    cfg, path = h200(**change)
    for key in drop:
        next(p for p in cfg["gpu_pools"] if p["name"] == "h200-res").pop(key)
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == f"{path}.{field}"
    assert e.value.message.startswith(f"a topology-aware {capacity} pool can reach 0 nodes, and then no job is "
                                      "admitted on it again")
    assert "tas_flavorassigner.go at v0.19.2" in e.value.message
    assert "use capacity queued-provisioning" in e.value.message


def test_a_topology_aware_pool_that_keeps_a_node_may_autoscale():
    cfg, _ = h200(autoscaling={"min_nodes": 1, "max_nodes": 2})
    next(p for p in cfg["gpu_pools"] if p["name"] == "h200-res").pop("nodes")
    [pool] = [p for p in build_platform(cfg).pools if p.name == "h200-res"]
    assert pool.topology_levels and pool.min_nodes == 1


def test_tas_on_a_machine_gke_does_not_label_is_refused():
    cfg = platform_of("prod")
    pool = next(p for p in cfg["gpu_pools"] if p["name"] == "l4-spot")
    pool["topology_aware"] = True
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path.endswith(".topology_aware") and "g2-standard-24: GKE documents topology labels for" in \
        e.value.message


def nccl_job(level: str | None) -> dict:
    docs = list(yaml.safe_load_all((ROOT / "examples" / "workloads" / "prod.yaml").read_text()))
    job = copy.deepcopy(next(d for d in docs if d["metadata"].get("name") == "h200-nccl"))
    annotations = job["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]["annotations"]
    annotations.pop(REQUIRED)
    if level:
        annotations[REQUIRED] = level
    return job


@pytest.mark.parametrize("level, reason", [
    (SUBBLOCK, None),  # 2 pods of 8 GPUs on the pool's 2 nodes, both in one sub-block at most
    (HOST, f'topology "{TOPOLOGY}" allows to fit only 1 out of 2 pod(s)'),  # a host is one 8-GPU node
    ("cloud.google.com/gke-nodepool", 'Flavor "h200-res" does not contain the requested level'),
    (None, 'Flavor "h200-res" supports only TopologyAwareScheduling'),  # no level: the training queue mixes flavors
])
def test_make_admit_judges_a_required_topology_as_kueue_would(plan, level, reason):
    result = admit_in(cluster_of(plan("prod")), nccl_job(level))
    if reason is None:
        assert result.admitted, result.problems
    else:
        assert not result.quota_reserved and reason in str(result.reason)


def test_tas_on_spot_capacity_is_advised_against():
    cfg, _ = h200(capacity="spot")
    next(p for p in cfg["gpu_pools"] if p["name"] == "h200-res").pop("reservation")
    found = [v for v in violations(run_config(cfg, "prod")) if v["policy"] == "topology-on-reserved-capacity"]
    assert [v["level"] for v in found] == ["advisory"] and "topology-aware on spot capacity" in found[0]["message"]
