"""KueueLayer: Kueue and JobSet installed, and every queueing object a set of teams needs (flavors
from the pools' shapes, cohorts, ClusterQueues, admission checks, priorities, team namespaces with
their LocalQueues, and the scrape of Kueue's metrics), from plain arguments. Install it with the
cluster's Kubernetes provider (`opts=ResourceOptions(providers=[cluster.provider], depends_on=[system_pool])`).

No `from __future__ import annotations`: the component analyzer reads the annotations at run time."""
from dataclasses import dataclass
from typing import NotRequired, TypedDict

import pulumi

from gke_ai_batch.plan import component_plans
from gke_ai_batch.plan.declarations import KueueDeclaration, Release
from gke_ai_batch.vocabulary import component_type

from .args import CpuPoolSpec, GpuPoolSpec, TpuPoolSpec
from .argument_errors import own_plan
from .jobset_install import JobSetInstall, JobSetInstallArgs
from .kueue_install import KueueInstall, KueueInstallArgs
from .kueue_monitoring import KueueMonitoring, KueueMonitoringArgs
from .kueue_queues import KueueQueues, KueueQueuesArgs
from .priorities import Priorities, PrioritiesArgs
from .team import Team, TeamArgs
from .tenancy import Tenancy


class QuotaArgs(TypedDict):
    """A quota of one resource on one flavor: Kubernetes quantities such as 16, 500m or 64Gi."""

    nominal: str
    """Guaranteed to the queue."""
    borrowing_limit: NotRequired[str]
    """Most the queue may borrow from its cohort."""
    lending_limit: NotRequired[str]
    """Most of its nominal quota the queue lends to its cohort."""


class BorrowWithinCohortArgs(TypedDict, total=False):
    """Preemption while borrowing."""

    policy: str
    """Never or LowerPriority (default)."""
    max_priority_threshold: int
    """Only workloads at or below this priority are preempted."""


class PreemptionArgs(TypedDict, total=False):
    """How the queue preempts."""

    reclaim_within_cohort: str
    """Never, LowerPriority or Any (default)."""
    within_cluster_queue: str
    """Never, LowerPriority (default) or LowerOrNewerEqualPriority."""
    borrow_within_cohort: BorrowWithinCohortArgs
    """Preemption while borrowing."""


class QueueArgs(TypedDict, total=False):
    """A ClusterQueue: quotas per flavor and resource, and how it shares and preempts."""

    cohort: str
    """The cohort it shares unused quota with."""
    quotas: dict[str, dict[str, QuotaArgs]]
    """flavor -> resource -> quota."""
    queueing_strategy: str
    """BestEffortFIFO (default) or StrictFIFO."""
    preemption: PreemptionArgs
    """How the queue preempts."""
    fair_sharing_weight: str
    """Its weight under fair sharing."""
    admission_fair_sharing: bool
    """Order its LocalQueues by recent usage (default: on for a team's own queue with two or more)."""


class SharedQueueArgs(QueueArgs):
    """A ClusterQueue several teams share."""

    name: str
    """The ClusterQueue's name."""
    admit: NotRequired[str]
    """teams (default: the namespaces of the teams that name it) or all."""


class LocalQueueSpec(TypedDict):
    """One of a team's LocalQueues."""

    name: str
    """The LocalQueue's name."""
    cluster_queue: NotRequired[str]
    """The ClusterQueue it submits to (default: the team's)."""
    fair_sharing_weight: NotRequired[str]
    """Its weight under admission fair sharing (default 1)."""
    max_runtime: NotRequired[str]
    """The longest a job of it may run, e.g. 24h (over the team's)."""
    default_runtime: NotRequired[str]
    """The limit a job of it gets when it names none (over the team's)."""


class AutopilotTpuSpec(TypedDict):
    """TPU slices on Autopilot."""

    generation: str
    """TPU generation."""
    topology: str
    """Slice topology."""


class AutopilotFlavorSpec(TypedDict):
    """An Autopilot accelerator flavor."""

    name: str
    """The ResourceFlavor's name."""
    tpu: NotRequired[AutopilotTpuSpec]
    """TPU slices of one shape."""
    gpu: NotRequired[str]
    """GPUs of one type."""
    spot: NotRequired[bool]
    """Spot capacity."""
    compute_class: NotRequired[str]
    """An Autopilot compute class."""


class PodSecurityExceptionSpec(TypedDict):
    """A team namespace held to another Pod Security level than baseline, with why."""

    namespace: str
    """One of the team's namespaces."""
    level: str
    """privileged, baseline or restricted."""
    reason: str
    """Why the workload needs it."""
    flavors: NotRequired[list[str]]
    """Privileged only, and required there: the pool flavors its pods may run on."""


