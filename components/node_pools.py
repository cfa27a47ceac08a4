"""How every node pool component declares its GKE NodePool: the plan's inputs, placed in the
target cluster, after what the component was told to wait for, replaced delete-first (plan.lifecycle).
A component given `protect` protects its pools (and a TPU pool's workload policy): children inherit it."""
from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.plan import lifecycle
from gke_ai_batch.plan.gke_inputs import node_pool_inputs
from gke_ai_batch.plan.pools import PoolPlan


def declare_node_pool(name: str, plan: PoolPlan, target: Mapping[str, Any], parent: pulumi.Resource,
                      depends_on: list[pulumi.Resource] | None = None, **overrides: Any) -> gcp.container.NodePool:
    inputs = {**node_pool_inputs(plan, dict(target.get("labels") or {}), target.get("service_account")), **overrides}
    return gcp.container.NodePool(
        name, project=target["project"], cluster=target["cluster"], location=target["location"], **inputs,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=depends_on, **lifecycle.node_pool(plan).options()))
