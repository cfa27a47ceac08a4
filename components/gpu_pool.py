"""GpuPool: a GPU node pool on on-demand, spot or reserved capacity, or on Dynamic Workload Scheduler
queued provisioning (nodes appear only for an admitted ProvisioningRequest), with the GPUDirect networks
it creates for itself.

No `from __future__ import annotations`: the component analyzer reads the annotations at run time."""

from typing import Any

import pulumi

from gke_ai_batch.model.gpudirect import CREATE
from gke_ai_batch.plan import component_plans
from gke_ai_batch.plan.declarations import NodePoolDeclaration
from gke_ai_batch.vocabulary import component_type

from .args import GpuPoolSpec, GpuShape, NodePoolTarget, pool_spec
from .argument_errors import own_plan
from .gpudirect_networks import GpuDirectNetworks
from .node_pools import declare_node_pool


class GpuPoolArgs(NodePoolTarget, GpuShape):
    """A GPU pool shape, its capacity, and the cluster it joins."""


class GpuPool(pulumi.ComponentResource):
    """A GPU node pool, checked against the GPU catalog and GKE's rules."""

    pool_name: pulumi.Output[str]
    """The GKE node pool."""
    gpus: pulumi.Output[int]
    """GPUs at full size."""

    def __init__(self, name: str, args: GpuPoolArgs, opts: pulumi.ResourceOptions | None = None, *,
                 planned: NodePoolDeclaration | None = None):
        pool = own_plan("GpuPool", name, args, GpuPoolArgs,
                        lambda: component_plans.gpu_pool(name, args), planned)
        super().__init__(component_type("GpuPool"), name, None, opts)
        self.networks = None
        overrides: dict[str, Any] = {}
        if pool.plan.gpudirect == CREATE:
            self.networks = GpuDirectNetworks(f"{name}-networks", pool.plan, dict(args),
                                              pulumi.ResourceOptions(parent=self))
            overrides["network_config"] = {"additional_node_network_configs": self.networks.attached}
        self.spec: GpuPoolSpec = pool_spec(name, args, GpuShape)  # type: ignore[assignment]  # built from the TypedDict's own keys
        self.pool = declare_node_pool(f"{name}-pool", pool, args, self, **overrides)
        self.plan = pool.plan
        self.pool_name = self.pool.name
        self.gpus = pulumi.Output.from_input(pool.plan.accelerators)
        self.register_outputs({"pool_name": self.pool_name, "gpus": self.gpus})
