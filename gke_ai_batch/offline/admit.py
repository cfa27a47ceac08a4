"""CLI: `python -m gke_ai_batch.offline.admit STACK WORKLOAD...`: would Kueue admit these Jobs and JobSets?

Plans STACK under mocks, then runs gke_ai_batch.offline.admission's model of Kueue v0.19.2 on an empty cluster
for every Job and JobSet in the WORKLOAD files or folders (a folder contributes `<stack>.yaml` if it
has one, else all its .yaml files). One line per workload; exit 1 if any is inadmissible, 2 if the
stack or a workload file cannot be read.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from gke_ai_batch.model.pool_facts import pool_facts
from gke_ai_batch.offline.admission import (
    FRAMEWORKS,
    AdmissionResult,
    Cluster,
    PodSetAssignment,
    kueue_config_from_values,
)
from gke_ai_batch.vocabulary import HELM_RELEASE, NODE_POOL

from .render import cluster_zones, is_manifest, manifest_of
from .runtime import PlanError, Registration, close_thread_loops, run_program
from .stackfile import resolve


def cluster_of(regs: list[Registration]) -> Cluster:
    """The planned stack as admission sees it: manifests, Kueue's Configuration, node pools."""
    manifests = [manifest_of(r) for r in regs if is_manifest(r)]
    kueue = next((r.inputs for r in regs if r.type == HELM_RELEASE and r.inputs.get("name") == "kueue"), {})
    pools = [pool_facts(r.inputs, cluster_zones(regs)) for r in regs if r.type == NODE_POOL]
    return Cluster.build(manifests, kueue_config_from_values(kueue.get("values")), pools)


def workload_files(args: list[str], stack: str) -> list[Path]:
    """Files as given; for a folder, `<stack>.yaml` if present, else every .yaml in it (sorted)."""
    out = []
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            named = path / f"{stack}.yaml"
            out += [named] if named.is_file() else sorted(path.glob("*.yaml"))
        elif path.is_file():
            out.append(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {arg}")
    return out


def workloads_in(path: Path) -> list[dict[str, Any]]:
    """The Jobs and JobSets of a multi-document YAML file (Services and the like are skipped)."""
    docs = yaml.safe_load_all(path.read_text())
    return [d for d in docs if isinstance(d, dict) and d.get("kind") in FRAMEWORKS]


def describe(r: AdmissionResult) -> str:
    """`admitted: ns/name -> ClusterQueue cq, pod set ps: flavor f (borrowing) [checks: c]`, or why not."""
    who = f"{r.namespace}/{r.name}"
    if not r.admitted:
        return f"inadmissible: {who}: {'; '.join(r.problems)}"
    parts = [f"pod set {ps.name}: {_flavors(ps)}" for ps in r.pod_sets]
    checks = f" [checks: {', '.join(r.checks)}]" if r.checks else ""
    return f"admitted: {who} -> ClusterQueue {r.cluster_queue}, {', '.join(parts)}{checks}"


def _flavors(ps: PodSetAssignment) -> str:
    if not ps.flavors:
        return "no flavor (requests no resource the ClusterQueue covers)"
    if len(ps.flavors) == 1:
        f = ps.flavors[0]
        return f"flavor {f.flavor}{' (borrowing)' if f.borrowing else ''}"
    return "flavors " + ", ".join(f"{f.flavor} for {'/'.join(f.resources)}{' (borrowing)' if f.borrowing else ''}"
                                  for f in ps.flavors)


def main(argv: list[str] | None = None) -> int:
    """Exit 0 if every workload is admitted, 1 if any is not, 2 if the stack or a file is unusable."""
    ap = argparse.ArgumentParser(prog="python -m gke_ai_batch.offline.admit", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack", help="a stack name in stacks/ or a path to Pulumi.<stack>.yaml")
    ap.add_argument("workloads", nargs="+", metavar="WORKLOAD", help="YAML files or folders of Jobs/JobSets")
    args = ap.parse_args(argv)
    try:
        stack = resolve(args.stack)
    except SystemExit as e:  # resolve() exits with a message for an unknown stack
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        docs = [(p, d) for p in workload_files(args.workloads, stack.name) for d in workloads_in(p)]
    except (OSError, yaml.YAMLError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not docs:
        print(f"error: no Job or JobSet in {', '.join(args.workloads)}", file=sys.stderr)
        return 2
    try:
        cluster = cluster_of(run_program(stack))
    except PlanError as e:
        print(f"error: stack {stack.name} ({stack.path}): {e}", file=sys.stderr)
        return 2
    try:
        results = [cluster.admit(doc) for _, doc in docs]
    except (ValueError, KeyError, TypeError) as e:
        print(f"error: a workload is not a valid Job or JobSet: {e!r}", file=sys.stderr)
        return 2
    for line in map(describe, results):
        print(line)
    return 0 if all(r.admitted for r in results) else 1


if __name__ == "__main__":
    code = main()
    close_thread_loops()
    sys.exit(code)
