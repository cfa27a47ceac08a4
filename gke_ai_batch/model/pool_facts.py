"""What a declared GKE NodePool provides, read back from its camelCase inputs.

The plan summary and the policies both use this, so that a pool built from the stack config and
one built directly in Python are judged by the same facts the catalog holds."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

from gke_ai_batch import vocabulary
from gke_ai_batch.model import catalog
from gke_ai_batch.model.disks import scratch_bytes
from gke_ai_batch.model.machines import allocatable
from gke_ai_batch.model.words import plural
from gke_ai_batch.vocabulary import (
    FIXED_CAPACITY,
    FLEX_START_LABEL,
    QUEUED_TAINT,
    SPOT_LABEL,
    ZONE_LABEL,
    Capacity,
    PoolKind,
)


class _Sized(Protocol):
    """What PoolCapacity reads from the dataclass it is mixed into (for the type checker only)."""

    @property
    def nodes(self) -> int: ...
    @property
    def per_node(self) -> int: ...
    @property
    def capacity(self) -> str: ...
    @property
    def resource(self) -> str | None: ...
    @property
    def machine_type(self) -> str: ...
    @property
    def scratch_ssds(self) -> int: ...
    @property
    def accelerators(self) -> int: ...
    @property
    def zones(self) -> tuple[str, ...]: ...
    @property
    def zone_nodes(self) -> int: ...
    def provides(self) -> dict[str, Decimal]: ...


class PoolCapacity:
    """What a pool provides at full size, from its `nodes`, `per_node` and `capacity`."""

    @property
    def accelerators(self: _Sized) -> int:
        return self.nodes * self.per_node

    @property
    def fixed_capacity(self: _Sized) -> bool:
        """On-demand and reserved pools hold their accelerators; spot, flex-start and queued do not."""
        return self.capacity in FIXED_CAPACITY

    def provides(self: _Sized) -> dict[str, Decimal]:
        """What pods can ask for on the pool at full size: its accelerators, the cpu and memory GKE leaves
        allocatable on its nodes (where the machine type is known), and the scratch of local SSDs given to the pods
        as ephemeral storage (model.disks.scratch_bytes)."""
        out: dict[str, Decimal] = {self.resource: Decimal(self.accelerators)} if self.resource else {}
        for name, amount in (allocatable(self.machine_type) or {}).items():
            out[name] = amount * self.nodes
        if self.scratch_ssds:
            out["ephemeral-storage"] = scratch_bytes(self.scratch_ssds) * self.nodes
        return out

    def provides_in(self: _Sized, node_labels: Mapping[str, str]) -> dict[str, Decimal]:
        """What a flavor with these node labels can use of the pool: all of it, or with a zone label the
        nodes of one zone (a total autoscaling limit may put every node there)."""
        if ZONE_LABEL not in node_labels or len(self.zones) < 2:
            return self.provides()
        return {name: amount / self.nodes * self.zone_nodes for name, amount in self.provides().items()} \
            if self.nodes else {}



@dataclass(frozen=True)
class PoolFacts(PoolCapacity):
    name: str
    kind: PoolKind  # TPU, GPU or CPU: read back from a node pool, a system pool is a CPU pool
    machine_type: str
    capacity: Capacity
    zones: tuple[str, ...]
    accelerator: str | None
    topology: str | None
    per_node: int
    resource: str | None
    fixed_nodes: int | None  # per zone
    min_nodes: int | None
    max_nodes: int | None  # per zone, or total when total_autoscaling
    total_autoscaling: bool
    node_labels: dict[str, str]
    scratch_ssds: int = 0  # local SSDs given to the pods as ephemeral storage
    node_taints: tuple[dict[str, str], ...] = ()  # the pool's own taints (nodeConfig.taints), in Kubernetes' terms
    gpus: int = 0  # physical GPUs per node (per_node counts what they offer pods, shared or partitioned)

    @property
    def slice_vms(self) -> int:
        """The VMs of one of its TPU slices; 0 off TPUs."""
        return catalog.slice_vms(self.topology, self.per_node) if self.kind == PoolKind.TPU else 0

    @property
    def multi_host(self) -> bool:
        return self.slice_vms > 1

    @property
    def accelerator_taint(self) -> dict[str, str] | None:
        """The taint GKE puts on TPU and GPU nodes, keyed by the accelerator's resource name; None on CPU nodes."""
        if self.kind in (PoolKind.TPU, PoolKind.GPU) and self.resource:
            return {"key": self.resource, "value": "present", "effect": "NoSchedule"}
        return None

    @property
    def taints(self) -> tuple[dict[str, str], ...]:
        """Every taint its nodes carry: GKE's accelerator and queued-provisioning taints, then the pool's own."""
        gke = [t for t in (self.accelerator_taint,) if t] + ([dict(QUEUED_TAINT)]
                                                            if self.capacity == Capacity.QUEUED else [])
        return (*gke, *self.node_taints)

    @property
    def zone_nodes(self) -> int:
        """Most nodes one zone can have: its fixed size, or the autoscaling maximum (a total one may all be there)."""
        return self.fixed_nodes if self.fixed_nodes is not None else (self.max_nodes or 0)

    @property
    def nodes(self) -> int:
        zones = max(len(self.zones), 1)
        if self.fixed_nodes is not None:
            return self.fixed_nodes * zones
        return (self.max_nodes or 0) * (1 if self.total_autoscaling else zones)

    def selected_by(self, node_labels: Mapping[str, str]) -> bool:
        """Whether a flavor's nodeLabels select this pool's nodes: each label is on them, the zone
        label being on the nodes of that zone (a per-zone flavor selects part of a pool)."""
        return all(self.node_labels.get(k) == v or (k == ZONE_LABEL and v in self.zones)
                   for k, v in node_labels.items())

    def serves(self, flavor_spec: Mapping[str, Any]) -> bool:
        """Whether a ResourceFlavor (its spec) puts pods on this pool's nodes: the one matcher of the quota
        policies, the plan summary and `make admit`. Its node labels select the nodes (selected_by); a
        flavor tolerating the queued-provisioning taint serves exactly the queued pools; and a flavor
        with no node labels serves only pools without accelerators, since GKE taints TPU and GPU nodes and
        only pods that request the accelerator tolerate the taint (GKE adds the toleration to them)."""
        labels = flavor_spec.get("nodeLabels") or {}
        if (self.capacity == vocabulary.Capacity.QUEUED) != tolerates_queued(flavor_spec):
            return False
        return (bool(labels) or self.kind == PoolKind.CPU) and self.selected_by(labels)

    def sizing(self) -> str:
        if self.fixed_nodes is not None:
            return plural(self.fixed_nodes, "node") + (f" x {len(self.zones)} zones" if len(self.zones) > 1 else "")
        scope = "total" if self.total_autoscaling else "per zone"
        return f"autoscale {self.min_nodes or 0}..{self.max_nodes} ({scope})"


