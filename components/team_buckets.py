"""TeamBuckets: the Cloud Storage buckets a team creates, private (plan.declarations, plan.storage.bucket_inputs).
Declared for every team before any grant, so that a team naming another team's bucket (existing:
true) is granted access only once the bucket exists."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.plan.declarations import BucketDeclaration
from gke_ai_batch.vocabulary import component_type


@dataclass
class TeamBucketsArgs:
    buckets: list[BucketDeclaration]


class TeamBuckets(pulumi.ComponentResource):
    def __init__(self, name: str, args: TeamBucketsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("TeamBuckets"), name, None, opts)
        self.names: dict[str, pulumi.Output[str]] = {
            b.name: gcp.storage.Bucket(f"{name}-{b.name}", **b.inputs, opts=pulumi.ResourceOptions(
                parent=self, **b.lifecycle.options())).name
            for b in args.buckets}
        self.register_outputs({"buckets": list(self.names)})
