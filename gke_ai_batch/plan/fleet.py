"""A fleet manager stack: its workers' flavors as its own, one MultiKueue check per dispatch set on its
ClusterQueues, and everything each worker needs to run what the manager dispatches, derived from the one
team block so the clusters cannot drift (Kueue's setup page leaves that to the user: "the worker cluster
configuration mirrors the one of the manager cluster in terms of namespaces and LocalQueues").

Kueue v0.19.2 facts, with their sources (kubernetes-sigs/kueue at the tag):
- MultiKueueConfig `spec.clusters` holds 1 to 20 MultiKueueCluster names; the incremental dispatcher tries
  them in that order (apis/kueue/v1beta2/multikueue_types.go, gate MultiKueueIncrementalDispatcherRespectConfigOrder).
- A worker's kubeconfig lives in a Secret of Kueue's namespace under the key `kubeconfig`, with an inline
  token: exec plugins are refused (gate MultiKueueAllowInsecureKubeconfigs, locked off in 0.19).
- A ClusterQueue with a MultiKueue and a ProvisioningRequest check is inactive (MultiKueueWithProvisioningRequest,
  pkg/cache/scheduler/clusterqueue.go; kueue#8347); so is one with a per-flavor MultiKueue check.
- The manager watches every job framework it enables on every worker; one missing CRD or permission fails
  the whole connection (pkg/controller/admissionchecks/multikueue/multikueuecluster.go; kueue#12400).
"""
from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.fleet_config import ALL_AT_ONCE, INCREMENTAL, FleetConfig, stack_parts
from gke_ai_batch.model.fleet_facts import WORKER_OUTPUT, FlavorFacts, WorkerFacts
from gke_ai_batch.model.gke_pool_rules import version_below, version_key
from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.model.words import name_list
from gke_ai_batch.plan.admission_policies import fleet_flavor_policy
from gke_ai_batch.plan.flavors import BASE_RESOURCES, FlavorPlan
from gke_ai_batch.plan.fleet_access import token_secret, worker_identity, writer_bindings
from gke_ai_batch.plan.scheduling import ClusterQueuePlan, SchedulingPlan
from gke_ai_batch.plan.team_namespaces import TeamPlan
from gke_ai_batch.vocabulary import (
    FLAVOR_LABEL,
    FLEET_STACK_ANNOTATION,
    FLEET_WORKER_ANNOTATION,
    KUEUE_API,
    KUEUE_GROUP,
    KUEUE_NAMESPACE,
    KUEUE_VERSION_ANNOTATION,
    MULTIKUEUE_CONTROLLER,
    TOKEN_GENERATION_ANNOTATION,
    TOKEN_ROTATION_ANNOTATION,
    Capacity,
    Manifest,
)

MIN_MANAGER_KUBERNETES = "1.32"  # Kubernetes' JobManagedBy gate: beta and on by default from 1.32
MAX_DISPATCH = 20  # MultiKueueConfig CRD (v0.19.2): spec.clusters maxItems
MAX_NAME = 63  # AdmissionCheck parameters.name: a DNS label
DISPATCHERS = {d: f"{KUEUE_GROUP}/multikueue-dispatcher-{d}" for d in (ALL_AT_ONCE, INCREMENTAL)}
@dataclass(frozen=True)
class WorkerPlan:
    """One worker: its facts, the objects the manager declares on it, and its MultiKueue credentials."""

    name: str
    stack: str
    facts: WorkerFacts
    objects: tuple[Manifest, ...]  # priorities, cohorts, namespaces and what is in them, ClusterQueues, LocalQueues
    identity: tuple[Manifest, ...]  # the manager's ServiceAccount there, its reading and writing ClusterRoles
    token: Manifest  # the ServiceAccount token Secret of this credentials generation
    protected: tuple[str, ...] = ()  # its team namespaces that refuse deletion, as on the manager (plan.lifecycle)


@dataclass(frozen=True)
class FleetPlan:
    config: FleetConfig
    workers: tuple[WorkerPlan, ...]
    dispatch: dict[str, tuple[str, ...]]  # manager ClusterQueue -> its workers, in order
    clusters: tuple[Manifest, ...]  # MultiKueueClusters
    secrets: tuple[Manifest, ...]  # the kubeconfig Secrets, without their data (a token the worker makes)
    policies: tuple[Manifest, ...]  # the manager's: every job names its flavor (fleet_flavor_policy)

    @property
    def dispatcher(self) -> str:
        return DISPATCHERS[self.config.dispatcher]