class ObjectQuotasSpec(TypedDict):
    """Most objects of each kind per team namespace (a ResourceQuota)."""

    jobs: NotRequired[int]
    """Jobs (default 500)."""
    jobsets: NotRequired[int]
    """JobSets (default 100)."""
    workloads: NotRequired[int]
    """Kueue Workloads (default 1000)."""
    pods: NotRequired[int]
    """Unfinished pods, gated ones included (default 2000)."""
    deployments: NotRequired[int]
    """Deployments (default 20)."""
    replicasets: NotRequired[int]
    """ReplicaSets (default 250)."""
    statefulsets: NotRequired[int]
    """StatefulSets (default 20)."""
    cronjobs: NotRequired[int]
    """CronJobs (default 20)."""
    services: NotRequired[int]
    """Services (default 20)."""
    node_ports: NotRequired[int]
    """Node ports of NodePort and LoadBalancer Services (default 0)."""
    load_balancers: NotRequired[int]
    """LoadBalancer Services (default 0)."""
    configmaps: NotRequired[int]
    """ConfigMaps (default 100)."""
    secrets: NotRequired[int]
    """Secrets (default 100)."""
    pod_monitorings: NotRequired[int]
    """PodMonitorings (default 20)."""
    persistent_volume_claims: NotRequired[int]
    """PersistentVolumeClaims (default 20)."""
    storage: NotRequired[str]
    """Storage all its PersistentVolumeClaims may request (default 1Ti)."""
    object_size: NotRequired[int]
    """Bytes of text (its spec's keys and strings, labels, annotations, finalizers, owner references) one workload
    object may hold (default 16384)."""


class ContainerLimitsSpec(TypedDict):
    """The cpu and memory a container naming neither a request nor a limit requests (a LimitRange's defaultRequest)."""

    cpu_request: NotRequired[str]
    """Default cpu request (default 500m)."""
    memory_request: NotRequired[str]
    """Default memory request (default 512Mi)."""


class PathwaysSpec(TypedDict):
    """Pathways for a team's TPU jobs: its ClusterQueue gets the Pathways heads' cpu and memory."""

    head_pool: str
    """The CPU pool (one of cpu_pools) the pathways-head pods run on, one per node."""
    heads: NotRequired[int]
    """Pathways jobs the team runs at once (default 1)."""


class TeamSpec(TypedDict):
    """One tenant: namespaces, a LocalQueue in each, and its ClusterQueue. Buckets and a workload service
    account are Google Cloud resources: the Platform component declares them, a KueueLayer refuses them."""

    name: str
    """The team's name."""
    namespaces: NotRequired[list[str]]
    """Its namespaces (default: [name])."""
    groups: NotRequired[list[str]]
    """Google groups (email addresses) bound to the platform's team role in the namespaces."""
    local_queue: NotRequired[str]
    """The LocalQueue's name (default: <name>-queue)."""
    local_queues: NotRequired[list[LocalQueueSpec]]
    """Several LocalQueues (instead of local_queue)."""
    cluster_queue: NotRequired[str]
    """A shared queue's name (instead of a queue of its own)."""
    queue: NotRequired[QueueArgs]
    """The team's own ClusterQueue."""
    pathways: NotRequired[PathwaysSpec]
    """Pathways heads' quota on a CPU pool beside the team's TPU quota (docs/scenarios/pathways.md)."""
    priorities: NotRequired[list[str]]
    """The priorities its pods and jobs may name (default: the global default and those below it)."""
    pod_security: NotRequired[list[PodSecurityExceptionSpec]]
    """Namespaces held to another Pod Security level than baseline."""
    container_limits: NotRequired[ContainerLimitsSpec]
    """Default requests of its containers (a LimitRange's defaultRequest)."""
    object_quotas: NotRequired[ObjectQuotasSpec]
    """Most objects of each kind per namespace, and the size of one workload object."""
    cost_center: NotRequired[str]
    """The cost-center label of its namespaces (default: the platform's)."""
    state: NotRequired[str]
    """active (default) or draining: its queues admit nothing new."""
    stop_policy: NotRequired[str]
    """While draining: HoldAndDrain (default, evicts admitted work) or Hold (lets it finish)."""
    max_runtime: NotRequired[str]
    """The longest any of its jobs may run, e.g. 168h (Kueue's max-exec-time-seconds label, required)."""
    default_runtime: NotRequired[str]
    """The limit a job gets when it names none (default: max_runtime)."""
    budget: NotRequired[float]
    """US dollars a month its promised quota may cost at list price (the team-over-budget advisory)."""
    max_termination_grace: NotRequired[str]
    """The longest a pod may take to stop, e.g. 10m (default): how long a stopped job keeps its nodes."""


