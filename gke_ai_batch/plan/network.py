"""The cluster's VPC network as a plan: created (network, subnet with named secondary ranges,
Private Google Access, Cloud Router and Cloud NAT for private nodes) or adopted by name, with its
ranges well formed. Whether they overlap and hold the pools is GKE's rule (model/gke_rules.py,
network rules), checked over the inputs sent, as every GKE rule is."""
from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gke_ai_batch.model.cluster_config import NetworkConfig
from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of

DEFAULT_RANGES = {"nodes_cidr": "10.0.0.0/20", "pods_cidr": "10.4.0.0/14", "services_cidr": "10.8.0.0/20"}
# GKE also accepts privately used public ranges (GKE: "GKE address management"); a platform stack
# keeps to private space, so a typo (8.8.0.0/20 for 10.8.0.0/20) is not read as one.
SHARED_ADDRESS_SPACE = ipaddress.IPv4Network("100.64.0.0/10")
CREATED_ONLY = ("nodes_cidr", "pods_cidr", "services_cidr", "cloud_nat")
ADOPTED_ONLY = ("host_project", "existing_nat")


@dataclass(frozen=True)
class Ranges:
    nodes: str
    pods: str
    services: str


# Cloud NAT gives each VM 64 ports unless told otherwise (pulumi-gcp RouterNat.min_ports_per_vm: "Defaults
# to 64 for static port allocation"), and every pod on a node shares its VM's ports: a node of 100 pods
# pulling images or reading buckets at once runs out. Dynamic port allocation keeps 64 as the floor and
# grants more per VM as it needs them, up to 65536 ("If maxPortsPerVm is not set, a maximum of 65536 ports
# will be allocated"); minPortsPerVm must then be a power of two of at least 32, and it is "mutually
# exclusive with enableEndpointIndependentMapping", which is therefore stated off.
NAT_MIN_PORTS_PER_VM = 64


@dataclass(frozen=True)
class NetworkPlan:
    """What the cluster is attached to and what, if anything, the stack creates for it."""

    create: bool
    project: str  # the network's project (a shared VPC's host project)
    name: str
    subnetwork: str
    region: str
    pods_range: str | None  # None: ranges GKE creates and names itself (cluster.network, no block)
    services_range: str | None
    ranges: Ranges | None = None  # created networks only
    cloud_nat: bool = False  # create a Cloud Router and NAT
    existing_nat: tuple[str, str] | None = None  # (router, nat) of an adopted network, read by the stack
    shared: bool = False  # a shared VPC: the network lives in another (host) project

    @property
    def network_ref(self) -> str:
        """The cluster's `network`: a full path for a shared VPC, else the name."""
        return f"projects/{self.project}/global/networks/{self.name}" if self.shared else self.name

    @property
    def subnetwork_ref(self) -> str:
        return (f"projects/{self.project}/regions/{self.region}/subnetworks/{self.subnetwork}" if self.shared
                else self.subnetwork)

    @property
    def router(self) -> str:
        return f"{self.name}-router"

    @property
    def nat(self) -> str:
        return f"{self.name}-nat"

    @property
    def ip_allocation_policy(self) -> dict[str, str]:
        if self.pods_range is None or self.services_range is None:
            return {}
        return {"cluster_secondary_range_name": self.pods_range, "services_secondary_range_name": self.services_range}

    @property
    def vpc_inputs(self) -> dict[str, Any]:
        """A custom-mode VPC: subnets only where the platform declares them."""
        return dict(name=self.name, project=self.project, auto_create_subnetworks=False, routing_mode="REGIONAL")

    def subnet_inputs(self, network: Any) -> dict[str, Any]:
        """The nodes' subnet with the named Pod and Service ranges, and Private Google Access, so that
        private nodes reach Google APIs (Artifact Registry, Cloud Storage) without the NAT."""
        assert self.ranges is not None  # a created network has its ranges
        return dict(name=self.subnetwork, project=self.project, region=self.region, network=network,
                    ip_cidr_range=self.ranges.nodes, private_ip_google_access=True,
                    secondary_ip_ranges=[{"range_name": self.pods_range, "ip_cidr_range": self.ranges.pods},
                                         {"range_name": self.services_range, "ip_cidr_range": self.ranges.services}])

    def router_inputs(self, network: Any) -> dict[str, Any]:
        return dict(name=self.router, project=self.project, region=self.region, network=network)

    def nat_inputs(self, router: Any, subnetwork: Any) -> dict[str, Any]:
        """Cloud NAT for every range of the nodes' subnet (the Pods' too), with automatic addresses and
        dynamic port allocation (NAT_MIN_PORTS_PER_VM): private nodes have no external address, and pull
        Kueue's and JobSet's images from registry.k8s.io."""
        return dict(name=self.nat, project=self.project, region=self.region, router=router,
                    nat_ip_allocate_option="AUTO_ONLY", source_subnetwork_ip_ranges_to_nat="LIST_OF_SUBNETWORKS",
                    subnetworks=[{"name": subnetwork, "source_ip_ranges_to_nats": ["ALL_IP_RANGES"]}],
                    enable_dynamic_port_allocation=True, enable_endpoint_independent_mapping=False,
                    min_ports_per_vm=NAT_MIN_PORTS_PER_VM, log_config={"enable": True, "filter": "ERRORS_ONLY"})

    @property
    def existing_nat_id(self) -> str:
        """The ID the stack reads an adopted network's Cloud NAT by (nat_id)."""
        assert self.existing_nat is not None
        router, name = self.existing_nat
        return nat_id(self.project, self.region, router, name)


