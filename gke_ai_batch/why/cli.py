"""`gke-ai-batch why <namespace>/<job>` and `gke-ai-batch queue <namespace>`: exit 0 with the answer, 2 with one
line when the job, its Workload, the cluster or a permission is missing."""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .find import job_object, parse_ref, workloads, workloads_of
from .kube import Kube, WhyError
from .report import Session, gather, lines, one_line


def _why(session: Session, ref: str, as_json: bool) -> int:
    ns, name = parse_ref(ref)
    job = job_object(session.kube, ns, name)
    everything = workloads(session.kube, ns)
    mine = workloads_of(session.kube, job, everything)
    if not mine:
        raise WhyError(f"{job['kind']} {ns}/{name} has no Workload: Kueue does not manage it (it names no "
                       "LocalQueue in a namespace Kueue skips, or Kueue has not seen it yet)")
    answers = [gather(session, wl, everything) for wl in mine]
    if as_json:
        print(json.dumps(answers if len(answers) > 1 else answers[0], indent=2))
    else:
        print("\n".join(ln for a in answers for ln in lines(a)))
    return 0


def _queue(session: Session, ns: str, as_json: bool) -> int:
    everything = workloads(session.kube, ns)
    active = [w for w in everything if not any(c.get("type") == "Finished" and c.get("status") == "True"
                                               for c in (w.get("status") or {}).get("conditions") or [])]
    answers = [gather(session, wl, everything) for wl in active]
    answers.sort(key=lambda a: (a["state"] != "pending", (a["position"] or {}).get("local_queue", 1 << 30),
                                a["created"]))
    if as_json:
        print(json.dumps(answers, indent=2))
        return 0
    if not answers:
        print(f"namespace {ns}: no pending or admitted Workloads")
        return 0
    print(f"{'WORKLOAD':<48} {'STATE':<18} {'POS':>3} {'AGE':>7} {'LOCALQUEUE':<16} REASON")
    print("\n".join(one_line(a) for a in answers))
    if unknown := next((a["position_unknown"] for a in answers if a["position_unknown"]), ""):
        print(f"position unknown: {unknown}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gke-ai-batch", description="Why is my job pending, and for how long?")
    parser.add_argument("--kubeconfig", default="", help="kubectl's --kubeconfig (default: kubectl's own)")
    parser.add_argument("--context", default="", help="kubectl's --context")
    parser.add_argument("--kubectl", default="kubectl", help="the kubectl to run")
    parser.add_argument("--as", dest="as_user", default="", help="kubectl's --as: answer as this user would get it")
    parser.add_argument("--as-group", action="append", default=[], help="kubectl's --as-group (repeatable)")
    parser.add_argument("--json", action="store_true", help="the answer as JSON")
    sub = parser.add_subparsers(dest="command", required=True)
    why = sub.add_parser("why", help="why one job is pending (or what became of it)")
    why.add_argument("job", help="<namespace>/<job>: a Job, JobSet, Pod, Deployment or StatefulSet")
    queue = sub.add_parser("queue", help="a namespace's pending and admitted workloads")
    queue.add_argument("namespace")
    for p in (why, queue):
        p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="the answer as JSON")
    args = parser.parse_args(argv)
    as_flags = ([f"--as={args.as_user}"] if args.as_user else []) + [f"--as-group={g}" for g in args.as_group]
    session = Session(Kube(args.kubeconfig, args.context, args.kubectl, tuple(as_flags)))
    try:
        if args.command == "why":
            return _why(session, args.job, args.json)
        return _queue(session, args.namespace, args.json)
    except WhyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
