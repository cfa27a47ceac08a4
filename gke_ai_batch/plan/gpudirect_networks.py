"""A GPU pool's GPUDirect networks as a plan: which extra networks its nodes attach to, created the way
GKE's pages create them or adopted by name, and the GKE network objects pods name to use them.

The facts (how many networks, which are RDMA, their MTU and ranges) are model.gpudirect's; this module
checks a pool's choice against them and turns it into the inputs of the VPCs, subnets, firewall rules,
the node pool's additionalNodeNetworkConfigs and the networking.gke.io objects."""
from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gke_ai_batch.model import gpudirect
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.pool_config import GpuDirectNetworks, GpuPoolConfig
from gke_ai_batch.model.words import or_list, plural
from gke_ai_batch.vocabulary import GKE_NETWORKING_API

ADOPTED = "existing"  # PoolPlan.gpudirect of a pool that names existing networks
INSTALLERS = Path(__file__).with_name("upstream_installers")


@dataclass(frozen=True)
class Subnet:
    suffix: str  # the name after "<cluster>-<pool>-"
    cidr: str

    def inputs(self, name: Any, network: Any, project: str, region: str) -> dict[str, Any]:
        return dict(name=name, project=project, region=region, network=network, ip_cidr_range=self.cidr)


@dataclass(frozen=True)
class Vpc:
    """A VPC the stack creates for a pool, with its subnets."""

    suffix: str
    mtu: int
    roce: bool  # created with the zone's RDMA network profile
    subnets: tuple[Subnet, ...]

    def inputs(self, name: Any, project: str, zone: str) -> dict[str, Any]:
        """A custom-mode VPC with the pages' MTU; the RoCE one with its zone's RDMA network profile."""
        inputs = dict(name=name, project=project, auto_create_subnetworks=False, routing_mode="REGIONAL",
                      mtu=self.mtu)
        if self.roce:
            inputs["network_profile"] = gpudirect.roce_profile(project, zone)
        return inputs

    def firewall_inputs(self, name: Any, network: Any, project: str) -> dict[str, Any]:
        """Traffic between the nodes of a gVNIC or TCPX network: [AIH-A4/A3U] and [AIH-A3HM] create each with
        "--rules=tcp:0-65535,udp:0-65535,icmp --source-ranges=192.168.0.0/16"; the source here is the
        network's own subnets, the only addresses in it. The RoCE VPC gets none (the pages create none)."""
        allow = [{"protocol": "tcp", "ports": ["0-65535"]}, {"protocol": "udp", "ports": ["0-65535"]},
                 {"protocol": "icmp"}]
        return dict(name=name, project=project, network=network, direction="INGRESS", allows=allow,
                    source_ranges=[s.cidr for s in self.subnets])


