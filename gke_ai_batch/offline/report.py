"""`make report STACK=s [BASE=ref]`: the plan as one self-contained HTML page (report.html) that people open
in a browser: no network, no external script, the data embedded as JSON and drawn by the page itself.
`make plan` writes it too; with BASE the page adds each team's quotas before and after."""
from __future__ import annotations

import argparse
import json
import secrets
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from . import diff
from .changes.quota_changes import team_quotas
from .engine.runtime import PlanError, Registration, close_thread_loops, run_program
from .engine.stackfile import project, resolve, stack_name
from .views.report_data import quota_changes, report_data

PAGE = "report_page.html"
REPORT = "report.html"


def render_report(data: dict[str, Any]) -> str:
    """The page with the plan's data in its JSON script (a `</` could close the script: escaped)."""
    page = resources.files("gke_ai_batch.offline.views").joinpath(PAGE).read_text()
    return page.replace("/*PLAN*/", json.dumps(data, sort_keys=True).replace("</", "<\\/"))


def base_resources(stack: str, base: str, here: Path) -> list[dict[str, Any]]:
    """The stack's resources at BASE, planned with BASE's own code as `make diff` plans it."""
    repo = diff.repo_root(here)
    sha = diff.base_commit(repo, base)
    proj, path = diff.locate(stack, here, repo)
    with tempfile.TemporaryDirectory(prefix="gke-ai-batch-report-") as name:
        tmp = Path(name)
        diff.extract(repo, sha, tmp / "base")
        before = diff.side(f"BASE {base} ({sha[:7]})", tmp / "base", proj, stack, path)
        key = secrets.token_hex(32)  # the page shows no secret; BASE's planner digests them with a key all the same
        return diff.finish(before, diff.start(before, tmp, "base", key), tmp, "base").resources


def write_report(out: Path, stack: str, regs: list[Registration], base: str | None = None,
                 old: list[dict[str, Any]] | None = None) -> Path:
    changes = None
    if old is not None:
        changes = quota_changes(team_quotas(old), team_quotas([r.as_json() for r in regs]))
    path = out / REPORT
    path.write_text(render_report(report_data(stack, regs, changes, base)))
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gke_ai_batch.offline.report", description=__doc__)
    ap.add_argument("stack", help="a stack name of the project or a path to Pulumi.<stack>.yaml")
    ap.add_argument("--base", help="a git ref: show each team's quotas there and now")
    ap.add_argument("--out", help="output folder (default out/<stack>)")
    args = ap.parse_args(argv)
    out = Path(args.out) if args.out else project().root / "out" / stack_name(args.stack)
    try:
        regs = run_program(resolve(args.stack))
        old = base_resources(args.stack, args.base, Path.cwd()) if args.base else None
    except (PlanError, diff.DiffError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    print(f"wrote {write_report(out, stack_name(args.stack), regs, args.base, old)}")
    return 0


if __name__ == "__main__":
    code = main()
    close_thread_loops()
    sys.exit(code)
