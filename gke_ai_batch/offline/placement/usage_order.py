"""What `make admit` adds for a ClusterQueue that orders its LocalQueues by usage (Kueue's Admission Fair
Sharing): an empty cluster admits the workload at once, but on a busy queue its turn depends on how much its
LocalQueue used lately, divided by its weight, not on when it was submitted (concepts/admission_fair_sharing.md
at Kueue v0.19.2)."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from gke_ai_batch.vocabulary import QUEUE_LABEL, USAGE_BASED_ADMISSION, Manifest, Obj


@dataclass(frozen=True)
class UsageOrder:
    """The LocalQueues of each usage-ordered ClusterQueue, as `namespace/name` -> weight."""

    weights: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def of(cls, manifests: Iterable[Manifest]) -> UsageOrder:
        listed = list(manifests)
        ordered = {m["metadata"]["name"] for m in listed if m.get("kind") == "ClusterQueue"
                   and (m["spec"].get("admissionScope") or {}).get("admissionMode") == USAGE_BASED_ADMISSION}
        weights: dict[str, dict[str, str]] = {cq: {} for cq in ordered}
        for m in listed:
            cq = str((m.get("spec") or {}).get("clusterQueue"))
            if m.get("kind") == "LocalQueue" and cq in ordered:
                name = f"{m['metadata']['namespace']}/{m['metadata']['name']}"
                weights[cq][name] = str((m["spec"].get("fairSharing") or {}).get("weight", 1))
        return cls(weights)

    def note(self, doc: Obj, cluster_queue: str | None) -> str | None:
        """One line for an admitted workload of a usage-ordered ClusterQueue; None for any other."""
        queues = self.weights.get(cluster_queue or "")
        if not queues:
            return None
        meta = doc.get("metadata") or {}
        own = f"{meta.get('namespace') or 'default'}/{(meta.get('labels') or {}).get(QUEUE_LABEL)}"
        others = ", ".join(f"{q} {w}" for q, w in sorted(queues.items()) if q != own)
        return (f"  ordered by usage: ClusterQueue {cluster_queue} admits pending work first from the LocalQueue "
                f"that used least lately, per weight (admission fair sharing); {own} has weight "
                f"{queues.get(own, '1')} (others: {others or 'none'}): on a busy queue its turn depends on that "
                "usage, not on when it was submitted")
