"""Kueue's controller Configuration: the chart's own, with only the changes the stack decides.

The chart embeds its Configuration as one YAML block (`managerConfig.controllerManagerConfigYaml`), and a
release that sets that value replaces the whole block: a stack that wrote its own dropped the chart's
`controller.groupKindConcurrency` (Workload 10, Job 5, Pod 5...), so each kind was reconciled one at a time,
and its `clientConnection` of qps 300 / burst 500 fell to 50 / 100. So the block starts from the chart's,
copied unmodified below, and CHANGES lists every difference with its reason (docs/queues.md, "Kueue's
configuration" lists them too).
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from gke_ai_batch.model.config import UNADMITTED_GATE, KueueConfig
from gke_ai_batch.vocabulary import TEAM_LABEL

# charts/kueue/values.yaml at kubernetes-sigs/kueue v0.19.2, managerConfig.controllerManagerConfigYaml,
# verbatim (its comments included). The chart of the 0.19 patch releases is cut from the same branch.
CHART_CONFIGURATION = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: :8081
metrics:
  bindAddress: :8443
# enableClusterQueueResources: true
webhook:
  port: 9443
leaderElection:
  leaderElect: true
  resourceName: c1f6bfd2.kueue.x-k8s.io
controller:
  groupKindConcurrency:
    Job.batch: 5
    Pod: 5
    Workload.kueue.x-k8s.io: 10
    LocalQueue.kueue.x-k8s.io: 5
    ClusterQueue.kueue.x-k8s.io: 5
    ResourceFlavor.kueue.x-k8s.io: 1
clientConnection:
  qps: 300
  burst: 500
#pprofBindAddress: :8083
#waitForPodsReady:
#  timeout: 5m
#  recoveryTimeout: 3m
#  blockAdmission: false
#  requeuingStrategy:
#    timestamp: Eviction
#    backoffLimitCount: null # null indicates infinite requeuing
#    backoffBaseSeconds: 60
#    backoffMaxSeconds: 3600
#manageJobsWithoutQueueName: true
# See "Opt-in Namespace Management" for guidance on namespace management:
# https://kueue.sigs.k8s.io/docs/tasks/manage/enforce_job_management/opt_in_namespace_management/
#managedJobsNamespaceSelector:
#  matchExpressions:
#    - key: kubernetes.io/metadata.name
#      operator: NotIn
#      values: [ kube-system, kueue-system ]
#internalCertManagement:
#  enable: false
#  webhookServiceName: ""
#  webhookSecretName: ""
integrations:
  frameworks:
  - "batch/job"
  - "kubeflow.org/mpijob"
  - "ray.io/rayjob"
  - "ray.io/rayservice"
  - "ray.io/raycluster"
  - "jobset.x-k8s.io/jobset"
#  - "kubeflow.org/paddlejob"
#  - "kubeflow.org/pytorchjob"
#  - "kubeflow.org/tfjob"
#  - "kubeflow.org/xgboostjob"
#  - "kubeflow.org/jaxjob"
  - "workload.codeflare.dev/appwrapper"
  - "trainer.kubeflow.org/trainjob"
#  - "sparkoperator.k8s.io/sparkapplication"
  - "pod"
  - "deployment"
  - "statefulset"
  - "leaderworkerset.x-k8s.io/leaderworkerset"
"""


@dataclass(frozen=True)
class Change:
    """One setting the stack changes from the chart's Configuration: its path, its value for the stack's
    Kueue settings, and why."""

    path: str
    value: Callable[[Settings], Any]  # the stack's settings -> the value; None sets nothing
    why: str


@dataclass(frozen=True)
class Settings:
    """What the changes read: the stack's kueue block and the frameworks the platform installs."""

    kueue: KueueConfig
    frameworks: tuple[str, ...]
    wait_for_pods_ready: dict[str, Any]
    multikueue: dict[str, Any] | None = None  # a fleet manager's dispatcher (plan.fleet)