def kubeconfig_secret(worker: str) -> str:
    return f"{worker}-kubeconfig"


def read_workers(cfg: PlatformConfig, outputs: Mapping[str, Any]) -> dict[str, WorkerFacts]:
    """Each worker's `fleetWorker` output (by worker name), validated; refused at the worker's path."""
    assert cfg.fleet is not None
    facts = {}
    for i, w in enumerate(cfg.fleet.workers):
        path, raw = path_of("fleet", "workers", i, "stack"), outputs.get(w.name)
        if raw is None:
            raise ConfigError(path, f"stack {w.stack!r} has no `{WORKER_OUTPUT}` output: it is not a fleet worker "
                              "(its stack sets fleet: {role: worker}), or has not been deployed yet (pulumi up it "
                              "before its manager)")
        try:
            facts[w.name] = WorkerFacts.model_validate(raw)
        except ValidationError as e:
            raise ConfigError(path, f"stack {w.stack!r}'s `{WORKER_OUTPUT}` output is not a fleet worker's: "
                              f"{e.errors()[0]['msg']} at {'.'.join(map(str, e.errors()[0]['loc']))}") from None
    return facts


def check_manager(cfg: PlatformConfig, project: str) -> None:
    """A manager runs no jobs (a ClusterQueue with a MultiKueue check dispatches every workload), so it has no
    pools of its own; a pinned version honours Jobs' spec.managedBy; it names at least one worker, each once."""
    assert cfg.fleet is not None and cfg.fleet.role == "manager"
    for key in ("tpu_pools", "gpu_pools", "cpu_pools", "autopilot_flavors"):
        if getattr(cfg, key):
            raise ConfigError(path_of(key), "a fleet manager runs no jobs: its ClusterQueues dispatch every workload "
                              "to a worker, so its pools would stay idle (and a queued-provisioning pool would put a "
                              "ProvisioningRequest check on a manager ClusterQueue, which Kueue marks inactive: "
                              "kueue#8347); declare them in a worker's stack")
    if version_below(cfg.cluster.version, MIN_MANAGER_KUBERNETES):
        raise ConfigError(path_of("cluster", "version"), f"a fleet manager runs Kubernetes {MIN_MANAGER_KUBERNETES} or "
                          f"later, not {cfg.cluster.version}: MultiKueue hands a batch Job to a worker through "
                          "spec.managedBy, which Kubernetes honours by default from 1.32 (JobManagedBy, "
                          "kubernetes/enhancements#4368); before, the manager would run the Job itself")
    workers = cfg.fleet.workers
    if not workers:
        raise ConfigError(path_of("fleet", "workers"), "a manager names at least one worker stack")
    for key in ("name", "stack"):
        seen: dict[str, int] = {}
        for i, w in enumerate(workers):
            value = w.name if key == "name" else _stack_key(w.stack, project)
            if value in seen:
                raise ConfigError(path_of("fleet", "workers", i, key), f"{key} {getattr(w, key)!r} is already worker "
                                  f"fleet.workers[{seen[value]}]'s: each worker is one cluster, named once")
            seen[value] = i


def _stack_key(stack: str, project: str) -> str:
    """A worker stack as the duplicate check compares it, `project/stack`: `fleet-east` and
    `acme/<this project>/fleet-east` are one stack."""
    _, of_project, name = stack_parts(stack)
    return f"{of_project or project}/{name}"


def _host_share(facts: FlavorFacts) -> dict[str, Decimal] | None:
    return {r: parse_quantity(v) for r, v in facts.host_share.items()} if facts.host_share else None


def _holds(facts: FlavorFacts) -> str:
    """What the worker's pools hold in the flavor, at full size and guaranteed, as the manager's flavor states it
    for the quota policies (model.promises.flavor_capacity)."""
    return json.dumps({"capacity": facts.capacity, "resources": {
        r: [v, facts.guaranteed.get(r, "0")] for r, v in sorted(facts.resources.items())}}, separators=(",", ":"))


