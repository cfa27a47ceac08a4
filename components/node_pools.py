"""How every node pool component declares its GKE NodePool: the declaration's inputs, placed in the target
cluster, with the node service account, after what the component was told to wait for, replaced delete-first
(plan.lifecycle). A component given `protect` protects its pools (and a TPU pool's workload policy): children
inherit it."""
from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.plan.declarations import NodePoolDeclaration


def declare_node_pool(name: str, pool: NodePoolDeclaration, target: Mapping[str, Any], parent: pulumi.Resource,
                      depends_on: list[pulumi.Resource] | None = None, **overrides: Any) -> gcp.container.NodePool:
    """`target`: the cluster, its location and project, and the node service account (None: GKE's default)."""
    account = target.get("service_account")
    node_config = {**pool.inputs["node_config"], **({"service_account": account} if account is not None else {})}
    return gcp.container.NodePool(
        name, project=target["project"], cluster=target["cluster"], location=target["location"],
        **{**pool.inputs, "node_config": node_config, **overrides},
        opts=pulumi.ResourceOptions(parent=parent, depends_on=depends_on, **pool.lifecycle.options()))
