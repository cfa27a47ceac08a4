"""`python -m gke_ai_batch.sandbox up STACK | stop | status | e2e STACK` (make sandbox, sandbox-stop, e2e).

`up` leaves the sandbox running and prints how to reach it; `e2e` starts one, holds the offline verdicts to it and
stops it, whatever happens. Every failure is one line on stderr and exit 2 (a disagreement of `e2e` exits 1)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .build import KUBERNETES_VERSION
from .errors import SandboxError
from .sandbox import default_dir, running, stop, up


def _how_to_use(stack: str, kubeconfig: Path, bin_dir: Path) -> str:
    return "\n".join([
        f"sandbox of stack {stack} is running (make sandbox-stop ends it):",
        f"  export KUBECONFIG={kubeconfig}",
        f"  export PATH={bin_dir}:$PATH   # kubectl {KUBERNETES_VERSION}, helm, pulumi",
        "  kubectl get clusterqueues,localqueues -A",
        "  # as a member of a team: one of its groups (teams[].groups in the stack file) in one of its namespaces",
        "  kubectl --as=alice@example.com --as-group=<team group> -n <team namespace> create -f job.yaml",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gke_ai_batch.sandbox")
    parser.add_argument("command", choices=["up", "stop", "status", "e2e"])
    parser.add_argument("stack", nargs="?", default="dev")
    parser.add_argument("--dir", type=Path, default=None, help="the sandbox's folder (default: .sandbox)")
    args = parser.parse_args(argv)
    root = (args.dir or default_dir()).resolve()
    try:
        if args.command == "stop":
            ended = stop(root)
            print(f"sandbox stopped: {', '.join(ended)}" if ended else "no sandbox was running")
            return 0
        if args.command == "status":
            print(running(root) or "no sandbox is running")
            return 0
        if args.command == "up":
            paths = up(args.stack, root)
            print(_how_to_use(args.stack, paths.kubeconfig, paths.bin))
            return 0
        return _e2e(args.stack, root)
    except SandboxError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except SystemExit as e:  # the stack file's own one-line refusal (offline.engine.stackfile)
        if isinstance(e.code, str):
            print(f"error: {e.code}", file=sys.stderr)
            return 2
        raise


KNOWN = Path(__file__).resolve().parents[2] / "tests" / "e2e_known"


def _e2e(stack: str, root: Path) -> int:
    """A sandbox of the stack (deployed by pulumi up), every offline verdict held to it, then stopped."""
    from . import e2e

    paths = up(stack, root)
    try:
        return e2e.main([stack, "--kubeconfig", str(paths.kubeconfig), "--kubectl", paths.tool("kubectl"),
                         "--corpus", str(root.parent / "out" / "e2e-corpus.jsonl"), "--sandbox", str(root),
                         "--bin", str(paths.bin), "--known", str(KNOWN / f"{stack}.txt")])
    finally:
        stop(root)


if __name__ == "__main__":
    sys.exit(main())
