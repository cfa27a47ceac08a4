"""CLI: `python -m gke_ai_batch.offline plan STACK [--out DIR]` and
`python -m gke_ai_batch.offline check STACK [--out DIR]`."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .render import summary, write_outputs
from .runtime import PlanError, close_thread_loops, run_program
from .stackfile import project, resolve


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gke_ai_batch.offline", description=__doc__)
    ap.add_argument("command", choices=["plan", "check"])
    ap.add_argument("stack", nargs="?", default="dev",
                    help="a stack name of the project or a path to Pulumi.<stack>.yaml")
    ap.add_argument("--out", help="output folder (default out/<stack>)")
    ap.add_argument("--policy-config", help="JSON: enforcement level per policy, as in Pulumi policy config")
    args = ap.parse_args(argv)
    stack = resolve(args.stack)
    out = Path(args.out) if args.out else project().root / "out" / stack.name
    try:
        regs = run_program(stack)
    except PlanError as e:
        print(f"error: stack {stack.name} ({stack.path}): {e}", file=sys.stderr)
        return 2
    write_outputs(regs, out)
    print(f"stack {stack.name} ({stack.path})")
    print(summary(regs))
    print(f"wrote {out}/resources.json, {out}/manifests/, {out}/helm/")
    if args.command == "check":
        from .check import run_checks
        return run_checks(regs, stack, out, args.policy_config)
    return 0


if __name__ == "__main__":
    code = main()
    close_thread_loops()
    sys.exit(code)
