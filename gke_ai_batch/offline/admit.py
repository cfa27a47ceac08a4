"""CLI: `python -m gke_ai_batch.offline.admit STACK WORKLOAD...`: would the platform let a team run these?

Plans STACK under mocks, then judges every object in the WORKLOAD files or folders (a folder contributes
every .yaml and .yml file in it but those named after another stack of the project, `prod.yaml` beside
`dev.yaml`; the files it skips are named, with why, on `skipped:` lines first) as submitted by a member
of the team that owns its namespace: RBAC, its LimitRange, Pod Security, the stack's ValidatingAdmissionPolicies,
its ResourceQuotas, then Kueue v0.19.2 on an empty cluster (gke_ai_batch.apiserver.tenant_path). One line per
object:

    admitted: ns/name -> ClusterQueue cq, pod set ps: flavor f    a Job, JobSet or Pod (and what a
                                                                  MutatingAdmissionPolicy set)
      compute class c: ...                                        on a class's flavor: which way serves it
    created: ns/name (Kind), its pods admitted -> ClusterQueue... a Deployment or StatefulSet (its pods are
    created: ns/name (Kind), its pods refused: LAYER: reason      Kueue's workloads), or a CronJob's pods
    created: ns/name (CronJob), its Jobs admitted -> ...          a CronJob: each Job its controller creates,
    created: ns/name (CronJob), its Jobs refused: LAYER: reason   judged as that controller's request
    created: ns/name (Kind)                                       anything else that may be created
    created: ns/name (Pod): not gated: Kueue leaves it to ...     a pod whose owner is a job Kueue manages
    updated: ns/name (Kind): what Kueue does with it              an update (--old) that passes
    deleted: ns/name (Kind): what the garbage collector and       a delete (--delete) that passes
      Kueue do with what it owns
    refused: ns/name: LAYER: reason                               LAYER: RBAC, LimitRange <name>,
                                                                  Pod Security <level>,
                                                                  ValidatingAdmissionPolicy <name>,
                                                                  ResourceQuota <name>, Kueue,
                                                                  MultiKueue (no worker admits it), or the
                                                                  taking worker (its pods find no nodes)

With `--old FILE` (make admit ... OLD=FILE), an object of the WORKLOAD files that FILE also holds (same kind,
namespace and name) is judged as an UPDATE from FILE's: RBAC's `update`, the API server's validation (a Job's
immutable pod template), the LimitRange on a changed template's pods, Pod Security, the policies with
`oldObject`, ResourceQuota on what a Service or a claim grows by, Kueue's update validation (a managed
StatefulSet's replicas), then what Kueue's reconciler does with a running job (suspends it again, suspends it
for a new workload, or leaves it running) or a StatefulSet scaled to or from zero. The others are creates.
With `--scale` as well (SCALE=1), each update goes through the scale subresource as `kubectl scale` sends it:
RBAC's `update` on `<resource>/scale`, the policies on an autoscaling/v1 Scale, Kueue's verdict on the pods at
the new count (a managed StatefulSet's workload keeps its count: Kueue's webhook does not see /scale); only the
new spec.replicas is read, and a kind without the subresource (Job, JobSet, Pod) is refused by the API server.

With `--delete FILE` (make admit ... DELETE=FILE [PROPAGATION=...]), each object of FILE, as it is on the cluster,
is judged first, in file order, as deleted by a member of its team: RBAC's `delete`, the stack's policies on the
DELETE (the object as `oldObject`, the DeleteOptions as `request.options`), then what the garbage collector and
Kueue do with what it owns (apiserver.deletes). `--propagation` (PROPAGATION=) is the DeleteOptions: Orphan,
Background or Foreground (propagationPolicy; Background, what `kubectl delete` sends, when not given), none (no
policy: the kind's default, as a DELETE without options) or orphanDependents (the deprecated
`orphanDependents: true`); `--grace-period` (GRACE=) adds `gracePeriodSeconds`, as `kubectl delete --grace-period`
sends it (a pod's grace period; the pod's own when not given, 0 for a pod on no node). The WORKLOAD files' creates
and updates follow. A WORKLOAD is then optional.

A fleet manager's admitted workload is followed by the worker Kueue dispatches it to (gke_ai_batch.offline
.dispatch): every worker of its queue (all-at-once) or one at a time (incremental); the first to reserve
quota takes it.

The objects of the WORKLOAD files (and of --old) stand for what is on the cluster when Kueue's pod webhook looks
up a pod's owners (gke_ai_batch.admission.owners).

Exit 1 if any object (or a Deployment's or StatefulSet's pods) is refused, 2 if the stack or a workload file
cannot be read, a WORKLOAD or the DELETE file does not exist, a folder has nothing to judge, a file given has no
object, PROPAGATION is none of the above, or GRACE is not whole seconds.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gke_ai_batch.admission.results import AdmissionResult, PodSetAssignment
from gke_ai_batch.apiserver.deletes import KUBECTL, PROPAGATIONS, BadPropagation, delete_options, grace_option
from gke_ai_batch.apiserver.tenant_path import CONTROLLER_KINDS, Passage, TenantPath
from gke_ai_batch.apiserver.updates import identity
from gke_ai_batch.model.promises import ClassFacts
from gke_ai_batch.vocabulary import Obj

from .engine.runtime import PlanError, close_thread_loops, run_program
from .engine.stackfile import project, resolve
from .placement.class_admission import class_lines, flavor_classes
from .placement.dispatch import Dispatch, Fleet, cluster_of
from .placement.usage_order import UsageOrder
from .views.render import is_manifest, manifest_of

YAML_SUFFIXES = (".yaml", ".yml")
OTHER_STACKS = "named after another stack of the project (judge each with STACK=<its name>)"


class WorkloadError(ValueError):
    """A WORKLOAD argument with nothing to judge: a missing path, an empty folder, a file without objects."""


@dataclass(frozen=True)
class Workloads:
    """The objects to judge, with their files, and the files of the folders given that are not judged."""

    docs: list[tuple[Path, dict[str, Any]]]
    skipped: list[tuple[Path, str]]


def workloads(args: Sequence[str], stack: str, stacks: Sequence[str] = ()) -> Workloads:
    """Every object of the files given and of every .yaml or .yml file of the folders given. A folder's file
    named after another of the project's `stacks` holds that stack's workloads and is skipped, as are its
    sub-folders, its other files and its YAML files without an object; each is named with the reason.
    WorkloadError for a path that does not exist, a folder with nothing to judge, a file given without objects."""
    docs: list[tuple[Path, dict[str, Any]]] = []
    skipped: list[tuple[Path, str]] = []
    for arg in args:
        path = Path(arg)
        if path.is_file():
            found = objects_in(path)
            if not found:
                raise WorkloadError(f"{arg} holds no Kubernetes object (no YAML document with a `kind`)")
            docs += [(path, d) for d in found]
        elif path.is_dir():
            judged, passed = _folder(path, stack, stacks)
            if not judged:
                raise WorkloadError(f"folder {arg} has nothing to judge for stack {stack}"
                                    + _why_none(arg, stack, passed))
            docs += judged
            skipped += passed
        else:
            raise WorkloadError(f"no such file or folder: {arg}")
    return Workloads(docs, skipped)


def _why_none(arg: str, stack: str, skipped: Sequence[tuple[Path, str]]) -> str:
    """What a folder with nothing to judge held, one clause per reason; for another stack's files (a stack copied
    from `dev` has no sample of its own), how to judge one against this stack anyway."""
    if not skipped:
        return ": it holds no file"
    groups: dict[str, list[str]] = {}
    for path, why in skipped:
        groups.setdefault(why, []).append(path.name)
    clauses = "; ".join(f"{', '.join(names)}: {why}" for why, names in groups.items())
    other = f"; WORKLOAD={arg.rstrip('/')}/<file> judges one against stack {stack}" if OTHER_STACKS in groups else ""
    return f" (skipped {clauses}){other}"


def _folder(path: Path, stack: str, stacks: Sequence[str]) -> tuple[list[tuple[Path, dict[str, Any]]],
                                                                      list[tuple[Path, str]]]:
    """(objects of the folder's files that are judged, (file, why) of the others), in name order."""
    judged: list[tuple[Path, dict[str, Any]]] = []
    skipped: list[tuple[Path, str]] = []
    for f in sorted(path.iterdir()):
        if f.is_dir():
            skipped.append((f, "a folder (give it as WORKLOAD to judge its files)"))
        elif f.suffix not in YAML_SUFFIXES:
            skipped.append((f, "not a .yaml or .yml file"))
        elif f.stem != stack and f.stem in stacks:
            skipped.append((f, OTHER_STACKS))
        elif found := objects_in(f):
            judged += [(f, d) for d in found]
        else:
            skipped.append((f, "no Kubernetes object in it (no YAML document with a `kind`)"))
    return judged, skipped


def objects_in(path: Path) -> list[dict[str, Any]]:
    """The Kubernetes objects (documents with a kind) of a multi-document YAML file; WorkloadError naming the file
    for YAML that does not parse."""
    try:
        return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict) and d.get("kind")]
    except yaml.YAMLError as e:
        raise WorkloadError(f"{path}: not YAML: {_one_line(e)}") from None


