"""Shared pieces of the node pool components: where a pool goes, and the node settings every
pool derives alike from its plan (security, labels, capacity mode)."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi

from gkebatch.pools import PoolPlan

NODE_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]


@dataclass
class PoolPlacement:
    """The cluster a pool joins and the labels its VMs carry."""

    project: str
    cluster: pulumi.Input[str]
    location: pulumi.Input[str]
    labels: dict[str, str]


def reservation_affinity(plan: PoolPlan) -> dict | None:
    if plan.capacity == "reservation":
        return {"consume_reservation_type": "SPECIFIC_RESERVATION",
                "key": "compute.googleapis.com/reservation-name", "values": [plan.reservation]}
    if plan.capacity in ("flex-start", "queued-provisioning"):
        return {"consume_reservation_type": "NO_RESERVATION"}
    return None


def node_config(plan: PoolPlan, labels: dict[str, str], **extra) -> dict:
    """Shielded, Workload-Identity-only nodes with the platform's resource labels, and the settings
    of the plan's capacity mode (spot, flex-start, reservation affinity, maximum run duration)."""
    config = {
        "machine_type": plan.machine_type,
        "oauth_scopes": NODE_SCOPES,
        "resource_labels": labels,
        "labels": dict(plan.custom_labels),
        "shielded_instance_config": {"enable_secure_boot": True, "enable_integrity_monitoring": True},
        "workload_metadata_config": {"mode": "GKE_METADATA"},
        **extra,
    }
    if plan.capacity == "spot":
        config["spot"] = True
    if plan.capacity == "flex-start":
        config["flex_start"] = True
    if plan.max_run_duration:
        config["max_run_duration"] = plan.max_run_duration
    affinity = reservation_affinity(plan)
    if affinity:
        config["reservation_affinity"] = affinity
    return config
