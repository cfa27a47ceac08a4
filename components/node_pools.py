"""Where a node pool goes: the cluster it joins and the resource labels its VMs carry."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi


@dataclass
class PoolPlacement:
    """The cluster a pool joins and the labels its VMs carry."""

    project: str
    cluster: pulumi.Input[str]
    location: pulumi.Input[str]
    labels: dict[str, str]
