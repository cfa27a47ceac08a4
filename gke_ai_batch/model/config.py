"""The stack config: one validated document per environment (key `gke-ai-batch:platform`).

Shape and single-field rules live here; rules that relate fields to the catalog or to each other
live in plan/pools.py and plan/scheduling.py, and GKE's own rules in model/gke_rules.py, each error naming
its config path.
"""
from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.vocabulary import ClusterMode

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
CONFIG_KEY = "platform"


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TpuCapacity(str, Enum):
    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVATION = "reservation"
    FLEX_START = "flex-start"


class GpuCapacity(str, Enum):
    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVATION = "reservation"
    QUEUED = "queued-provisioning"


class AuthorizedNetwork(Model):
    cidr: str
    name: str = ""


class MaintenanceExclusion(Model):
    name: str
    start: str  # RFC 3339
    end: str
    scope: Literal["NO_UPGRADES", "NO_MINOR_UPGRADES", "NO_MINOR_OR_NODE_UPGRADES"] = "NO_MINOR_OR_NODE_UPGRADES"


class MaintenanceWindow(Model):
    """A recurring window (RFC 5545 RRULE). The default, weekends from 00:00 to 08:00 UTC, leaves
    64 hours in the worst 32 days; GKE requires at least 48 (gke_rules, maintenance-availability)."""

    start: str = "2025-01-04T00:00:00Z"
    end: str = "2025-01-04T08:00:00Z"
    recurrence: str = "FREQ=WEEKLY;BYDAY=SA,SU"


class ClusterConfig(Model):
    # GKE API Cluster.name: up to 40 lowercase letters, digits and '-', starting with a letter.
    name: str = Field(pattern=r"^[a-z]([-a-z0-9]*[a-z0-9])?$", max_length=40)
    mode: ClusterMode = ClusterMode.STANDARD
    regional: bool = True
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = "REGULAR"
    version: str | None = None
    network: str = "default"
    subnetwork: str = "default"
    private_nodes: bool = False
    master_ipv4_cidr: str = "172.16.0.0/28"
    master_authorized_networks: list[AuthorizedNetwork] = []
    maintenance_window: MaintenanceWindow = MaintenanceWindow()
    maintenance_exclusions: list[MaintenanceExclusion] = []
    deletion_protection: bool = True
    security_group: str | None = None  # gke-security-groups@<domain>, for Google Groups for RBAC
    labels: dict[str, str] = {}


class SystemPoolConfig(Model):
    name: str = Field("system", pattern=DNS_LABEL)
    machine_type: str = "e2-standard-4"
    min_nodes: int = Field(1, ge=0)
    max_nodes: int = Field(3, ge=1)
    disk_size_gb: int = Field(100, ge=10)


class TpuPoolConfig(Model):
    name: str = Field(pattern=DNS_LABEL, max_length=36)
    generation: str
    topology: str
    machine_type: str | None = None
    slices: int = 1
    capacity: TpuCapacity = TpuCapacity.ON_DEMAND
    reservation: str | None = None
    zones: list[str] = []  # default: the platform's first zone
    max_run_duration: str | None = Field(None, pattern=r"^\d+s$")
    flavor: str | None = Field(None, pattern=DNS_LABEL)


class GpuPoolConfig(Model):
    name: str = Field(pattern=DNS_LABEL, max_length=36)
    gpu: str
    machine_type: str | None = None
    capacity: GpuCapacity = GpuCapacity.ON_DEMAND
    reservation: str | None = None
    nodes: int = Field(1, ge=0)  # fixed size (on-demand, spot, reservation)
    max_nodes: int | None = Field(None, ge=1)  # total autoscaling ceiling (queued provisioning)
    zones: list[str] = []
    driver_version: Literal["DEFAULT", "LATEST"] = "LATEST"
    gvnic: bool = True
    max_run_duration: str | None = Field(None, pattern=r"^\d+s$")
    flavor: str | None = Field(None, pattern=DNS_LABEL)


Quantity = int | str


class QuotaSpec(Model):
    nominal: Quantity
    borrowing_limit: Quantity | None = None
    lending_limit: Quantity | None = None

    @field_validator("nominal", "borrowing_limit", "lending_limit")
    @classmethod
    def _quantity(cls, v: Quantity | None) -> Quantity | None:
        if v is not None:
            parse_quantity(v)
        return v


def _quota_spec(v: object) -> object:
    return v if isinstance(v, dict) else {"nominal": v}


class BorrowWithinCohort(Model):
    policy: Literal["Never", "LowerPriority"] = "LowerPriority"
    max_priority_threshold: int | None = None


class Preemption(Model):
    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = "Any"
    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = "LowerPriority"
    borrow_within_cohort: BorrowWithinCohort | None = None


class QueueSpec(Model):
    """What a ClusterQueue holds: quota per flavor and resource, and how it shares and preempts."""

    cohort: str | None = None
    quotas: dict[str, dict[str, QuotaSpec]] = {}
    queueing_strategy: Literal["BestEffortFIFO", "StrictFIFO"] = "BestEffortFIFO"
    preemption: Preemption = Preemption()
    fair_sharing_weight: Quantity | None = None

    @field_validator("quotas", mode="before")
    @classmethod
    def _short_quotas(cls, v: object) -> object:
        if isinstance(v, dict):
            return {f: ({r: _quota_spec(q) for r, q in res.items()} if isinstance(res, dict) else res)
                    for f, res in v.items()}
        return v


class SharedQueue(QueueSpec):
    """A ClusterQueue several teams share (source page 002). `admit: all` selects every namespace."""

    name: str = Field(pattern=DNS_LABEL)
    admit: Literal["teams", "all"] = "teams"


