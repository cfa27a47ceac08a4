"""The stack config: one validated document per environment (key `gke-ai-batch:platform`), the Kueue and
JobSet settings and what holds the blocks together; the blocks are in cluster_config.py, pool_config.py and
team_config.py, built from field_rules.py.

Shape and single-field rules live with their fields. Rules that relate a field to others or to the catalog are checked
where the value they judge is derived (the plan/ module that derives it: pools, scheduling, network,
storage, tenancy, identity and the rest), and GKE's own rules in model/gke_rules.py, run over the exact
inputs; every error names its config path.

Every field's docstring is its description in the JSON Schema (`make schema`) and in the config
reference (docs/config-reference.md), so they are written for the people who write stack files.
"""
from __future__ import annotations

from functools import partial
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    ValidationInfo,
    field_validator,
)

from gke_ai_batch.model.cluster_config import ClusterConfig, NetworkConfig
from gke_ai_batch.model.compute_class_config import ComputeClassConfig
from gke_ai_batch.model.cost_config import CostConfig
from gke_ai_batch.model.field_rules import (
    DNS_LABEL,
    DURATION,
    LABEL_VALUE,
    PROJECT_ID,
    REGION,
    Model,
    Quantity,
    duration_seconds,
    refused_by,
    text,
)
from gke_ai_batch.model.fleet_config import FleetConfig
from gke_ai_batch.model.monitoring_config import MonitoringConfig
from gke_ai_batch.model.pool_config import (
    AutopilotFlavorConfig,
    CpuPoolConfig,
    GpuPoolConfig,
    SystemPoolConfig,
    TpuPoolConfig,
)
from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.model.releases import (
    JOBSET_CHART,
    JOBSET_RELEASES,
    KUEUE_CHART,
    KUEUE_RELEASES,
    gate_refusal,
    unknown_chart,
    unknown_version,
)
from gke_ai_batch.model.team_config import Acknowledgement, SharedQueue, TeamConfig
from gke_ai_batch.vocabulary import COST_CENTER_LABEL

CONFIG_KEY = "platform"
UNADMITTED_GATE = "UnadmittedWorkloadsObservability"  # Kueue's feature gate (pkg/features at v0.19.2)








class CohortConfig(Model):
    name: str = text(DNS_LABEL, max_length=63)
    """The cohort's name; queues name it in `cohort`."""
    parent: str | None = None
    """A parent cohort, for hierarchical cohorts."""
    fair_sharing_weight: Quantity | None = None
    """The cohort's weight under fair sharing."""


class PriorityConfig(Model):
    name: str = text(DNS_LABEL, max_length=63)
    """The priority class's name; jobs name it in the kueue.x-k8s.io/priority-class label."""
    value: int
    """Higher runs first and may preempt lower; at most 999,999,999 (higher values are Kubernetes' system classes)."""
    description: str = ""
    """What the priority is for."""
    global_default: bool = False
    """The priority of pods and workloads that name none; at most one priority."""
    preemption_policy: Literal["PreemptLowerPriority", "Never"] = "PreemptLowerPriority"
    """Whether pods of this priority preempt lower-priority pods."""
    pod_priority_class: bool = True
    """Declare a scheduling.k8s.io/v1 PriorityClass."""
    workload_priority_class: bool = True
    """Declare a Kueue WorkloadPriorityClass."""


NO_WAIT_FOR_PODS_READY_OFF = (
    "Kueue 0.19 always waits for pods to be ready (on by default in its v1beta2 Configuration; only the "
    "deprecated alpha gate DisableWaitForPodsReady turns it off): drop the key, or set it true")


NO_UNMETERED_RESOURCES = (
    "IgnoreUndeclared admits a pod's requests for resources its ClusterQueue does not cover, so a team with "
    "TPU quota could take GPUs and any team could run cpu work outside every quota: drop the key (the "
    "platform covers cpu and memory in every queue, derived from the accelerator quotas)")


