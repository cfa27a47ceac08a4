"""GpuDirectInstaller: GKE's NCCL installer DaemonSets for the cluster's GPUDirect pools, declared from the
upstream files vendored unmodified in gke_ai_batch/plan/upstream_installers (plan.gpudirect_networks)."""
from typing import Any

import pulumi

from gke_ai_batch.vocabulary import component_type

from .manifests import declare


class GpuDirectInstaller(pulumi.ComponentResource):
    def __init__(self, name: str, manifests: list[dict[str, Any]], opts: pulumi.ResourceOptions):
        super().__init__(component_type("GpuDirectInstaller"), name, None, opts)
        for m in manifests:
            declare(f"{name}-{m['metadata']['name']}", m, pulumi.ResourceOptions(parent=self))
        self.register_outputs({})
