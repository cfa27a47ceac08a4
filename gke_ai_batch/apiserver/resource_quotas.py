"""The ResourceQuota admission plugin on one object created in an empty namespace: what the object charges
against each quota of its namespace (Kubernetes "Resource Quotas": object counts, `services.nodeports`,
`services.loadbalancers`, `persistentvolumeclaims`, `requests.storage`), refused when a charge exceeds a
hard limit, in the plugin's words (`exceeded quota: <name>, requested: r=n, used: r=0, limited: r=h`).

It runs after the admission policies, as the API server runs it (the last validating plugin). Only the
object's own charge is judged: what the namespace already holds is unknown offline, so a flood shows as
the count its quota allows, not as a refusal here."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.vocabulary import Obj

_COUNTED = {("v1", "Service"): "count/services", ("v1", "ConfigMap"): "count/configmaps",
            ("v1", "Secret"): "count/secrets", ("apps/v1", "Deployment"): "count/deployments.apps",
            ("apps/v1", "ReplicaSet"): "count/replicasets.apps", ("apps/v1", "StatefulSet"): "count/statefulsets.apps",
            ("batch/v1", "Job"): "count/jobs.batch", ("jobset.x-k8s.io/v1alpha2", "JobSet"):
            "count/jobsets.jobset.x-k8s.io"}


def charges(obj: Obj) -> dict[str, str]:
    """What creating obj adds to each quota resource, as a quantity."""
    kind, spec = str(obj.get("kind")), obj.get("spec") or {}
    out = {r: "1" for (api, k), r in _COUNTED.items() if k == kind and obj.get("apiVersion") == api}
    if kind == "Pod":
        out["pods"] = "1"
    if kind == "Service":
        out.update(_service(spec))
    if kind == "PersistentVolumeClaim":
        out["persistentvolumeclaims"] = "1"
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
        if storage is not None:
            out["requests.storage"] = str(storage)
    return out


def _service(spec: Obj) -> Iterator[tuple[str, str]]:
    """A NodePort Service takes a node port per port, and so does a LoadBalancer unless it opts out
    (allocateLoadBalancerNodePorts: false)."""
    kind = spec.get("type", "ClusterIP")
    if kind == "LoadBalancer":
        yield "services.loadbalancers", "1"
    if kind == "NodePort" or (kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts", True)):
        yield "services.nodeports", str(len(spec.get("ports") or []))


def exceeded(obj: Obj, quotas: Iterable[Obj]) -> tuple[str, str] | None:
    """(quota name, the plugin's message) for the first quota obj's charge exceeds, or None."""
    charged = charges(obj)
    for quota in quotas:
        hard = (quota.get("spec") or {}).get("hard") or {}
        over = sorted(r for r, n in charged.items() if r in hard and parse_quantity(n) > parse_quantity(hard[r]))
        if over:
            name = quota["metadata"]["name"]
            return name, (f"exceeded quota: {name}, requested: {_pairs(over, charged)}, "
                          f"used: {_pairs(over, dict.fromkeys(over, '0'))}, limited: {_pairs(over, hard)}")
    return None


def _pairs(resources: list[str], values: Mapping[str, object]) -> str:
    return ",".join(f"{r}={values[r]}" for r in resources)