class AdmissionFairSharingConfig(Model):
    """Kueue's `admissionFairSharing` (apis/config/v1beta2/configuration_types.go at v0.19.2): how the usage
    that orders a ClusterQueue's LocalQueues is measured. Gate AdmissionFairSharing: beta and on since 0.15."""

    usage_half_life_time: str = text(DURATION, "168h")
    """How long until a LocalQueue's past usage counts half: a week (Kueue's documented example), so
    yesterday's sweep still weighs today and last month's no longer does. 0s forgets usage at once."""
    usage_sampling_interval: str = text(DURATION, "5m")
    """How often Kueue adds up each LocalQueue's usage: Kueue's default, 5m. Above 0."""
    resource_weights: dict[str, float] = {}
    """Per resource, how much a unit counts, over the platform's defaults (google.com/tpu and nvidia.com/gpu
    1; cpu, memory and ephemeral-storage 0): Kueue adds raw quantities (memory in bytes, CalculateUsage in
    pkg/util/admissionfairsharing), so without them a job's memory would outweigh every chip it holds."""

    @field_validator("usage_sampling_interval")
    @classmethod
    def _sampling_above_zero(cls, v: str) -> str:
        if duration_seconds(v) == 0:
            raise ValueError(f"{v!r} must be above 0 (Kueue's configuration validation refuses it)")
        return v

    @field_validator("resource_weights")
    @classmethod
    def _weights(cls, v: dict[str, float]) -> dict[str, float]:
        for name, weight in v.items():
            if weight < 0:
                raise ValueError(f"the weight of {name} is {weight}; allowed: 0 (not counted) or more "
                                 "(Kueue's configuration validation refuses a negative weight)")
        return v


MIN_RETENTION_SECONDS = 3600


class RetentionConfig(Model):
    """Kueue's `objectRetentionPolicies.workloads` (GA and locked on since 0.17): when Kueue deletes a
    Workload that is over. Unset, Kueue keeps every Workload forever: its memory and etcd grow with every
    job, and finished Workloads fill the team's Workload object quota (object_quotas.workloads)."""

    after_finished: str = text(DURATION, "168h")
    """How long a finished Workload stays (its Finished condition says how it ended): a week, long
    enough to read after a weekend. Its Job or JobSet stays; only the Workload goes."""
    after_deactivated_by_kueue: str = text(DURATION, "168h")
    """How long a Workload Kueue deactivated (its time limit ran out, or it was requeued too often) stays
    before Kueue deletes it. Deleting it deletes its Job or JobSet too (Kueue's API docs: it "may cascade to
    objects not created by Kueue"), so its owner gets the same week to read why and reactivate it."""

    @field_validator("after_finished", "after_deactivated_by_kueue")
    @classmethod
    def _long_enough(cls, v: str) -> str:
        if duration_seconds(v) < MIN_RETENTION_SECONDS:
            raise ValueError(f"{v!r} is shorter than 1h: Kueue deletes the Workload (and with a deactivated one, "
                             "its Job or JobSet) before its owner can read how it ended; give 1h or more "
                             "(Kueue's configuration has no sync period to bound it; the platform's floor)")
        return v