def skipped_lines(skipped: Sequence[tuple[Path, str]]) -> list[str]:
    """`skipped: <folder>/ a.yaml, b.yaml: <why>`, one line per folder and reason, in the order first met."""
    groups: dict[tuple[Path, str], list[str]] = {}
    for path, why in skipped:
        groups.setdefault((path.parent, why), []).append(path.name)
    return [f"skipped: {folder}/ {', '.join(names)}: {why}" for (folder, why), names in groups.items()]


def _project_stacks() -> list[str]:
    """The stacks of the project of the current folder; none outside a project (a stack given as a path)."""
    try:
        return project().stacks()
    except SystemExit:
        return []


def _one_line(e: Exception) -> str:
    """A YAML error's message spans lines (the problem, then the file, line and column): joined into one."""
    return " ".join(str(e).split())


class BadObjectFile(ValueError):
    """OLD or DELETE names a missing file, holds a document that is not an object, or one identity twice."""


def objects_of_file(path: str, argument: str) -> dict[tuple[str, str, str], Obj]:
    """The objects of the OLD or DELETE file (`argument`) by identity, in file order; BadObjectFile naming the
    argument, the file and the document's index (from 0)."""
    try:
        docs = list(yaml.safe_load_all(Path(path).read_text()))
    except OSError as e:
        raise BadObjectFile(f"{argument}={path}: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        raise BadObjectFile(f"{argument}={path}: not YAML: {_one_line(e)}") from None
    out: dict[tuple[str, str, str], Obj] = {}
    for i, doc in enumerate(docs):
        if doc is None:
            continue
        if not (isinstance(doc, dict) and doc.get("kind") and isinstance(doc.get("metadata"), dict)
                and doc["metadata"].get("name")):
            raise BadObjectFile(f"{argument}={path}: document {i} is not a Kubernetes object (kind, metadata.name)")
        key = identity(doc)
        if key in out:
            raise BadObjectFile(f"{argument}={path}: document {i} is {key[0]} {key[1]}/{key[2]} again: one object "
                                "per identity (kind, namespace, name)")
        out[key] = doc
    if argument == "DELETE" and not out:
        raise BadObjectFile(f"{argument}={path} holds no Kubernetes object (no YAML document with a `kind`)")
    return out


def describe(p: Passage) -> str:
    """One line: admitted (with Kueue's placement), created, updated, or refused by the layer it names."""
    who = f"{p.namespace}/{p.name}" if p.namespace else p.name
    if p.refused:
        also = f" (also refused by {', '.join(p.also)}: fix all of them)" if p.also else ""
        if p.effect:
            return f"updated: {who} ({p.kind}): {p.effect}; its {p.children} refused: {p.layer}: {p.reason}{also}"
        if p.created:
            return f"created: {who} ({p.kind}), its {p.children} refused: {p.layer}: {p.reason}{also}"
        return f"refused: {who}: {p.layer}: {p.reason}{also}"
    if p.deleted:
        return f"deleted: {who} ({p.kind})" + (f": {p.effect}" if p.effect else "")
    if p.effect:
        pods = f"; its {p.children} admitted -> {placement(p.admission)}" if p.admission else ""
        return f"updated: {who} ({p.kind}): {p.effect}{pods}"
    if p.updated:
        return f"updated: {who} ({p.kind})"
    if p.note:
        return f"created: {who} ({p.kind}): {p.note}"
    if p.admission is None:
        return f"created: {who} ({p.kind})"
    defaulted = f" (set by MutatingAdmissionPolicy: {p.defaulted})" if p.defaulted else ""
    if p.kind in CONTROLLER_KINDS:
        return f"created: {who} ({p.kind}), its {p.children} admitted -> {placement(p.admission)}{defaulted}"
    return f"admitted: {who} -> {placement(p.admission)}{defaulted}"


def placement(r: AdmissionResult) -> str:
    """`ClusterQueue cq, pod set ps: flavor f (borrowing) [checks: c]`."""
    parts = [f"pod set {ps.name}: {_flavors(ps)}" for ps in r.pod_sets]
    checks = f" [checks: {', '.join(r.checks)}]" if r.checks else ""
    return f"ClusterQueue {r.cluster_queue}, {', '.join(parts)}{checks}"


def _flavors(ps: PodSetAssignment) -> str:
    if not ps.flavors:
        return "no flavor (requests no resource the ClusterQueue covers)"
    if len(ps.flavors) == 1:
        f = ps.flavors[0]
        return f"flavor {f.flavor}{' (borrowing)' if f.borrowing else ''}"
    return "flavors " + ", ".join(f"{f.flavor} for {'/'.join(f.resources)}{' (borrowing)' if f.borrowing else ''}"
                                  for f in ps.flavors)


def main(argv: list[str] | None = None) -> int:
    """Exit 0 if every object passes, 1 if any is refused, 2 if the stack or a file is unusable."""
    ap = argparse.ArgumentParser(prog="python -m gke_ai_batch.offline.admit", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack", help="a stack name in stacks/ or a path to Pulumi.<stack>.yaml")
    ap.add_argument("workloads", nargs="*", metavar="WORKLOAD", help="YAML files or folders of Kubernetes objects")
    ap.add_argument("--old", metavar="FILE", help="the objects as they are: those the WORKLOAD files also hold "
                                                  "are judged as updates")
    ap.add_argument("--scale", action="store_true", help="send each update through the scale subresource "
                                                         "(kubectl scale): only the new spec.replicas is read")
    ap.add_argument("--delete", metavar="FILE", help="objects on the cluster to delete, judged before the WORKLOAD "
                                                     "files")
    ap.add_argument("--propagation", metavar="POLICY", help=f"how the deletes propagate: {', '.join(PROPAGATIONS)} "
                                                            f"(default {KUBECTL}, as kubectl delete sends)")
    ap.add_argument("--grace-period", metavar="SECONDS", help="the deletes' gracePeriodSeconds (kubectl delete "
                                                              "--grace-period); default: none sent")
    args = ap.parse_args(argv)
    if not args.workloads and not args.delete:
        print("error: nothing to judge: give WORKLOAD (objects to create or update), DELETE (objects to delete), "
              "or both", file=sys.stderr)
        return 2
    try:
        options = _delete_options(args)
        stack = resolve(args.stack)
    except (BadPropagation, SystemExit) as e:  # resolve() exits with a message for an unknown stack
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        given = workloads(args.workloads, stack.name, _project_stacks())
    except (OSError, WorkloadError) as e:
        print(f"error: {_one_line(e)}", file=sys.stderr)
        return 2
    for line in skipped_lines(given.skipped):
        print(line)
    docs = given.docs
    try:
        olds = objects_of_file(args.old, "OLD") if args.old else {}
        doomed = list(objects_of_file(args.delete, "DELETE").values()) if args.delete else []
    except BadObjectFile as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        regs = run_program(stack)
    except PlanError as e:
        print(f"error: stack {stack.name} ({stack.path}): {e}", file=sys.stderr)
        return 2
    cluster = cluster_of(regs)
    manifests = [manifest_of(r) for r in regs if is_manifest(r)]
    path = TenantPath(manifests, cluster)
    try:
        passages = [(doc, path.judge_delete(doc, options)) for doc in doomed]
        cluster_objects = {**olds, **{identity(doc): doc for _, doc in docs}}
        passages += [(doc, path.judge(doc, olds.get(identity(doc)), cluster_objects, args.scale)) for _, doc in docs]
    except (ValueError, KeyError, TypeError) as e:
        print(f"error: an object cannot be judged (is it a valid Kubernetes object?): {e!r}", file=sys.stderr)
        return 2
    return 1 if report(passages, Fleet(regs, cluster), UsageOrder.of(manifests), flavor_classes(regs)) else 0


def _delete_options(args: argparse.Namespace) -> Obj:
    """The DeleteOptions of the deletes; BadPropagation for an unknown PROPAGATION, a GRACE that is not seconds,
    or either without DELETE."""
    for name, value, says in (("PROPAGATION", args.propagation, "how deletes propagate"),
                              ("GRACE", args.grace_period, "how long a deleted pod has to stop")):
        if value is not None and not args.delete:
            raise BadPropagation(f"{name}={value} says {says}, and no DELETE file is given: add DELETE=<file>")
    grace = grace_option(args.grace_period) if args.grace_period is not None else {}
    return {**delete_options(KUBECTL if args.propagation is None else args.propagation), **grace}


def report(passages: Sequence[tuple[Obj, Passage]], fleet: Fleet, order: UsageOrder | None = None,
           classes: Mapping[str, ClassFacts] | None = None) -> bool:
    """Print each passage, where its ClusterQueue orders LocalQueues by usage, which way of a compute class
    would give it its nodes, and a fleet manager's dispatch of what it admits; True if anything is refused."""
    refused = False
    for doc, passage in passages:
        admitted = passage.admission if passage.admission and not passage.refused else None
        dispatch = fleet.dispatch(doc, admitted) if admitted else None
        print(describe(passage))
        note = order.note(doc, passage.admission.cluster_queue) if order and passage.admission else None
        if note and not passage.refused:
            print(note)
        for line in class_lines(doc, admitted, classes or {}) if admitted else []:
            print(line)
        for line in dispatched(dispatch):
            print(line)
        refused |= passage.refused or (dispatch is not None and not dispatch.admitted)
    return refused


def dispatched(d: Dispatch | None) -> list[str]:
    """The workers offered it: why each that does not take it does not admit it, where it runs, and what stops
    its pods there (the workload is then refused, as in one cluster)."""
    if d is None:
        return []
    lines = [f"  worker {w}: not admitted: {r.reason}" for w, r in d.tried if not r.quota_reserved]
    taker = next((r for w, r in d.tried if w == d.worker), None)
    how = f"{d.dispatcher}: {', '.join(d.order)}"
    if taker is None:
        return [*lines, f"  refused: MultiKueue: no worker admits it ({how})"]
    if len(d.takers) > 1:
        lines.append(f"  workers {', '.join(d.takers)} would all admit it: the first to reserve quota takes it")
    wait = f", after {d.rounds} round{'s' if d.rounds > 1 else ''} of 5 minutes" if d.rounds else ""
    lines.append(f"  dispatched ({how}{wait}): worker {d.worker} -> {placement(taker)}")
    return lines + [f"  refused: worker {d.worker}: {w}" for w in taker.warnings]


if __name__ == "__main__":
    code = main()
    close_thread_loops()
    sys.exit(code)
