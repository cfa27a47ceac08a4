"""Helm values for the Kueue and JobSet installs, derived from the platform (pure, testable)."""
from __future__ import annotations

import yaml

from .scheduling import NAMESPACE_NAME_LABEL

KUEUE_NAMESPACE = "kueue-system"
JOBSET_NAMESPACE = "jobset-system"


def controller_resources(queues: int, override_cpu: str | None, override_memory: str | None) -> dict:
    """Kueue keeps every queue and workload in memory: grow requests with the number of queues
    (chart default 500m / 512Mi) in 256Mi steps, one more CPU per 500 queues. Limits equal the
    requests: the chart's default cpu limit of 2 would otherwise stay below a larger request."""
    steps = queues // 100
    cpu = override_cpu or ("500m" if queues < 100 else str(1 + queues // 500))
    memory = override_memory or f"{512 + 256 * steps}Mi"
    return {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}}


def kueue_manager_config(platform) -> dict:
    """The controller's Configuration (config.kueue.x-k8s.io/v1beta2), as the chart embeds it."""
    k = platform.config.kueue
    frameworks = ["batch/job"] + (["jobset.x-k8s.io/jobset"] if platform.install_jobset else [])
    team_namespaces = sorted(ns for t in platform.scheduling.teams for ns in t.namespaces)
    conf: dict = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "clientConnection": {"qps": 50, "burst": 100},
        "integrations": {"frameworks": frameworks},
        # Jobs in a team namespace without a queue label are suspended by Kueue, not run around it.
        "manageJobsWithoutQueueName": k.manage_jobs_without_queue_name,
    }
    if team_namespaces:
        conf["managedJobsNamespaceSelector"] = {"matchExpressions": [
            {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": team_namespaces}]}
    if platform.wait_for_pods_ready:
        # All-or-nothing for multi-host slices: a workload whose pods are not all ready in time is
        # evicted and requeued instead of holding half a slice.
        conf["waitForPodsReady"] = {"timeout": k.wait_for_pods_ready_timeout, "blockAdmission": True,
                                    "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60,
                                                          "backoffMaxSeconds": 3600}}
    if k.fair_sharing:
        conf["fairSharing"] = {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}
    return conf


def kueue_values(platform) -> dict:
    k = platform.config.kueue
    s = platform.scheduling
    queues = len(s.cluster_queues) + sum(len(t.local_queue_manifests) for t in s.teams)
    return {
        "controllerManager": {"manager": {"resources": controller_resources(
            queues, k.controller_cpu, k.controller_memory)}},
        "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(
            kueue_manager_config(platform), sort_keys=False)},
    }