@dataclass(frozen=True)
class NodeNetwork:
    """One extra NIC: its VPC and subnet (names, or suffixes of created ones) and the GKE Network pods name."""

    network: str
    subnetwork: str
    pod_network: str
    device_mode: str  # NetDevice or RDMA

    def pod_network_objects(self, vpc: Any, subnet: Any) -> list[dict[str, Any]]:
        """The GKENetworkParamSet and Network ([AIH-A4/A3U], "Configure your Pod manifests") that let a pod
        name the NIC in its networking.gke.io/interfaces annotation."""
        ref = {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": self.pod_network}
        return [
            {"apiVersion": GKE_NETWORKING_API, "kind": "GKENetworkParamSet", "metadata": {"name": self.pod_network},
             "spec": {"vpc": vpc, "vpcSubnet": subnet, "deviceMode": self.device_mode}},
            {"apiVersion": GKE_NETWORKING_API, "kind": "Network", "metadata": {"name": self.pod_network},
             "spec": {"type": "Device", "parametersRef": ref}},
        ]


Choice = tuple[str | None, tuple[NodeNetwork, ...]]


def choice(path: str, p: GpuPoolConfig, machine: str, zones: Sequence[str]) -> Choice:
    """The pool's gpudirect setting as (mode, its extra networks: names, or created ones by suffix),
    refused where its machine has no such networks, where an adopted list does not match the machine's
    NICs, or where RDMA spans zones."""
    if p.gpudirect is None or p.gpudirect == gpudirect.AUTO_PROFILE:
        return p.gpudirect, ()
    need = gpudirect.GPUDIRECT.get(machine)
    if need is None:
        raise ConfigError(f"{path}.gpudirect", f"{machine} has no GPUDirect networks; they are for "
                          f"{or_list(sorted(gpudirect.GPUDIRECT))}")
    if need.rdma and len(zones) != 1:
        raise ConfigError(f"{path}.zones", f"{', '.join(zones)}: the RDMA network of {machine} is zonal (its RoCE "
                          "network profile belongs to one zone), so a GPUDirect pool of it has exactly one zone")
    if isinstance(p.gpudirect, GpuDirectNetworks):
        return ADOPTED, _adopted(f"{path}.gpudirect.networks", p.gpudirect, machine, need, p.name)
    return gpudirect.CREATE, created_networks(need, p.name)


def _adopted(path: str, block: GpuDirectNetworks, machine: str, need: gpudirect.GpuDirect,
             pool: str) -> tuple[NodeNetwork, ...]:
    nets = block.networks
    if len(nets) != need.networks:
        raise ConfigError(path, f"{machine} has {plural(need.networks, 'extra NIC')} for {need.flavour} "
                          f"({need.layout}); the list names {len(nets)}")
    vpcs = [n.network for n in nets]
    # [VPC multiple interfaces] "each interface must connect to a different VPC network ... However, VPC
    # networks created with an RDMA network profile let you attach RDMA NICs to the same network, where each
    # NIC is attached to a different subnet."
    if need.rdma and (len(set(vpcs[1:])) != 1 or vpcs[0] == vpcs[1]
                      or len({n.subnetwork for n in nets[1:]}) != need.rdma_subnets):
        raise ConfigError(path, f"{machine}: the first network is the gVNIC one, and the other "
                          f"{need.rdma_subnets} are distinct subnets of one other (RoCE) VPC")
    if not need.rdma and len(set(vpcs)) != len(vpcs):
        raise ConfigError(path, f"{machine}: each NIC attaches to a different VPC network, and the list repeats one "
                          f"(see {gpudirect.MULTI_NIC_PAGE})")
    names = gpudirect.pod_network_names(need, pool)
    return tuple(NodeNetwork(n.network, n.subnetwork, obj, mode) for n, (obj, mode) in zip(nets, names, strict=True))


def created_vpcs(need: gpudirect.GpuDirect) -> tuple[Vpc, ...]:
    """The VPCs GKE's pages create for the machine: a gVNIC VPC and a RoCE VPC of N subnets, or one VPC
    per TCPX network (model.gpudirect has the ranges and MTUs with their sources)."""
    if need.rdma:
        rdma = tuple(Subnet(f"rdma-sub-{i}", gpudirect.data_range(i)) for i in range(need.rdma_subnets))
        return (Vpc("gvnic", need.mtu, False, (Subnet("gvnic-sub", gpudirect.GVNIC_RANGE),)),
                Vpc("rdma", need.mtu, True, rdma))
    return tuple(Vpc(f"data-{i + 1}", need.mtu, False, (Subnet(f"data-sub-{i + 1}", gpudirect.data_range(i)),))
                 for i in range(need.networks))


def created_networks(need: gpudirect.GpuDirect, pool: str) -> tuple[NodeNetwork, ...]:
    """The node pool's extra networks over created_vpcs, by suffix, in the pages' order."""
    pairs = [(v.suffix, s.suffix) for v in created_vpcs(need) for s in v.subnets]
    return tuple(NodeNetwork(vpc, subnet, obj, mode)
                 for (vpc, subnet), (obj, mode) in zip(pairs, gpudirect.pod_network_names(need, pool), strict=True))


def refuse_overlaps(pools: Sequence[Any], nodes_cidr: str) -> None:
    """A created subnet may not overlap the nodes' own subnet: one VM's NICs may not share addresses (an
    adopted network's ranges are not known here)."""
    nodes = ipaddress.ip_network(nodes_cidr)
    for p in pools:
        if p.gpudirect != gpudirect.CREATE:
            continue
        for cidr in (s.cidr for v in created_vpcs(gpudirect.GPUDIRECT[p.machine_type]) for s in v.subnets):
            if ipaddress.ip_network(cidr).overlaps(nodes):
                raise ConfigError(f"{p.path}.gpudirect", f"the GPUDirect subnet {cidr} GKE's pages use overlaps the "
                                  f"nodes' range {nodes_cidr}, and one VM's NICs may not overlap (see "
                                  f"{gpudirect.MULTI_NIC_PAGE}): move network.nodes_cidr out of 192.168.0.0/16")


def installers(pools: Sequence[Any]) -> list[dict[str, Any]]:
    """GKE's NCCL installer DaemonSets that the cluster's GPUDirect pools need, each once: GKE's pages have
    users apply them before the first job, to put the NCCL and gIB libraries the pods mount on the nodes."""
    files = {need.installer for p in pools if p.gpudirect
             for need in [gpudirect.GPUDIRECT.get(p.machine_type)] if need and need.installer}
    return [yaml.safe_load((INSTALLERS / f).read_text()) for f in sorted(files)]
