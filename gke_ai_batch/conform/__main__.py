"""python -m gke_ai_batch.conform [--quiet] PATH...: check every manifest under the paths; one line per
problem (file#document Kind/name: path: message), a summary last; exit 1 when any document has a problem,
2 when a path does not exist or holds no manifest."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gke_ai_batch.conform.documents import documents, judge


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gke_ai_batch.conform", description=__doc__)
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--quiet", action="store_true", help="print only the problems and the summary")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        print(f"conform: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    count = problems = unevaluated = 0
    for doc in map(judge, documents(args.paths)):
        count += 1
        problems += len(doc.findings.problems)
        unevaluated += doc.findings.unevaluated_rules
        for path, message in doc.findings.problems:
            print(f"ERROR {doc.label}: {path}: {message}")
        if not args.quiet and not doc.findings.problems:
            print(f"ok    {doc.label}")
    if count == 0:
        print(f"conform: no manifests under {', '.join(map(str, args.paths))}", file=sys.stderr)
        return 2
    print(f"conform: {count} documents, {problems} problems ({unevaluated} CEL transition rules, which judge "
          "updates only, not evaluated)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