NO_TEAM_DEFAULT_PRIORITY = (
    "a per-team default priority cannot take effect, so the key was removed: Kueue 0.19 takes a job's "
    "priority from its kueue.x-k8s.io/priority-class label (a WorkloadPriorityClass), else its pods' "
    "priorityClassName, else the global default PriorityClass, and applies no per-namespace default "
    "(WorkloadPriorityClassDefaulting is alpha and cluster-wide). Label each job with its priority, or "
    "mark one priority global_default: true; then drop default_priority")


class TeamConfig(Model):
    name: str = Field(pattern=DNS_LABEL, max_length=40)
    namespaces: list[str] = []  # default: [name]
    groups: list[str] = []  # Google groups granted edit in the team's namespaces
    default_priority: str | None = None  # refused: see NO_TEAM_DEFAULT_PRIORITY
    local_queue: str | None = Field(None, pattern=DNS_LABEL)  # default: <name>-queue
    cluster_queue: str | None = Field(None, pattern=DNS_LABEL)  # a shared queue, or this team's own
    queue: QueueSpec | None = None  # this team's own ClusterQueue

    @field_validator("default_priority")
    @classmethod
    def _no_default_priority(cls, v: str | None) -> str | None:
        if v is not None:
            raise ValueError(NO_TEAM_DEFAULT_PRIORITY)
        return v

    @field_validator("namespaces")
    @classmethod
    def _ns(cls, v: list[str]) -> list[str]:
        import re
        for ns in v:
            if not re.match(DNS_LABEL, ns) or len(ns) > 63:
                raise ValueError(f"namespace {ns!r} is not a DNS-1123 label")
        return v


class CohortConfig(Model):
    name: str = Field(pattern=DNS_LABEL)
    parent: str | None = None
    fair_sharing_weight: Quantity | None = None


class PriorityConfig(Model):
    name: str = Field(pattern=DNS_LABEL)
    value: int
    description: str = ""
    global_default: bool = False
    preemption_policy: Literal["PreemptLowerPriority", "Never"] = "PreemptLowerPriority"
    pod_priority_class: bool = True  # scheduling.k8s.io/v1 PriorityClass
    workload_priority_class: bool = True  # kueue.x-k8s.io WorkloadPriorityClass


NO_WAIT_FOR_PODS_READY_OFF = (
    "Kueue 0.19 always waits for pods to be ready (on by default in its v1beta2 Configuration; only the "
    "deprecated alpha gate DisableWaitForPodsReady turns it off): drop the key, or set it true")


class KueueConfig(Model):
    version: str = "0.19.2"
    chart: str = "oci://registry.k8s.io/kueue/charts/kueue"
    wait_for_pods_ready: bool | None = None  # always on in Kueue 0.19; false is refused
    wait_for_pods_ready_timeout: str = Field("10m", pattern=r"^\d+(s|m|h)$")
    # IgnoreUndeclared: quotas cover the accelerators a queue names; cpu and memory requests of its pods
    # do not block admission (BlockUndeclared, Kueue's default, refuses every pod asking for cpu).
    quota_check: Literal["IgnoreUndeclared", "BlockUndeclared"] = "IgnoreUndeclared"
    manage_jobs_without_queue_name: bool = True
    fair_sharing: bool = False
    default_flavor: str = Field("default-flavor", pattern=DNS_LABEL)
    dws_admission_check: str = Field("dws-prov", pattern=DNS_LABEL)  # names from source page 004
    dws_config: str = Field("dws-config", pattern=DNS_LABEL)
    # Requests and limits of the controller: fixed, so that adding a team never restarts Kueue; the
    # kueue-controller-size policy says when the number of queues outgrows them.
    controller_cpu: str = "500m"
    controller_memory: str = "512Mi"

    @field_validator("wait_for_pods_ready")
    @classmethod
    def _always_ready(cls, v: bool | None) -> bool | None:
        if v is False:
            raise ValueError(NO_WAIT_FOR_PODS_READY_OFF)
        return v

    @field_validator("controller_cpu", "controller_memory")
    @classmethod
    def _quantity(cls, v: str) -> str:
        parse_quantity(v)
        return v


class JobSetConfig(Model):
    version: str = "0.12.0"
    chart: str = "oci://registry.k8s.io/jobset/charts/jobset"
    install: Literal["auto", "always", "never"] = "auto"


class PlatformConfig(Model):
    project: str = Field(pattern=r"^[a-z][-a-z0-9]{4,28}[a-z0-9]$")
    region: str = Field(pattern=r"^[a-z]+-[a-z]+\d+$")
    zones: list[str] = []
    environment: str = Field(pattern=DNS_LABEL)
    production: bool = False
    owner: str = Field(pattern=r"^[a-z0-9_-]{1,63}$")
    cost_center: str | None = Field(None, pattern=r"^[a-z0-9_-]{1,63}$")
    labels: dict[str, str] = {}
    cluster: ClusterConfig
    system_pool: SystemPoolConfig = SystemPoolConfig()
    tpu_pools: list[TpuPoolConfig] = []
    gpu_pools: list[GpuPoolConfig] = []
    kueue: KueueConfig = KueueConfig()
    jobset: JobSetConfig = JobSetConfig()
    cohorts: list[CohortConfig] = []
    shared_queues: list[SharedQueue] = []
    priorities: list[PriorityConfig] = []
    teams: list[TeamConfig] = []

    def resource_labels(self) -> dict[str, str]:
        """Labels every GCP resource carries: environment, owner, cost-center, then the user's own."""
        labels = {"environment": self.environment, "owner": self.owner, "managed-by": "pulumi"}
        if self.cost_center:
            labels["cost-center"] = self.cost_center
        if self.production:
            labels["production"] = "true"
        return {**labels, **self.labels}
