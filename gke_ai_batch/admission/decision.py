"""The whole decision for one workload: the checks before the scheduler, flavor assignment, then what Kueue
does not check; the first reason Kueue would give ends it."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from gke_ai_batch.model.pool_facts import PoolFacts
from gke_ai_batch.vocabulary import Key, Obj

from .claims import claim_reason
from .cluster import Cluster, quota_check_strategy
from .flavors import applicable_checks, assign_flavors
from .matching import selector_matches
from .physical import physical_warnings
from .pod_sets import pod_sets_of
from .queues import management_blocker, priority_blocker, queue_blocker, queue_name
from .results import AdmissionResult, PodSet
from .terms import FRAMEWORKS
from .topology import topology_reason


def workload_identity(workload: Obj) -> tuple[str, str, str]:
    """(kind, namespace, name); namespace defaults to `default`, a generateName stands in for a name."""
    meta = workload.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName", "")
    return workload.get("kind", ""), meta.get("namespace") or "default", name


def _pre_scheduler(cluster: Cluster, workload: Obj, pod_sets: list[PodSet],
                   base: AdmissionResult) -> AdmissionResult:
    """Everything before the scheduler runs: management, queue, priority, queue health, namespaces
    (pkg/scheduler/scheduler.go `nominate` then pkg/workload/resources.go `ValidateAdmissibility`)."""
    ns = base.namespace
    blocker = management_blocker(cluster, base.kind, ns)
    queue, no_queue = (None, None) if blocker else queue_name(cluster, workload, ns)
    blocker = blocker or no_queue or priority_blocker(cluster, workload, pod_sets)
    if blocker:
        return replace(base, reason=blocker)
    assert queue is not None  # queue_name gives a queue or the reason there is none
    cq, blocker, details = queue_blocker(cluster, ns, queue)
    if blocker:
        return replace(base, cluster_queue=cq, reason=blocker, warnings=details)
    cq_object = cluster.get("ClusterQueue", cq)
    assert cq_object is not None  # queue_blocker found it
    selector = (cq_object.get("spec") or {}).get("namespaceSelector")
    if not selector_matches(selector, cluster.namespace_labels(ns)):
        return replace(base, cluster_queue=cq, reason="workload namespace doesn't match ClusterQueue selector")
    return replace(base, cluster_queue=cq)


def admit_in(cluster: Cluster, workload: Obj, objects: Mapping[Key, Obj] | None = None) -> AdmissionResult:
    """Kueue v0.19.2's decision for one Job or JobSet on an empty `cluster`, plus physical warnings. `objects`:
    what else is in the namespaces by (kind, namespace, name), for the claim templates its pods name."""
    kind, ns, name = workload_identity(workload)
    if kind not in FRAMEWORKS:
        raise ValueError(f"{ns}/{name}: not a kind Kueue manages here ({', '.join(FRAMEWORKS)}): kind {kind!r}")
    pod_sets = pod_sets_of(workload, cluster.config)
    result = _pre_scheduler(cluster, workload, pod_sets, AdmissionResult(kind, ns, name))
    if result.reason:
        return result
    if claims := claim_reason(pod_sets, ns, objects or {}, cluster.config):
        return replace(result, reason=claims)
    cq = cluster.get("ClusterQueue", result.cluster_queue)
    assert cq is not None  # _pre_scheduler found it
    assignments, reason = assign_flavors(cluster, cq, pod_sets, quota_check_strategy(cluster.config))
    reason = reason or topology_reason(cluster, pod_sets, assignments)
    if reason:
        return replace(result, reason=reason)
    checks = applicable_checks(cq, [c.flavor for a in assignments for c in a.flavors])
    warnings = physical_warnings(cluster, cq, pod_sets, assignments)
    return replace(result, pod_sets=tuple(assignments), checks=checks, warnings=warnings)


def admit(manifests: Iterable[Obj], config: Obj | None, pools: Iterable[PoolFacts],
          workload: Obj) -> AdmissionResult:
    """Would Kueue admit `workload` given the stack's Kubernetes manifests, Kueue's Configuration
    (as parsed from the Helm values) and the node pools' PoolFacts, on an empty cluster?"""
    return admit_in(Cluster.build(manifests, config, pools), workload)
