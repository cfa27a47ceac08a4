"""The cluster's network: created with sized, non-overlapping ranges and a way out for private
nodes, or adopted (a shared VPC's included) with nothing created; bad ranges refused at their path."""
import pytest

from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.offline.views.check import violations
from gke_ai_batch.plan.platform import build_platform

from .conftest import by_type, platform_of, run_config

NETWORK_TYPES = ("gcp:compute/network:Network", "gcp:compute/subnetwork:Subnetwork", "gcp:compute/router:Router",
                 "gcp:compute/routerNat:RouterNat")


def one(regs, suffix):
    found = by_type(regs, suffix)
    assert len(found) == 1, [r.urn for r in found]
    return found[0]


def test_prod_creates_its_network_with_named_ranges_and_private_google_access(plan):
    regs = [r for r in plan("prod") if "GpuDirectNetworks" not in r.urn and "PodNetworks" not in r.urn]
    subnet = one(regs, ":Subnetwork").inputs
    assert subnet["region"] == "us-east5" and subnet["privateIpGoogleAccess"] is True
    assert subnet["ipCidrRange"] == "10.40.0.0/20"
    assert subnet["secondaryIpRanges"] == [{"rangeName": "pods", "ipCidrRange": "10.44.0.0/14"},
                                           {"rangeName": "services", "ipCidrRange": "10.48.0.0/20"}]
    assert one(regs, ":Network").inputs["autoCreateSubnetworks"] is False
    cluster = one(regs, "container/cluster:Cluster").inputs
    assert (cluster["network"], cluster["subnetwork"]) == ("ml-prod", "ml-prod-us-east5")
    assert cluster["ipAllocationPolicy"] == {"clusterSecondaryRangeName": "pods",
                                             "servicesSecondaryRangeName": "services"}


@pytest.mark.parametrize("stack", ["prod", "dev"])
def test_private_nodes_go_out_through_cloud_nat_before_the_cluster_exists(plan, stack):
    regs = plan(stack)
    nat = one(regs, ":RouterNat")
    assert nat.inputs["natIpAllocateOption"] == "AUTO_ONLY"
    assert nat.inputs["subnetworks"][0]["sourceIpRangesToNats"] == ["ALL_IP_RANGES"]  # Pods' addresses too
    assert nat.inputs["router"] == one(regs, ":Router").inputs["name"]
    assert nat.urn in one(regs, "container/cluster:Cluster").dependencies
    # every pod on a node shares its VM's ports: 64 static ones ran out; dynamic allocation grows them
    assert (nat.inputs["enableDynamicPortAllocation"], nat.inputs["minPortsPerVm"]) == (True, 64)
    assert nat.inputs["enableEndpointIndependentMapping"] is False  # exclusive with dynamic allocation


def test_an_adopted_shared_vpc_creates_nothing_and_names_its_ranges(plan):
    regs = plan("dws-gpu")
    assert not [r for r in regs if r.type in NETWORK_TYPES]
    cluster = one(regs, "container/cluster:Cluster").inputs
    assert cluster["network"] == "projects/acme-net-host/global/networks/shared-vpc"
    assert cluster["subnetwork"] == "projects/acme-net-host/regions/us-central1/subnetworks/gke-us-central1"
    assert cluster["ipAllocationPolicy"] == {"clusterSecondaryRangeName": "gke-pods",
                                             "servicesSecondaryRangeName": "gke-services"}


def test_an_adopted_networks_existing_nat_is_read_not_created():
    cfg = platform_of("dws-gpu")
    cfg["cluster"]["private_nodes"] = True
    cfg["network"]["existing_nat"] = {"router": "shared-router", "name": "shared-nat"}
    nat = one(run_config(cfg), ":RouterNat")
    assert nat.custom and nat.inputs["router"] == "shared-router" and nat.inputs["project"] == "acme-net-host"


def test_a_stack_without_a_network_block_keeps_its_gke_managed_ranges(plan):
    cluster = one(plan("flex-start"), "container/cluster:Cluster").inputs
    assert (cluster["network"], cluster["subnetwork"], cluster["ipAllocationPolicy"]) == ("default", "default", {})


def refusal(stack, change):
    cfg = platform_of(stack)
    change(cfg)
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    return e.value.path, e.value.message


