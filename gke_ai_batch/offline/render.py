"""What `make plan` writes and prints: resources.json, apply-able manifests, Helm values, a summary."""
from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from gke_ai_batch.model.pool_facts import pool_facts
from gke_ai_batch.policies import stack_rules as sr
from gke_ai_batch.vocabulary import CLUSTER, HELM_RELEASE, NODE_POOL, kueue_type

from .runtime import Registration

# kubectl apply -f <dir> applies files in name order: namespaces and CRD-free kinds first.
APPLY_ORDER = ["Namespace", "PriorityClass", "WorkloadPriorityClass", "ResourceFlavor", "Cohort",
               "ProvisioningRequestConfig", "AdmissionCheck", "ClusterQueue", "LocalQueue", "RoleBinding"]


def cluster_zones(regs: list[Registration]) -> list[str]:
    """The node zones of the stack's cluster: where its pools without nodeLocations run."""
    return next((list(r.inputs.get("nodeLocations") or []) for r in regs if r.type == CLUSTER), [])


def is_manifest(r: Registration) -> bool:
    return r.type.startswith("kubernetes:") and r.type != HELM_RELEASE and "apiVersion" in r.inputs


def manifest_of(r: Registration) -> dict[str, Any]:
    body = dict(r.inputs)
    head = {"apiVersion": body.pop("apiVersion"), "kind": body.pop("kind"), "metadata": body.pop("metadata")}
    return {**head, **body}


def manifest_filename(m: Mapping[str, Any]) -> str:
    kind, meta = m["kind"], m["metadata"]
    order = APPLY_ORDER.index(kind) if kind in APPLY_ORDER else len(APPLY_ORDER)
    ns = f"{meta['namespace']}-" if meta.get("namespace") else ""
    return f"{order:02d}-{kind.lower()}-{ns}{meta['name']}.yaml"


def write_outputs(regs: list[Registration], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "resources.json").write_text(json.dumps([r.as_json() for r in regs], indent=2) + "\n")
    for sub in ("manifests", "helm"):
        d = out / sub
        d.mkdir(exist_ok=True)
        for old in d.glob("*.yaml"):
            old.unlink()
    for r in regs:
        if is_manifest(r):
            m = manifest_of(r)
            (out / "manifests" / manifest_filename(m)).write_text(yaml.safe_dump(m, sort_keys=False))
        elif r.type == HELM_RELEASE:
            i = r.inputs
            doc = {"release": i["name"], "chart": i["chart"], "version": i["version"],
                   "namespace": i["namespace"], "values": i.get("values", {})}
            (out / "helm" / f"{i['name']}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))


def _table(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def quota_lines(regs: list[Registration]) -> list[str]:
    """Nominal quota promised per flavor and resource against what the flavor's pools hold at full
    size, and how much of that is guaranteed (spot, flex-start and queued capacity is not)."""
    ix = sr.Index([sr.Res(r.type, r.urn, r.inputs) for r in regs if r.custom])
    rows = [(flavor, res, sr.show(res, promised), sr.show(res, cap.total), sr.show(res, cap.fixed), ", ".join(queues))
            for flavor, res, promised, cap, queues in sr.promises(ix)]
    if not rows:
        return []
    head = ("flavor", "resource", "promised", "at full size", "guaranteed", "ClusterQueues")
    return ["quota against capacity (nominal quotas; capacity is allocatable cpu and memory):", *_table([head, *rows])]


def summary(regs: list[Registration]) -> str:
    """Readable plan: the cluster, each node pool's shape and capacity, totals per accelerator."""
    lines = []
    kinds: dict[str, int] = defaultdict(int)
    for r in regs:
        kinds[r.type] += 1
    for r in regs:
        if r.type == CLUSTER:
            i = r.inputs
            mode = "Autopilot" if i.get("enableAutopilot") else "Standard"
            lines.append(f"cluster {i['name']} ({mode}, {i['location']}, channel "
                         f"{i.get('releaseChannel', {}).get('channel')})")
    zones = cluster_zones(regs)
    pools = sorted((pool_facts(r.inputs, zones) for r in regs if r.type == NODE_POOL), key=lambda p: p.name)
    if pools:
        header = ("pool", "accelerator", "topology", "machine", "nodes", "capacity", "chips/GPUs")
        rows = [header] + [(p.name, p.accelerator or "-", p.topology or "-", p.machine_type, p.sizing(), p.capacity,
                            str(p.accelerators) if p.resource else "-") for p in pools]
        lines += _table(rows)
        totals: dict[str, int] = defaultdict(int)
        for p in pools:
            if p.resource:
                totals[f"{p.accelerator} ({p.resource})"] += p.accelerators
        for acc, n in sorted(totals.items()):
            lines.append(f"  total {acc}: {n} at full size")
    queues = sorted(r.inputs["metadata"]["name"] for r in regs if r.type.endswith(":ClusterQueue"))
    lines.append(f"kueue: {kinds[kueue_type('ResourceFlavor')]} flavors, "
                 f"{kinds[kueue_type('Cohort')]} cohorts, {len(queues)} ClusterQueues "
                 f"({', '.join(queues)}), {kinds[kueue_type('LocalQueue')]} LocalQueues, "
                 f"{kinds[kueue_type('AdmissionCheck')]} admission checks")
    lines += quota_lines(regs)
    releases = sorted(f"{r.inputs['name']} {r.inputs['version']}" for r in regs if r.type == HELM_RELEASE)
    lines.append(f"helm: {', '.join(releases) or '(none)'}")
    lines.append(f"{len(regs)} resources registered")
    return "\n".join(lines)
