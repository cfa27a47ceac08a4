"""TeamBuckets: the Cloud Storage buckets a team creates, private (see plan.storage.bucket_inputs).
Declared for every team before any grant, so that a team naming another team's bucket (existing:
true) is granted access only once the bucket exists."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.plan import lifecycle
from gke_ai_batch.plan.storage import TeamStoragePlan, bucket_inputs
from gke_ai_batch.vocabulary import component_type


@dataclass
class TeamBucketsArgs:
    plan: TeamStoragePlan
    project: str
    labels: dict[str, str]
    production: bool = False  # keep the buckets in Cloud Storage when removed from the stack
    protected: tuple[str, ...] = ()  # the buckets that refuse deletion (plan.lifecycle.protects)


class TeamBuckets(pulumi.ComponentResource):
    def __init__(self, name: str, args: TeamBucketsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("TeamBuckets"), name, None, opts)
        def child(bucket: str) -> pulumi.ResourceOptions:
            kept = lifecycle.bucket(bucket in args.protected, args.production)
            return pulumi.ResourceOptions(parent=self, **kept.options())
        self.names: dict[str, pulumi.Output[str]] = {
            b.name: gcp.storage.Bucket(f"{name}-{b.name}", **bucket_inputs(b, args.project, args.labels),
                                       opts=child(b.name)).name
            for b in args.plan.buckets if b.create}
        self.register_outputs({"buckets": list(self.names)})
