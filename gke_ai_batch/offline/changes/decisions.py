"""Which deletions and replacements of `make diff` lack the stack file's decision.

Deleting or replacing the cluster, a node pool, a team namespace, a bucket, the Kueue or JobSet release or a
network object (VPC, subnet, router, NAT) destroys running work or data or cuts the nodes off, and so does
removing a team (its queues go, and with them its pending work) or updating a node pool in a way that evicts
its pods (GKE recreates the nodes, the pool shrinks, or a NoExecute taint is added).
`make diff` refuses such a change unless the stack file decides on it:
- a team, its namespaces and its buckets go once the team was `state: draining` at BASE (its queues stopped
  admitting, and production's protection lifted, by a change before this one);
- what a fleet manager declares on a worker goes once the worker was `state: draining` at BASE (no job may
  name its flavors any more);
- a retained bucket (production) is never replaced: the old one stays under its global name;
- a PriorityClass replaced (its value or preemption policy changed) needs `acknowledge: [{priority: ...}]`
  in this change: while it is replaced the API server refuses every pod naming it; so does one deleted
  while a team namespace at BASE may name it (the teams stop naming it in one change, it goes in the next);
- Kueue's retention for deactivated workloads shortened, and an admission check a queue gains on a flavor it
  had, need `acknowledge: [{retention: ...}]` and `[{admission_check: ...}]` in this change (judged in
  offline.changes.running_work: Kueue then deletes or suspends work already on the cluster);
- anything else needs `acknowledge:` naming it: in this change for a replacement or an evicting update (the
  engine allows unprotecting and replacing in one update), at BASE or in this change for a deletion, and at
  BASE if BASE protected it (the engine deletes only what the last update left unprotected).
A resource deleted and created again under another Pulumi name (a namespace moved between teams, a team
renamed) is refused whatever the decisions: the engine creates the new one before it deletes the old, and
the name is still taken.
An acknowledgement covers one change: one already at BASE is refused once the stack changes again (it does
not hold up changes to other stacks), as is one that names nothing the stack had at BASE or has now, and one
whose change the diff no longer shows (offline.diff.stale). The
decisions are read from each side's stack file as written, so that a BASE whose code predates them reads as
having none.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gke_ai_batch.model.config import CONFIG_KEY
from gke_ai_batch.model.promises import worker_of
from gke_ai_batch.model.replacement import evicting_taints, recreating_nodes
from gke_ai_batch.model.team_config import DECISION_KINDS
from gke_ai_batch.vocabulary import (
    BQ_DATASET,
    BUCKET,
    CLUSTER,
    COMPUTE_CLASS,
    HELM_RELEASE,
    NETWORK,
    NODE_POOL,
    PRIORITIES_ANNOTATION,
    PRIORITY_CLASS,
    ROUTER,
    ROUTER_NAT,
    SUBNETWORK,
    TEAM_COST_LABEL,
    TEAM_LABEL,
)

from ..engine.stackfile import read_stack_file
from .handover import FORGET
from .inputs import changes
from .running_work import ADMISSION_CHECK, RETENTION_KEY

Resource = dict[str, Any]
NAMESPACE = "kubernetes:core/v1:Namespace"
LOCAL_QUEUE = "LocalQueue"
SIZES = ("nodeCount", "autoscaling.maxNodeCount", "autoscaling.totalMaxNodeCount")  # a node pool's size inputs
WORDS = {"cluster": "cluster", "node_pool": "node pool", "namespace": "team namespace", "bucket": "bucket",
         "release": "Helm release", "network": "network object", "priority": "priority class",
         "retention": "Kueue retention", "admission_check": "admission check", "dataset": "BigQuery dataset",
         "compute_class": "compute class"}
# What a created network holds: deleting the NAT cuts private nodes off the internet, deleting the subnet or
# network takes every node on it; an adopted network is read, never deleted, so handing a created one over
# to `adopt: true` deletes what the stack created.
NETWORK_TYPES = (NETWORK, SUBNETWORK, ROUTER, ROUTER_NAT)


@dataclass(frozen=True)
class Guarded:
    """A resource whose deletion or replacement needs a decision: its kind and name as `acknowledge:` names
    it, and the team it belongs to (namespaces and buckets)."""
    kind: str
    name: str
    team: str | None = None


@dataclass(frozen=True)
class Decisions:
    """What one side's stack file decides: its acknowledgements as (kind, name) in order, and its draining teams."""
    acknowledged: tuple[tuple[str, str], ...] = ()
    draining: frozenset[str] = frozenset()
    draining_workers: frozenset[str] = frozenset()  # a fleet manager's workers that take no new work
    v1beta1_migrated: bool = False  # kueue.v1beta1_migrated: no Kueue object is stored at v1beta1


