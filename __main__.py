"""The platform program: validate this stack's config, then declare every component of it.
Runs unchanged under `pulumi up` and under the offline plan (python -m gke_ai_batch.offline plan)."""
import pulumi
from pulumi.runtime.config import CONFIG

from gke_ai_batch.components.fleet import WorkerStacks, worker_output
from gke_ai_batch.components.platform import declare_platform
from gke_ai_batch.model.config import CONFIG_KEY
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.fleet_facts import WORKER_OUTPUT
from gke_ai_batch.model.input_limits import parse_config
from gke_ai_batch.plan.platform import build_platform

workers = WorkerStacks()  # a fleet manager's worker stacks, read before anything is planned
try:
    platform = build_platform(parse_config(pulumi.Config().get(CONFIG_KEY)), pulumi.get_project(), CONFIG.get(),
                              worker_outputs=workers)
except ConfigError as e:
    raise pulumi.RunError(str(e)) from None

declared = declare_platform(platform, workers=workers)
pulumi.export("cluster", declared.cluster.name)
pulumi.export("endpoint", declared.cluster.endpoint)
pulumi.export("kubeconfig", declared.cluster.kubeconfig)
pulumi.export("nodePools", [p.name for p in platform.pools])
pulumi.export("localQueues", {t.name: {"namespaces": list(t.namespaces), "queue": t.local_queue}
                              for t in platform.scheduling.teams})
if platform.config.fleet is not None and platform.config.fleet.role == "worker":
    pulumi.export(WORKER_OUTPUT, worker_output(platform, declared.cluster))
