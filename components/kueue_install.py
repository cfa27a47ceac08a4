"""KueueInstall: the official Kueue Helm chart, configured for the platform's teams and pools."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from gke_ai_batch.vocabulary import KUEUE_NAMESPACE, KUEUE_RELEASE, component_type

from .helm_install import child_options, helm_release


@dataclass
class KueueInstallArgs:
    chart: str
    version: str
    values: dict[str, Any]


class KueueInstall(pulumi.ComponentResource):
    def __init__(self, name: str, args: KueueInstallArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("KueueInstall"), name, None, opts)
        self.release = helm_release(f"{name}-release", KUEUE_RELEASE, args.chart, args.version, KUEUE_NAMESPACE,
                                    args.values, child_options(self, opts))
        self.register_outputs({"status": self.release.status})
