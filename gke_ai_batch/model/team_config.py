"""The team blocks of the stack config: quotas, queues, buckets, Pod Security exceptions and the decisions
that lift production protection."""
from __future__ import annotations

import math
from typing import Literal

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from gke_ai_batch.model.field_rules import (
    BUCKET_LOCATION,
    DNS_LABEL,
    DURATION,
    GROUP_EMAIL,
    LABEL_VALUE,
    Model,
    Quantity,
    duration_seconds,
    quota_or_quantity,
    text,
)
from gke_ai_batch.model.monitoring_config import TeamAlerts
from gke_ai_batch.model.pathways_config import PathwaysConfig
from gke_ai_batch.model.quantity import parse_quantity


class QuotaSpec(Model):
    """A team's quota of one resource in one flavor. Written as a bare quantity (`google.com/tpu: 16`),
    it is the nominal quota."""

    nominal: Quantity
    """What the queue is guaranteed, as a Kubernetes quantity (16, 500m, 64Gi, 2.5)."""
    borrowing_limit: Quantity | None = None
    """How much more it may borrow from its cohort; unset: no limit. Needs a cohort."""
    lending_limit: Quantity | None = None
    """How much of its nominal quota it may lend to its cohort; unset: all of it. Needs a cohort."""

    @field_validator("nominal", "borrowing_limit", "lending_limit")
    @classmethod
    def _quantity(cls, v: int | str | None) -> int | str | None:
        if v is not None:
            parse_quantity(v)
        return v


def _quota_spec(v: object) -> object:
    return v if isinstance(v, dict) else {"nominal": v}


class BorrowWithinCohort(Model):
    policy: Literal["Never", "LowerPriority"] = "LowerPriority"
    """Whether a borrowing workload may preempt lower-priority work in the cohort."""
    max_priority_threshold: int | None = None
    """Only workloads at or below this priority may be preempted so."""


class Preemption(Model):
    """Kueue's ClusterQueue preemption policy."""

    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = "Any"
    """Whether the queue may take back lent quota by preempting the cohort's borrowers."""
    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = "LowerPriority"
    """Whether a workload may preempt others of its own queue."""
    borrow_within_cohort: BorrowWithinCohort | None = None
    """Preemption while borrowing (not with fair sharing)."""


class QueueSpec(Model):
    """What a ClusterQueue holds: quota per flavor and resource, and how it shares and preempts."""

    cohort: str | None = None
    """The cohort it borrows from and lends to; one of `cohorts`."""
    quotas: dict[str, dict[str, QuotaSpec]] = Field({}, json_schema_extra=quota_or_quantity)
    """Per flavor (a pool's flavor), per resource (google.com/tpu, nvidia.com/gpu, cpu, memory...): a quota.
    Written in any order: Kueue tries the flavors by capacity, then in the order they are declared."""
    queueing_strategy: Literal["BestEffortFIFO", "StrictFIFO"] = "BestEffortFIFO"
    """Kueue's queueing strategy: BestEffortFIFO lets smaller jobs past one that does not fit."""
    preemption: Preemption = Preemption()
    """When the queue's workloads may preempt others."""
    fair_sharing_weight: Quantity | None = None
    """The queue's weight under fair sharing (kueue.fair_sharing: true)."""
    admission_fair_sharing: bool | None = None
    """Order the queue's pending workloads by the recent usage of the LocalQueues they come from (Kueue's
    Admission Fair Sharing, `admissionScope.admissionMode: UsageBasedAdmissionFairSharing`), so that one
    user's sweep cannot hold the whole quota for days; weights per LocalQueue in
    `local_queues[].fair_sharing_weight`. Unset: on for a team's own queue that two or more LocalQueues
    (its names times its namespaces) submit to, off otherwise. true needs two LocalQueues."""

    @field_validator("quotas", mode="before")
    @classmethod
    def _short_quotas(cls, v: object) -> object:
        if isinstance(v, dict):
            return {f: ({r: _quota_spec(q) for r, q in res.items()} if isinstance(res, dict) else res)
                    for f, res in v.items()}
        return v


