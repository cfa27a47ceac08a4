"""ComputeClasses: the stack's GKE custom compute classes (cloud.google.com/v1 ComputeClass), one object each,
in the cluster whose auto-provisioning creates their node pools."""
from __future__ import annotations

import pulumi

from gke_ai_batch.plan.compute_classes import ComputeClassPlan
from gke_ai_batch.vocabulary import component_type

from .manifests import declare


class ComputeClasses(pulumi.ComponentResource):
    def __init__(self, name: str, classes: tuple[ComputeClassPlan, ...], opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("ComputeClasses"), name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.objects = {c.name: declare(f"{name}-{c.name}", c.manifest(), child) for c in classes}
        self.register_outputs({"computeClasses": list(self.objects)})