def _where(key: str) -> str:
    return path_of("network", key)


def _refuse_keys(net: NetworkConfig, keys: Sequence[str], why: str) -> None:
    for key in keys:
        if getattr(net, key) is not None:
            raise ConfigError(_where(key), why)


def _cidr(net: NetworkConfig, key: str) -> ipaddress.IPv4Network:
    value = getattr(net, key) or DEFAULT_RANGES[key]
    try:
        cidr = ipaddress.IPv4Network(value)
    except ValueError:
        raise ConfigError(_where(key), f"{value!r} is not an IPv4 range in CIDR notation with its host bits "
                          "zero, such as 10.4.0.0/14") from None
    if not (cidr.is_private or cidr.subnet_of(SHARED_ADDRESS_SPACE)):
        raise ConfigError(_where(key), f"{value!r} is a public range; the platform keeps the cluster's ranges in "
                          f"private space: RFC 1918 (such as {DEFAULT_RANGES[key]}) or the shared address space "
                          f"{SHARED_ADDRESS_SPACE} (RFC 6598), which GKE supports as a non-RFC 1918 range")
    return cidr


def _distinct_ranges(pods: str, services: str) -> None:
    if pods == services:
        raise ConfigError(_where("services_range"), f"{services!r} is also the Pods range's name; a subnet's "
                          "secondary ranges have distinct names, one for Pods and one for Services")


def _created(cfg: PlatformConfig, net: NetworkConfig) -> NetworkPlan:
    _refuse_keys(net, ADOPTED_ONLY, "only an adopted network (adopt: true) has this; a created network lives "
                 "in the platform's project and makes its own Cloud NAT (cloud_nat)")
    cidrs = {key: _cidr(net, key) for key in DEFAULT_RANGES}  # their overlaps and sizes: gke_rules
    name = net.name or f"{cfg.cluster.name}-net"
    if net.subnetwork is not None and not NAME.match(net.subnetwork):
        raise ConfigError(_where("subnetwork"), f"{net.subnetwork!r}: a created subnet is named with 1 to 63 "
                          "lowercase letters, digits and '-', starting with a letter")
    ranges = Ranges(*(str(cidrs[k]) for k in DEFAULT_RANGES))
    pods, services = net.pods_range or "pods", net.services_range or "services"
    _distinct_ranges(pods, services)
    subnet = net.subnetwork or f"{cfg.cluster.name}-{cfg.region}"[:63].rstrip("-")
    return NetworkPlan(True, cfg.project, name, subnet, cfg.region, pods, services, ranges,
                       cloud_nat=cfg.cluster.private_nodes if net.cloud_nat is None else net.cloud_nat)


