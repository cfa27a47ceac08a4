"""SystemNodePool: the plain CPU pool GKE requires beside flex-start and queued-provisioning pools,
where Kueue, JobSet and system pods run."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.plan.gke_inputs import node_pool_inputs
from gke_ai_batch.plan.pools import PoolPlan

from . import PKG
from .node_pools import PoolPlacement


@dataclass
class SystemNodePoolArgs(PoolPlacement):
    plan: PoolPlan


class SystemNodePool(pulumi.ComponentResource):
    def __init__(self, name: str, args: SystemNodePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(f"{PKG}:index:SystemNodePool", name, None, opts)
        self.pool = gcp.container.NodePool(
            f"{name}-pool", project=args.project, cluster=args.cluster, location=args.location,
            **node_pool_inputs(args.plan, args.labels), opts=pulumi.ResourceOptions(parent=self))
        self.register_outputs({"name": self.pool.name})