def net(**kw):
    return lambda c: c["network"].update(kw)


# More than tests/test_gke_rules.py's one case per network rule: each range, and the control plane's.
BAD = [
    ("nodes overlap the control plane", "prod", net(nodes_cidr="172.16.0.0/20"), "platform.network.nodes_cidr",
     "overlaps the control plane range 172.16.0.32/28"),
    ("malformed range", "prod", net(services_cidr="10.48.0.1/20"), "platform.network.services_cidr",
     "'10.48.0.1/20' is not an IPv4 range in CIDR notation with its host bits zero"),
    ("public range", "prod", net(services_cidr="8.8.0.0/20"), "platform.network.services_cidr", "a public range"),
    ("node range too small", "prod", net(nodes_cidr="10.40.0.0/26"), "platform.network.nodes_cidr",
     "holds 60 nodes; the pools reach 89 nodes"),
    ("adopted without ranges", "dws-gpu", lambda c: c["network"].pop("pods_range"), "platform.network.pods_range",
     "an adopted network needs its Pods and Services secondary ranges named"),
    ("adopted with a range to create", "dws-gpu", net(nodes_cidr="10.0.0.0/20"), "platform.network.nodes_cidr",
     "the stack creates nothing in it"),
    ("created with a host project", "prod", net(host_project="acme-net-host"), "platform.network.host_project",
     "only an adopted network"),
    ("subnet in another region", "dws-gpu",
     net(subnetwork="projects/acme-net-host/regions/europe-west4/subnetworks/gke"), "platform.network.subnetwork",
     "is in region 'europe-west4'; the cluster is in 'us-central1'"),
    ("one name for both secondary ranges", "prod", net(pods_range="gke", services_range="gke"),
     "platform.network.services_range", "'gke' is also the Pods range's name"),
    ("two names for the network", "prod", lambda c: c["cluster"].update(network="default-vpc"),
     "platform.cluster.network", "drop cluster.network (use network.name)"),
]


