"""TpuSlicePool: N TPU slices of one shape as N node pools (one slice per pool), the layout JobSet's
exclusive-topology placement and multislice training expect."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.plan.gke_inputs import node_pool_inputs, workload_policy_inputs
from gke_ai_batch.plan.pools import PoolPlan

from . import PKG
from .node_pools import PoolPlacement


@dataclass
class TpuSlicePoolArgs(PoolPlacement):
    slices: list[PoolPlan]  # one plan per slice, all of one shape


class TpuSlicePool(pulumi.ComponentResource):
    """One node pool per slice; TPU7x multi-host slices also get the workload policy they name."""

    def __init__(self, name: str, args: TpuSlicePoolArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(f"{PKG}:index:TpuSlicePool", name, None, opts)
        policy = args.slices[0].workload_policy
        self.workload_policy = gcp.compute.ResourcePolicy(
            f"{name}-workload-policy", **workload_policy_inputs(policy, args.project),
            opts=pulumi.ResourceOptions(parent=self)) if policy else None
        after = [self.workload_policy] if self.workload_policy else []
        self.pools = [
            gcp.container.NodePool(
                f"{name}-slice-{i}", project=args.project, cluster=args.cluster, location=args.location,
                **node_pool_inputs(p, args.labels), opts=pulumi.ResourceOptions(parent=self, depends_on=after))
            for i, p in enumerate(args.slices)
        ]
        self.register_outputs({"pools": [p.name for p in self.pools]})
