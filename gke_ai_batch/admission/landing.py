"""Whether an admitted pod set's pods can land anywhere, judged on the labels the platform knows exactly which
nodes carry: a compute class's name, a pool flavor's label and a node pool's name.

Kueue matches a flavor on the flavor's own label keys only, and then adds the flavor's labels to the pods' node
selector. So a pod set selecting a compute class and a pool flavor (or a node pool) is admitted on whichever
flavor matched, and its pods need both: GKE gives a compute class's pods only nodes of the class ("GKE only
schedules Pods that request a specific ComputeClass on nodes in node pools that you associate with that
ComputeClass": GKE, About custom compute classes), whose nodes carry no pool flavor's label, and a pool's nodes
carry no compute class's label unless the pool is associated with it. The pods never schedule, and hold the quota
until waitForPodsReady evicts the workload.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from gke_ai_batch.model.pool_facts import PoolFacts
from gke_ai_batch.vocabulary import COMPUTE_CLASS_LABEL, FLAVOR_LABEL, NODE_POOL_LABEL, Obj

from .results import PodSet, PodSetAssignment

if TYPE_CHECKING:
    from .cluster import Cluster

KNOWN = (COMPUTE_CLASS_LABEL, FLAVOR_LABEL, NODE_POOL_LABEL)
SOURCE = ("GKE only schedules Pods that request a specific ComputeClass on nodes in node pools that you associate "
          "with that ComputeClass (GKE: About custom compute classes)")


def _carries(pool: PoolFacts, wanted: dict[str, str]) -> bool:
    labels = {**pool.node_labels, NODE_POOL_LABEL: pool.name}
    return all(labels.get(k) == v for k, v in wanted.items())


def landing_warnings(cluster: Cluster, ps: PodSet, psa: PodSetAssignment) -> list[str]:
    """A line per assigned flavor whose pods, with its labels added, select known labels no node pool carries
    together; nothing where the cluster's pools are not known (Autopilot)."""
    out = []
    for choice in psa.flavors:
        if not cluster.pools_behind(choice.flavor):
            continue
        flavor = _labels(cluster.get("ResourceFlavor", choice.flavor))
        selector = {**(ps.spec.get("nodeSelector") or {}), **flavor}
        wanted = {k: str(selector[k]) for k in KNOWN if k in selector}
        if len(wanted) < 2 or any(_carries(p, wanted) for p in cluster.pools):
            continue
        asked = ", ".join(f"{k}={v}" for k, v in wanted.items())
        why = f"{SOURCE}, and none carries the others" if COMPUTE_CLASS_LABEL in wanted else "no node pool has them all"
        out.append(f"pod set {ps.name} got flavor {choice.flavor}, and its pods then select {asked}, which no node "
                   f"carries together ({why}): its pods never schedule, and hold the quota until waitForPodsReady "
                   f"evicts the workload; {_way(cluster, choice.flavor, flavor, wanted)}")
    return out


def _way(cluster: Cluster, name: str, flavor: dict[str, str], wanted: dict[str, str]) -> str:
    """What to select instead: a class's pod set that Kueue gave a pool's flavor (matched on that flavor's own
    keys, which do not include the class's) selects the class flavor's other labels too."""
    wanted_class = wanted.get(COMPUTE_CLASS_LABEL)
    if wanted_class and COMPUTE_CLASS_LABEL not in flavor:
        theirs = next((_labels(f) for f in (cluster.objects.get("ResourceFlavor") or {}).values()
                       if _labels(f).get(COMPUTE_CLASS_LABEL) == wanted_class), {})
        others = ", ".join(f"{k}={v}" for k, v in theirs.items() if k != COMPUTE_CLASS_LABEL)
        return (f"Kueue matched flavor {name} on its own labels, which do not name {COMPUTE_CLASS_LABEL}: select the "
                f"class's other labels too ({others or 'none'}), so that only its flavor matches")
    return "select the compute class alone to run on its nodes, or the pool's flavor alone to run on that pool"


def _labels(flavor: Obj | None) -> dict[str, str]:
    return dict(((flavor or {}).get("spec") or {}).get("nodeLabels") or {})
