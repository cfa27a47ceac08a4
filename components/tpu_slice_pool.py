"""TpuSlicePool: N TPU slices of one shape as N node pools (one slice per pool), the layout JobSet's
exclusive-topology placement and multislice training expect. TPU7x multi-host slices also get the
HIGH_THROUGHPUT workload policy that places them.

No `from __future__ import annotations`: the component analyzer reads the annotations at run time."""

from typing import Any

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.plan import component_plans
from gke_ai_batch.plan.declarations import NodePoolDeclaration
from gke_ai_batch.vocabulary import component_type

from .args import NodePoolTarget, TpuPoolSpec, TpuShape, pool_spec
from .argument_errors import own_plan
from .node_pools import declare_node_pool


class TpuSlicePoolArgs(NodePoolTarget, TpuShape):
    """A TPU slice shape, its capacity, and the cluster its node pools join."""


class TpuSlicePool(pulumi.ComponentResource):
    """TPU slices of one shape, one GKE node pool per slice, checked against the TPU catalog and GKE's rules."""

    pool_names: pulumi.Output[list[str]]
    """The node pools, one per slice."""
    chips: pulumi.Output[int]
    """TPU chips in all slices."""

    def __init__(self, name: str, args: TpuSlicePoolArgs, opts: pulumi.ResourceOptions | None = None, *,
                 planned: list[NodePoolDeclaration] | None = None):
        pools = own_plan("TpuSlicePool", name, args, TpuSlicePoolArgs,
                         lambda: component_plans.tpu_slices(name, args), planned)
        super().__init__(component_type("TpuSlicePool"), name, None, opts)
        first = pools[0]
        self.workload_policy = None
        overrides: dict[str, Any] = {}
        policy = first.plan.workload_policy
        if policy is not None:  # TPU7x multi-host slices
            policy_name = pulumi.Output.from_input(args["cluster"]).apply(lambda c: policy.named_for(c, name))
            self.workload_policy = gcp.compute.ResourcePolicy(
                f"{name}-workload-policy", **{**(first.workload_policy or {}), "name": policy_name},
                opts=pulumi.ResourceOptions(parent=self))
            overrides["placement_policy"] = {**first.inputs["placement_policy"],
                                             "policy_name": self.workload_policy.name}
        self.spec: TpuPoolSpec = pool_spec(name, args, TpuShape)  # type: ignore[assignment]  # built from the TypedDict's own keys
        self.pools = [declare_node_pool(f"{name}-slice-{i}", p, args, self, **overrides)
                      for i, p in enumerate(pools)]
        self.pool_names = pulumi.Output.all(*[p.name for p in self.pools])
        self.chips = pulumi.Output.from_input(sum(p.plan.accelerators for p in pools))
        self.register_outputs({"pool_names": self.pool_names, "chips": self.chips})
