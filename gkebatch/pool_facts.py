"""What a declared GKE NodePool provides, read back from its camelCase inputs.

The plan summary and the policies both use this, so that a pool built from the stack config and
one built directly in Python are judged by the same facts the catalog holds."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from . import catalog
from .pools import FLEX_START_LABEL, SPOT_LABEL, PoolCapacity


@dataclass(frozen=True)
class PoolFacts(PoolCapacity):
    name: str
    kind: str  # tpu | gpu | cpu
    machine_type: str
    capacity: str  # on-demand | spot | reservation | flex-start | queued-provisioning
    zones: tuple[str, ...]
    accelerator: Optional[str]
    topology: Optional[str]
    per_node: int
    resource: Optional[str]
    fixed_nodes: Optional[int]  # per zone
    min_nodes: Optional[int]
    max_nodes: Optional[int]  # per zone, or total when total_autoscaling
    total_autoscaling: bool
    node_labels: dict

    @property
    def multi_host(self) -> bool:
        return self.kind == "tpu" and bool(self.topology) and catalog.topology_chips(self.topology) > self.per_node

    @property
    def nodes(self) -> int:
        zones = max(len(self.zones), 1)
        if self.fixed_nodes is not None:
            return self.fixed_nodes * zones
        return (self.max_nodes or 0) * (1 if self.total_autoscaling else zones)

    def sizing(self) -> str:
        if self.fixed_nodes is not None:
            return f"{self.fixed_nodes} node(s)" + (f" x {len(self.zones)} zones" if len(self.zones) > 1 else "")
        scope = "total" if self.total_autoscaling else "per zone"
        return f"autoscale {self.min_nodes or 0}..{self.max_nodes} ({scope})"


def capacity_of(props: Mapping) -> str:
    nc = props.get("nodeConfig") or {}
    if (props.get("queuedProvisioning") or {}).get("enabled"):
        return "queued-provisioning"
    if nc.get("flexStart"):
        return "flex-start"
    if nc.get("spot") or nc.get("preemptible"):
        return "spot"
    if (nc.get("reservationAffinity") or {}).get("consumeReservationType") == "SPECIFIC_RESERVATION":
        return "reservation"
    return "on-demand"


def pool_facts(props: Mapping) -> PoolFacts:
    nc = props.get("nodeConfig") or {}
    machine = nc.get("machineType") or ""
    auto = props.get("autoscaling") or {}
    total = "totalMaxNodeCount" in auto
    capacity = capacity_of(props)
    labels = dict(nc.get("labels") or {})
    if capacity == "spot":
        labels[SPOT_LABEL] = "true"
    elif capacity == "flex-start":
        labels[FLEX_START_LABEL] = "true"
    gen = catalog.tpu_machine_generation(machine)
    gpus = nc.get("guestAccelerators") or []
    if gen is not None:
        kind, accelerator, resource = "tpu", gen.accelerator, catalog.TPU_RESOURCE
        per_node = catalog.tpu_machine(machine).chips_per_vm
        topology = (props.get("placementPolicy") or {}).get("tpuTopology") or catalog.single_host_topology(machine)
        labels.update({catalog.TPU_ACCELERATOR_LABEL: accelerator, catalog.TPU_TOPOLOGY_LABEL: topology})
    elif gpus:
        kind, accelerator, resource = "gpu", gpus[0].get("type"), catalog.GPU_RESOURCE
        per_node, topology = int(gpus[0].get("count") or 0), None
        labels[catalog.GPU_ACCELERATOR_LABEL] = accelerator
    else:
        kind, accelerator, resource, per_node, topology = "cpu", None, None, 0, None
    fixed = props.get("nodeCount")
    return PoolFacts(
        name=props.get("name", ""), kind=kind, machine_type=machine, capacity=capacity,
        zones=tuple(props.get("nodeLocations") or ()), accelerator=accelerator, topology=topology,
        per_node=per_node, resource=resource, fixed_nodes=None if auto else fixed,
        min_nodes=auto.get("totalMinNodeCount" if total else "minNodeCount"),
        max_nodes=auto.get("totalMaxNodeCount" if total else "maxNodeCount"),
        total_autoscaling=total, node_labels=labels)
