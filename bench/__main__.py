"""Run each size in a fresh process, print the table, write out/bench.json."""
from __future__ import annotations

import json
import platform as host
import subprocess
import sys
from pathlib import Path

SIZES = (10, 50, 200)


def main() -> int:
    rows = []
    for teams in SIZES:
        out = subprocess.run([sys.executable, "-m", "bench.one", str(teams)], capture_output=True, text=True,
                             check=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    cols = ["teams", "resources", "plan_s", "check_s", "floor_s", "plan_over_floor", "check_over_plan", "peak_mb"]
    print(f"machine: {host.machine()}, {host.python_implementation()} {host.python_version()}, "
          f"{__import__('os').cpu_count()} cores")
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r[c]) for c in cols))
    per_res = [r["plan_s"] / r["resources"] for r in rows]
    print(f"time per resource at {rows[-1]['teams']} teams / at {rows[0]['teams']} teams: "
          f"{per_res[-1] / per_res[0]:.2f}")
    Path("out").mkdir(exist_ok=True)
    Path("out/bench.json").write_text(json.dumps(rows, indent=2) + "\n")
    print("wrote out/bench.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