class SharedQueue(QueueSpec):
    """A ClusterQueue several teams share (source page 002). `admit: all` selects every namespace."""

    name: str = text(DNS_LABEL, max_length=63)
    """The ClusterQueue's name; teams name it in `cluster_queue`."""
    admit: Literal["teams", "all"] = "teams"
    """teams: only the namespaces of teams that name it; all: every namespace."""


# What the API server gives a pod spec without terminationGracePeriodSeconds (k8s.io/api v0.33.13 core/v1
# DefaultTerminationGracePeriodSeconds, set by pkg/apis/core/v1/defaults.go SetDefaults_PodSpec before admission).
MIN_GRACE_SECONDS = 30

NO_TEAM_DEFAULT_PRIORITY = (
    "a per-team default priority cannot take effect, so the key was removed: Kueue 0.19 takes a job's "
    "priority from its kueue.x-k8s.io/priority-class label (a WorkloadPriorityClass), else its pods' "
    "priorityClassName, else the global default PriorityClass, and applies no per-namespace default "
    "(WorkloadPriorityClassDefaulting is alpha and cluster-wide). Label each job with its priority, or "
    "mark one priority global_default: true; then drop default_priority")


class BucketConfig(Model):
    """A Cloud Storage bucket a team's workloads use, through its Kubernetes service account."""

    name: str
    """The bucket's globally unique name: 3 to 63 lowercase letters, digits, '-', '_' and '.'."""
    access: Literal["read", "read-write"]
    """read (datasets: roles/storage.objectViewer) or read-write (checkpoints: roles/storage.objectUser)."""
    existing: bool = False
    """An existing bucket: the stack only grants access; false: the stack creates it, with uniform
    bucket-level access and public access prevention enforced."""
    location: str | None = text(BUCKET_LOCATION, None)
    """Created only: a region (default: the platform's, next to the accelerators), or a multi-region
    (US, EU, ASIA) or predefined dual-region (NAM4, EUR4, ASIA1...)."""
    versioning: bool | None = None
    """Created only: keep overwritten and deleted objects as noncurrent versions (default off)."""
    soft_delete_days: int | None = None
    """Created only: days a deleted object stays restorable, 7 to 90, or 0 for none (default 7)."""


class LocalQueueConfig(Model):
    """One of a team's LocalQueues, in each of its namespaces."""

    name: str = text(DNS_LABEL, max_length=63)
    """The LocalQueue's name; jobs name it in the kueue.x-k8s.io/queue-name label."""
    cluster_queue: str | None = text(DNS_LABEL, None, max_length=63)
    """The ClusterQueue it submits to: the team's own or a shared one; unset: the team's."""
    fair_sharing_weight: Quantity | None = None
    """Its weight under Admission Fair Sharing, in each namespace (Kueue's default: 1): a queue of weight 2
    is ordered as if it had used half as much. Only for a ClusterQueue with admission fair sharing."""

    max_runtime: str | None = text(DURATION, None)
    """The longest a job of this LocalQueue may run (e.g. 72h): over the team's max_runtime."""
    default_runtime: str | None = text(DURATION, None)
    """The limit a job of this LocalQueue gets when it names none: over the team's default_runtime."""

    @field_validator("fair_sharing_weight")
    @classmethod
    def _positive_weight(cls, v: int | str | None) -> int | str | None:
        if v is not None and parse_quantity(v) <= 0:
            raise ValueError(f"weight {v!r} must be above 0 (Kueue orders a queue of weight 0 after every other, "
                             "forever): give a positive quantity such as 1, 2 or 0.5")
        return v


