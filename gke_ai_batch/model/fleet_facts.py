"""What a fleet worker stack tells its manager: the stack output `fleetWorker`, read through a
pulumi.StackReference. It is another stack's word, so the manager validates it like config before it
plans anything from it; unknown keys are ignored, so that a worker on a newer release still reads."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

WORKER_OUTPUT = "fleetWorker"  # the worker stack's output the manager reads
KUBECONFIG_OUTPUT = "kubeconfig"  # the worker stack's admin kubeconfig (secret), for the manager's deployments


class _Facts(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class FlavorFacts(_Facts):
    """A worker's ResourceFlavor: what selects its nodes, and what its node pools hold at full size."""

    node_labels: dict[str, str]
    tolerations: list[dict[str, str]] = []
    resources: dict[str, str]  # resource -> what the flavor's pools hold at full size (a quantity)
    guaranteed: dict[str, str] = {}  # the part of it on on-demand or reserved pools
    capacity: str  # the pools' capacity mode (vocabulary.Capacity)
    accelerator: str | None = None  # google.com/tpu or nvidia.com/gpu
    host_share: dict[str, str] | None = None  # cpu and memory per accelerator unit
    admission_check: str | None = None  # the worker's ProvisioningRequest AdmissionCheck, for queued flavors


class WorkerFacts(_Facts):
    """A fleet worker: its cluster, its Kueue, the job frameworks it runs, and its flavors."""

    role: Literal["worker"]
    cluster: str
    project: str
    region: str
    kueue_version: str
    frameworks: list[str]
    server: str  # the control plane's address, as the worker's own kubeconfig reaches it
    ca_certificate: str  # base64, as GKE gives it
    cluster_identifier: str | None = None  # the worker's provider identity (model.replacement); older: none
    flavors: dict[str, FlavorFacts]
