"""GPUDirect as a capacity feature: a GPU pool creates (or adopts) the extra networks GKE's pages give its
machine, its nodes attach to them, pods can name them, and a wrong list is refused before anything
registers. Before, the gpudirect-networks advisory asked for networks no stack key could declare."""
from pathlib import Path

import jsonschema
import pytest
import yaml

from gke_ai_batch.components.gpu_pool import GpuPool
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.offline.engine.runtime import record
from gke_ai_batch.offline.views.check import violations
from gke_ai_batch.plan.platform import build_platform

from .conftest import platform_of, run_config

CRDS = Path(__file__).parent.parent / "gke_ai_batch" / "conform" / "schemas" / "gke-networking-api"
NETWORK = "gcp:compute/network:Network"
SUBNET = "gcp:compute/subnetwork:Subnetwork"
FIREWALL = "gcp:compute/firewall:Firewall"


def of_type(regs, type_):
    return sorted((r.inputs for r in regs if r.type == type_), key=lambda i: i.get("name") or i["metadata"]["name"])


def pool_named(regs, name):
    return next(r.inputs for r in regs if r.type == "gcp:container/nodePool:NodePool" and r.inputs["name"] == name)


def test_prods_a3_ultra_pool_creates_its_rdma_networks_and_passes_every_policy(plan):
    regs = [r for r in plan("prod") if "h200-res" in r.urn]
    vpcs = of_type(regs, NETWORK)
    assert [(v["name"], v["mtu"], v.get("networkProfile")) for v in vpcs] == [
        ("ml-prod-h200-res-gvnic", 8896, None),
        ("ml-prod-h200-res-rdma", 8896, "projects/acme-ml-prod/global/networkProfiles/us-east5-a-vpc-roce")]
    subnets = {s["name"]: s["ipCidrRange"] for s in of_type(regs, SUBNET)}
    assert subnets == {"ml-prod-h200-res-gvnic-sub": "192.168.0.0/24",
                       **{f"ml-prod-h200-res-rdma-sub-{i}": f"192.168.{i + 1}.0/24" for i in range(8)}}
    (firewall,) = of_type(regs, FIREWALL)  # the gVNIC network only, as the page creates
    assert firewall["sourceRanges"] == ["192.168.0.0/24"] and firewall["direction"] == "INGRESS"
    attached = pool_named(regs, "h200-res")["networkConfig"]["additionalNodeNetworkConfigs"]
    assert attached == [{"network": "ml-prod-h200-res-gvnic", "subnetwork": "ml-prod-h200-res-gvnic-sub"}] + [
        {"network": "ml-prod-h200-res-rdma", "subnetwork": f"ml-prod-h200-res-rdma-sub-{i}"} for i in range(8)]
    cluster = next(r.inputs for r in plan("prod") if r.type == "gcp:container/cluster:Cluster")
    assert cluster["enableMultiNetworking"] is True and cluster["datapathProvider"] == "ADVANCED_DATAPATH"
    found = violations(plan("prod"))
    assert not [v for v in found if v["level"] == "mandatory"]
    assert not [v for v in found if v["policy"] == "gpudirect-networks" and "h200-res" in v["message"]]


def _crd_schema(kind_plural):
    crd = yaml.safe_load((CRDS / f"networking.gke.io_{kind_plural}.yaml").read_text())
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def test_pods_can_name_each_nic_through_gkes_network_objects(plan):
    objects = [r.inputs for r in plan("prod") if r.type.startswith("kubernetes:networking.gke.io/v1:")]
    params = {o["metadata"]["name"]: o["spec"] for o in objects if o["kind"] == "GKENetworkParamSet"}
    assert params["h200-res-gvnic-1"] == {"vpc": "ml-prod-h200-res-gvnic", "vpcSubnet": "ml-prod-h200-res-gvnic-sub",
                                          "deviceMode": "NetDevice"}
    assert [params[f"h200-res-rdma-{i}"]["deviceMode"] for i in range(8)] == ["RDMA"] * 8
    networks = [o for o in objects if o["kind"] == "Network"]
    assert sorted(n["spec"]["parametersRef"]["name"] for n in networks) == sorted(params)
    for o in objects:  # GKE's own CRDs, vendored in gke_ai_batch/conform/schemas (make conform checks them too)
        jsonschema.validate(o, _crd_schema("gkenetworkparamsets" if o["kind"] == "GKENetworkParamSet" else "networks"))
    sample = Path(__file__).parent.parent / "examples" / "workloads" / "prod.yaml"
    for line in sample.read_text().splitlines():  # the sample's interfaces annotation names existing networks
        if '"network":"h200-res' in line:
            assert line.split('"network":"')[1].split('"')[0] in params


def test_an_a3_mega_pool_creates_eight_vpcs_of_its_mtu_with_their_firewall_rules():
    cfg = platform_of("prod")
    cfg["gpu_pools"].append({"name": "mega", "gpu": "nvidia-h100-mega-80gb", "capacity": "spot",
                             "zones": ["us-east5-a", "us-east5-b"], "gpudirect": "create"})
    regs = [r for r in run_config(cfg, "prod") if "mega" in r.urn]
    vpcs = of_type(regs, NETWORK)
    assert [(v["name"], v["mtu"]) for v in vpcs] == [(f"ml-prod-mega-data-{i}", 8244) for i in range(1, 9)]
    assert len(of_type(regs, FIREWALL)) == 8
    assert len(pool_named(regs, "mega")["networkConfig"]["additionalNodeNetworkConfigs"]) == 8
    names = {o["metadata"]["name"] for o in (r.inputs for r in regs) if o.get("kind") == "Network"}
    assert names == {f"mega-vpc{i}" for i in range(1, 9)}


