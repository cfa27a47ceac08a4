"""KueueQueues: the cluster-scoped queueing objects (ResourceFlavors, Cohorts, admission checks and
ClusterQueues), created only after the Kueue release is ready."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pulumi

from gke_ai_batch.plan.scheduling import SchedulingPlan
from gke_ai_batch.vocabulary import Manifest, component_type

from .manifests import declare


@dataclass
class KueueQueuesArgs:
    plan: SchedulingPlan
    installs: list[pulumi.Resource]  # the Kueue release and JobSet's, when installed (none on a cluster with its own)


class KueueQueues(pulumi.ComponentResource):
    def __init__(self, name: str, args: KueueQueuesArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("KueueQueues"), name, None, opts)
        after_install = pulumi.ResourceOptions(parent=self, depends_on=args.installs)
        p = args.plan

        def objects(prefix: str, manifests: Iterable[Manifest],
                    opts: pulumi.ResourceOptions) -> dict[str, pulumi.CustomResource]:
            return {m["metadata"]["name"]: declare(f"{name}-{prefix}-{m['metadata']['name']}", m, opts)
                    for m in manifests}

        # A TAS flavor names its Topology: create that first.
        self.topologies = objects("topology", p.topologies, after_install)
        self.flavors = objects("flavor", [f.manifest() for f in p.flavors.values()], pulumi.ResourceOptions(
            parent=self, depends_on=[*args.installs, *self.topologies.values()]))
        self.cohorts = objects("cohort", p.cohorts, after_install)
        self.admission_checks = objects("check", p.admission_checks, after_install)
        # A ClusterQueue names flavors, a cohort and admission checks: create those first.
        before_queues: list[pulumi.Resource] = [*self.flavors.values(), *self.cohorts.values(),
                                                *self.admission_checks.values()]
        self.cluster_queues = objects("cq", [q.manifest for q in p.cluster_queues], pulumi.ResourceOptions(
            parent=self, depends_on=[*args.installs, *before_queues]))
        self.register_outputs({"clusterQueues": list(self.cluster_queues)})
