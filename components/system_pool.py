"""SystemNodePool: the plain CPU pool GKE requires beside flex-start and queued-provisioning pools,
where Kueue, JobSet and system pods run."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from gkebatch.pools import PoolPlan

from . import PKG
from .node_pools import PoolPlacement, node_config


@dataclass
class SystemNodePoolArgs(PoolPlacement):
    plan: PoolPlan
    disk_size_gb: int = 100


class SystemNodePool(pulumi.ComponentResource):
    def __init__(self, name: str, args: SystemNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(f"{PKG}:index:SystemNodePool", name, None, opts)
        p = args.plan
        self.pool = gcp.container.NodePool(
            f"{name}-pool", name=p.name, project=args.project, cluster=args.cluster, location=args.location,
            initial_node_count=p.min_nodes or 1,
            autoscaling={"min_node_count": p.min_nodes, "max_node_count": p.max_nodes},
            management={"auto_repair": True, "auto_upgrade": True},
            node_config=node_config(p, args.labels, disk_size_gb=args.disk_size_gb),
            opts=pulumi.ResourceOptions(parent=self))
        self.register_outputs({"name": self.pool.name})
