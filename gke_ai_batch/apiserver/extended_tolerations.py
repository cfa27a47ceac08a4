"""ExtendedResourceToleration, the admission plugin GKE runs so that pods requesting GPUs tolerate the
`nvidia.com/gpu` taint GKE puts on GPU nodes (GKE's GPU page: "GKE automatically applies corresponding tolerations
to Pods requesting GPUs by running the ExtendedResourceToleration admission controller"). Kubernetes v1.33.13
plugin/pkg/admission/extendedresourcetoleration: on a pod (not a template), for each extended resource its
containers or init containers request, a toleration `{key: <resource>, operator: Exists, effect: NoSchedule}`
unless an equal one is there. A Job's or JobSet's template gets none: Kueue's topology-aware scheduling reads the
template, so a TAS job on GPU nodes states the toleration itself (as GKE's own job samples do)."""
from __future__ import annotations

import copy

from gke_ai_batch.vocabulary import Obj

REQUESTS_PREFIX = "requests."  # core.DefaultResourceRequestsPrefix


def _extended(resource: str) -> bool:
    """helper.IsExtendedResourceName: a resource in a domain other than kubernetes.io (not `requests.`)."""
    domain = resource.partition("/")[0] if "/" in resource else ""
    native = not domain or domain == "kubernetes.io" or domain.endswith(".kubernetes.io")
    return not native and not resource.startswith(REQUESTS_PREFIX)


def with_extended_tolerations(pod: Obj) -> Obj:
    """The pod as the plugin leaves it: a copy with the tolerations added, or the pod itself when none is."""
    spec = pod.get("spec") or {}
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    requested = sorted({r for c in containers for r in ((c.get("resources") or {}).get("requests") or {})
                        if _extended(r)})
    tolerations = list(spec.get("tolerations") or [])
    wanted = [{"key": r, "operator": "Exists", "effect": "NoSchedule"} for r in requested]
    missing = [t for t in wanted if t not in tolerations]
    if not missing:
        return pod
    out = copy.deepcopy(pod)
    out["spec"]["tolerations"] = tolerations + missing
    return out
