"""JobSetInstall: the official JobSet Helm chart, for multi-host TPU workloads (one Job per slice)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi

from gke_ai_batch.vocabulary import JOBSET_NAMESPACE, JOBSET_RELEASE, component_type

from .helm_install import child_options, helm_release


@dataclass
class JobSetInstallArgs:
    chart: str
    version: str
    values: dict[str, Any] = field(default_factory=dict)


class JobSetInstall(pulumi.ComponentResource):
    def __init__(self, name: str, args: JobSetInstallArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("JobSetInstall"), name, None, opts)
        self.release = helm_release(f"{name}-release", JOBSET_RELEASE, args.chart, args.version, JOBSET_NAMESPACE,
                                    args.values, child_options(self, opts))
        self.register_outputs({"status": self.release.status})