class PodSecurityException(Model):
    """A namespace of the team held to another Pod Security level than `baseline`, for a workload
    that truly needs it (raw local SSDs it formats itself, GPUDirect's host networking), with why."""

    namespace: str
    """One of the team's namespaces; keep the exception to a namespace of its own where you can."""
    level: Literal["privileged", "baseline", "restricted"]
    """The Pod Security Standard the namespace enforces: privileged (no checks), baseline or restricted."""
    reason: str = Field(min_length=1)
    """Why the workload needs it, kept beside the exception for reviewers."""
    flavors: list[str] = []
    """Privileged only: the pool flavors (their `flavor` names) its pods may run on; an admission policy holds
    every pod of the namespace to them, so a privileged pod never shares nodes with other teams' work. A
    privileged exception without them still plans (stack files written before them), and the mandatory
    policy `privileged-namespace-flavors` stops `pulumi up` until they are named."""

    @model_validator(mode="after")
    def _flavors_when_privileged(self) -> PodSecurityException:
        if self.level != "privileged" and self.flavors:
            raise ValueError(f"flavors bind a privileged namespace to its nodes; level {self.level!r} needs none")
        return self


class ObjectQuotas(Model):
    """Most objects of each kind a team may hold in each of its namespaces (a Kubernetes
    ResourceQuota), so that one team's flood cannot starve Kueue's admissions for every team."""

    jobs: int = Field(500, ge=1, strict=True)
    """Jobs (count/jobs.batch)."""
    jobsets: int = Field(100, ge=1, strict=True)
    """JobSets (count/jobsets.jobset.x-k8s.io)."""
    workloads: int = Field(1000, ge=1, strict=True)
    """Kueue Workloads (count/workloads.kueue.x-k8s.io): one per job, and one per pod of a Deployment,
    StatefulSet or plain Pod."""
    pods: int = Field(2000, ge=1, strict=True)
    """Pods that are not finished, gated ones included."""
    deployments: int = Field(20, ge=0, strict=True)
    """Deployments (count/deployments.apps)."""
    replicasets: int = Field(250, ge=0, strict=True)
    """ReplicaSets (count/replicasets.apps): a Deployment keeps 10 old ones by default (revisionHistoryLimit)."""
    statefulsets: int = Field(20, ge=0, strict=True)
    """StatefulSets (count/statefulsets.apps)."""
    cronjobs: int = Field(20, ge=0, strict=True)
    """CronJobs (count/cronjobs.batch), kept in etcd; Kueue never sees them, only the Jobs they create."""
    services: int = Field(20, ge=0, strict=True)
    """Services (count/services): every ClusterIP comes from the cluster's one service range."""
    node_ports: int = Field(0, ge=0, strict=True)
    """NodePort and LoadBalancer Services' node ports (services.nodeports): a port on every node."""
    load_balancers: int = Field(0, ge=0, strict=True)
    """LoadBalancer Services (services.loadbalancers): each a Cloud load balancer and forwarding rule."""
    configmaps: int = Field(100, ge=0, strict=True)
    """ConfigMaps (count/configmaps), kept in etcd."""
    secrets: int = Field(100, ge=0, strict=True)
    """Secrets (count/secrets), kept in etcd."""
    pod_monitorings: int = Field(20, ge=0, strict=True)
    """PodMonitorings (count/podmonitorings.monitoring.googleapis.com): Managed Prometheus writes every
    PodMonitoring of the cluster into one collector ConfigMap, which cannot grow past 1 MiB."""
    scrape_samples: int = Field(10000, ge=1, strict=True)
    """Most samples one scrape of one PodMonitoring target may take: every PodMonitoring must set
    spec.limits.samples at or below this (Managed Prometheus bills by sample and its collectors hold every series
    in memory; a scrape over its limit is dropped whole)."""
    scrape_interval: str = text(DURATION, "30s")
    """The shortest interval a PodMonitoring endpoint may be scraped at (spec.endpoints[].interval): 30s, the
    interval of Managed Prometheus's own example PodMonitorings."""
    persistent_volume_claims: int = Field(20, ge=0, strict=True)
    """PersistentVolumeClaims (persistentvolumeclaims): each a disk."""
    storage: Quantity = "1Ti"
    """The storage all its PersistentVolumeClaims may request together (requests.storage)."""
    object_size: int = Field(16384, ge=4096, le=262144, strict=True)
    """Bytes of text (every key and string of its spec, labels, annotations, finalizers and owner references, and
    one per value) one Pod, Job, JobSet, Deployment or StatefulSet may hold: Kueue keeps every such object and its
    Workload in memory, so its memory is sized by objects x this (docs/queues.md, "Kueue's memory")."""

    @field_validator("storage")
    @classmethod
    def _storage(cls, v: int | str) -> int | str:
        parse_quantity(v)
        return v

    @field_validator("scrape_interval")
    @classmethod
    def _scrape_interval(cls, v: str) -> str:
        if not 1 <= duration_seconds(v) <= 3600:
            raise ValueError(f"{v!r}: allowed from 1s to 1h (the policy reads any interval in days as longer)")
        return v


