"""Priorities: PriorityClasses for pod preemption (hotswap) and Kueue WorkloadPriorityClasses for
admission order, from one list in the stack config."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi

from gke_ai_batch.vocabulary import Manifest, component_type

from .manifests import declare


@dataclass
class PrioritiesArgs:
    priority_classes: tuple[Manifest, ...]
    workload_priority_classes: tuple[Manifest, ...]
    kueue: list[pulumi.Resource]  # the Kueue release (none on a cluster with its own): its CRDs and webhook first


class Priorities(pulumi.ComponentResource):
    def __init__(self, name: str, args: PrioritiesArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("Priorities"), name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.priority_classes = {m["metadata"]["name"]: declare(f"{name}-pc-{m['metadata']['name']}", m, child)
                                 for m in args.priority_classes}
        kueue = pulumi.ResourceOptions(parent=self, depends_on=args.kueue)
        self.workload_priority_classes = {
            m["metadata"]["name"]: declare(f"{name}-wpc-{m['metadata']['name']}", m, kueue)
            for m in args.workload_priority_classes}
        self.register_outputs({"priorityClasses": list(self.priority_classes)})
