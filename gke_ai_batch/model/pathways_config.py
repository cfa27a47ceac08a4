"""A team's Pathways block: the CPU pool its Pathways heads run on, and how many heads at once."""
from __future__ import annotations

from pydantic import Field

from gke_ai_batch.model.field_rules import DNS_LABEL, Model, text


class PathwaysConfig(Model):
    """Pathways for the team's TPU jobs: each Pathways JobSet has one `pathways-head` pod (proxy and
    resource manager) on CPU nodes beside its TPU `worker` slices; the team's ClusterQueue gets the
    heads' cpu and memory on the head pool's flavor (docs/scenarios/pathways.md)."""

    head_pool: str | None = text(DNS_LABEL, None, max_length=40)
    """Required: the cpu_pools entry the heads run on (Google's tools call it cpu-np); one head takes a node.
    Left out, the plan names the cpu pools to choose from."""
    heads: int = Field(1, ge=1, le=100, strict=True)
    """Pathways jobs the team may run at once: the quota holds this many heads, and the head pool must
    have a node for each."""
