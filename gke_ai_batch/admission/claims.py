"""Kueue v0.19.2's step for a pending workload whose pods ask for devices through DRA resource claims, before the
scheduler sees it (pkg/controller/core/workload_controller.go `Reconcile`; pkg/dra/claims.go).

With `KueueDRAIntegration` (beta, on since v0.18; pkg/features/kube_features.go) Kueue reads every claim a pod set
names (`NeedsDRAReconcile`: `workload.HasDRA`):
- a claim by name (`resourceClaimName`) makes the workload inadmissible: Kueue counts only claims made from
  templates;
- for a `resourceClaimTemplateName` it reads the template in the workload's namespace (`getClaimSpec`), and
  refuses a missing one with the client's NotFound;
- each request's DeviceClass must be mapped to a quota resource by the Configuration's
  `resources.deviceClassMappings` (`mapper.Lookup`), which the platform does not declare.
The first failure is set as the workload's QuotaReserved condition message (`field.ErrorList.ToAggregate`) and the
workload waits, inadmissible, until it changes. With the gate off, `KueueDRARejectWorkloadsWhenDRADisabled` (beta,
on) refuses every such workload instead.

Not modelled: the device requests Kueue refuses before the mapping (`FirstAvailable`, `adminAccess`, allocation
mode `All`; `countDevicesPerClass`), and its CEL selectors checked against the cluster's ResourceSlices.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gke_ai_batch.vocabulary import Key, Obj

from .results import PodSet

GATE = "KueueDRAIntegration"
REJECT_GATE = "KueueDRARejectWorkloadsWhenDRADisabled"
TEMPLATE = "ResourceClaimTemplate"


def claim_reason(pod_sets: Sequence[PodSet], namespace: str, objects: Mapping[Key, Obj], config: Obj) -> str | None:
    """Why Kueue holds a workload whose pods name resource claims, in its words; None when it names none or
    Kueue can count them."""
    claims = list(_claims(pod_sets))
    if not claims:
        return None
    gates = config.get("featureGates") or {}
    if not gates.get(GATE, True):
        return (f"Workload uses DRA resources but the {GATE} feature gate is not enabled"
                if gates.get(REJECT_GATE, True) else None)
    if any(c.get("resourceClaimName") for _, _, _, c in claims):
        return f"{GATE} feature does not support use of resource claims"
    mapped = {dc for m in (config.get("resources") or {}).get("deviceClassMappings") or []
              for dc in m.get("deviceClassNames") or []}
    for i, ps, j, claim in claims:
        name = claim.get("resourceClaimTemplateName")
        if not name:
            continue
        path = f"spec.podSets[{i}].template.spec.resourceClaims[{j}]"
        template = objects.get((TEMPLATE, namespace, name))
        if template is None:
            return (f"{path}: Internal error: failed to get claim spec for {TEMPLATE} {name} in podset {ps.name}: "
                    f'resourceclaimtemplates.resource.k8s.io "{name}" not found')
        for device_class in _device_classes(template):
            if device_class not in mapped:
                return (f'{path}.resourceClaimTemplateName: Not found: "DeviceClass {device_class} is not mapped in '
                        f'DRA configuration for podset {ps.name}"')
    return None


def _claims(pod_sets: Sequence[PodSet]) -> Iterator[tuple[int, PodSet, int, dict[str, Any]]]:
    for i, ps in enumerate(pod_sets):
        for j, claim in enumerate(ps.spec.get("resourceClaims") or []):
            if claim.get("resourceClaimName") or claim.get("resourceClaimTemplateName"):
                yield i, ps, j, claim


def _device_classes(template: Obj) -> list[str]:
    """The DeviceClass of each request, in order: `exactly.deviceClassName` in resource.k8s.io/v1, the request's
    own `deviceClassName` in v1beta1."""
    requests = (((template.get("spec") or {}).get("spec") or {}).get("devices") or {}).get("requests") or []
    names = [(r.get("exactly") or {}).get("deviceClassName") or r.get("deviceClassName") for r in requests]
    return [n for n in names if n]