class KueueConfig(Model):
    """The Kueue install and its controller Configuration."""

    version: Annotated[str, AfterValidator(refused_by(partial(unknown_version, "Kueue")))] = Field(
        "0.19.2", json_schema_extra={"enum": list(KUEUE_RELEASES)})
    """The Kueue release (Helm chart version): one of the releases gke_ai_batch/model/releases.py lists.
    `make diff` shows an upgrade's steps and refuses a downgrade."""
    chart: Annotated[str, AfterValidator(refused_by(partial(unknown_chart, "Kueue")))] = KUEUE_CHART
    """The Helm chart: registry.k8s.io's, or a mirror of it (an oci:// reference ending in /kueue)."""
    wait_for_pods_ready: bool | None = None
    """Always on in Kueue 0.19; false is refused."""
    wait_for_pods_ready_timeout: str = text(DURATION, "30m")
    """How long an admitted workload may take to get all its pods ready before Kueue evicts it: Kueue's
    default, 30m (apis/config/v1beta2/defaults.go). A slice scaling from zero needs its VMs created and
    its image pulled within it; the platform has no published figure to derive it from."""
    requeue_limit: int = Field(5, ge=1)
    """How many times Kueue requeues a workload whose pods were not ready in time before it deactivates
    it (backoffLimitCount; Kueue's default requeues forever): with its backoff of 60 s doubling, five
    requeues wait about half an hour in all. Its owner reactivates it with spec.active: true."""
    quota_check: Literal["IgnoreUndeclared", "BlockUndeclared"] = "BlockUndeclared"
    """BlockUndeclared (Kueue's default): a pod asking for a resource its ClusterQueue does not cover is
    not admitted. IgnoreUndeclared is refused: it let any team run unmetered on any node."""
    manage_jobs_without_queue_name: bool = True
    """Gate jobs and pods in team namespaces that name no queue, so nothing runs outside quota (false is refused
    where teams are declared: such jobs would start at once, unmanaged)."""
    fair_sharing: bool = False
    """Kueue's fair sharing of borrowed quota within cohorts."""
    default_flavor: str = text(DNS_LABEL, "default-flavor", max_length=63)
    """The flavor for cpu and memory quotas on the system pool."""
    dws_admission_check: str = text(DNS_LABEL, "dws-prov", max_length=63)
    """The AdmissionCheck's name for queued provisioning (names from source page 004)."""
    dws_config: str = text(DNS_LABEL, "dws-config", max_length=63)
    """The ProvisioningRequestConfig's name."""
    controller_cpu: str = "500m"
    """The controller's cpu request and limit: fixed, so adding a team never restarts Kueue (the
    kueue-controller-size policy says when the number of queues outgrows it)."""
    controller_memory: str | None = None
    """The controller's memory request and limit; unset: 512Mi per 7,000 Workloads the teams' object
    quotas allow (kueue PR #566 measured 512Mi for about 7,000 jobs)."""
    admission_fair_sharing: AdmissionFairSharingConfig = AdmissionFairSharingConfig()
    """How usage is measured for queues with admission fair sharing (teams[].queue.admission_fair_sharing)."""
    retention: RetentionConfig = RetentionConfig()
    """When Kueue deletes finished and deactivated Workloads."""
    unadmitted_workloads_observability: bool = Field(True, validate_default=True)
    """Kueue's UnadmittedWorkloadsObservability gate (beta, off by default in 0.19): pending Workloads'
    QuotaReserved/Admitted conditions carry tiered reasons and Kueue exports per-reason metrics, so a
    team sees why its job waits (docs/policies.md has the queries). false keeps Kueue's default."""
    v1beta1_migrated: bool = False
    """Set once every Kueue object is stored at v1beta2 (Kueue's hack/migrate-to-v1beta2.sh has run and every
    Kueue CRD's status.storedVersions is [v1beta2]): `make diff` refuses a move to a Kueue release that no
    longer serves v1beta1 without it, and lists the check as the step before the chart."""

    @field_validator("unadmitted_workloads_observability")
    @classmethod
    def _gate_known(cls, v: bool, info: ValidationInfo) -> bool:
        version = info.data.get("version")
        known = isinstance(version, str) and unknown_version("Kueue", version) is None
        refusal = gate_refusal(str(version), UNADMITTED_GATE, v) if v and known else None
        if refusal:
            raise ValueError(refusal)
        return v

    @field_validator("wait_for_pods_ready")
    @classmethod
    def _always_ready(cls, v: bool | None) -> bool | None:
        if v is False:
            raise ValueError(NO_WAIT_FOR_PODS_READY_OFF)
        return v

    @field_validator("quota_check")
    @classmethod
    def _metered(cls, v: str) -> str:
        if v == "IgnoreUndeclared":
            raise ValueError(NO_UNMETERED_RESOURCES)
        return v

    @field_validator("controller_cpu", "controller_memory")
    @classmethod
    def _quantity(cls, v: str | None) -> str | None:
        if v is not None:
            parse_quantity(v)
        return v


