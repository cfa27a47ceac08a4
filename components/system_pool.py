"""SystemNodePool: the plain CPU pool GKE requires beside flex-start and queued-provisioning pools,
where Kueue, JobSet and system pods run.

No `from __future__ import annotations`: the component analyzer reads the annotations at run time."""
from typing import NotRequired

import pulumi

from gke_ai_batch.plan import component_plans
from gke_ai_batch.plan.declarations import NodePoolDeclaration
from gke_ai_batch.vocabulary import component_type

from .args import NodePoolTarget
from .argument_errors import own_plan
from .node_pools import declare_node_pool


class SystemNodePoolArgs(NodePoolTarget):
    """The system pool's size and machine, and the cluster it joins."""

    machine_type: NotRequired[str]
    """Machine type (default e2-standard-4)."""
    min_nodes: NotRequired[int]
    """Autoscaling floor per zone (default 1)."""
    max_nodes: NotRequired[int]
    """Autoscaling ceiling per zone (default 3)."""
    disk_size_gb: NotRequired[int]
    """Boot disk size (default 100)."""
    adopt: NotRequired[str]
    """An existing node pool to import: its GKE name, projects/PROJECT/locations/LOCATION/clusters/CLUSTER/
    nodePools/NAME."""


class SystemNodePool(pulumi.ComponentResource):
    """An autoscaled CPU node pool for the controllers and system pods."""

    pool_name: pulumi.Output[str]
    """The GKE node pool."""

    def __init__(self, name: str, args: SystemNodePoolArgs, opts: pulumi.ResourceOptions | None = None, *,
                 planned: NodePoolDeclaration | None = None):
        pool = own_plan("SystemNodePool", name, args, SystemNodePoolArgs,
                        lambda: component_plans.system_pool(name, args), planned)
        super().__init__(component_type("SystemNodePool"), name, None, opts)
        self.pool = declare_node_pool(f"{name}-pool", pool, args, self)
        self.pool_name = self.pool.name
        self.register_outputs({"pool_name": self.pool_name})
