"""The ResourceQuota admission plugin on one object created in an empty namespace: what the object charges
against each quota of its namespace (Kubernetes "Resource Quotas": object counts, `services.nodeports`,
`services.loadbalancers`, `persistentvolumeclaims`, `requests.storage`), refused when a charge exceeds a
hard limit, in the plugin's words (`exceeded quota: <name>, requested: r=n, used: r=0, limited: r=h`).

On an UPDATE the plugin asks only the evaluators that handle one: Services ("a service type can change") and
PersistentVolumeClaims (a resize), in pkg/quota/v1/evaluator/core (services.go, persistent_volume_claims.go
`Handles`); object counts are charged on create only. It charges the difference between the new object's
usage and the old one's, and judges only what grows (plugin/pkg/admission/resourcequota/controller.go
`checkRequest`): the old object is what the namespace already uses.

It runs after the admission policies, as the API server runs it (the last validating plugin). Only the
object's own charge is judged: what the namespace already holds is unknown offline, so a flood shows as
the count its quota allows, not as a refusal here."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal

from gke_ai_batch import vocabulary as v
from gke_ai_batch.model.quantity import parse_quantity, shown_quantity
from gke_ai_batch.vocabulary import Obj

_COUNTED = {("v1", "Service"): v.SERVICE_COUNT, ("v1", "ConfigMap"): v.CONFIGMAP_COUNT,
            ("v1", "Secret"): v.SECRET_COUNT, ("apps/v1", "Deployment"): v.DEPLOYMENT_COUNT,
            ("apps/v1", "ReplicaSet"): v.REPLICASET_COUNT, ("apps/v1", "StatefulSet"): v.STATEFULSET_COUNT,
            ("batch/v1", "Job"): v.JOB_COUNT, ("batch/v1", "CronJob"): v.CRON_JOB_COUNT,
            (v.JOBSET_API, "JobSet"): v.JOBSET_COUNT, (v.GMP_API, "PodMonitoring"): v.POD_MONITORING_COUNT}


def charges(obj: Obj) -> dict[str, str]:
    """What obj charges to each quota resource, as a quantity (on create, all of it is added)."""
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


UPDATE_KINDS = ("Service", "PersistentVolumeClaim")  # the evaluators whose Handles takes an UPDATE


def exceeded(obj: Obj, quotas: Iterable[Obj], old: Obj | None = None) -> tuple[str, str] | None:
    """(quota name, the plugin's message) for the first quota that obj's charge (on an update from `old`: what
    grows) takes past its hard limit, or None."""
    if old is not None and obj.get("kind") not in UPDATE_KINDS:
        return None
    was = charges(old) if old is not None else {}
    now = charges(obj)
    used = {r: parse_quantity(n) for r, n in was.items()}
    grown = {r: parse_quantity(n) - used.get(r, 0) for r, n in now.items()}
    charged = {r: n for r, n in grown.items() if n > 0}
    for quota in quotas:
        hard = (quota.get("spec") or {}).get("hard") or {}
        over = sorted(r for r, n in charged.items() if r in hard and used.get(r, 0) + n > parse_quantity(hard[r]))
        if over:
            name = quota["metadata"]["name"]
            limits = {r: parse_quantity(h) for r, h in hard.items()}
            return name, (f"exceeded quota: {name}, requested: {_pairs(over, charged, now)}, "
                          f"used: {_pairs(over, used, was)}, limited: {_pairs(over, limits, hard)}")
    return None


def _pairs(resources: list[str], amounts: Mapping[str, Decimal], written: Mapping[str, int | str]) -> str:
    """Each amount (none: 0) as String() prints it in the format its quantity was written in: a claim's `500G`
    stays `500G`, a difference keeps the new object's format (Quantity.Sub), a limit of `1024Gi` shows as `1Ti`."""
    return ",".join(f"{r}={shown_quantity(amounts.get(r, Decimal(0)), written.get(r, 0))}" for r in resources)
