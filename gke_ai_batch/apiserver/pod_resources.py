"""A pod's resources as the API server validates them (Kubernetes v1.33 `pkg/apis/core/validation`,
`ValidateContainerResourceRequirements`): a container's request of a resource may not be above its limit of it, and
of a resource the node cannot overcommit (an extended resource such as `nvidia.com/gpu` or `google.com/tpu`, or huge
pages: `helper.IsOvercommitAllowed`) the container must name a limit equal to the request. A Job's, JobSet's,
CronJob's, Deployment's or StatefulSet's validation judges its pod template the same way, so the workload itself is
refused, in the validation's words.

A container naming only a limit already has it as its request (the API server's defaulting), so only a request
without its limit is refused. The team namespace's LimitRange refuses nothing: it holds only `defaultRequest`
(plan.tenancy.limit_range), which LimitRanger gives a container naming neither a request nor a limit of cpu or
memory, so a default never lands above a limit."""
from __future__ import annotations

from collections.abc import Iterator

from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.vocabulary import Obj

MISSING_LIMIT = "Required value: Limit must be set for non overcommitable resources"


def overcommit_allowed(resource: str) -> bool:
    """Kubernetes' IsOvercommitAllowed: a native resource (no domain, or a kubernetes.io one) other than huge pages."""
    native = "/" not in resource or "kubernetes.io/" in resource
    return native and not resource.startswith("hugepages-")


def _containers(spec: Obj) -> Iterator[tuple[str, Obj]]:
    for field in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(field) or []):
            yield f"spec.{field}[{i}]", c


def invalid_resources(spec: Obj) -> str | None:
    """The first container of the pod spec whose requests its limits do not allow, in the validation's words,
    or None."""
    for path, container in _containers(spec):
        resources = container.get("resources") or {}
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        for r, asked in requests.items():
            found = _judge(r, asked, limits.get(r))
            if found:
                at = "limits" if found == MISSING_LIMIT else "requests"
                return f"{path}.resources.{at}: {found}"
    return None


def _judge(resource: str, asked: str | int, limit: str | int | None) -> str | None:
    if limit is None:
        return None if overcommit_allowed(resource) else MISSING_LIMIT
    wanted, bound = parse_quantity(asked), parse_quantity(limit)
    if wanted != bound and not overcommit_allowed(resource):
        return f'Invalid value: "{asked}": must be equal to {resource} limit of {limit}'
    if wanted > bound:
        return f'Invalid value: "{asked}": must be less than or equal to {resource} limit of {limit}'
    return None