def tolerates_queued(flavor_spec: Mapping[str, Any]) -> bool:
    """A flavor for queued-provisioning nodes tolerates their taint."""
    return any(t.get("key") == QUEUED_TAINT["key"] for t in flavor_spec.get("tolerations") or [])


def capacity_of(props: Mapping[str, Any]) -> Capacity:
    """Queued provisioning before flex-start: its pools set flexStart too."""
    nc = props.get("nodeConfig") or {}
    if (props.get("queuedProvisioning") or {}).get("enabled"):
        return Capacity.QUEUED
    if nc.get("flexStart"):
        return Capacity.FLEX_START
    if nc.get("spot") or nc.get("preemptible"):
        return Capacity.SPOT
    if (nc.get("reservationAffinity") or {}).get("consumeReservationType") == "SPECIFIC_RESERVATION":
        return Capacity.RESERVATION
    return Capacity.ON_DEMAND


def gpu_devices(accelerator: Mapping[str, Any]) -> int:
    """The nvidia.com/gpu a node offers: its GPUs times what each counts as (catalog.devices_per_gpu)."""
    gpus = int(accelerator.get("count") or 0)
    g = catalog.GPU_TYPES.get(accelerator.get("type") or "")
    clients = int((accelerator.get("gpuSharingConfig") or {}).get("maxSharedClientsPerGpu") or 1)
    return gpus * (catalog.devices_per_gpu(g, accelerator.get("gpuPartitionSize"), clients) if g else clients)


# GKE's taint effect names (NodeTaint.Effect) in Kubernetes' words.
KUBERNETES_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}


def pool_facts(props: Mapping[str, Any], cluster_zones: Sequence[str] = ()) -> PoolFacts:
    """A pool without nodeLocations has its cluster's node zones (a regional cluster's pool spans them)."""
    nc = props.get("nodeConfig") or {}
    machine = nc.get("machineType") or ""
    auto = props.get("autoscaling") or {}
    total = "totalMaxNodeCount" in auto
    capacity = capacity_of(props)
    labels = dict(nc.get("labels") or {})
    if capacity == Capacity.SPOT:
        labels[SPOT_LABEL] = "true"
    elif capacity == Capacity.FLEX_START:
        labels[FLEX_START_LABEL] = "true"
    gen = catalog.tpu_machine_generation(machine)
    gpus = nc.get("guestAccelerators") or []
    if gen is not None:
        kind, accelerator, resource = PoolKind.TPU, gen.accelerator, vocabulary.TPU_RESOURCE
        tpu = catalog.tpu_machine(machine)
        assert tpu is not None  # tpu_machine_generation found this machine type
        per_node = tpu.chips_per_vm
        topology = (props.get("placementPolicy") or {}).get("tpuTopology") or catalog.single_host_topology(machine)
        labels.update({vocabulary.TPU_ACCELERATOR_LABEL: accelerator, vocabulary.TPU_TOPOLOGY_LABEL: topology})
    elif gpus:
        kind, accelerator, resource = PoolKind.GPU, gpus[0].get("type"), vocabulary.GPU_RESOURCE
        per_node, topology = gpu_devices(gpus[0]), None
        labels[vocabulary.GPU_ACCELERATOR_LABEL] = accelerator
    else:
        kind, accelerator, resource, per_node, topology = PoolKind.CPU, None, None, 0, None
    fixed = props.get("nodeCount")
    return PoolFacts(
        name=props.get("name", ""), kind=kind, machine_type=machine, capacity=capacity,
        zones=tuple(props.get("nodeLocations") or cluster_zones), accelerator=accelerator, topology=topology,
        per_node=per_node, resource=resource, fixed_nodes=None if auto else fixed,
        min_nodes=auto.get("totalMinNodeCount" if total else "minNodeCount"),
        max_nodes=auto.get("totalMaxNodeCount" if total else "maxNodeCount"),
        total_autoscaling=total, node_labels=labels,
        scratch_ssds=(nc.get("ephemeralStorageLocalSsdConfig") or {}).get("localSsdCount") or 0,
        node_taints=tuple({**t, "effect": KUBERNETES_EFFECTS.get(t.get("effect", ""), t.get("effect", ""))}
                          for t in nc.get("taints") or []),
        gpus=int(gpus[0].get("count") or 0) if gpus and gen is None else 0)
