"""Helm values for the Kueue and JobSet installs, derived from the platform (pure, testable)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml

from gke_ai_batch.vocabulary import TEAM_LABEL

if TYPE_CHECKING:
    from gke_ai_batch.plan.platform import Platform


def controller_resources(cpu: str, memory: str) -> dict[str, dict[str, str]]:
    """Requests equal to limits: the chart's default cpu limit of 2 would otherwise stay below any
    larger request (an invalid pod)."""
    return {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}}


def recommended_memory(queues: int) -> int:
    """MiB the controller wants: Kueue keeps every queue and workload in memory; the chart's 512Mi,
    and 256Mi more per 100 queues (the kueue-controller-size policy compares against it)."""
    return 512 + 256 * (queues // 100)


def _frameworks(platform: Platform) -> list[str]:
    """Jobs and JobSets, and Kueue's pod, deployment and statefulset integrations, so that a bare
    Pod, Deployment or StatefulSet in a team namespace is gated until its queue admits it instead of
    running on accelerator nodes outside every quota (Kueue docs: run plain Pods, deployments)."""
    jobset = ["jobset.x-k8s.io/jobset"] if platform.install_jobset else []
    return ["batch/job", *jobset, "pod", "deployment", "statefulset"]


def kueue_manager_config(platform: Platform) -> dict[str, Any]:
    """The controller's Configuration (config.kueue.x-k8s.io/v1beta2), as the chart embeds it. Nothing
    in it depends on the teams, so onboarding a team never changes the release (or restarts Kueue)."""
    k = platform.config.kueue
    conf: dict[str, Any] = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        # Usage and nominal quota per ClusterQueue are exported only when asked for (Kueue's metrics
        # reference); the README's quota queries read them.
        "metrics": {"bindAddress": ":8443", "enableClusterQueueResources": True},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "clientConnection": {"qps": 50, "burst": 100},
        "integrations": {"frameworks": _frameworks(platform)},
        # Jobs in a team namespace without a queue label are suspended by Kueue, not run around it.
        "manageJobsWithoutQueueName": k.manage_jobs_without_queue_name,
        "managedJobsNamespaceSelector": {"matchExpressions": [{"key": TEAM_LABEL, "operator": "Exists"}]},
        # Pods asking for cpu and memory are admitted on accelerator quota alone (see KueueConfig.quota_check).
        "resources": {"quotaCheckStrategy": k.quota_check},
        # On by default in Kueue 0.19; stated so the timeout is ours. blockAdmission stays false: the docs
        # ("Setup All-or-nothing with ready Pods", Drawbacks) warn that it admits workloads one at a time,
        # so one flex-start slice scaling from zero would hold back every team for the whole timeout.
        "waitForPodsReady": {"timeout": k.wait_for_pods_ready_timeout, "blockAdmission": False,
                             "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60,
                                                   "backoffMaxSeconds": 3600}},
    }
    if k.fair_sharing:
        conf["fairSharing"] = {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}
    return conf


def kueue_values(platform: Platform) -> dict[str, Any]:
    k = platform.config.kueue
    return {
        "controllerManager": {"manager": {"resources": controller_resources(k.controller_cpu, k.controller_memory)}},
        "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(
            kueue_manager_config(platform), sort_keys=False)},
    }
