"""PodNetworks: the GKE network objects (GKENetworkParamSet and Network, networking.gke.io/v1) that name a
GPU pool's extra NICs, so that a pod lists them in its networking.gke.io/interfaces annotation. Declared
with the cluster's Kubernetes provider once the pool's networks exist (plan.gpudirect_networks)."""
from collections.abc import Mapping
from typing import Any

import pulumi

from gke_ai_batch.plan.gpudirect_networks import NodeNetwork
from gke_ai_batch.plan.pools import PoolPlan
from gke_ai_batch.vocabulary import component_type

from .gpudirect_installer import GpuDirectInstaller
from .manifests import declare


class PodNetworks(pulumi.ComponentResource):
    def __init__(self, name: str, networks: list[tuple[NodeNetwork, Any, Any]], opts: pulumi.ResourceOptions):
        """`networks`: each extra NIC with its VPC's and subnet's names (plain, or a created network's outputs)."""
        super().__init__(component_type("PodNetworks"), name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        for net, vpc, subnet in networks:
            for manifest in net.pod_network_objects(vpc, subnet):
                declare(f"{name}-{net.pod_network}-{manifest['kind'].lower()}", manifest, child)
        self.register_outputs({})


GpuPoolNetworks = tuple[PoolPlan, Mapping[str, Any], list[pulumi.Resource]]  # a pool, its created networks' names, what
# its network objects wait for


def declare_pod_networks(installers: list[dict[str, Any]], pools: list[GpuPoolNetworks],
                         opts: pulumi.ResourceOptions) -> None:
    """GKE's NCCL installers for the GPUDirect pools (the platform plan's), and each pool's network objects after
    what it names (its node pool); a created network's name where `names` has its suffix, else the network's own
    name."""
    if installers:
        GpuDirectInstaller("gpudirect-installer", installers, opts)
    for pool, names, after in pools:
        if not pool.node_networks:
            continue
        nets = [(n, names.get(n.network, n.network), names.get(n.subnetwork, n.subnetwork)) for n in pool.node_networks]
        PodNetworks(f"{pool.name}-pod-networks", nets, pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(depends_on=after)))
