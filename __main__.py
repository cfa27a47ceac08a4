"""The platform program: load and validate the stack config, then compose the components.
Runs unchanged under `pulumi up` and under the offline plan (python -m gke_ai_batch.offline plan)."""
import pulumi
from gke_ai_batch.components.gke_cluster import GkeCluster, GkeClusterArgs
from gke_ai_batch.components.gpu_pool import GpuPool, GpuPoolArgs
from gke_ai_batch.components.jobset_install import JobSetInstall, JobSetInstallArgs
from gke_ai_batch.components.kueue_install import KueueInstall, KueueInstallArgs
from gke_ai_batch.components.kueue_queues import KueueQueues, KueueQueuesArgs
from gke_ai_batch.components.priorities import Priorities, PrioritiesArgs
from gke_ai_batch.components.system_pool import SystemNodePool, SystemNodePoolArgs
from gke_ai_batch.components.team import Team, TeamArgs
from gke_ai_batch.components.tpu_slice_pool import TpuSlicePool, TpuSlicePoolArgs

from gke_ai_batch.model.config import CONFIG_KEY
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.plan.gke_inputs import cluster_inputs
from gke_ai_batch.plan.installs import kueue_values
from gke_ai_batch.plan.platform import build_platform

try:
    platform = build_platform(pulumi.Config().get_object(CONFIG_KEY))
except ConfigError as e:
    raise pulumi.RunError(str(e)) from None

cfg = platform.config
labels = cfg.resource_labels()
gke = GkeCluster("gke", GkeClusterArgs(cluster_inputs(cfg, labels)))
k8s_opts = pulumi.ResourceOptions(providers={"kubernetes": gke.provider})
where = dict(project=cfg.project, cluster=gke.cluster.name, location=gke.cluster.location, labels=labels)

system: list[pulumi.Resource] = []
for plan in platform.pools:
    if plan.kind == "system":
        system.append(SystemNodePool(plan.name, SystemNodePoolArgs(plan=plan, **where)))
    elif plan.kind == "gpu":
        GpuPool(plan.name, GpuPoolArgs(plan=plan, **where))
for tpu in cfg.tpu_pools:
    slices = [p for p in platform.pools if p.kind == "tpu" and p.source == tpu.name]
    TpuSlicePool(tpu.name, TpuSlicePoolArgs(slices=slices, **where))

# The controllers run on the system pool: install once it exists, not after every accelerator pool (a
# slice waiting for capacity must not hold back the scheduling layer of every team).
installs = pulumi.ResourceOptions.merge(k8s_opts, pulumi.ResourceOptions(depends_on=system))
kueue = KueueInstall("kueue", KueueInstallArgs(cfg.kueue.chart, cfg.kueue.version, kueue_values(platform)), installs)
releases: list[pulumi.Resource] = [kueue.release]
if platform.install_jobset:
    releases.append(JobSetInstall("jobset", JobSetInstallArgs(cfg.jobset.chart, cfg.jobset.version), installs).release)

s = platform.scheduling
Priorities("priorities", PrioritiesArgs(s.priority_classes, s.workload_priority_classes, kueue.release), k8s_opts)
queues = KueueQueues("queues", KueueQueuesArgs(s, releases), k8s_opts)
for team in s.teams:
    Team(f"team-{team.name}", TeamArgs(team, queues.cluster_queues[team.cluster_queue], kueue.release), k8s_opts)

pulumi.export("cluster", gke.cluster.name)
pulumi.export("endpoint", gke.cluster.endpoint)
pulumi.export("kubeconfig", gke.kubeconfig)
pulumi.export("nodePools", [p.name for p in platform.pools])
pulumi.export("localQueues", {t.name: {"namespaces": list(t.namespaces), "queue": t.local_queue} for t in s.teams})