CHANGES: tuple[Change, ...] = (
    Change("metrics.enableClusterQueueResources", lambda s: True,
           "usage and nominal quota per ClusterQueue are exported only when asked for (Kueue's metrics "
           "reference); the quota queries of docs/policies.md read them"),
    Change("integrations.frameworks", lambda s: list(s.frameworks),
           "only what the platform installs: the chart lists MPIJob, Ray, AppWrapper, TrainJob and "
           "LeaderWorkerSet, whose CRDs the cluster lacks; JobSet only where it is installed"),
    Change("manageJobsWithoutQueueName", lambda s: s.kueue.manage_jobs_without_queue_name,
           "jobs in a team namespace without a queue label are suspended by Kueue, not run around it"),
    Change("managedJobsNamespaceSelector", lambda s: {"matchExpressions": [
        {"key": TEAM_LABEL, "operator": "Exists"}]},
           "only team namespaces are managed: the system namespaces run without queues"),
    Change("resources.quotaCheckStrategy", lambda s: s.kueue.quota_check,
           "stated: a pod asking for a resource its ClusterQueue does not cover is not admitted (Kueue's "
           "default; the queues cover cpu and memory wherever they cover anything)"),
    Change("waitForPodsReady", lambda s: s.wait_for_pods_ready,
           "all-or-nothing admission (on by default in 0.19, stated so its settings are ours): a workload whose "
           "pods are not all ready within kueue.wait_for_pods_ready_timeout is evicted and requeued with "
           "Kueue's backoff (60 s doubling to 3600 s), at most kueue.requeue_limit times, then deactivated; "
           "blockAdmission stays false (Kueue's docs warn it admits one workload at a time)"),
    Change("multiKueue", lambda s: s.multikueue,
           "only on a fleet manager: the dispatcher fleet.dispatcher names (Kueue's default is all-at-once); the "
           "incremental one offers a workload to one worker at a time, in the MultiKueueConfig's order "
           "(stepSize 1; gates MultiKueueIncrementalDispatcherConfig and ...RespectConfigOrder, beta and on in 0.19)"),
    Change("admissionFairSharing", lambda s: admission_fair_sharing(s.kueue),
           "set on every stack, so that a team turning admission fair sharing on or off changes only its "
           "ClusterQueue (Kueue uses it only where a ClusterQueue's admissionScope asks; without this block no "
           "queue's does); kueue.admission_fair_sharing has the defaults and their reasons"),
    Change("objectRetentionPolicies", lambda s: {"workloads": {
        "afterFinished": s.kueue.retention.after_finished,
        "afterDeactivatedByKueue": s.kueue.retention.after_deactivated_by_kueue}},
           "Kueue keeps every Workload forever when unset: its memory, etcd and the teams' Workload object "
           "quotas fill with finished ones; kueue.retention has the durations and their reasons"),
    Change("featureGates", lambda s: {"ElasticJobsViaWorkloadSlices": False,
                                      **({UNADMITTED_GATE: True} if s.kueue.unadmitted_workloads_observability
                                         else {})},
           "elastic Jobs off (the gate is beta and on since 0.18; pkg/features/kube_features.go): with it, a Job "
           "annotated kueue.x-k8s.io/elastic-job may change its parallelism while admitted, and Kueue deliberately "
           "leaves such a Job running while unsuspended instead of waiting for its pods to stop "
           "(jobframework/reconciler.go: `job.IsActive() && !WorkloadSliceEnabled(job)`); the platform's policies "
           "judge pod counts at create, so no team holds quota by scaling. Off, the annotation is ignored "
           "(workloadslicing.Enabled needs the gate) and the Job is an ordinary one. UnadmittedWorkloadsObservability "
           "(beta, off in 0.19) on: tiered pending reasons on a Workload's QuotaReserved condition and the "
           "kueue_unadmitted_workloads metric per reason, which the pending queries of docs/policies.md read. Set "
           "here, not as the chart's controllerManager.featureGates, which the Configuration's map may not be "
           "combined with"),
    Change("fairSharing", lambda s: {"preemptionStrategies": ["LessThanOrEqualToFinalShare",
                                                              "LessThanInitialShare"]}
           if s.kueue.fair_sharing else None,
           "only with kueue.fair_sharing: the chart's commented strategies, Kueue's defaults"),
)



# What a unit of each resource counts in a LocalQueue's usage: Kueue sums raw quantities (CalculateUsage,
# pkg/util/admissionfairsharing at v0.19.2; a resource not listed counts 1), so bytes of memory would
# outweigh every chip. The platform's queues are quotas of accelerators: a chip or GPU counts 1.
DEFAULT_RESOURCE_WEIGHTS = {"google.com/tpu": 1.0, "nvidia.com/gpu": 1.0, "cpu": 0.0, "memory": 0.0,
                            "ephemeral-storage": 0.0}


def admission_fair_sharing(k: KueueConfig) -> dict[str, Any]:
    """Kueue's admissionFairSharing block: the stack's half-life and sampling interval, the resource weights
    over the platform's defaults."""
    afs = k.admission_fair_sharing
    return {"usageHalfLifeTime": afs.usage_half_life_time, "usageSamplingInterval": afs.usage_sampling_interval,
            "resourceWeights": {**DEFAULT_RESOURCE_WEIGHTS, **afs.resource_weights}}


def configuration(settings: Settings) -> dict[str, Any]:
    """The chart's Configuration with CHANGES applied (a change whose value is None sets nothing)."""
    conf: dict[str, Any] = copy.deepcopy(_CHART)
    for change in CHANGES:
        value = change.value(settings)
        if value is not None:
            *parents, key = change.path.split(".")
            target = conf
            for part in parents:
                target = target.setdefault(part, {})
            target[key] = value
    return conf


_CHART: dict[str, Any] = yaml.safe_load(CHART_CONFIGURATION)
