"""The LimitRanger admission plugin on a pod of a team namespace (Kubernetes "Limit Ranges"): the API server
first gives a container that names a limit but no request that limit as its request; LimitRanger then fills
in the namespace's default limit and default request where a container names none, the pod's validation
refuses a request above its limit, and LimitRanger refuses a limit above `maxLimitRequestRatio` x request,
in the plugin's words (plugin/pkg/admission/limitranger: "<resource> max limit to request ratio per
Container is <ratio>, but provided ratio is <observed>").

A container a mutating webhook adds after LimitRanger's defaults gets none of them and is held to the ratio
as it comes: GKE's Cloud Storage FUSE sidecar, added to a pod annotated `gke-gcsfuse/volumes: "true"`, is
judged with the requests and limits its pod's annotations give it (`gke-gcsfuse/cpu-request`,
`gke-gcsfuse/cpu-limit`, `gke-gcsfuse/memory-request`, `gke-gcsfuse/memory-limit`: GKE's "Configure the
Cloud Storage FUSE CSI driver sidecar container" page), so a pod that leaves them out is refused here."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.vocabulary import Obj

RESOURCES = ("cpu", "memory")


FUSE_SIDECAR = "gke-gcsfuse-sidecar"


def _containers(spec: Obj, meta: Obj) -> Iterator[tuple[str, Obj, bool]]:
    """(path, container, whether LimitRanger's defaults reach it) of every container the pod will have."""
    for field in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(field) or []):
            yield f"spec.{field}[{i}]", c, True
    annotations = meta.get("annotations") or {}
    if annotations.get("gke-gcsfuse/volumes") == "true":
        resources = {kind: {r: annotations[f"gke-gcsfuse/{r}-{kind[:-1]}"] for r in RESOURCES
                            if f"gke-gcsfuse/{r}-{kind[:-1]}" in annotations} for kind in ("requests", "limits")}
        yield f"the {FUSE_SIDECAR} container GKE adds", {"resources": resources}, False


def _defaulted(container: Obj, item: Obj, reached: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """(requests, limits) of a container after the API server's defaulting and LimitRanger's defaults."""
    resources = container.get("resources") or {}
    limits = {r: v for r, v in (resources.get("limits") or {}).items() if r in RESOURCES}
    requests = {r: v for r, v in (resources.get("requests") or {}).items() if r in RESOURCES}
    requests = {**{r: v for r, v in limits.items() if r not in requests}, **requests}
    if not reached:
        return requests, limits
    limits = {**{r: v for r, v in (item.get("default") or {}).items() if r not in limits}, **limits}
    requests = {**{r: v for r, v in (item.get("defaultRequest") or {}).items() if r not in requests}, **requests}
    return requests, limits


def violation(spec: Obj, meta: Obj, limit_range: Obj) -> str | None:
    """Why the pod's validation or LimitRanger refuses the pod (its spec and metadata), or None."""
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        if item.get("type") != "Container":
            continue
        for path, container, reached in _containers(spec, meta):
            requests, limits = _defaulted(container, item, reached)
            for r in RESOURCES:
                if r in requests and r in limits and parse_quantity(requests[r]) > parse_quantity(limits[r]):
                    return (f'{path}.resources.requests: Invalid value: "{requests[r]}": must be less than or equal '
                            f"to {r} limit of {limits[r]}")
            for r, ratio in sorted((item.get("maxLimitRequestRatio") or {}).items()):
                found = _ratio(r, str(ratio), requests.get(r), limits.get(r))
                if found:
                    return found if reached else f"{path}: {found}"
    return None


def _ratio(resource: str, ratio: str, request: Any, limit: Any) -> str | None:
    head = f"{resource} max limit to request ratio per Container is {ratio}, but "
    if request is None or parse_quantity(request) == 0:
        return head + "no request is specified or request is 0"
    if limit is None or parse_quantity(limit) == 0:
        return head + "no limit is specified or limit is 0"
    observed = parse_quantity(limit) / parse_quantity(request)
    return head + f"provided ratio is {float(observed):.6f}" if observed > parse_quantity(ratio) else None