def fleet_flavors(cfg: PlatformConfig, workers: Mapping[str, WorkerFacts]) -> dict[str, FlavorPlan]:
    """The workers' flavors as the manager's: the same names and node labels, so that the manager assigns a
    job the flavor its nodes are on; each flavor is one worker's (_refuse_shared_flavor)."""
    assert cfg.fleet is not None
    flavors: dict[str, FlavorPlan] = {}
    for i, w in enumerate(cfg.fleet.workers):
        for name, f in workers[w.name].flavors.items():
            _refuse_shared_flavor(flavors, name, f, w.name, path_of("fleet", "workers", i))
            flavors[name] = FlavorPlan(
                name=name, node_labels=dict(f.node_labels), tolerations=tuple(dict(t) for t in f.tolerations),
                resources=BASE_RESOURCES + ((f.accelerator,) if f.accelerator else ()), host_share=_host_share(f),
                capacity=Capacity(f.capacity), worker=w.name, worker_holds=_holds(f))
    return flavors


def _refuse_shared_flavor(flavors: Mapping[str, FlavorPlan], name: str, facts: FlavorFacts, worker: str,
                          path: str) -> None:
    """A flavor, and the gke-ai-batch.io/flavor label jobs name it by, belong to one worker: the manager's quota in
    it is that worker's, and a job naming it runs there (per-zone flavors of one pool share the label)."""
    if name in flavors:
        raise ConfigError(path, f"flavor {name!r} is on worker {flavors[name].worker!r} and on {worker!r}: a fleet "
                          "flavor names one worker's nodes, so that the manager's quota in it is that worker's; "
                          "rename one (a pool's `flavor:` key)")
    label = facts.node_labels.get(FLAVOR_LABEL)
    other = next((g.worker for g in flavors.values()
                  if g.node_labels.get(FLAVOR_LABEL) == label and g.worker != worker), None)
    if label is None or other is not None:
        shared = f"as worker {other!r}'s do" if other else "or none"
        raise ConfigError(path, f"flavor {name!r} of worker {worker!r} selects {FLAVOR_LABEL}={label} nodes, {shared}: "
                          "jobs name their flavor by that label, which must name one worker's nodes; rename the "
                          "pool's flavor (`flavor:` key) on one of them")


def check_workers(cfg: PlatformConfig, workers: Mapping[str, WorkerFacts], frameworks: list[str]) -> None:
    """Every worker runs the manager's Kueue release and every job framework the manager enables."""
    assert cfg.fleet is not None
    for i, w in enumerate(cfg.fleet.workers):
        facts, path = workers[w.name], path_of("fleet", "workers", i)
        if problem := version_skew(cfg.kueue.version, facts.kueue_version):
            raise ConfigError(path, f"worker {w.name!r} {problem}")
        missing = [f for f in frameworks if f not in facts.frameworks]
        if missing:
            raise ConfigError(path, f"worker {w.name!r} does not run {name_list(missing)}, which the manager "
                              "enables: Kueue watches every enabled framework on every worker, and one missing CRD "
                              "fails the whole connection (kueue#12400); install it on the worker (jobset.install: "
                              "always), or not on the manager")


def version_skew(manager: str, worker: str) -> str | None:
    """Why a worker's Kueue release cannot serve the manager's, or None. The manager writes Workloads on its
    workers in its own API, and Kueue states no skew for MultiKueue, so a worker runs the manager's minor
    release, at the manager's patch or a later one: the workers are upgraded first, one at a time, then the
    manager."""
    have, need = version_key(worker) or (), version_key(manager) or ()
    if have[:2] == need[:2] and have >= need:
        return None
    return (f"runs Kueue {worker}, the manager {manager}: a worker runs the manager's minor release, at its patch "
            "or a later one (upgrade the workers first, then the manager)")


def _dispatch_set(cfg: PlatformConfig, cq: ClusterQueuePlan, flavors: Mapping[str, FlavorPlan]) -> tuple[str, ...]:
    """The workers holding the queue's flavors, in the fleet's order: 1 to 20 of them."""
    assert cfg.fleet is not None
    held = {flavors[f].worker for f in cq.spec.quotas}
    workers = tuple(w.name for w in cfg.fleet.workers if w.name in held)
    if not workers:
        raise ConfigError(f"{cq.path}.quotas", f"ClusterQueue {cq.name!r} has no quota in a worker's flavor, so "
                          "it dispatches to no worker (a MultiKueueConfig holds 1 to 20 clusters); flavors: "
                          f"{name_list(flavors)}")
    if len(workers) > MAX_DISPATCH:
        raise ConfigError(f"{cq.path}.quotas", f"ClusterQueue {cq.name!r} has quota on {len(workers)} workers; a "
                          f"MultiKueueConfig holds at most {MAX_DISPATCH} clusters: split the team's quota")
    return workers


