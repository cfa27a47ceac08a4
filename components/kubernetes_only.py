"""The platform's Kubernetes layer alone, on a cluster that exists (the stack's `kubernetesOnly` key,
gke_ai_batch.model.kubernetes_only): every object `make plan` writes to manifests/ (tenancy, priorities, queues,
teams with their service accounts, the scrape of Kueue's metrics, compute classes, GPUDirect network objects),
under the same names as on GKE, and nothing of Google Cloud nor the Kueue and JobSet releases.

That cluster runs its own Kueue and JobSet, so nothing here waits on an install: their CRDs and webhooks must
answer before the deploy, and their namespaces (where Kueue's metrics scrape lives) must exist. The objects
keep their order among themselves (namespaces before what is in them, flavors and cohorts before ClusterQueues,
ClusterQueues before LocalQueues)."""
from dataclasses import replace

import pulumi
import pulumi_kubernetes as k8s

from gke_ai_batch.model.kubernetes_only import ExistingCluster
from gke_ai_batch.plan.declarations import KueueDeclaration
from gke_ai_batch.plan.platform import Platform
from gke_ai_batch.vocabulary import KUBERNETES_ONLY_PROVIDER, PoolKind

from .compute_classes import ComputeClasses
from .kueue_layer import KueueResources, declare_kueue
from .pod_networks import declare_pod_networks
from .team_storage import TeamStorage, TeamStorageArgs

PROVIDER = KUBERNETES_ONLY_PROVIDER


def declare_kubernetes_only(plan: KueueDeclaration, cluster: ExistingCluster) -> KueueResources:
    """The Kubernetes objects of the platform through one provider on `cluster`."""
    platform = plan.platform
    provider = k8s.Provider(PROVIDER, kubeconfig=cluster.kubeconfig, context=cluster.context,
                            cluster_identifier=cluster.server)
    on = pulumi.ResourceOptions(providers=[provider])
    kueue = declare_kueue(plan, on, releases=False)
    if platform.scheduling.compute_classes:
        ComputeClasses("compute-classes", platform.scheduling.compute_classes, on)
    gpu = [p for p in platform.pools if p.kind == PoolKind.GPU]
    declare_pod_networks(platform.gpudirect_installers,
                         [(p, p.created_network_names(platform.config.cluster.name), []) for p in gpu], on)
    _service_accounts(platform, kueue, on)
    return kueue


def _service_accounts(platform: Platform, kueue: KueueResources, opts: pulumi.ResourceOptions) -> None:
    """Each team's Kubernetes service accounts, under the names the GKE stack gives them; their bucket grants
    are Google Cloud's (IAM on the buckets), so the storage is declared without buckets."""
    teams = {t.plan.name: t for t in kueue.teams}
    for s in platform.storage:
        TeamStorage(f"team-{s.team}-storage", TeamStorageArgs(replace(s, buckets=()), platform.config.project,
                                                               "", {}, teams[s.team]), opts)  # no grant: no number
