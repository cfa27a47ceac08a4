"""Which worker a fleet manager's Kueue would hand an admitted workload to, offline: each worker of the
workload's MultiKueueConfig, in its order, judged as its own cluster (its stack's plan, planned before the
manager's, with the objects the manager declares on it), by Kueue on an empty cluster.

Kueue v0.19.2: all-at-once offers a workload to every worker and the first to reserve quota takes it; the incremental
dispatcher offers it to `stepSize` workers at a time in the config's order (the platform sets 1), the next
after a 5-minute round (pkg/controller/workloaddispatcher, pkg/controller/admissionchecks/multikueue). On a
manager every job names its flavor, which one worker holds, so one worker can take it; were there several,
the first in order is shown."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gke_ai_batch.admission.cluster import Cluster, kueue_config_from_values
from gke_ai_batch.admission.decision import admit_in
from gke_ai_batch.admission.results import AdmissionResult
from gke_ai_batch.model.fleet_config import ALL_AT_ONCE, INCREMENTAL
from gke_ai_batch.model.pool_facts import pool_facts
from gke_ai_batch.model.promises import class_pool_facts
from gke_ai_batch.plan.fleet import DISPATCHERS
from gke_ai_batch.vocabulary import (
    COMPUTE_CLASS,
    FLEET_STACK_ANNOTATION,
    HELM_RELEASE,
    MULTIKUEUE_CONTROLLER,
    NODE_POOL,
    Obj,
)

from ..engine.runtime import Planned, Registration, reference_key
from ..views.render import cluster_zones, is_manifest, manifest_of, worker_manifests


@dataclass(frozen=True)
class Dispatch:
    """The workers tried, in order, each with Kueue's verdict there; `worker` took it (None: none did)."""

    dispatcher: str
    order: tuple[str, ...]  # the MultiKueueConfig's clusters
    tried: tuple[tuple[str, AdmissionResult], ...]  # every worker (all-at-once), or up to the taker (incremental)

    @property
    def worker(self) -> str | None:
        """The first worker whose Kueue reserves quota for it (Kueue dispatches on that; a pod that then finds
        no node, a physical warning, still runs there, or waits)."""
        return next((w for w, r in self.tried if r.quota_reserved), None)

    @property
    def admitted(self) -> bool:
        """A worker takes it and nothing physical stops its pods there."""
        return any(w == self.worker and r.admitted for w, r in self.tried)

    @property
    def takers(self) -> list[str]:
        """Every worker that would reserve quota: with all-at-once, the first to do so wins."""
        return [w for w, r in self.tried if r.quota_reserved]

    @property
    def rounds(self) -> int:
        """Incremental: the 5-minute rounds before the taker is offered the workload."""
        return [w for w, _ in self.tried].index(self.worker) if self.worker and self.dispatcher == INCREMENTAL else 0


def cluster_of(regs: list[Registration], extra: Sequence[Obj] = ()) -> Cluster:
    """A planned stack as admission sees it (manifests, Kueue's Configuration, node pools), with `extra` objects:
    a worker's, with what its manager declares on it."""
    manifests: list[Obj] = [manifest_of(r) for r in regs if is_manifest(r)]
    manifests += extra
    kueue: Obj = next((r.inputs for r in regs if r.type == HELM_RELEASE and r.inputs.get("name") == "kueue"), {})
    pools = [pool_facts(r.inputs, cluster_zones(regs)) for r in regs if r.type == NODE_POOL]
    pools += [f for r in regs if r.type == COMPUTE_CLASS and (f := class_pool_facts(r.inputs)) is not None]
    return Cluster.build(manifests, kueue_config_from_values(kueue.get("values")), pools)


class Fleet:
    """A planned manager stack's workers as clusters, and its dispatch."""

    def __init__(self, manager: Planned, manager_cluster: Cluster):
        self.manager = manager
        self.cluster = manager_cluster
        on_workers = worker_manifests(manager)
        self.workers: dict[str, Cluster] = {}
        for mkc in self._objects("MultiKueueCluster"):
            name = mkc["metadata"]["name"]
            stack = reference_key(str((mkc["metadata"].get("annotations") or {}).get(FLEET_STACK_ANNOTATION, "")))
            if stack in manager.references:
                self.workers[name] = cluster_of(manager.references[stack], on_workers.get(name, []))

    def _objects(self, kind: str) -> list[Obj]:
        return [manifest_of(r) for r in self.manager if is_manifest(r) and r.inputs.get("kind") == kind]

    def clusters_of(self, result: AdmissionResult) -> tuple[str, ...] | None:
        """The MultiKueueConfig's clusters of the workload's MultiKueue check, or None without one."""
        checks = {m["metadata"]["name"]: m["spec"].get("parameters", {}).get("name")
                  for m in self._objects("AdmissionCheck") if m["spec"].get("controllerName") == MULTIKUEUE_CONTROLLER}
        config = next((checks[c] for c in result.checks if c in checks), None)
        if config is None:
            return None
        found = next((m for m in self._objects("MultiKueueConfig") if m["metadata"]["name"] == config), None)
        return tuple(found["spec"].get("clusters") or ()) if found else ()

    def dispatch(self, workload: Obj, result: AdmissionResult) -> Dispatch | None:
        """Each worker's verdict in the config's order: every worker's (all-at-once), or up to the first to reserve
        quota (incremental); None: not dispatched."""
        clusters = self.clusters_of(result)
        if clusters is None:
            return None
        named = str((self.cluster.config.get("multiKueue") or {}).get("dispatcherName", ""))
        dispatcher = INCREMENTAL if named == DISPATCHERS[INCREMENTAL] else ALL_AT_ONCE
        tried: list[tuple[str, AdmissionResult]] = []
        for worker in clusters:
            cluster = self.workers.get(worker)
            verdict = admit_in(cluster, workload) if cluster else AdmissionResult(
                result.kind, result.namespace, result.name, reason=f"worker {worker}'s stack is not planned here")
            tried.append((worker, verdict))
            if verdict.quota_reserved and dispatcher == INCREMENTAL:
                break
        return Dispatch(dispatcher, clusters, tuple(tried))