def _check_within_workers(cq: ClusterQueuePlan, flavors: Mapping[str, FlavorPlan],
                          workers: Mapping[str, WorkerFacts]) -> None:
    """A team's quota on the manager is what its workers can run: no more than the worker holds (Kueue's
    MultiKueue docs: the manager's quota "should equal the total quota available in all worker clusters";
    more dispatches workloads the workers cannot admit)."""
    for fname, resources in cq.spec.quotas.items():
        worker = flavors[fname].worker
        assert worker is not None  # every manager flavor is a worker's
        facts = workers[worker].flavors[fname]
        for rname, q in resources.items():
            held = parse_quantity(facts.resources.get(rname, "0"))
            if parse_quantity(q.nominal) > held:
                raise ConfigError(f"{cq.path}.quotas.{fname}.{rname}", f"{q.nominal} is more than worker "
                                  f"{worker!r} holds in flavor {fname!r} ({facts.resources.get(rname, '0')} at full "
                                  "size): a manager's quota is what its workers can run")


def _config_name(workers: tuple[str, ...]) -> str:
    """`multikueue-<workers>-<hash>`: the hash of the ordered list keeps two sets apart whose names join alike
    (east + west, and a worker named east-west), and the name a DNS label of at most 63 characters."""
    digest = hashlib.sha256(",".join(workers).encode()).hexdigest()[:8]
    return f"{'multikueue-' + '-'.join(workers)}"[:MAX_NAME - len(digest) - 1].rstrip("-") + f"-{digest}"


def _dispatch_objects(sets: list[tuple[str, ...]]) -> tuple[Manifest, ...]:
    """A MultiKueueConfig and its AdmissionCheck per dispatch set."""
    out: list[Manifest] = []
    for workers in dict.fromkeys(sets):
        name = _config_name(workers)
        out += [{"apiVersion": KUEUE_API, "kind": "MultiKueueConfig", "metadata": {"name": name},
                 "spec": {"clusters": list(workers)}},
                {"apiVersion": KUEUE_API, "kind": "AdmissionCheck", "metadata": {"name": name},
                 "spec": {"controllerName": MULTIKUEUE_CONTROLLER,
                          "parameters": {"apiGroup": KUEUE_GROUP, "kind": "MultiKueueConfig", "name": name}}}]
    return tuple(out)


def _with_check(cq: ClusterQueuePlan, check: str) -> ClusterQueuePlan:
    """The manager's ClusterQueue with its one MultiKueue check, on every flavor (Kueue refuses a per-flavor one)."""
    manifest = copy.deepcopy(cq.manifest)
    if manifest["spec"].get("admissionChecksStrategy"):
        raise ConfigError(cq.path, f"ClusterQueue {cq.name!r} has admission checks of its own; with MultiKueue's, "
                          "Kueue marks it inactive (MultiKueueWithProvisioningRequest, kueue#8347): they belong on "
                          "the worker's ClusterQueue")
    manifest["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": check}]}
    return replace(cq, manifest=manifest)


def _marked(manifest: Manifest, worker: str) -> Manifest:
    """A copy that says which worker it is declared on (the policies and offline tools judge it as that cluster's)."""
    m = copy.deepcopy(manifest)
    m["metadata"].setdefault("annotations", {})[FLEET_WORKER_ANNOTATION] = worker
    return m


def _worker_queue(cq: ClusterQueuePlan, facts: WorkerFacts) -> Manifest:
    """The ClusterQueue on a worker: the manager's, with this worker's flavors only, and the worker's
    ProvisioningRequest check on its queued flavors (where Kueue wants it)."""
    m = copy.deepcopy(cq.manifest)
    groups = []
    for group in m["spec"]["resourceGroups"]:
        kept = [f for f in group["flavors"] if f["name"] in facts.flavors]
        if kept:
            groups.append({**group, "flavors": kept})
    m["spec"]["resourceGroups"] = groups
    checks: dict[str, list[str]] = {}
    for f in (f["name"] for g in groups for f in g["flavors"]):
        if check := facts.flavors[f].admission_check:
            checks.setdefault(check, []).append(f)
    if checks:
        m["spec"]["admissionChecksStrategy"] = {"admissionChecks": [
            {"name": c, "onFlavors": on} for c, on in sorted(checks.items())]}
    return m