def guarded(r: Resource) -> Guarded | None:
    """The resource as a decision names it, or None when removing it destroys nothing that runs or is kept."""
    inputs = r.get("inputs") or {}
    kind, name = r["type"], str(inputs.get("name", r["name"]))
    if kind == CLUSTER:
        return Guarded("cluster", name)
    if kind == NODE_POOL:
        return Guarded("node_pool", _pool_name(r))
    if kind == NAMESPACE and TEAM_LABEL in ((inputs.get("metadata") or {}).get("labels") or {}):
        meta = inputs["metadata"]
        return Guarded("namespace", meta["name"], meta["labels"][TEAM_LABEL])
    if kind == BUCKET:
        return Guarded("bucket", name, (inputs.get("labels") or {}).get(TEAM_COST_LABEL))
    if kind == HELM_RELEASE:
        return Guarded("release", name)
    if kind == BQ_DATASET:
        return Guarded("dataset", str(inputs.get("datasetId", r["name"])))
    if kind in NETWORK_TYPES:
        return Guarded("network", name)
    if kind == PRIORITY_CLASS:
        return Guarded("priority", str((inputs.get("metadata") or {}).get("name", r["name"])))
    return None


def _pool_name(r: Resource) -> str:
    """A pool's name in the stack file: its component's (a TPU pool's slices are `<name>-<i>` in GKE)."""
    parent = r.get("parent") or ""
    types, _, name = parent.rpartition("::")
    return name if types.endswith("Pool") else str((r.get("inputs") or {}).get("name", r["name"]))


def read_decisions(stack: Path | None) -> Decisions:
    """The acknowledgements and draining teams a stack file holds, read as written (not validated: BASE's
    file follows BASE's code)."""
    if stack is None:
        return Decisions()
    config = read_stack_file(stack)
    platform = next((v for k, v in config.items() if k.endswith(f":{CONFIG_KEY}")), None)
    if not isinstance(platform, dict):
        return Decisions()
    acks = tuple((k, str(a[k])) for a in _dicts(platform.get("acknowledge")) for k in DECISION_KINDS if a.get(k))
    draining = frozenset(str(t.get("name")) for t in _dicts(platform.get("teams")) if t.get("state") == "draining")
    fleet = platform.get("fleet")
    entries = _dicts(fleet.get("workers")) if isinstance(fleet, dict) else []
    workers = frozenset(str(w.get("name")) for w in entries if w.get("state") == "draining")
    kueue = platform.get("kueue")
    migrated = isinstance(kueue, dict) and kueue.get("v1beta1_migrated") is True
    return Decisions(acks, draining, workers, migrated)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def refusals(steps: Iterable[tuple[str, Resource]], old: list[Resource], new: list[Resource], base: Decisions,
             now: Decisions) -> list[str]:
    """One line per acknowledgement that is stale or names nothing, per team removed undrained, per name
    deleted and created again, and per deletion, replacement or evicting update that lacks its decision."""
    steps = list(steps)
    gone = _teams(old) - _teams(new) - base.draining
    before = {r["urn"]: r for r in old}
    return [*_bad_acknowledgements(old, new, base, now, changed=bool(steps)),
            *(f"remove team {t}: drain it first (`state: draining` in its block, landed in a change before this "
              "one), so that its queues stop admitting before they, its namespaces and its buckets go"
              for t in sorted(gone)),
            *_taken_names(steps),
            *_still_named(steps, old, now),
            *(line for op, r in steps if (line := _undecided(op, r, before.get(r["urn"]), base, now, gone)))]


def _teams(resources: list[Resource]) -> set[str]:
    """The teams a plan has: every team has a LocalQueue, labelled with it, wherever its namespaces are."""
    return {str(labels[TEAM_LABEL]) for r in resources if r["type"].endswith(f":{LOCAL_QUEUE}")
            and TEAM_LABEL in (labels := (r.get("inputs") or {}).get("metadata", {}).get("labels") or {})}


def protected_at(old: list[Resource], kind: str, name: str) -> bool:
    """Whether BASE protects the resource an acknowledgement names (landing the acknowledgement lifts it)."""
    return any((g := guarded(r)) is not None and (g.kind, g.name) == (kind, name)
               and (r.get("options") or {}).get("protect") for r in old)


