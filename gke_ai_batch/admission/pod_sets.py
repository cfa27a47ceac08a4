"""The Workload Kueue builds from a Job, JobSet, Pod, Deployment or StatefulSet: its pod sets and each pod's
requests, summed the way Kueue sums containers, init containers and pod overhead."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal

from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.vocabulary import Obj

from .quantities import kueue_units
from .results import PodSet
from .terms import FRAMEWORKS, POD_LEVEL_RESOURCES, POD_TEMPLATE_KINDS


def _job_pods(job_spec: Obj) -> int:
    """min(parallelism, completions), parallelism defaulting to 1 (job_controller.go `podsCount`,
    jobset_controller.go `PodsCountPerReplica`)."""
    parallelism: int = job_spec.get("parallelism", 1)
    completions = job_spec.get("completions")
    return parallelism if completions is None else min(parallelism, completions)


def pod_sets_of(workload: Obj, config: Obj | None = None) -> list[PodSet]:
    """A Job is one pod set `main`; a JobSet has one per replicated job, named after it, with
    replicas x pods per replica (pkg/controller/jobs/job/job_controller.go and
    pkg/controller/jobs/jobset/jobset_controller.go, `PodSets`)."""
    kind, spec = workload.get("kind"), workload.get("spec") or {}
    excluded = tuple(((config or {}).get("resources") or {}).get("excludeResourcePrefixes") or ())
    if kind == "Job":
        count = _job_pods(spec)
        pod = spec["template"]["spec"]
        return [PodSet("main", count, 1, pod, pod_requests(pod, excluded), _annotations(spec["template"]))]
    if kind == "Pod":  # its own annotations carry its topology request (pod_controller.go `constructPodSet`)
        return [PodSet("main", 1, 1, spec, pod_requests(spec, excluded), _annotations(workload))]
    if kind in POD_TEMPLATE_KINDS:  # a Deployment's pods are single-pod workloads; a StatefulSet is one group
        pod = spec["template"]["spec"]  # of `replicas` pods (statefulset_reconciler.go `constructWorkload`)
        count = int(spec.get("replicas", 1)) if kind == "StatefulSet" else 1
        return [PodSet("main", count, 1, pod, pod_requests(pod, excluded), _annotations(spec["template"]))]
    if kind == "JobSet":
        out: list[PodSet] = []
        for rj in spec.get("replicatedJobs") or []:
            job = rj["template"]["spec"]
            replicas = rj.get("replicas", 1)
            pod = job["template"]["spec"]
            out.append(PodSet(rj["name"], replicas * _job_pods(job), replicas, pod, pod_requests(pod, excluded),
                              _annotations(job["template"])))
        return out
    raise ValueError(f"not a kind Kueue manages here ({', '.join(FRAMEWORKS)}): kind {kind!r}")


def _annotations(template: Obj) -> dict[str, str]:
    return dict((template.get("metadata") or {}).get("annotations") or {})


def _container_requests(resources: Obj | None) -> dict[str, Decimal]:
    """Requests with limits filling the missing ones: Kueue's `UseLimitsAsMissingRequestsInPod`
    (pkg/workload/resources.go), applied before the requests are summed."""
    resources = resources or {}
    merged = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
    return {k: parse_quantity(v) for k, v in merged.items()}


def _add(into: dict[str, Decimal], other: Mapping[str, Decimal]) -> dict[str, Decimal]:
    for k, v in other.items():
        into[k] = into.get(k, Decimal(0)) + v
    return into


def _max_into(into: dict[str, Decimal], other: Mapping[str, Decimal]) -> None:
    for k, v in other.items():
        into[k] = max(into.get(k, Decimal(0)), v)


def pod_requests(pod: Obj, excluded_prefixes: Sequence[str] = ()) -> dict[str, int]:
    """Per-pod requests as Kueue counts them: k8s component-helpers `PodRequests` (containers summed,
    sidecars added, max with each init container, pod-level cpu/memory override, overhead added), then
    excludeResourcePrefixes dropped and values rounded up per pod (pkg/workload/workload.go
    `totalRequestsFromPodSets`)."""
    total: dict[str, Decimal] = {}
    for c in pod.get("containers") or []:
        _add(total, _container_requests(c.get("resources")))
    sidecars: dict[str, Decimal] = {}
    init_max: dict[str, Decimal] = {}
    for c in pod.get("initContainers") or []:
        req = _container_requests(c.get("resources"))
        if c.get("restartPolicy") == "Always":
            _add(total, req)
            _add(sidecars, req)
            req = dict(sidecars)
        else:
            req = _add(dict(req), sidecars)
        _max_into(init_max, req)
    _max_into(total, init_max)
    pod_level = _container_requests(pod.get("resources"))
    total.update({k: v for k, v in pod_level.items() if k in POD_LEVEL_RESOURCES})
    _add(total, {k: parse_quantity(v) for k, v in (pod.get("overhead") or {}).items()})
    return {k: kueue_units(k, v) for k, v in total.items() if not any(k.startswith(p) for p in excluded_prefixes)}
