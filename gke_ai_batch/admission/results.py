"""What the model answers: the flavors each pod set got, and Kueue's verdict with the physical warnings."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FlavorChoice:
    """The flavor one resource group got for a pod set, and whether it needs cohort quota."""

    flavor: str
    resources: tuple[str, ...]
    borrowing: bool


@dataclass(frozen=True)
class PodSetAssignment:
    name: str
    count: int
    flavors: tuple[FlavorChoice, ...]

    @property
    def borrowing(self) -> bool:
        return any(f.borrowing for f in self.flavors)


@dataclass(frozen=True)
class AdmissionResult:
    """Kueue's verdict (`reason` is None when it reserves quota) plus the physical `warnings`."""

    kind: str
    namespace: str
    name: str
    cluster_queue: str | None = None
    pod_sets: tuple[PodSetAssignment, ...] = ()
    checks: tuple[str, ...] = ()
    reason: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def quota_reserved(self) -> bool:
        return self.reason is None

    @property
    def admitted(self) -> bool:
        """Kueue reserves quota and nothing physical stops the pods afterwards."""
        return self.reason is None and not self.warnings

    @property
    def problems(self) -> list[str]:
        return ([self.reason] if self.reason else []) + list(self.warnings)


@dataclass(frozen=True)
class PodSet:
    """One podSet of the Workload Kueue builds from a Job or JobSet."""

    name: str
    count: int  # pods in the pod set
    replicas: int  # JobSet replicas of the replicated job (1 for a Job): slices, for TPUs
    spec: dict[str, Any]  # pod template spec
    per_pod: dict[str, int]  # resource -> amount per pod, Kueue units (cpu in millicores)
    annotations: dict[str, str] = field(default_factory=dict)  # the pod template's, where TAS requests live

    def total(self) -> dict[str, int]:
        return {r: v * self.count for r, v in self.per_pod.items()}

    @property
    def pods_per_replica(self) -> int:
        return self.count // self.replicas if self.replicas else 0


class AssignmentError(Exception):
    """A selector Kueue cannot evaluate: `failed to assign flavors to pod set ...`."""
