"""Node objects standing for the nodes the stack's pools have at rest, so that the sandbox's Kueue and scheduler
see the capacity `make admit` judges on: Kueue's Topology Aware Scheduling counts Ready nodes carrying every level's
label (pkg/cache/scheduler/tas_flavor_snapshot.go at v0.19.2), and JobSet's exclusive placement gives follower
pods the node pool of their leader's node (pkg/webhooks/pod_mutating_webhook.go at v0.12.0), which needs a
scheduled leader. No kubelet runs on them: a pod the scheduler binds stays Pending, and the controller manager
runs without its node-lifecycle controller, which would mark nodes without a kubelet's heartbeat unreachable.

A pool has the nodes `make admit` counts (admission.topology.existing_nodes: its fixed size, or its autoscaling
minimum), each with GKE's labels and taints as the pool plan gives them, allocatable cpu and memory as GKE leaves
them (model.machines.allocatable), and its accelerators. Topology labels: one block and sub-block per pool (the
upper bound `make admit` assumes), one host per node, partitions of the sizes model.topologies.DOMAIN_NODES gives.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from gke_ai_batch.admission.topology import existing_nodes
from gke_ai_batch.model.disks import scratch_bytes
from gke_ai_batch.model.machines import allocatable
from gke_ai_batch.model.pool_facts import PoolFacts, pool_facts
from gke_ai_batch.model.topologies import DOMAIN_NODES, HOST, HOSTNAME, SHORT_NAMES
from gke_ai_batch.plan.gke_inputs import engine_form, node_pool_inputs
from gke_ai_batch.plan.pools import PoolPlan
from gke_ai_batch.vocabulary import NODE_POOL_LABEL, ZONE_LABEL

NOT_READY_TAINT = "node.kubernetes.io/not-ready"  # the API server's TaintNodesByCondition puts it on a new node
REGION_LABEL = "topology.kubernetes.io/region"
MAX_PODS = "110"  # GKE Standard's default maximum pods per node
BOOT_DISK_GB = 100  # GKE's default boot disk size, the node's ephemeral storage without local SSDs


def node_manifests(pools: Iterable[PoolPlan]) -> list[dict[str, Any]]:
    return [node for plan in pools for node in _nodes(plan)]


def _nodes(plan: PoolPlan) -> Iterator[dict[str, Any]]:
    facts = pool_facts(engine_form(node_pool_inputs(plan, {})), plan.zones)
    count = existing_nodes(facts)
    zones = facts.zones or ("",)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for i in range(count):
        name = f"gke-{plan.name}-{i}"
        zone = zones[i % len(zones)]
        labels = {**facts.node_labels, **_topology_labels(plan, name, i), "kubernetes.io/hostname": name,
                  NODE_POOL_LABEL: plan.name, "node.kubernetes.io/instance-type": plan.machine_type,
                  ZONE_LABEL: zone, REGION_LABEL: zone.rsplit("-", 1)[0]}
        yield {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
               "spec": {"taints": [dict(t) for t in facts.taints]},
               "status": {"capacity": _resources(plan, facts), "allocatable": _resources(plan, facts),
                          "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                          "lastHeartbeatTime": now, "lastTransitionTime": now}]}}


def _topology_labels(plan: PoolPlan, name: str, index: int) -> dict[str, str]:
    out = {}
    for level in plan.topology_levels:
        if level in (HOST, HOSTNAME):
            out[level] = name
        elif level in DOMAIN_NODES:
            out[level] = f"{plan.name}-{SHORT_NAMES.get(level, 'domain')}-{index // DOMAIN_NODES[level]}"
        else:
            out[level] = f"{plan.name}-{SHORT_NAMES.get(level, 'domain')}"
    return out


def _resources(plan: PoolPlan, facts: PoolFacts) -> dict[str, str]:
    node = allocatable(plan.machine_type) or {}
    out = {"pods": MAX_PODS, **{name: str(int(amount)) for name, amount in node.items()}}
    if facts.resource and facts.per_node:
        out[facts.resource] = str(facts.per_node)
    disk = scratch_bytes(facts.scratch_ssds) if facts.scratch_ssds else (plan.disk_size_gb or BOOT_DISK_GB) * 2**30
    out["ephemeral-storage"] = str(int(disk))
    return out
