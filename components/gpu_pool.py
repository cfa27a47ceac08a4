"""GpuPool: a GPU node pool on on-demand, spot or reserved capacity, or on Dynamic Workload
Scheduler queued provisioning (nodes appear only for an admitted ProvisioningRequest)."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from gkebatch.pools import PoolPlan

from . import PKG
from .node_pools import PoolPlacement, node_config


@dataclass
class GpuPoolArgs(PoolPlacement):
    plan: PoolPlan


def gpu_pool_inputs(p: PoolPlan, labels: dict[str, str]) -> dict:
    """Queued provisioning (page 004): total autoscaling 0..N with location policy ANY, no
    reservation, auto-repair and auto-upgrade off so that nodes are not disrupted mid-run."""
    queued = p.capacity == "queued-provisioning"
    extra: dict = {
        "guest_accelerators": [{"type": p.accelerator, "count": p.per_node,
                                "gpu_driver_installation_config": {"gpu_driver_version": p.driver_version}}],
        "gvnic": {"enabled": p.gvnic},
    }
    inputs = dict(name=p.name, node_locations=list(p.zones), node_config=node_config(p, labels, **extra))
    if queued:
        inputs.update(
            initial_node_count=0,
            queued_provisioning={"enabled": True},
            autoscaling={"total_min_node_count": 0, "total_max_node_count": p.total_max_nodes,
                         "location_policy": "ANY"},
            management={"auto_repair": False, "auto_upgrade": False},
        )
    else:
        inputs.update(node_count=p.node_count, management={"auto_repair": True, "auto_upgrade": True})
    return inputs


class GpuPool(pulumi.ComponentResource):
    def __init__(self, name: str, args: GpuPoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(f"{PKG}:index:GpuPool", name, None, opts)
        self.pool = gcp.container.NodePool(
            f"{name}-pool", project=args.project, cluster=args.cluster, location=args.location,
            **gpu_pool_inputs(args.plan, args.labels), opts=pulumi.ResourceOptions(parent=self))
        self.register_outputs({"name": self.pool.name})
