"""Plain argument types of the public components, shared by several of them. They mirror the stack
config model (gke_ai_batch.model.config) field for field, so a component used on its own is
validated by the same model with the same errors; tests/test_components.py keeps them in step.

No `from __future__ import annotations` here: Pulumi's component analyzer reads these annotations
at run time to build the package schema for other languages."""
from typing import NotRequired, TypedDict

import pulumi


class NodePoolTarget(TypedDict):
    """Where a node pool goes and what it is checked against."""

    project: str
    """The Google Cloud project of the cluster."""
    region: str
    """The cluster's region: a pool's zones must be in it."""
    cluster: pulumi.Input[str]
    """The cluster the pool joins: GkeCluster's `name` output (so the pool waits for the cluster), or a name."""
    location: pulumi.Input[str]
    """The cluster's location: GkeCluster's `location` output."""
    zones: NotRequired[list[str]]
    """The pool's zones (default for TPU pools: none, so give one; queued-provisioning GPU pools span all)."""
    cluster_version: NotRequired[str]
    """The cluster's pinned GKE version, if any: checked against the version each capacity mode needs."""
    labels: NotRequired[dict[str, str]]
    """Resource labels of the pool's VMs (cost reports; the policy pack requires environment and owner)."""
    service_account: NotRequired[pulumi.Input[str]]
    """The nodes' IAM service account: GkeCluster's `node_service_account` output (default: GKE's, the
    Compute Engine default account, which production refuses)."""


class TpuShape(TypedDict):
    """A TPU slice shape and where its capacity comes from (stack config: one entry of tpu_pools)."""

    generation: str
    """TPU generation: v4, v5e, v5p, v6e or tpu7x."""
    topology: str
    """Slice topology, e.g. 4x4 (v5e, v6e) or 2x2x4 (v4, v5p, tpu7x)."""
    slices: NotRequired[int]
    """Number of slices of this shape, one node pool each (default 1)."""
    machine_type: NotRequired[str]
    """Machine type, when the generation has several for the topology."""
    capacity: NotRequired[str]
    """on-demand (default), spot, reservation or flex-start."""
    reservation: NotRequired[str]
    """The reservation to consume (capacity reservation): NAME, projects/P/reservations/NAME or a block of one."""
    max_run_duration: NotRequired[str]
    """Most a node may run, in seconds with an s (e.g. 604800s)."""
    flavor: NotRequired[str]
    """The Kueue ResourceFlavor name (default: the pool's name)."""


class TpuPoolSpec(TpuShape):
    """A named TPU pool, as the KueueLayer derives flavors from it."""

    name: str
    """The pool's name (its slices' node pools are <name>-0, <name>-1, ...)."""
    zones: NotRequired[list[str]]
    """The pool's zone (one for a multi-host slice)."""


class GpuShape(TypedDict):
    """A GPU pool shape and where its capacity comes from (stack config: one entry of gpu_pools)."""

    gpu: str
    """GKE's accelerator name, e.g. nvidia-h100-80gb or nvidia-l4."""
    machine_type: NotRequired[str]
    """Machine type, when the GPU comes on several."""
    capacity: NotRequired[str]
    """on-demand (default), spot, reservation or queued-provisioning."""
    reservation: NotRequired[str]
    """The reservation to consume (capacity reservation)."""
    nodes: NotRequired[int]
    """Fixed size per zone (on-demand, spot, reservation; default 1)."""
    max_nodes: NotRequired[int]
    """Total autoscaling ceiling (queued provisioning)."""
    driver_version: NotRequired[str]
    """GPU driver GKE installs: LATEST (default) or DEFAULT."""
    gvnic: NotRequired[bool]
    """Google Virtual NIC (default on)."""
    max_run_duration: NotRequired[str]
    """Most a node may run, in seconds with an s."""
    flavor: NotRequired[str]
    """The Kueue ResourceFlavor name (default: the pool's name)."""


class GpuPoolSpec(GpuShape):
    """A named GPU pool, as the KueueLayer derives flavors from it."""

    name: str
    """The pool's name."""
    zones: NotRequired[list[str]]
    """The pool's zones."""