def _adopted(cfg: PlatformConfig, net: NetworkConfig) -> NetworkPlan:
    _refuse_keys(net, CREATED_ONLY, "an adopted network's ranges and NAT are its own, and the stack creates "
                 "nothing in it; drop the key (name its secondary ranges in pods_range and services_range, and "
                 "its Cloud NAT in existing_nat)")
    for key in ("name", "subnetwork", "pods_range", "services_range"):
        if getattr(net, key) is None:
            what = "Pods and Services secondary ranges" if key.endswith("range") else "network and subnet"
            raise ConfigError(_where(key), f"an adopted network needs its {what} named: set {key} (the cluster "
                              "uses the subnet's existing secondary ranges; GKE cannot add them to a shared subnet)")
    nat = (net.existing_nat.router, net.existing_nat.name) if net.existing_nat else None
    assert net.name and net.subnetwork and net.pods_range and net.services_range  # checked above
    _distinct_ranges(net.pods_range, net.services_range)
    project = net.host_project or cfg.project
    return NetworkPlan(False, project, net.name, _subnet_name(net.subnetwork, project, cfg.region), cfg.region,
                       net.pods_range, net.services_range, existing_nat=nat,
                       shared=net.host_project not in (None, cfg.project))


SUBNET_PATH = re.compile(r"^projects/(?P<project>[^/]+)/regions/(?P<region>[^/]+)/subnetworks/(?P<name>[^/]+)$")
NAME = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")


def _subnet_name(subnet: str, project: str, region: str) -> str:
    """The subnet's name, from its name or its path (which must be in the network's project and the
    platform's region: a cluster's nodes live in its region's subnet)."""
    path = SUBNET_PATH.match(subnet)
    name = path["name"] if path else subnet
    if not NAME.match(name):
        raise ConfigError(_where("subnetwork"), f"{subnet!r}: name the subnet (1 to 63 lowercase letters, digits and "
                          "'-', starting with a letter) or give projects/PROJECT/regions/REGION/subnetworks/NAME")
    if path and path["region"] != region:
        raise ConfigError(_where("subnetwork"), f"{subnet!r} is in region {path['region']!r}; the cluster is in "
                          f"{region!r}, and its nodes need a subnet of that region")
    if path and path["project"] != project:
        raise ConfigError(_where("subnetwork"), f"{subnet!r} is in project {path['project']!r}, not the network's "
                          f"({project!r}); for a shared VPC set host_project to the host project")
    return name


def plan_network(cfg: PlatformConfig) -> NetworkPlan:
    """The cluster's network; without a `network` block, the existing cluster.network and subnetwork
    with ranges GKE creates (what stacks did before the block existed)."""
    net = cfg.network
    if net is None:
        return NetworkPlan(False, cfg.project, cfg.cluster.network, cfg.cluster.subnetwork, cfg.region, None, None)
    for key in ("network", "subnetwork"):
        if getattr(cfg.cluster, key) != "default":
            raise ConfigError(path_of("cluster", key), "the platform's `network` block names the network; drop "
                              f"cluster.{key} (use network.{'name' if key == 'network' else key})")
    return _adopted(cfg, net) if net.adopt else _created(cfg, net)


def nat_id(project: str, region: str, router: str, name: str) -> str:
    """pulumi-gcp's ID of a RouterNat, the one it gives a NAT it creates and takes to import or read one:
    {{project}}/{{region}}/{{router}}/{{name}} (terraform-provider-google-beta resource_compute_router_nat.go,
    resourceComputeRouterNatCreate "Store the ID now" and resourceComputeRouterNatImport). A created NAT read
    under the same ID is relinquished by the engine, not deleted (offline.changes.handover)."""
    return f"{project}/{region}/{router}/{name}"
