"""GpuDirectNetworks: the VPCs, subnets and firewall rules a GPU pool's extra NICs attach to, created as
GKE's GPUDirect pages create them (PoolPlan.created_vpcs), named after the cluster and the pool so that
two clusters in one project do not collide. The pool's additionalNodeNetworkConfigs name them, so the node
pool is created after them."""
from typing import Any

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.plan import lifecycle
from gke_ai_batch.plan.pools import PoolPlan
from gke_ai_batch.vocabulary import component_type


class GpuDirectNetworks(pulumi.ComponentResource):
    names: dict[str, pulumi.Output[str]]
    """The created networks' and subnets' names, by their suffix in the plan."""
    attached: list[dict[str, pulumi.Output[str]]]
    """The node pool's additionalNodeNetworkConfigs, naming the created networks in the plan's order."""

    def __init__(self, name: str, pool: PoolPlan, target: dict[str, Any], opts: pulumi.ResourceOptions):
        super().__init__(component_type("GpuDirectNetworks"), name, None, opts)
        # Fixed names: a replacement creating the new one first would meet "already exists".
        project, region = target["project"], target["region"]
        child = pulumi.ResourceOptions(parent=self, **lifecycle.NAMED.options())
        cluster = pulumi.Output.from_input(target["cluster"])

        def real(suffix: str) -> pulumi.Output[str]:
            return cluster.apply(lambda c: pool.scoped_name(c, suffix))
        self.names = {}
        for vpc in pool.created_vpcs:
            network = gcp.compute.Network(f"{name}-{vpc.suffix}",
                                          **vpc.inputs(real(vpc.suffix), project, pool.zones[0]), opts=child)
            self.names[vpc.suffix] = network.name
            for s in vpc.subnets:
                subnet = gcp.compute.Subnetwork(f"{name}-{s.suffix}", **s.inputs(
                    real(s.suffix), network.id, project, region), opts=child)
                self.names[s.suffix] = subnet.name
            if not vpc.roce:
                gcp.compute.Firewall(f"{name}-{vpc.suffix}-internal", **vpc.firewall_inputs(
                    real(f"{vpc.suffix}-internal"), network.id, project), opts=child)
        self.attached = [{"network": self.names[n.network], "subnetwork": self.names[n.subnetwork]}
                         for n in pool.node_networks]
        self.register_outputs({"names": self.names})
