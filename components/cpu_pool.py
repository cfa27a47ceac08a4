"""CpuPool: a CPU worker node pool (on-demand or spot, fixed or autoscaled) with a flavor of its own,
so that teams' cpu and memory quotas have nodes other than the system pool the controllers need.

No `from __future__ import annotations`: the component analyzer reads the annotations at run time."""

import pulumi

from gke_ai_batch.plan import component_plans
from gke_ai_batch.plan.declarations import NodePoolDeclaration
from gke_ai_batch.vocabulary import component_type

from .args import CpuPoolSpec, CpuShape, NodePoolTarget, pool_spec
from .argument_errors import own_plan
from .node_pools import declare_node_pool


class CpuPoolArgs(NodePoolTarget, CpuShape):
    """A CPU pool's machine, size and capacity, and the cluster it joins."""


class CpuPool(pulumi.ComponentResource):
    """A CPU worker node pool, checked against GKE's rules."""

    pool_name: pulumi.Output[str]
    """The GKE node pool."""

    def __init__(self, name: str, args: CpuPoolArgs, opts: pulumi.ResourceOptions | None = None, *,
                 planned: NodePoolDeclaration | None = None):
        pool = own_plan("CpuPool", name, args, CpuPoolArgs,
                        lambda: component_plans.cpu_pool(name, args), planned)
        super().__init__(component_type("CpuPool"), name, None, opts)
        self.spec: CpuPoolSpec = pool_spec(name, args, CpuShape)  # type: ignore[assignment]  # built from the TypedDict's own keys
        self.pool = declare_node_pool(f"{name}-pool", pool, args, self)
        self.pool_name = self.pool.name
        self.register_outputs({"pool_name": self.pool_name})
