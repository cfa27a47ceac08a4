"""ClusterNetwork: the VPC network a GkeCluster creates for itself (network, subnet with named
secondary ranges, Cloud Router and Cloud NAT for private nodes), or, for an adopted network, the
existing Cloud NAT read back so that a deploy fails where it is missing and the policy pack sees it.
Every input is the NetworkPlan's (gke_ai_batch.plan.network)."""
from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.plan import lifecycle
from gke_ai_batch.plan.network import NetworkPlan
from gke_ai_batch.vocabulary import component_type


class ClusterNetwork(pulumi.ComponentResource):
    def __init__(self, name: str, net: NetworkPlan, opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("ClusterNetwork"), name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        if net.create:
            # Each has a fixed name: a replacement creating the new one first would meet "already exists".
            self._create(name, net, pulumi.ResourceOptions(parent=self, **lifecycle.NAMED.options()))
        elif net.existing_nat:
            router, nat = net.existing_nat
            gcp.compute.RouterNat.get(f"{name}-nat", net.existing_nat_id, opts=child, project=net.project,
                                      region=net.region, router=router, name=nat)
        self.register_outputs({"network": net.network_ref, "subnetwork": net.subnetwork_ref})

    def _create(self, name: str, net: NetworkPlan, child: pulumi.ResourceOptions) -> None:
        vpc = gcp.compute.Network(f"{name}-vpc", **net.vpc_inputs, opts=child)
        subnet = gcp.compute.Subnetwork(f"{name}-subnet", **net.subnet_inputs(vpc.id), opts=child)
        if net.cloud_nat:
            router = gcp.compute.Router(f"{name}-router", **net.router_inputs(vpc.id), opts=child)
            gcp.compute.RouterNat(f"{name}-nat", **net.nat_inputs(router.name, subnet.id), opts=child)
