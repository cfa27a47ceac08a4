"""The compute class blocks of the stack config: GKE custom compute classes (`ComputeClass`,
cloud.google.com/v1), each one accelerator shape and an ordered list of ways to get it, and the cluster's
node auto-provisioning that creates their node pools (docs/compute-classes.md)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from gke_ai_batch.model.catalog import GPU_TYPES, TPU_GENERATIONS
from gke_ai_batch.model.field_rules import DNS_LABEL, SECONDS, Model, refused_by, text, unknown_gpu

WAYS = ("reservation", "flex_start", "spot", "on_demand")  # a priority's ways to get nodes, one each


class ClassTpu(Model):
    generation: str = Field(json_schema_extra={"enum": list(TPU_GENERATIONS)})
    """TPU generation, from the catalog."""
    topology: str
    """Slice topology such as 2x4; the catalog lists each generation's shapes."""


class ClassGpu(Model):
    type: Annotated[str, AfterValidator(refused_by(unknown_gpu))] = Field(json_schema_extra={"enum": list(GPU_TYPES)})
    """GKE's GPU name, from the catalog."""
    count: int | None = Field(None, ge=1)
    """GPUs on each node; unset: the catalog's count for the machine type."""
    driver_version: Literal["default", "latest"] = "latest"
    """The NVIDIA driver GKE installs on the nodes it creates (ComputeClass gpu.driverVersion)."""


class FlexStart(Model):
    max_run_duration: str = text(SECONDS)
    """How long a flex-start node may run before GKE reclaims it, whole seconds such as 604800s (at most 7
    days, as flex-start)."""


class ClassPriority(Model):
    """One way to get the class's nodes: exactly one of reservation, flex_start, spot or on_demand."""

    reservation: str | None = None
    """A specific reservation: NAME (this project), projects/OWNER/reservations/NAME (shared), or a block
    of one (NAME/reservationBlocks/BLOCK[/reservationSubBlocks/SUB_BLOCK])."""
    reserved_nodes: int | None = Field(None, ge=1)
    """With reservation: how many of the class's nodes the reservation holds. The capacity the class
    guarantees is this, and only this (the quota policies judge the teams' quotas against it)."""
    flex_start: FlexStart | None = None
    """Flex-start VMs (Dynamic Workload Scheduler) for a bounded run."""
    spot: Literal[True] | None = None
    """Spot VMs, which GKE may reclaim at any time."""
    on_demand: Literal[True] | None = None
    """On-demand VMs, when Compute Engine has them."""
    zones: list[str] = []
    """Zones for this way; unset: the class's zones."""

    @model_validator(mode="after")
    def _one_way(self) -> ClassPriority:
        ways = [w for w in WAYS if getattr(self, w) is not None]
        if len(ways) != 1:
            got = f"{' and '.join(ways)}: two ways" if ways else "no way"
            raise ValueError(f"{got}; a priority is exactly one of {', '.join(WAYS)} (list another priority "
                             "for the next way)")
        if (self.reserved_nodes is None) != (self.reservation is None):
            raise ValueError("reservation and reserved_nodes go together: the reservation's name, and how many "
                             "of the class's nodes it holds")
        return self

    @property
    def way(self) -> str:
        return next(w for w in WAYS if getattr(self, w) is not None)


class ComputeClassConfig(Model):
    """A GKE custom compute class: nodes of one accelerator shape, got the first way that works."""

    name: str = text(DNS_LABEL, max_length=63)
    """The ComputeClass's name; the Kueue flavor of the same name selects its nodes, and quotas name it."""
    tpu: ClassTpu | None = None
    """TPU nodes of one generation and topology (single-host, or one node of a multi-host slice)."""
    gpu: ClassGpu | None = None
    """GPU nodes of one type."""
    machine_type: str | None = None
    """A machine type of the accelerator; unset: the catalog's (the -8t machine for single-host TPU shapes)."""
    priorities: list[ClassPriority] = Field(min_length=1)
    """The ways to get the nodes, most preferred first; GKE tries them in order."""
    max_nodes: int = Field(ge=1)
    """The most nodes the class may have at once: what the quota model counts as its capacity, and what
    the cluster's auto-provisioning limits must leave room for."""
    when_unsatisfiable: Literal["DoNotScaleUp", "ScaleUpAnyway"] = "DoNotScaleUp"
    """When no priority can be had: DoNotScaleUp leaves the pods pending; ScaleUpAnyway lets GKE create
    nodes outside the list, which would not be this shape."""
    active_migration: bool = True
    """Move the class's workloads back to a more preferred priority's nodes when they can be had again."""
    zones: list[str] = []
    """Zones GKE may create the class's nodes in; unset: the platform's zones."""

    @model_validator(mode="after")
    def _one_accelerator(self) -> ComputeClassConfig:
        if (self.tpu is None) == (self.gpu is None):
            got = "both tpu and gpu" if self.tpu else "no accelerator"
            raise ValueError(f"{got}: a compute class is one accelerator shape, tpu: {{generation, topology}} or "
                             "gpu: {type, count}")
        return self


class AutoProvisioning(Model):
    """Node auto-provisioning (GKE's cluster_autoscaling): the cluster-wide limits under which GKE creates
    node pools for the compute classes, and where."""

    enabled: bool = True
    """false: the compute classes create their node pools without cluster-level auto-provisioning (GKE
    1.33.3-gke.1136000 or later), and no cluster-wide limits apply."""
    limits: dict[str, int] = {}
    """The most of each resource the whole cluster may have, every pool counted: cpu (vCPUs), memory (GB)
    and accelerators by GKE's type (tpu-v6e-slice chips, nvidia-h200-141gb GPUs). Unset ones are derived:
    what the pools and classes reach at full size."""
    locations: list[str] = []
    """Zones GKE may create auto-provisioned pools in; unset: every zone a compute class names."""