NO_LIMIT_RATIO = (
    "a limit/request ratio is no longer set, so the key was removed: a ratio makes the API server refuse every "
    "container without a limit, which is the most common job shape (cpu and memory requests, a limit only for the "
    "accelerator), while bursting above requests mostly harms the burster (the kubelet evicts, and the kernel's OOM "
    "killer picks, by usage above request; docs/queues.md, \"Team isolation\"). Drop the key")


class ContainerLimits(Model):
    """What a container of a team namespace requests when it names neither a request nor a limit (a Kubernetes
    LimitRange's defaultRequest): Kueue meters requests and the scheduler places by them, so a container without
    any would run uncharged and be packed onto nodes without bound. No default limit: a default below a
    container's request makes the API server refuse the pod."""

    cpu_request: Quantity = "500m"
    """The cpu a container that names neither a cpu request nor a cpu limit requests."""
    memory_request: Quantity = "512Mi"
    """The memory a container that names neither a memory request nor a memory limit requests."""
    cpu_ratio: Quantity | None = None
    """Refused: limits are no longer bounded against requests (see the error for why)."""
    memory_ratio: Quantity | None = None
    """Refused: limits are no longer bounded against requests (see the error for why)."""

    @field_validator("cpu_request", "memory_request")
    @classmethod
    def _request(cls, v: int | str) -> int | str:
        if parse_quantity(v) <= 0:
            raise ValueError(f"{v!r}: a default request is more than 0")
        return v

    @field_validator("cpu_ratio", "memory_ratio")
    @classmethod
    def _no_ratio(cls, v: int | str | None) -> int | str | None:
        if v is not None:
            raise ValueError(NO_LIMIT_RATIO)
        return v


