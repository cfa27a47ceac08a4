"""A pod's resources as the API server validates them (Kubernetes "Resource Management for Pods and Containers"):
a container's request of a resource may not be above its limit of it, in the validation's words ("must be less
than or equal to <resource> limit of <limit>"). A Job's, JobSet's, CronJob's, Deployment's or StatefulSet's
validation judges its pod template the same way, so the workload itself is refused.

The team namespace's LimitRange refuses nothing: it holds only `defaultRequest` (plan.tenancy.limit_range), which
LimitRanger gives a container naming neither a request nor a limit of cpu or memory; a container naming a limit
already has it as its request (the API server's defaulting), so a default never lands above a limit."""
from __future__ import annotations

from collections.abc import Iterator

from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.vocabulary import Obj

BOUNDED = ("cpu", "memory", "ephemeral-storage")  # extended resources: request and limit must be equal


def _containers(spec: Obj) -> Iterator[tuple[str, Obj]]:
    for field in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(field) or []):
            yield f"spec.{field}[{i}]", c


def request_above_limit(spec: Obj) -> str | None:
    """The first container of the pod spec whose request of cpu, memory or ephemeral storage is above its limit
    of it, in the validation's words, or None."""
    for path, container in _containers(spec):
        resources = container.get("resources") or {}
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        for r in BOUNDED:
            if r in requests and r in limits and parse_quantity(requests[r]) > parse_quantity(limits[r]):
                return (f'{path}.resources.requests: Invalid value: "{requests[r]}": must be less than or equal '
                        f"to {r} limit of {limits[r]}")
    return None