class JobSetConfig(Model):
    version: Annotated[str, AfterValidator(refused_by(partial(unknown_version, "JobSet")))] = Field(
        "0.12.0", json_schema_extra={"enum": list(JOBSET_RELEASES)})
    """The JobSet release (Helm chart version): one of the releases gke_ai_batch/model/releases.py lists."""
    chart: Annotated[str, AfterValidator(refused_by(partial(unknown_chart, "JobSet")))] = JOBSET_CHART
    """The Helm chart: registry.k8s.io's, or a mirror of it (an oci:// reference ending in /jobset)."""
    install: Literal["auto", "always", "never"] = "auto"
    """auto: install JobSet when a pool is multi-host (multislice needs it)."""


class PlatformConfig(Model):
    """One environment: its cluster, node pools, Kueue and JobSet, cohorts, priorities and teams."""

    project: str = text(PROJECT_ID)
    """The Google Cloud project ID."""
    region: str = text(REGION)
    """The region of the cluster and its pools."""
    zones: list[str] = []
    """Zones of the region for nodes; accelerator pools default to the first."""
    environment: str = text(DNS_LABEL, max_length=63)
    """The environment's name (dev, prod...), a label on every resource."""
    production: bool = False
    """A production environment (so are ones named prod or production): the policy pack then requires
    private nodes, authorized networks for the control plane, and deletion protection."""
    owner: str = text(LABEL_VALUE)
    """The owning team, a label on every resource."""
    cost_center: str | None = text(LABEL_VALUE, None)
    """A cost-center label on every resource."""
    labels: dict[str, str] = {}
    """Extra labels on every resource."""
    network: NetworkConfig | None = None
    """The cluster's VPC network, created or adopted; unset: cluster.network and cluster.subnetwork."""
    cluster: ClusterConfig
    """The GKE cluster."""
    system_pool: SystemPoolConfig = SystemPoolConfig()
    """The CPU pool for the controllers."""
    tpu_pools: list[TpuPoolConfig] = []
    """TPU slice pools."""
    gpu_pools: list[GpuPoolConfig] = []
    """GPU node pools."""
    cpu_pools: list[CpuPoolConfig] = []
    """CPU worker pools, each with its own flavor for cpu and memory quotas."""
    autopilot_flavors: list[AutopilotFlavorConfig] = []
    """Autopilot only: accelerator flavors, by the node labels Autopilot provisions nodes from."""
    compute_classes: list[ComputeClassConfig] = []
    """GKE custom compute classes: one accelerator shape each, got the first of its ways that works
    (reservation, flex-start, spot, on-demand); each is a Kueue flavor of its name."""
    kueue: KueueConfig = KueueConfig()
    """The Kueue install."""
    jobset: JobSetConfig = JobSetConfig()
    """The JobSet install."""
    cohorts: list[CohortConfig] = []
    """Kueue cohorts: groups of queues that lend and borrow quota."""
    shared_queues: list[SharedQueue] = []
    """ClusterQueues several teams share."""
    priorities: list[PriorityConfig] = []
    """Priority classes, for preemption and hotswap."""
    teams: list[TeamConfig] = []
    """The teams, one block each."""
    group_domains: list[str] = []
    """Domains the teams' groups must belong to (example.com); unset: any domain."""
    monitoring: MonitoringConfig = MonitoringConfig()
    """The stack's Cloud Monitoring dashboard and alert policies (docs/observability.md)."""
    cost: CostConfig | None = None
    """Per-team spend: a BigQuery view over the detailed billing export (docs/observability.md); unset: none."""
    fleet: FleetConfig | None = None
    """A MultiKueue fleet: this stack is its manager, or one of its workers (docs/fleet.md)."""
    acknowledge: list[Acknowledgement] = []
    """Deletions and replacements this change decides on (`make diff` refuses the others), one resource each."""

    def resource_labels(self) -> dict[str, str]:
        """Labels every GCP resource carries: environment, owner, cost-center, then the user's own."""
        labels = {"environment": self.environment, "owner": self.owner, "managed-by": "pulumi"}
        if self.cost_center:
            labels[COST_CENTER_LABEL] = self.cost_center
        if self.production:
            labels["production"] = "true"
        return {**labels, **self.labels}
