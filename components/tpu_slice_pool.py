"""TpuSlicePool: N TPU slices of one shape as N node pools (one slice per pool), the layout JobSet's
exclusive-topology placement and multislice training expect."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from gkebatch.pools import PoolPlan

from . import PKG
from .node_pools import PoolPlacement, node_config


@dataclass
class TpuSlicePoolArgs(PoolPlacement):
    slices: list[PoolPlan]  # one plan per slice, all of one shape


def slice_pool_inputs(p: PoolPlan, labels: dict[str, str]) -> dict:
    """NodePool inputs for one slice. Multi-host: COMPACT placement with the topology, all VMs in
    one zone. Flex-start: autoscale 0..VMs from no reservation, without auto-repair (page 003)."""
    flex = p.capacity == "flex-start"
    inputs = dict(
        name=p.name,
        node_locations=list(p.zones),
        management={"auto_repair": not flex, "auto_upgrade": True},
        node_config=node_config(p, labels),
    )
    if flex:
        inputs.update(initial_node_count=0, autoscaling={"min_node_count": 0, "max_node_count": p.max_nodes})
    else:
        inputs.update(node_count=p.node_count)
    if p.multi_host:
        inputs["placement_policy"] = {"type": "COMPACT", "tpu_topology": p.topology}
    return inputs


class TpuSlicePool(pulumi.ComponentResource):
    def __init__(self, name: str, args: TpuSlicePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(f"{PKG}:index:TpuSlicePool", name, None, opts)
        self.pools = [
            gcp.container.NodePool(
                f"{name}-slice-{i}", project=args.project, cluster=args.cluster, location=args.location,
                **slice_pool_inputs(p, args.labels), opts=pulumi.ResourceOptions(parent=self))
            for i, p in enumerate(args.slices)
        ]
        self.register_outputs({"pools": [p.name for p in self.pools]})