def _taken_names(steps: list[tuple[str, Resource]]) -> list[str]:
    """A guarded resource deleted under one Pulumi name and created under another with the same real name."""
    deleted = {(g.kind, _real_name(r)): r for op, r in steps if op == "delete" and (g := guarded(r))}
    out = []
    for op, r in steps:
        g = guarded(r) if op == "create" else None
        if g and (old := deleted.get((g.kind, _real_name(r)))):
            out.append(f"{WORDS[g.kind]} {_real_name(r)} is deleted ({old['name']}) and created again under "
                       f"another Pulumi name ({r['name']}) in one change: the engine creates the new one before "
                       "it deletes the old, whose name is still taken; remove it in one change and add it back "
                       "in the next")
    return out


def _still_named(steps: list[tuple[str, Resource]], old: list[Resource], now: Decisions) -> list[str]:
    """A PriorityClass deleted while BASE's team namespaces may name it: their running jobs may, and once it is
    gone the API server refuses their new and replacement pods (the priority admission plugin)."""
    namers = _namers(old)
    out = []
    for op, r in steps:
        g = guarded(r) if op == "delete" else None
        if g is None or g.kind != "priority" or (g.kind, g.name) in now.acknowledged or g.name not in namers:
            continue
        out.append(f"delete priority class {g.name}: at BASE the team namespaces {', '.join(namers[g.name])} may "
                   "name it, so jobs running there may; once it is gone the API server refuses their new and "
                   f"replacement pods (\"no PriorityClass with name {g.name} was found\"): take it out of the "
                   "teams' `priorities` first, land that change and wait for the jobs naming it to end, then remove "
                   f"it (docs/operating.md, \"Removing a priority class that running work names\"); or add "
                   f"{_ack(g)} to the stack file, with why")
    return out


def _namers(resources: list[Resource]) -> dict[str, list[str]]:
    """Each priority and the team namespaces whose pods may name it (their priorities annotation)."""
    out: dict[str, list[str]] = {}
    for r in resources:
        meta = (r.get("inputs") or {}).get("metadata") or {}
        if r["type"].startswith(NAMESPACE) and TEAM_LABEL in (meta.get("labels") or {}):
            for name in str((meta.get("annotations") or {}).get(PRIORITIES_ANNOTATION, "")).split(","):
                if name:
                    out.setdefault(name, []).append(str(meta.get("name")))
    return out


def _real_name(r: Resource) -> str:
    """The name the cloud or the cluster knows the resource by (a fleet worker's objects: on that worker)."""
    inputs = r.get("inputs") or {}
    meta = inputs.get("metadata") or {}
    return "/".join(str(p) for p in (inputs.get("cluster") or worker_of(inputs),
                                      meta.get("namespace") or inputs.get("namespace"),
                                      meta.get("name") or inputs.get("name", r["name"])) if p)


def _bad_acknowledgements(old: list[Resource], new: list[Resource], base: Decisions, now: Decisions,
                          changed: bool) -> list[str]:
    known = {(g.kind, g.name) for r in [*old, *new] if (g := guarded(r))} | {("retention", RETENTION_KEY)}
    named = {ADMISSION_CHECK: "admission_check", COMPUTE_CLASS: "compute_class"}  # objects named by metadata
    known |= {(named[r["type"]], str(((r.get("inputs") or {}).get("metadata") or {}).get("name")))
              for r in [*old, *new] if r["type"] in named}
    out = []
    for i, (kind, name) in enumerate(now.acknowledged):
        where = f"acknowledge[{i}].{kind}: {name!r}"
        if (kind, name) not in known:
            have = sorted({n for k, n in known if k == kind})
            out.append(f"{where} names no {WORDS[kind]} the stack had at BASE or has now "
                       f"({WORDS[kind]}s: {', '.join(have) or 'none'})")
        elif changed and (kind, name) in base.acknowledged:
            out.append(f"{where} was already at BASE: an acknowledgement covers one change, so the change after "
                       "it removes it")
    return out


def _evicting(old: Resource | None, new: Resource) -> str | None:
    """Why an in-place update of a node pool evicts the pods on it, or None when it does not."""
    if old is None or new["type"] != NODE_POOL:
        return None
    a, b = old.get("inputs") or {}, new.get("inputs") or {}
    if recreated := recreating_nodes(NODE_POOL, [path for path, _, _ in changes(a, b)], a, b):
        return f"GKE recreates every node to apply {', '.join(recreated)}, evicting the pods on them"
    if taints := evicting_taints(a, b):
        return (f"a NoExecute taint added ({', '.join(taints)}) evicts every running pod on the pool that does not "
                "tolerate it")
    for path in SIZES:
        was, will = _at(a, path), _at(b, path)
        if isinstance(was, int) and isinstance(will, int) and will < was:
            return f"it shrinks ({path}: {was} -> {will}), evicting the pods on the nodes it removes"
    return None


def _at(inputs: dict[str, Any], path: str) -> Any:
    value: Any = inputs
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _ack(g: Guarded) -> str:
    return f"`acknowledge: [{{{g.kind}: {g.name}, reason: ...}}]`"