class TeamConfig(Model):
    """One team: its namespaces, a LocalQueue in each, and its own or a shared ClusterQueue."""

    name: str = text(DNS_LABEL, max_length=40)
    """The team's name."""
    namespaces: list[str] = []
    """Its namespaces (names of lowercase letters, digits and '-'); unset: one named after the team."""
    groups: list[str] = []
    """Google groups (email addresses) whose members may run the team's workloads in its namespaces
    (the platform's team role; needs cluster.security_group)."""
    priorities: list[str] | None = None
    """The priorities the team's pods and jobs may name; unset: the global default and those below it."""
    pod_security: list[PodSecurityException] = []
    """Namespaces held to another Pod Security level than baseline, each with its reason."""
    object_quotas: ObjectQuotas = ObjectQuotas()
    """Most objects of each kind per namespace (Jobs, JobSets, Workloads, pods, Services, ConfigMaps,
    Secrets, disks...), and the size of one workload object."""
    container_limits: ContainerLimits = ContainerLimits()
    """The cpu and memory a container naming none requests (a LimitRange's defaultRequest)."""
    default_priority: str | None = None
    """Refused: Kueue 0.19 has no per-team default priority (see the error for what to do)."""
    local_queue: str | None = text(DNS_LABEL, None, max_length=63)
    """The LocalQueue's name in each namespace; unset: <name>-queue. For several, use local_queues."""
    local_queues: list[LocalQueueConfig] = []
    """Several LocalQueues in each namespace (train, eval...), each to the team's ClusterQueue or a shared one."""
    cluster_queue: str | None = text(DNS_LABEL, None, max_length=63)
    """A shared queue's name, or the name of the team's own ClusterQueue (default: the team's name)."""
    queue: QueueSpec | None = None
    """The team's own ClusterQueue; leave it out to use a shared queue named in cluster_queue."""
    pathways: PathwaysConfig | None = None
    """Pathways for its TPU jobs: quota for the Pathways heads on a CPU pool, beside its TPU quota."""
    budget: float | None = None
    """USD a month: the most the team's promised quota may cost at list price (docs/cost.md). Above it, the
    team-over-budget advisory; unset: no budget."""
    cost_center: str | None = text(LABEL_VALUE, None)
    """The cost-center label of its namespaces, for GKE cost allocation (default: the platform's)."""
    service_account: str | None = None
    """The Kubernetes service account its workloads run as, created in each namespace and granted the
    buckets through Workload Identity Federation for GKE (default: <name>-workload)."""
    buckets: list[BucketConfig] = []
    """Cloud Storage buckets its workloads read or write (created, or existing ones by name)."""
    state: Literal["active", "draining"] = "active"
    """active, or draining: its queues admit nothing new (Kueue's stopPolicy) and production lifts the
    protection of its namespaces and buckets, so that a later change may remove the team (`make diff`
    refuses removing a team that was not draining first)."""
    alerts: TeamAlerts = TeamAlerts()
    """Where the team's alerts go and when they fire (docs/observability.md); unset: the stack's monitoring block."""
    max_runtime: str | None = text(DURATION, None)
    """The longest any job of the team may run (e.g. 168h): every Job, JobSet and bare Pod of its LocalQueues
    must carry Kueue's kueue.x-k8s.io/max-exec-time-seconds label at or below it, and Kueue deactivates a
    Workload whose time runs out (its admitted time; waiting does not count). Unset: no limit.
    local_queues[].max_runtime overrides it per queue."""
    default_runtime: str | None = text(DURATION, None)
    """The limit a job that names none gets (default: max_runtime): set by a MutatingAdmissionPolicy where
    cluster.version is 1.36 or later, else the job is refused with this value to set. Needs max_runtime."""
    max_termination_grace: str = text(DURATION, "10m")
    """The longest a stopped job keeps its nodes: every pod and pod template of the team may set
    terminationGracePeriodSeconds up to this (600 s by default; 30 s, the API server's default, at least). Kueue
    frees a job's quota as soon as its pods are terminating, so a pod that ignores SIGTERM holds its nodes, charged
    to no queue, for its whole grace period after a preemption, a reclaim or a max_runtime stop."""
    stop_policy: Literal["HoldAndDrain", "Hold"] | None = None
    """While draining, what happens to its admitted work: HoldAndDrain (the default) evicts it, Hold lets
    it run to completion. Only for a draining team."""

    @model_validator(mode="after")
    def _stop_policy_when_draining(self) -> TeamConfig:
        if self.stop_policy is not None and self.state != "draining":
            raise ValueError(f"stop_policy {self.stop_policy!r} applies to a draining team only: set state: "
                             "draining, or drop stop_policy")
        return self

    @field_validator("budget", mode="before")
    @classmethod
    def _budget(cls, v: object) -> object:
        """A number of dollars, 0 or more: a string, true/false, a negative or an endless number is refused here
        rather than read as one (YAML's true would be $1)."""
        if v is None or (isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v >= 0):
            return v
        raise ValueError("allowed: US dollars a month, a number 0 or more (such as 25000)")

    @field_validator("max_termination_grace")
    @classmethod
    def _grace(cls, v: str) -> str:
        if duration_seconds(v) < MIN_GRACE_SECONDS:
            raise ValueError(f"{v!r}: at least {MIN_GRACE_SECONDS}s: the API server gives every pod that names no "
                             f"terminationGracePeriodSeconds {MIN_GRACE_SECONDS} s, so a shorter bound would "
                             "refuse them all")
        return v

    @field_validator("default_priority")
    @classmethod
    def _no_default_priority(cls, v: str | None) -> str | None:
        if v is not None:
            raise ValueError(NO_TEAM_DEFAULT_PRIORITY)
        return v

    @field_validator("groups")
    @classmethod
    def _groups(cls, v: list[str]) -> list[str]:
        import re
        for g in v:
            if g.startswith("system:"):
                raise ValueError(f"{g!r} is a Kubernetes system group (every user, or every pod): a team's "
                                 "groups must be Google groups of its own members")
            if not re.match(GROUP_EMAIL.pattern, g):
                raise ValueError(f"{g!r} is not {GROUP_EMAIL.words}")
        return v

    @field_validator("namespaces")
    @classmethod
    def _ns(cls, v: list[str]) -> list[str]:
        import re
        for ns in v:
            if not re.match(DNS_LABEL.pattern, ns) or len(ns) > 63:
                raise ValueError(f"namespace {ns!r} is not a namespace name: {DNS_LABEL.words}, "
                                 "at most 63 characters")
        return v


