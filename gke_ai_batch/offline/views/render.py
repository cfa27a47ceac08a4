"""What `make plan` writes and prints: resources.json, apply-able manifests, Helm values, the summary
(summary.md) and the queue diagram (queues.mmd); and what a refused plan removes of them."""
from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from gke_ai_batch.model.promises import worker_of
from gke_ai_batch.vocabulary import HELM_RELEASE

from ..engine.runtime import Registration
from ..report import write_report
from . import view
from .summary import PlanSummary, plan_summary

# kubectl apply -f <dir> applies files in name order: namespaces and CRD-free kinds first.
APPLY_ORDER = ["Namespace", "ServiceAccount", "Secret", "PriorityClass", "WorkloadPriorityClass", "ResourceFlavor",
               "Cohort", "ProvisioningRequestConfig", "AdmissionCheck", "ClusterQueue", "LocalQueue", "Role",
               "ClusterRole", "RoleBinding", "ClusterRoleBinding", "ResourceQuota", "LimitRange", "NetworkPolicy",
               "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]


# What plan and check write into the output folder, and all a refused plan removes from it: the folder
# may be one the user named with --out, holding files of their own (violations.json is check.py's).
OWN_FILES = ("resources.json", "summary.md", "queues.mmd", "report.html", "violations.json")
OWN_FOLDERS = ("manifests", "helm")  # each holds only the *.yaml files a plan writes
WORKER_FOLDER = "worker-"  # manifests/worker-<name>/: a fleet manager's objects on that worker


def cluster_zones(regs: list[Registration]) -> list[str]:
    """The node zones of the stack's cluster: where its pools without nodeLocations run."""
    return view.cluster_zones(regs)


def is_object(r: Registration) -> bool:
    """A Kubernetes object of any cluster the stack declares objects on."""
    return r.type.startswith("kubernetes:") and r.type != HELM_RELEASE and "apiVersion" in r.inputs


def is_manifest(r: Registration) -> bool:
    """A Kubernetes object of the stack's own cluster (not one a fleet manager declares on a worker)."""
    return is_object(r) and worker_of(r.inputs) is None


def worker_manifests(regs: list[Registration]) -> dict[str, list[dict[str, Any]]]:
    """A fleet manager's objects on each worker, by worker."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in regs:
        if is_object(r) and (worker := worker_of(r.inputs)):
            out.setdefault(worker, []).append(manifest_of(r))
    return out


def manifest_of(r: Registration) -> dict[str, Any]:
    body = dict(r.inputs)
    head = {"apiVersion": body.pop("apiVersion"), "kind": body.pop("kind"), "metadata": body.pop("metadata")}
    return {**head, **body}


def manifest_filename(m: Mapping[str, Any]) -> str:
    """`10-localqueue-asr.nightly-train.yaml`: apply order, kind, then `namespace.name`. A namespace is a DNS
    label (no dot), so the first dot ends it and no two objects share a file (`asr`/`nightly-train` and
    `asr-nightly`/`train` once did, and one silently replaced the other)."""
    kind, meta = m["kind"], m["metadata"]
    order = APPLY_ORDER.index(kind) if kind in APPLY_ORDER else len(APPLY_ORDER)
    ns = f"{meta['namespace']}." if meta.get("namespace") else ""
    return f"{order:02d}-{kind.lower()}-{ns}{meta['name']}.yaml"


def write_outputs(regs: list[Registration], out: Path, report: PlanSummary | None = None, stack: str = "") -> None:
    """Everything a plan writes to `out`; manifests and Helm values of an earlier plan go first, so
    that `kubectl apply -f out/<stack>/manifests/` applies this plan only."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "violations.json").unlink(missing_ok=True)  # an earlier plan's; a check of this one writes it anew
    (out / "resources.json").write_text(json.dumps([r.as_json() for r in regs], indent=2) + "\n")
    for sub in OWN_FOLDERS:
        d = out / sub
        d.mkdir(exist_ok=True)
        for old in d.glob("*.yaml"):
            old.unlink()
        _remove_worker_folders(d)
    for worker, manifests in worker_manifests(regs).items():
        folder = out / "manifests" / f"{WORKER_FOLDER}{worker}"
        folder.mkdir(exist_ok=True)
        for m in manifests:
            (folder / manifest_filename(m)).write_text(yaml.safe_dump(m, sort_keys=False))
    for r in regs:
        if is_manifest(r):
            m = manifest_of(r)
            (out / "manifests" / manifest_filename(m)).write_text(yaml.safe_dump(m, sort_keys=False))
        elif r.type == HELM_RELEASE:
            i = r.inputs
            doc = {"release": i["name"], "chart": i["chart"], "version": i["version"],
                   "namespace": i["namespace"], "values": i.get("values", {})}
            (out / "helm" / f"{i['name']}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    report = report or plan_summary(regs)
    (out / "summary.md").write_text(report.markdown(f"Offline plan of stack {stack}" if stack else "Offline plan"))
    (out / "queues.mmd").write_text(report.diagram.text())
    write_report(out, stack, regs)


def _remove_worker_folders(folder: Path) -> bool:
    """A fleet manager's earlier worker folders (manifests/worker-<name>/, our *.yaml only); True if any went."""
    found = False
    for sub in folder.glob(f"{WORKER_FOLDER}*"):
        if sub.is_dir():
            for f in sub.glob("*.yaml"):
                f.unlink()
            if not any(sub.iterdir()):
                sub.rmdir()
            found = True
    return found


def remove_outputs(out: Path) -> list[str]:
    """Remove what earlier plans and checks wrote to `out` (our file names only, nothing else), so a
    refused plan leaves nothing that looks current or can be applied. Returns what went, for one line."""
    removed = []
    for name in OWN_FILES:
        if (out / name).is_file():
            (out / name).unlink()
            removed.append(name)
    for sub in OWN_FOLDERS:
        d = out / sub
        if d.is_dir() and _remove_worker_folders(d):
            removed.append(f"{sub}/{WORKER_FOLDER}*/")
        old = sorted(d.glob("*.yaml")) if d.is_dir() else []
        for f in old:
            f.unlink()
        if old:
            removed.append(f"{sub}/")
        if d.is_dir() and not any(d.iterdir()):
            d.rmdir()
    return removed


def summary(regs: list[Registration], full_at: str = "summary.md") -> str:
    """Readable plan, as `make plan` prints it: cluster, node pools, teams and their queues, quota
    against capacity per flavor; long tables end with a pointer to `full_at` (summary.md)."""
    return plan_summary(regs).console(full_at)
