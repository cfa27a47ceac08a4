"""What a change of Kueue's configuration does on the cluster, for `make diff`: the diff shows the configuration
key by key (offline.changes.inputs), and a reviewer must also know that applying it restarts Kueue's controller.

Kueue reads its Configuration once, at startup: cmd/kueue/main.go (kubernetes-sigs/kueue v0.19.2) loads the file
named by `--config` (`apply(configFile)`, pkg/config `Load`) before it builds the manager, and the chart mounts
the ConfigMap into the manager with a subPath, which the kubelet never refreshes in a running container
(charts/kueue/templates/manager/manager.yaml). The same template annotates the pod with
`charts.kueue.x-k8s.io/config-checksum`, a sha256 of the rendered ConfigMap, so the Helm release (plan.installs
sets the configuration as `managerConfig.controllerManagerConfigYaml`) changes the Deployment's pod template and
the Deployment rolls: one replica at a time (its default RollingUpdate, maxUnavailable 25% of 2 rounds to 0; our
PodDisruptionBudget keeps one), the other replica answering the webhooks meanwhile. The leader steps down as it
stops (pkg/config/config.go: `LeaderElectionReleaseOnCancel` when leader election is on) and the next replica
takes the lease and rebuilds its queues and cache from the API before it admits.

The chart's other controller-manager values are in the same pod template (the manager's image, resources,
priority class, probes, feature gates; the pod's tolerations, node selector and spread: manager.yaml), so a
change of them (a new `kueue.controller_cpu`, a memory size that follows the teams' object quotas, a new image)
rolls the Deployment the same way. Only `replicas`, `strategy` (Deployment spec) and `podDisruptionBudget`
(pdb.yaml) are outside it.
"""
from __future__ import annotations

from collections.abc import Sequence

from gke_ai_batch.vocabulary import HELM_RELEASE

from .inputs import under

CONFIGURATION = "values.managerConfig.controllerManagerConfigYaml"
MANAGER = "values.controllerManager"
OUTSIDE_POD_TEMPLATE = ("replicas", "strategy", "podDisruptionBudget")
_ROLLS = ("controller-manager Deployment one replica at a time. Running workloads keep running; admission pauses "
          "while the leader hands over and the new one rebuilds its queues")
RESTART = ("Kueue's controller restarts to read this: Kueue reads its configuration only at startup "
           "(kueue v0.19.2 cmd/kueue/main.go), and the chart's config-checksum annotation rolls the "
           f"{_ROLLS}; then the new settings apply to "
           "every workload, admitted ones too (a shorter waitForPodsReady timeout can evict those not ready in "
           "time, new preemption or fair-sharing settings can preempt running ones)")
POD_RESTART = ("Kueue's controller restarts for this: it is in the controller-manager's pod template (kueue v0.19.2 "
               f"charts/kueue/templates/manager/manager.yaml), so the change rolls the {_ROLLS}")


def _in_pod_template(path: str) -> bool:
    return under(path, MANAGER) and not any(under(path, f"{MANAGER}.{k}") for k in OUTSIDE_POD_TEMPLATE)


def restart_lines(type_: str, changed: Sequence[str]) -> list[str]:
    """The restart line for an update of Kueue's release that changes its configuration or its controller's pod
    template, else none."""
    if type_ != HELM_RELEASE:
        return []
    if any(under(p, CONFIGURATION) for p in changed):
        return [RESTART]
    return [POD_RESTART] if any(map(_in_pod_template, changed)) else []
