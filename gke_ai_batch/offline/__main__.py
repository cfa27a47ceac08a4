"""CLI: `python -m gke_ai_batch.offline plan STACK [--out DIR]` and
`python -m gke_ai_batch.offline check STACK [--out DIR]`."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .changes.quota_order import quota_order_notes
from .engine.runtime import PlanError, close_thread_loops, run_program
from .engine.stackfile import project, resolve, stack_name
from .views.check import load_levels, run_checks
from .views.render import remove_outputs, write_outputs
from .views.summary import plan_summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gke_ai_batch.offline", description=__doc__)
    ap.add_argument("command", choices=["plan", "check"])
    ap.add_argument("stack", nargs="?", default="dev",
                    help="a stack name of the project or a path to Pulumi.<stack>.yaml")
    ap.add_argument("--out", help="output folder (default out/<stack>)")
    ap.add_argument("--policy-config", help="JSON: enforcement level per policy, as in Pulumi policy config")
    args = ap.parse_args(argv)
    out = Path(args.out) if args.out else project().root / "out" / stack_name(args.stack)
    try:
        levels = load_levels(args.policy_config) if args.command == "check" else {}
        stack = resolve(args.stack)
        regs = run_program(stack)
    except (PlanError, SystemExit) as e:
        return refused(str(e) if isinstance(e, SystemExit) else f"stack {stack.name} ({stack.path}): {e}", out)
    report = plan_summary(regs)
    write_outputs(regs, out, report, stack.name)
    print(f"stack {stack.name} ({stack.path})")
    print(report.console(f"{out}/summary.md"))
    for note in quota_order_notes(stack, regs):
        print(note)
    print(f"wrote {out}/resources.json, {out}/manifests/, {out}/helm/, {out}/summary.md, {out}/queues.mmd, "
          f"{out}/report.html")
    return run_checks(regs, stack, out, levels) if args.command == "check" else 0


def refused(message: str, out: Path) -> int:
    """Say why, and leave no earlier plan's files that would look like this one's."""
    print(f"error: {message}", file=sys.stderr)
    removed = remove_outputs(out)
    if removed:
        print(f"removed the earlier plan's {', '.join(removed)} from {out}", file=sys.stderr)
    return 2

if __name__ == "__main__":
    code = main()
    close_thread_loops()
    sys.exit(code)