DECISION_KINDS = ("cluster", "node_pool", "namespace", "bucket", "release", "network", "priority", "retention",
                  "admission_check", "dataset", "compute_class")


class Acknowledgement(Model):
    """A decision to delete or replace one resource that holds running work or data, with why. It lifts
    production's protection of that resource, and covers one change: the next change removes it. To
    delete a protected resource, land the acknowledgement first (the engine deletes only what its last
    update left unprotected), then remove the resource and the acknowledgement together."""

    cluster: str | None = None
    """The GKE cluster, by name."""
    node_pool: str | None = None
    """A node pool, by its name in the stack file (for a TPU pool: every slice of it)."""
    namespace: str | None = None
    """A team namespace (removing a whole team takes `state: draining` instead), or a privileged one whose
    flavors lose one its running jobs may still use (a Pathways head pool moved)."""
    bucket: str | None = None
    """A bucket the stack created, by name."""
    release: Literal["kueue", "jobset"] | None = None
    """The Kueue or JobSet Helm release."""
    network: str | None = None
    """A network object the stack created (VPC, subnet, Cloud Router or NAT), by its name in GCP: deleting
    one cuts the nodes off (`make diff` refuses it without this). In production it stays protected with the
    cluster, so its deletion also needs the cluster's acknowledgement landed first."""
    priority: str | None = None
    """A priority whose PriorityClass is replaced (its value or preemption policy changed), or deleted while
    a team may still name it: while it is gone the API server refuses every pod naming it (`make diff`
    refuses either without this)."""
    retention: Literal["after_deactivated_by_kueue"] | None = None
    """kueue.retention.after_deactivated_by_kueue made shorter: once Kueue restarts it deletes every Job and
    JobSet it deactivated longer ago than the new value (`make diff` refuses it without this)."""
    admission_check: str | None = None
    """An admission check a ClusterQueue gains on a flavor it had (a check renamed or added): Kueue suspends
    every job admitted there until the new check is Ready (`make diff` refuses it without this)."""
    dataset: str | None = None
    """A BigQuery dataset the stack declared and no longer does (the billing export's, handed over to
    `create_export_dataset: false`): BigQuery refuses to delete one that holds tables, and deletes an empty
    one; remove it from the state first (`pulumi state delete`) to keep it (`make diff` refuses it without this)."""
    compute_class: str | None = None
    """A compute class with active migration whose priorities are reordered or lose a reservation: GKE moves the
    running pods to the way now ranked higher, evicting them (`make diff` refuses it without this)."""
    reason: str = Field(min_length=1)
    """Why, for reviewers: what runs there now and where it goes."""

    @model_validator(mode="after")
    def _one_resource(self) -> Acknowledgement:
        named = [k for k in DECISION_KINDS if getattr(self, k) is not None]
        if len(named) != 1:
            raise ValueError(f"name exactly one resource ({', '.join(DECISION_KINDS)}); this names "
                             f"{len(named) or 'none'}{': ' + ', '.join(named) if named else ''}")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in DECISION_KINDS if getattr(self, k) is not None)

    @property
    def name(self) -> str:
        return str(getattr(self, self.kind))
