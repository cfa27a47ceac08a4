"""Shared pieces of the node pool components: the parts of a NodePool every pool sets alike."""
from __future__ import annotations

from gkebatch.pools import PoolPlan

NODE_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]


def node_config(plan: PoolPlan, labels: dict[str, str], **extra) -> dict:
    """Shielded, Workload-Identity-only nodes carrying the platform's resource labels."""
    return {
        "machine_type": plan.machine_type,
        "oauth_scopes": NODE_SCOPES,
        "resource_labels": labels,
        "labels": dict(plan.custom_labels),
        "shielded_instance_config": {"enable_secure_boot": True, "enable_integrity_monitoring": True},
        "workload_metadata_config": {"mode": "GKE_METADATA"},
        **extra,
    }


def reservation_affinity(plan: PoolPlan) -> dict | None:
    if plan.capacity == "reservation":
        return {"consume_reservation_type": "SPECIFIC_RESERVATION",
                "key": "compute.googleapis.com/reservation-name", "values": [plan.reservation]}
    if plan.capacity in ("flex-start", "queued-provisioning"):
        return {"consume_reservation_type": "NO_RESERVATION"}
    return None