class CohortSpec(TypedDict):
    """A Kueue Cohort."""

    name: str
    """The cohort's name."""
    parent: NotRequired[str]
    """Its parent cohort."""
    fair_sharing_weight: NotRequired[str]
    """Its weight under fair sharing."""


class PrioritySpec(TypedDict):
    """A priority: a PriorityClass for pod preemption and a WorkloadPriorityClass for admission order."""

    name: str
    """The class name."""
    value: int
    """Its value (below 1,000,000,000)."""
    description: NotRequired[str]
    """What it is for."""
    global_default: NotRequired[bool]
    """The cluster's default PriorityClass."""
    preemption_policy: NotRequired[str]
    """PreemptLowerPriority (default) or Never."""
    pod_priority_class: NotRequired[bool]
    """Declare the PriorityClass (default true)."""
    workload_priority_class: NotRequired[bool]
    """Declare the WorkloadPriorityClass (default true)."""


class AdmissionFairSharingArgs(TypedDict, total=False):
    """Kueue's admissionFairSharing."""

    usage_half_life_time: str
    """How long until past usage counts half (default 168h)."""
    usage_sampling_interval: str
    """How often usage is added up (default 5m)."""
    resource_weights: dict[str, float]
    """Per resource, what a unit counts (over accelerators 1; cpu, memory, ephemeral-storage 0)."""


class RetentionArgs(TypedDict, total=False):
    """Kueue's objectRetentionPolicies.workloads."""

    after_finished: str
    """How long a finished Workload stays (at least 1h)."""
    after_deactivated_by_kueue: str
    """How long a deactivated Workload (and its job) stays (at least 1h)."""


class KueueSettingsArgs(TypedDict, total=False):
    """The Kueue install (stack config: the kueue block)."""

    version: str
    """Chart version (default 0.19.2)."""
    chart: str
    """Chart (default oci://registry.k8s.io/kueue/charts/kueue)."""
    wait_for_pods_ready_timeout: str
    """How long an admitted workload may take to start, e.g. 10m."""
    quota_check: str
    """IgnoreUndeclared (default) or BlockUndeclared."""
    manage_jobs_without_queue_name: bool
    """Kueue holds team jobs that name no queue (default true)."""
    fair_sharing: bool
    """Fair sharing between queues of a cohort."""
    default_flavor: str
    """The flavor of cpu and memory quotas."""
    dws_admission_check: str
    """The Dynamic Workload Scheduler admission check's name."""
    dws_config: str
    """The ProvisioningRequestConfig's name."""
    controller_cpu: str
    """The controller's cpu."""
    controller_memory: str
    """The controller's memory."""
    admission_fair_sharing: AdmissionFairSharingArgs
    """How usage is measured where LocalQueues are ordered by it."""
    retention: RetentionArgs
    """When Kueue deletes finished and deactivated Workloads (default 168h each)."""
    unadmitted_workloads_observability: bool
    """Pending reasons and per-reason metrics (default true)."""
    v1beta1_migrated: bool
    """Every Kueue object is stored at v1beta2 (needed to move to a release without v1beta1)."""


class JobSetSettingsArgs(TypedDict, total=False):
    """The JobSet install."""

    version: str
    """Chart version (default 0.12.0)."""
    chart: str
    """Chart (default oci://registry.k8s.io/jobset/charts/jobset)."""
    install: str
    """auto (default: when a multi-host TPU pool exists), always or never."""


class KueueLayerArgs(TypedDict):
    """The pools the queues admit onto, and the teams, queues and priorities."""

    region: str
    """The cluster's region."""
    zones: NotRequired[list[str]]
    """The platform's zones (the default zones of pools that name none)."""
    autopilot: NotRequired[bool]
    """An Autopilot cluster (no node pools)."""
    tpu_pools: NotRequired[list[TpuPoolSpec]]
    """TPU pools, as declared with TpuSlicePool: each gives a flavor."""
    gpu_pools: NotRequired[list[GpuPoolSpec]]
    """GPU pools, as declared with GpuPool: each gives a flavor."""
    cpu_pools: NotRequired[list[CpuPoolSpec]]
    """CPU worker pools, as declared with CpuPool: each gives a flavor."""
    autopilot_flavors: NotRequired[list[AutopilotFlavorSpec]]
    """Autopilot: accelerator flavors by the node labels Autopilot provisions from."""
    teams: list[TeamSpec]
    """The tenants."""
    cohorts: NotRequired[list[CohortSpec]]
    """Cohorts, when they need a parent or a weight."""
    shared_queues: NotRequired[list[SharedQueueArgs]]
    """ClusterQueues several teams share."""
    priorities: NotRequired[list[PrioritySpec]]
    """Priorities."""
    kueue: NotRequired[KueueSettingsArgs]
    """The Kueue install."""
    jobset: NotRequired[JobSetSettingsArgs]
    """The JobSet install."""