def test_existing_networks_are_attached_and_nothing_is_created():
    cfg = platform_of("prod")
    pool = next(g for g in cfg["gpu_pools"] if g["name"] == "h200-res")
    pool["gpudirect"] = {"networks": [{"network": "a3u-gvnic", "subnetwork": "a3u-gvnic-sub"}] + [
        {"network": "a3u-rdma", "subnetwork": f"a3u-rdma-sub-{i}"} for i in range(8)]}
    regs = run_config(cfg, "prod")
    assert not [r for r in regs if "GpuDirectNetworks" in r.urn]
    attached = pool_named(regs, "h200-res")["networkConfig"]["additionalNodeNetworkConfigs"]
    assert attached[0] == {"network": "a3u-gvnic", "subnetwork": "a3u-gvnic-sub"} and len(attached) == 9
    param = next(r.inputs for r in regs if r.type.endswith(":GKENetworkParamSet")
                 and r.inputs["metadata"]["name"] == "h200-res-rdma-7")
    assert param["spec"] == {"vpc": "a3u-rdma", "vpcSubnet": "a3u-rdma-sub-7", "deviceMode": "RDMA"}


def _replace(pool, **new):
    pool.clear()
    pool.update(new, zones=["us-east5-a"])


def _existing(n, vpc=lambda i: f"net-{i}"):
    return {"networks": [{"network": vpc(i), "subnetwork": f"sub-{i}"} for i in range(n)]}


@pytest.mark.parametrize("change, path, words", [
    (lambda p: p.update(gpudirect=_existing(8)), "h200-res].gpudirect.networks",
     "a3-ultragpu-8g has 9 extra NICs for GPUDirect RDMA (1 gVNIC network plus 8 RDMA subnets of one RoCE VPC); "
     "the list names 8"),
    (lambda p: p.update(gpudirect=_existing(9)), "h200-res].gpudirect.networks",
     "the other 8 are distinct subnets of one other (RoCE) VPC"),
    (lambda p: p.update(zones=["us-east5-a", "us-east5-b"], gpudirect="create"), "h200-res].zones",
     "the RDMA network of a3-ultragpu-8g is zonal"),
    (lambda p: _replace(p, name="h100", gpu="nvidia-h100-80gb", capacity="spot",
                        gpudirect=_existing(4, lambda i: "one")),
     "h100].gpudirect.networks", "each NIC attaches to a different VPC network, and the list repeats one"),
    (lambda p: _replace(p, name="l4", gpu="nvidia-l4", capacity="spot", gpudirect="create"), "l4].gpudirect",
     "g2-standard-12 has no GPUDirect networks; they are for a3-highgpu-8g, a3-megagpu-8g"),
])
def test_gpudirect_networks_that_cannot_work_are_refused_at_their_path(change, path, words):
    cfg = platform_of("prod")
    pool = next(g for g in cfg["gpu_pools"] if g["name"] == "h200-res")
    change(pool)
    pool.setdefault("gpudirect", "create")
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path.replace("gpu_pools[1]", f"gpu_pools[{pool['name']}]").endswith(path), e.value.path
    assert words in e.value.message


def test_created_subnets_may_not_overlap_the_nodes_range():
    cfg = platform_of("prod")
    cfg["network"]["nodes_cidr"] = "192.168.0.0/20"
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == "platform.gpu_pools[1].gpudirect"
    assert "192.168.0.0/24 GKE's pages use overlaps the nodes' range 192.168.0.0/20" in e.value.message


def test_a_gpu_pool_on_its_own_creates_its_networks_before_the_pool():
    target = dict(project="acme-ml-dev", region="us-east5", cluster="ml-dev", location="us-east5",
                  labels={"environment": "dev", "owner": "ml-platform"})
    regs = record(lambda: GpuPool("b200", {**target, "gpu": "nvidia-b200", "capacity": "spot", "zones": ["us-east5-a"],
                                           "gpudirect": "create"}), "direct")
    assert [v["name"] for v in of_type(regs, NETWORK)] == ["ml-dev-b200-gvnic", "ml-dev-b200-rdma"]
    assert len(pool_named(regs, "b200")["networkConfig"]["additionalNodeNetworkConfigs"]) == 9


def test_gkes_nccl_installer_comes_with_the_first_rdma_pool_as_upstream_ships_it(plan):
    """GKE's A3 Ultra page has users apply the installer by hand; without it the pods' library mounts are empty."""
    (daemonset,) = [r.inputs for r in plan("prod") if r.type == "kubernetes:apps/v1:DaemonSet"]
    upstream = yaml.safe_load((Path(__file__).parent.parent / "gke_ai_batch" / "plan" / "upstream_installers"
                               / "nccl-rdma-installer.yaml").read_text())
    assert daemonset == upstream and daemonset["metadata"] == {
        "name": "nccl-rdma-installer", "namespace": "kube-system", "labels": {"k8s-app": "nccl-rdma-installer"}}
    assert not [r for r in plan("dev") if r.type == "kubernetes:apps/v1:DaemonSet"]  # no GPUDirect pool there
