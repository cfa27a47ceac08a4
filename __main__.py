"""The platform program: validate this stack's config, then declare every component of it, or with the
`kubernetesOnly` key only its Kubernetes layer onto a cluster that exists (gke_ai_batch.model.kubernetes_only).
Runs unchanged under `pulumi up` and under the offline plan (python -m gke_ai_batch.offline plan)."""
from pathlib import Path

import pulumi
from pulumi.runtime.config import CONFIG

from gke_ai_batch.components.fleet import WorkerStacks, worker_output
from gke_ai_batch.components.kubernetes_only import declare_kubernetes_only
from gke_ai_batch.components.platform import declare_platform
from gke_ai_batch.model.config import CONFIG_KEY
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.fleet_facts import WORKER_OUTPUT
from gke_ai_batch.model.input_limits import parse_config
from gke_ai_batch.model.kubernetes_only import KUBERNETES_ONLY_KEY, read_kubernetes_only, refuse_fleet
from gke_ai_batch.plan.component_plans import platform as plan_platform

workers = WorkerStacks()  # a fleet manager's worker stacks, read before anything is planned
try:
    existing = read_kubernetes_only(pulumi.Config().get(KUBERNETES_ONLY_KEY), Path(__file__).parent)
    raw = parse_config(pulumi.Config().get(CONFIG_KEY))
    if existing is not None:
        refuse_fleet(raw)
    declared = plan_platform(raw, pulumi.get_project(), CONFIG.get(), worker_outputs=workers)
    platform = declared.platform
except ConfigError as e:
    raise pulumi.RunError(str(e)) from None

if existing is None:
    resources = declare_platform(declared, workers=workers)
    pulumi.export("cluster", resources.cluster.name)
    pulumi.export("endpoint", resources.cluster.endpoint)
    pulumi.export("kubeconfig", resources.cluster.kubeconfig)
    pulumi.export("nodePools", [p.name for p in platform.pools])
    if platform.config.fleet is not None and platform.config.fleet.role == "worker":
        pulumi.export(WORKER_OUTPUT, worker_output(platform, resources.cluster))
else:
    declare_kubernetes_only(declared.kueue, existing)
    pulumi.export("endpoint", existing.server)
pulumi.export("localQueues", {t.name: {"namespaces": list(t.namespaces), "queue": t.local_queue}
                              for t in platform.scheduling.teams})
