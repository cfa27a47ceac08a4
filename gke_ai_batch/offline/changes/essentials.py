"""The inputs a reviewer approves on a resource `make diff` creates, or loses on one it deletes: a ClusterQueue's
quotas, a node pool's shape, size and capacity, a namespace's team and Pod Security level, a bucket's place.
One short line each, under the step; types not named here show none (their name says enough)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gke_ai_batch.model.pool_facts import capacity_of
from gke_ai_batch.vocabulary import BUCKET, CLUSTER, HELM_RELEASE, NODE_POOL, TEAM_LABEL, Capacity, kueue_type

Resource = dict[str, Any]


def essentials(r: Resource) -> list[str]:
    """The lines for this resource's type, from its inputs."""
    show = SHOWN.get(r["type"])
    return show(r.get("inputs") or {}) if show else []


def _quotas(inputs: dict[str, Any]) -> list[str]:
    """`quota FLAVOR: resource nominal (borrow limit)` per flavor, as Kueue reads them; quotas kept at 0 only
    to refuse a resource on a flavor are left out."""
    spec = inputs.get("spec") or {}
    lines = [f"cohort: {spec['cohortName']}"] if spec.get("cohortName") else []
    for group in spec.get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            quotas = [f"{q['name']} {q.get('nominalQuota')}" + (f" (borrow {q['borrowingLimit']})"
                                                                   if "borrowingLimit" in q else "")
                      for q in flavor.get("resources") or [] if str(q.get("nominalQuota")) != "0"]
            lines.append(f"quota {flavor['name']}: {', '.join(quotas)}")
    return lines


def _pool(inputs: dict[str, Any]) -> list[str]:
    """Machine, slice topology or GPUs, size, where the capacity comes from, and the zones."""
    node = inputs.get("nodeConfig") or {}
    shape = [node.get("machineType", "?")]
    if topology := (inputs.get("placementPolicy") or {}).get("tpuTopology"):
        shape.append(f"topology {topology}")
    shape += [f"{a.get('count')}x {a.get('type')}" for a in node.get("guestAccelerators") or []]
    zones = ",".join(inputs.get("nodeLocations") or []) or "the cluster's"
    return [f"shape: {', '.join(shape)}; {_size(inputs)}; {_capacity(inputs, node)}; zones {zones}"]


def _size(inputs: dict[str, Any]) -> str:
    scaling = inputs.get("autoscaling")
    if not scaling:
        return f"{inputs.get('nodeCount', inputs.get('initialNodeCount', '?'))} nodes"
    total = "total " if "totalMaxNodeCount" in scaling else ""
    low = scaling.get("minNodeCount", scaling.get("totalMinNodeCount", 0))
    return f"autoscaled {low}..{scaling.get('maxNodeCount', scaling.get('totalMaxNodeCount'))} nodes {total}".strip()


def _capacity(inputs: dict[str, Any], node: dict[str, Any]) -> str:
    """The pool's capacity mode in words, a reservation with its names."""
    capacity = capacity_of(inputs)
    if capacity == Capacity.RESERVATION:
        return f"reservation {','.join((node.get('reservationAffinity') or {}).get('values') or [])}"
    return "queued provisioning" if capacity == Capacity.QUEUED else capacity


def _namespace(inputs: dict[str, Any]) -> list[str]:
    labels = (inputs.get("metadata") or {}).get("labels") or {}
    if TEAM_LABEL not in labels:
        return []
    return [f"team {labels[TEAM_LABEL]}; Pod Security {labels.get('pod-security.kubernetes.io/enforce', 'none')}"]


def _bucket(inputs: dict[str, Any]) -> list[str]:
    team = (inputs.get("labels") or {}).get("team", "?")
    return [f"team {team}; {inputs.get('location', '?')}; versioning "
            f"{'on' if (inputs.get('versioning') or {}).get('enabled') else 'off'}"]


SHOWN: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    kueue_type("ClusterQueue"): _quotas,
    kueue_type("LocalQueue"): lambda i: [f"ClusterQueue {(i.get('spec') or {}).get('clusterQueue')}"],
    NODE_POOL: _pool,
    CLUSTER: lambda i: [f"{i.get('location')}; release channel {(i.get('releaseChannel') or {}).get('channel')}"],
    "kubernetes:core/v1:Namespace": _namespace,
    BUCKET: _bucket,
    HELM_RELEASE: lambda i: [f"chart {i.get('chart')} {i.get('version')} in {i.get('namespace')}"],
}