@pytest.mark.parametrize("stack,change,path,words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_network_is_refused_at_its_path(stack, change, path, words):
    at, message = refusal(stack, change)
    assert at == path and words in message, message


CLUSTER_ARGS = {"project": "acme-ml", "region": "us-east5", "environment": "dev", "owner": "ml",
                "cluster": {"name": "solo", "private_nodes": True}}


def test_a_gke_cluster_on_its_own_creates_its_network_before_itself():
    from gke_ai_batch.components.gke_cluster import GkeCluster
    from gke_ai_batch.offline.engine.runtime import record
    regs = record(lambda: GkeCluster("solo", {**CLUSTER_ARGS, "network": {}}), "direct")
    nat, cluster = one(regs, ":RouterNat"), one(regs, "container/cluster:Cluster")
    assert nat.urn in cluster.dependencies and cluster.inputs["network"] == "solo-net"


def test_a_gke_cluster_names_the_argument_of_a_bad_range():
    from gke_ai_batch.components.gke_cluster import GkeCluster
    from gke_ai_batch.offline.engine.runtime import record
    with pytest.raises(Exception, match=r"invalid GkeCluster 'solo' arguments at network.pods_cidr: 10.0.0.0/14 "
                                        r"overlaps the node range"):
        record(lambda: GkeCluster("solo", {**CLUSTER_ARGS, "network": {"pods_cidr": "10.0.0.0/14"}}), "direct")


def kubeconfig_of(cluster_settings):
    from gke_ai_batch.components.gke_cluster import GkeCluster
    from gke_ai_batch.offline.engine.runtime import MOCK_DNS_ENDPOINT, MOCK_ENDPOINT, record
    seen = []
    regs = record(lambda: GkeCluster("solo", {**CLUSTER_ARGS, "cluster": cluster_settings}).kubeconfig.apply(
        seen.append), "direct")
    return seen[0], one(regs, "container/cluster:Cluster").inputs, MOCK_DNS_ENDPOINT, MOCK_ENDPOINT


def test_the_kubeconfig_reaches_the_control_plane_over_the_dns_endpoint():
    config, cluster, dns, _ = kubeconfig_of({"name": "solo", "private_nodes": True})
    assert cluster["controlPlaneEndpointsConfig"] == {"dnsEndpointConfig": {"allowExternalTraffic": True}}
    assert f"server: https://{dns}" in config and "certificate-authority-data" not in config  # publicly trusted
    assert cluster["costManagementConfig"] == {"enabled": True}
    assert cluster["monitoringConfig"] == {"managedPrometheus": {"enabled": True}}


def test_without_the_dns_endpoint_the_kubeconfig_uses_the_ip_endpoint_and_the_cluster_ca():
    config, cluster, _, ip = kubeconfig_of({"name": "solo", "dns_endpoint": False})
    assert cluster["controlPlaneEndpointsConfig"] == {"dnsEndpointConfig": {"allowExternalTraffic": False}}
    assert f"server: https://{ip}" in config and "certificate-authority-data: " in config


def test_the_shared_address_space_is_a_private_range_for_pods():
    cfg = platform_of("prod")
    cfg["network"]["pods_cidr"] = "100.64.0.0/14"  # RFC 6598, common for Pods when RFC 1918 space is short
    assert build_platform(cfg).network.ranges.pods == "100.64.0.0/14"


def test_a_gpudirect_a3_ultra_pool_plans_with_gkes_automatic_networks_and_passes_every_policy():
    """The gpudirect-networks advisory told users to set acceleratorNetworkProfile: auto, and no key could."""
    cfg = platform_of("prod")
    cfg["cluster"]["version"] = "1.34.1-gke.1829001"
    next(g for g in cfg["gpu_pools"] if g["name"] == "h200-res")["gpudirect"] = "auto"
    regs = run_config(cfg, "prod")
    pool = next(r for r in regs if r.type == "gcp:container/nodePool:NodePool" and r.inputs["name"] == "h200-res")
    assert pool.inputs["networkConfig"] == {"acceleratorNetworkProfile": "auto"}
    # GKE's DRA page labels the nodes for its DRANET driver, which hands pods the RDMA NICs.
    assert pool.inputs["nodeConfig"]["labels"]["cloud.google.com/gke-networking-dra-driver"] == "true"
    found = violations(regs)
    assert not [v for v in found if v["level"] == "mandatory"]
    assert not [v for v in found if v["policy"] == "gpudirect-networks" and "h200-res" in v["message"]]


@pytest.mark.parametrize("change, message", [
    (lambda c: None, "needs GKE 1.34.1-gke.1829001 or later; the cluster pins 1.33.2-gke.1240000"),
    (lambda c: (c["cluster"].update(version="1.34.1-gke.1829001"),
                next(g for g in c["gpu_pools"] if g["name"] == "h100-dws").update(gpudirect="auto")),
     "a3-highgpu-8g has no automatic accelerator network profile"),
])
def test_gkes_automatic_networks_are_refused_where_gke_does_not_offer_them(change, message):
    cfg = platform_of("prod")
    next(g for g in cfg["gpu_pools"] if g["name"] == "h200-res")["gpudirect"] = "auto"
    change(cfg)
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path.endswith(".gpudirect") and message in e.value.message


def test_nodes_read_only_the_image_repositories_the_stack_names():
    """A node service account with only the node role cannot pull from a private Artifact Registry."""
    cfg = platform_of("prod")
    cfg["cluster"]["node_image_repositories"] = [{"repository": "train-images", "location": "us-east5"},
                                                 {"repository": "base", "location": "us", "project": "acme-shared"}]
    regs = run_config(cfg, "prod")
    grants = [r.inputs for r in regs if r.type == "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember"]
    nodes = "serviceAccount:ml-prod-nodes@acme-ml-prod.iam.gserviceaccount.com"
    assert sorted(grants, key=lambda g: g["repository"]) == [
        {"project": "acme-shared", "location": "us", "repository": "base",
         "role": "roles/artifactregistry.reader", "member": nodes},
        {"project": "acme-ml-prod", "location": "us-east5", "repository": "train-images",
         "role": "roles/artifactregistry.reader", "member": nodes}]
    assert not [v for v in violations(regs) if v["level"] == "mandatory"]
    cfg["cluster"]["node_image_repositories"] = [{"repository": "Train_Images", "location": "us-east5"}]
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == "platform.cluster.node_image_repositories[0].repository"
