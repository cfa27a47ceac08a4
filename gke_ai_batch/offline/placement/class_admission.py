"""`make admit` on a compute class's flavor: which of the class's ways would give an admitted job its nodes.
Kueue admits against quota alone; GKE then walks the class's chain. On an empty cluster the reserved priority
serves the nodes it holds, and the rest come from the next ways only if GKE can get them."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from gke_ai_batch.admission.pod_sets import pod_sets_of
from gke_ai_batch.admission.results import AdmissionResult
from gke_ai_batch.model.promises import ClassFacts, class_facts, class_of
from gke_ai_batch.vocabulary import COMPUTE_CLASS, Capacity, Obj

from ..engine.runtime import Registration


def flavor_classes(regs: Sequence[Registration]) -> dict[str, ClassFacts]:
    """Flavor name -> the compute class whose nodes it selects."""
    classes = {f.name: f for r in regs if r.type == COMPUTE_CLASS and (f := class_facts(r.inputs)) is not None}
    return {str(r.inputs["metadata"]["name"]): cc for r in regs
            if r.type.endswith(":ResourceFlavor") and (cc := class_of(r.inputs, classes)) is not None}


def served_by(cc: ClassFacts, nodes: int) -> str:
    later = " -> ".join(w for w in cc.ways if w != Capacity.RESERVATION) or "nothing"
    if not cc.reserved_nodes:
        return f"no priority is reserved: GKE tries {later} in order, and none is guaranteed"
    if nodes <= cc.reserved_nodes:
        return (f"the reserved priority serves them (it holds {cc.reserved_nodes}); past it GKE walks {later}, "
                "which come only if it can get them")
    return (f"the reserved priority holds {cc.reserved_nodes}; the other {nodes - cc.reserved_nodes} come from "
            f"{later} in order, only if GKE can get them (not guaranteed)")


def class_lines(workload: Obj, result: AdmissionResult, classes: Mapping[str, ClassFacts]) -> list[str]:
    """One line per pod set admitted on a compute class's flavor: the nodes it needs, and which way gives them."""
    per_pod = {ps.name: ps for ps in pod_sets_of(workload)}
    out = []
    for psa in result.pod_sets:
        for choice in psa.flavors:
            cc = classes.get(choice.flavor)
            ps = per_pod.get(psa.name)
            if cc is None or ps is None or cc.resource is None or not cc.per_node:
                continue
            nodes = math.ceil(ps.count * ps.per_pod.get(cc.resource, 0) / cc.per_node)
            out.append(f"  compute class {cc.name}: pod set {psa.name} needs {nodes} node(s) of {cc.machine_type}; "
                       f"{served_by(cc, nodes)}")
    return out
