"""TeamStorage: a team's Kubernetes service account in each of its namespaces, and read or
read-write access to every bucket it names, granted to that service account through Workload
Identity Federation for GKE (no Google service account, no key). Every input comes from
gke_ai_batch.plan.storage; the buckets the stack creates come from TeamBuckets."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.plan.storage import TeamStoragePlan, workload_principal
from gke_ai_batch.vocabulary import component_type

from .manifests import declare


@dataclass
class TeamStorageArgs:
    plan: TeamStoragePlan
    project: str
    project_number: pulumi.Input[str]  # the cluster project's number: it names the workload identity pool
    created: dict[str, pulumi.Output[str]]  # every bucket the stack creates (TeamBuckets.names), by name
    team: pulumi.Resource  # the Team, whose namespaces hold the service accounts


class TeamStorage(pulumi.ComponentResource):
    def __init__(self, name: str, args: TeamStorageArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("TeamStorage"), name, None, opts)
        plan, child = args.plan, pulumi.ResourceOptions(parent=self)
        for m in plan.service_account_manifests():
            declare(f"{name}-sa-{m['metadata']['namespace']}", m,
                    pulumi.ResourceOptions(parent=self, depends_on=[args.team]))
        for b in plan.buckets:
            bucket = args.created.get(b.name, b.name)  # a created bucket's output: granted once it exists
            for ns in plan.namespaces:
                gcp.storage.BucketIAMMember(f"{name}-{b.name}-{ns}", bucket=bucket, role=b.role,
                                            member=self._principal(args, ns), opts=child)
        self.register_outputs({"serviceAccount": plan.service_account, "buckets": [b.name for b in plan.buckets]})

    @staticmethod
    def _principal(args: TeamStorageArgs, namespace: str) -> pulumi.Output[str]:
        """The team's service account in `namespace`, as Workload Identity Federation names it."""
        return pulumi.Output.from_input(args.project_number).apply(
            lambda number: workload_principal(number, args.project, namespace, args.plan.service_account))