@dataclass
class KueueResources:
    kueue: KueueInstall | None  # None where the cluster runs its own controllers
    jobset: JobSetInstall | None
    queues: KueueQueues
    teams: list[Team]
    monitoring: KueueMonitoring


def declare_kueue(plan: KueueDeclaration, opts: pulumi.ResourceOptions, releases: bool = True) -> KueueResources:
    """The installs, then priorities, queues, teams and the scrape of Kueue's metrics. `opts` carries
    the parent, the Kubernetes provider and what the installs wait for (the pool the controllers run on).
    Without `releases` (a cluster that runs its own Kueue and JobSet, the stack's `kubernetesOnly` key) the
    objects wait on no install: the controllers and their CRDs are there before the deploy."""
    tenancy_opts = pulumi.ResourceOptions(parent=opts.parent, providers=opts.providers)  # type: ignore[arg-type]  # SDK types its own attribute wider than its argument
    tenancy = Tenancy("tenancy", plan.tenancy, tenancy_opts)
    kueue, jobset = _installs(plan, opts, tenancy) if releases else (None, None)
    after_kueue: list[pulumi.Resource] = [kueue.release] if kueue else []
    after_both = [*after_kueue, *([jobset.release] if jobset else [])]
    after = pulumi.ResourceOptions(parent=opts.parent, providers=opts.providers)  # type: ignore[arg-type]  # SDK types its own attribute wider than its argument
    s = plan.platform.scheduling
    Priorities("priorities", PrioritiesArgs(s.priority_classes, s.workload_priority_classes, after_kueue), after)
    queues = KueueQueues("queues", KueueQueuesArgs(s, after_both), after)
    teams = [Team(f"team-{t.name}", TeamArgs(t, {q: queues.cluster_queues[q] for q in t.cluster_queues},
                                             after_kueue, tenancy.team_role), after) for t in s.teams]
    monitoring = KueueMonitoring("kueue-monitoring", KueueMonitoringArgs(plan.monitoring, after_kueue), after)
    return KueueResources(kueue, jobset, queues, teams, monitoring)


def _installs(plan: KueueDeclaration, opts: pulumi.ResourceOptions,
              tenancy: Tenancy) -> tuple[KueueInstall, JobSetInstall | None]:
    """The Kueue release, and JobSet's where the platform needs it, after the tenancy objects."""
    def installs(release: Release) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[tenancy],
                                                                         **release.lifecycle.options()))
    k, j = plan.kueue, plan.jobset
    kueue = KueueInstall("kueue", KueueInstallArgs(k.chart, k.version, k.values), installs(k))
    jobset = JobSetInstall("jobset", JobSetInstallArgs(j.chart, j.version, j.values), installs(j)) if j else None
    return kueue, jobset


class KueueLayer(pulumi.ComponentResource):
    """Kueue, JobSet and every queue, flavor and team namespace, checked before any resource exists."""

    cluster_queues: pulumi.Output[list[str]]
    """The ClusterQueues."""
    local_queues: pulumi.Output[dict[str, str]]
    """Each team's LocalQueue (its first, where it has several)."""

    def __init__(self, name: str, args: KueueLayerArgs, opts: pulumi.ResourceOptions | None = None):
        plan = own_plan("KueueLayer", name, args, KueueLayerArgs, lambda: component_plans.scheduling(name, args), None)
        super().__init__(component_type("KueueLayer"), name, None, opts)
        depends = (opts.depends_on if opts else None)
        declare_kueue(plan, pulumi.ResourceOptions(parent=self, depends_on=depends))
        scheduling = plan.platform.scheduling
        self.cluster_queues = pulumi.Output.from_input([q.name for q in scheduling.cluster_queues])
        self.local_queues = pulumi.Output.from_input({t.name: t.local_queue for t in scheduling.teams})
        self.register_outputs({"cluster_queues": self.cluster_queues, "local_queues": self.local_queues})