def _undecided(op: str, r: Resource, old: Resource | None, base: Decisions, now: Decisions,
               gone: set[str]) -> str | None:
    """Why this step lacks a decision, or None when the stack file decides on it (or a team line covers it)."""
    g = guarded(r)
    if g is None or op in ("create", "import", FORGET) or (g.team is not None and (g.team in base.draining
                                                                                   or g.team in gone)):
        return None
    worker = worker_of(r.get("inputs") or {})
    if worker is not None and worker in base.draining_workers:
        return None  # BASE stopped sending it work
    what = f"{op} {WORDS[g.kind]} {g.name} ({r['type']} {r['name']})"
    key = (g.kind, g.name)
    if op == "update":
        evicts = _evicting(old, r)
        return None if evicts is None or key in now.acknowledged else (
            f"{what}: {evicts}; add {_ack(g)} to the stack file, with why")
    if op == "replace" and (r.get("options") or {}).get("retainOnDelete"):
        return (f"{what}: the bucket is kept on replacement (retainOnDelete), so its replacement would be refused "
                "by Cloud Storage under the same global name: give the new bucket another name instead")
    if op == "replace" and g.kind == "priority":
        return None if key in now.acknowledged else f"{what}: {_priority_window(g.name)}; {_priority_way(g)}"
    if op == "replace":
        return None if key in now.acknowledged else f"{what}: add {_ack(g)} to the stack file, with why"
    if g.kind == "dataset" and key not in now.acknowledged:
        return f"{what}: {_dataset_way(r)}"
    if g.kind == "priority":
        return None  # its deletion is judged against the namespaces that may name it (_still_named)
    protected = bool((r.get("options") or {}).get("protect"))
    if key in base.acknowledged or (key in now.acknowledged and not protected):
        return None
    if g.kind == "namespace" and worker is not None:
        first = (f"drain worker {worker} first (`state: draining` in its fleet.workers entry) and land that change "
                 "before this one")
    elif g.kind == "namespace" or (g.kind == "bucket" and g.team):
        first = (f"drain team {g.team} first (`state: draining` in its block) and land that change before this "
                 f"one, or acknowledge this {WORDS[g.kind]}" + (" in a change before this one (BASE protects it)"
                                                                  if protected else ""))
    elif protected and g.kind == "network":
        first = (f"BASE protects it with the cluster: land `acknowledge: [{{cluster: ..., reason: ...}}]` first (it "
                 f"lifts the protection), then remove it with {_ack(g)}")
    elif protected:
        first = f"BASE protects it: land {_ack(g)} first (it lifts the protection), then remove it"
    else:
        first = f"add {_ack(g)} to the stack file, with why"
    return f"{what}: {first}"


def _dataset_way(r: Resource) -> str:
    """A BigQuery dataset the stack stops declaring: the engine deletes what leaves the program. BigQuery deletes a
    dataset only once its tables are gone, unless the call asks to delete them too (datasets.delete: "Before you can
    delete a dataset, you must delete all its tables, either manually or by specifying deleteContents"), which the
    provider asks only with deleteContentsOnDestroy (pulumi-gcp bigquery.Dataset: "otherwise, destroying the
    resource will fail if tables are present")."""
    return ("BigQuery refuses to delete a dataset that holds tables (deleteContentsOnDestroy is not set), so "
            "`pulumi up` fails on a non-empty one, and deletes an empty one (a billing export then has no target); "
            "to hand it over and keep it, take it out of the state before this change: "
            f"`pulumi state delete '{r['urn']}'` (the engine then only stops managing it), and add "
            f"`acknowledge: [{{dataset: {(r.get('inputs') or {}).get('datasetId', r['name'])}, reason: ...}}]` to "
            "the stack file, with why")


def _priority_window(name: str) -> str:
    """What a PriorityClass's replacement does to the work naming it: Kubernetes lets neither its value nor its
    preemption policy change (ValidatePriorityClassUpdate), so it is deleted and created again, and in between
    the priority admission plugin refuses a pod naming a class it cannot find."""
    return (f"its value or preemption policy cannot change in place (ValidatePriorityClassUpdate), so it is deleted "
            f"and created again; in between the API server refuses every pod naming {name} (\"no PriorityClass with "
            f"name {name} was found\"): a running job cannot replace a failed pod and a new job's pods are refused, "
            "while the pods already running keep their priority")


def _priority_way(g: Guarded) -> str:
    return (f"the safe way is two changes: add a priority under another name with the new value and move the teams "
            f"and jobs to it, then remove {g.name} once no job names it; or add {_ack(g)} to the stack file, with why")