def _worker_objects(worker: str, queues: list[ClusterQueuePlan], teams: list[TeamPlan], scheduling: SchedulingPlan,
                    facts: WorkerFacts) -> tuple[Manifest, ...]:
    """What a worker needs to admit what the manager dispatches to it: the same priorities, cohorts,
    namespaces and LocalQueues, the ClusterQueues restricted to its flavors, and where the manager may write."""
    names = {q.name for q in queues}
    objects = [*scheduling.priority_classes, *scheduling.workload_priority_classes, *scheduling.cohorts,
               *(_worker_queue(q, facts) for q in queues)]
    for t in teams:
        objects += [*t.namespace_manifests, *t.guard_manifests, *writer_bindings(list(t.namespaces))]
        objects += [lq for lq in t.local_queue_manifests if lq["spec"]["clusterQueue"] in names]
    return tuple(_marked(m, worker) for m in objects)


def _worker_plans(fleet: FleetConfig, scheduling: SchedulingPlan, workers: Mapping[str, WorkerFacts],
                  dispatch: dict[str, tuple[str, ...]], frameworks: list[str]) -> tuple[WorkerPlan, ...]:
    """Each worker's objects: the queues dispatched to it, their teams, the namespaces the manager protects, and
    the manager's identity there."""
    plans = []
    for w in fleet.workers:
        queues = [q for q in scheduling.cluster_queues if w.name in dispatch[q.name]]
        names = {q.name for q in queues}
        teams = [t for t in scheduling.teams if names & set(t.cluster_queues)]
        plans.append(WorkerPlan(
            name=w.name, stack=w.stack, facts=workers[w.name],
            objects=_worker_objects(w.name, queues, teams, scheduling, workers[w.name]),
            identity=tuple(_marked(m, w.name) for m in worker_identity(frameworks)),
            token=_marked(token_secret(fleet.credentials.generation), w.name),
            protected=tuple(ns for t in teams for ns in t.protected)))
    return tuple(plans)


def plan_fleet(cfg: PlatformConfig, scheduling: SchedulingPlan, workers: Mapping[str, WorkerFacts],
               frameworks: list[str]) -> tuple[SchedulingPlan, FleetPlan]:
    """The manager's scheduling with its MultiKueue checks, and the fleet's objects."""
    fleet = cfg.fleet
    assert fleet is not None
    check_workers(cfg, workers, frameworks)
    dispatch: dict[str, tuple[str, ...]] = {}
    queues = []
    for cq in scheduling.cluster_queues:
        dispatch[cq.name] = _dispatch_set(cfg, cq, scheduling.flavors)
        _check_within_workers(cq, scheduling.flavors, workers)
        queues.append(_with_check(cq, _config_name(dispatch[cq.name])))
    plans = _worker_plans(fleet, scheduling, workers, dispatch, frameworks)
    clusters = tuple({"apiVersion": KUEUE_API, "kind": "MultiKueueCluster", "metadata": {
        "name": w.name, "annotations": {FLEET_STACK_ANNOTATION: w.stack,
                                        KUEUE_VERSION_ANNOTATION: w.facts.kueue_version}},
        "spec": {"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": kubeconfig_secret(w.name)}}}}
        for w in plans)
    secrets = tuple({"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": {
        "name": kubeconfig_secret(w.name), "namespace": KUEUE_NAMESPACE, "annotations": {
            TOKEN_GENERATION_ANNOTATION: str(fleet.credentials.generation),
            TOKEN_ROTATION_ANNOTATION: str(fleet.credentials.rotate_every_days)}}} for w in plans)
    multikueue_objects = _dispatch_objects(list(dispatch.values()))
    scheduled = replace(scheduling, cluster_queues=tuple(queues),
                        admission_checks=scheduling.admission_checks + multikueue_objects)
    draining = {w.name for w in fleet.workers if w.state == "draining"}
    label_workers = {f.node_labels[FLAVOR_LABEL]: f.worker for f in scheduling.flavors.values()
                     if FLAVOR_LABEL in f.node_labels and f.worker and f.worker not in draining}
    return scheduled, FleetPlan(fleet, plans, dispatch, clusters, secrets, fleet_flavor_policy(label_workers))
