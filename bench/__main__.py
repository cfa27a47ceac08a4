"""Run each size in a fresh process, print the table and the targets, write out/bench.json."""
from __future__ import annotations

import json
import os
import platform as host
import subprocess
import sys
from pathlib import Path

SIZES = (10, 100, 200, 1000)
LARGEST = 5000  # the most teams the platform vouches for (docs/scale.md): one plan, its time and memory
PLAN_OVER_FLOOR = {200: 1.25, 1000: 1.5}  # targets: median plan time / floor time at that many teams
PER_RESOURCE_GROWTH = 1.2  # time per resource at 1,000 teams / at 100
LARGEST_GROWTH = 1.3  # time per resource at LARGEST teams / at 10 (issue 51)
CHECK_OVER_PLAN = 0.25
PEAK_MB = 600  # at up to 1,000 teams (issue 51)
LARGEST_S, LARGEST_MB = 60, 1536  # the plan of LARGEST teams, on 2 cores


def run(teams: int, *flags: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "bench.one", str(teams), *flags], capture_output=True, text=True,
                         check=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def targets(rows: dict[int, dict], largest: dict) -> list[tuple[str, float, float]]:
    """(what, measured, limit) for every target."""
    per_res = {n: r["plan_s"] / r["resources"] for n, r in rows.items()}
    out = [(f"plan / floor at {n} teams (median of rounds {rows[n]['spread']})", rows[n]["plan_over_floor"], limit)
           for n, limit in PLAN_OVER_FLOOR.items()]
    out.append(("time per resource at 1000 / at 100 teams", round(per_res[1000] / per_res[100], 2),
                PER_RESOURCE_GROWTH))
    out.append((f"time per resource at {LARGEST} / at 10 teams",
                round(largest["plan_s"] / largest["resources"] / per_res[10], 2), LARGEST_GROWTH))
    out.append(("check / plan (worst size)", max(r["check_over_plan"] for r in rows.values()), CHECK_OVER_PLAN))
    out.append(("peak MB (worst size up to 1000 teams)", max(r["peak_mb"] for r in rows.values()), PEAK_MB))
    out.append((f"plan s at {LARGEST} teams ({largest['resources']} resources)", largest["plan_s"], LARGEST_S))
    out.append((f"peak MB at {LARGEST} teams", largest["peak_mb"], LARGEST_MB))
    return out


def main() -> int:
    rows = {n: run(n) for n in SIZES}
    largest = run(LARGEST, "--once")
    cols = ["teams", "resources", "plan_s", "check_s", "floor_s", "plan_over_floor", "spread", "check_over_plan",
            "peak_mb"]
    print(f"machine: {host.machine()}, {host.python_implementation()} {host.python_version()}, {os.cpu_count()} cores")
    print(" | ".join(cols))
    for r in [*rows.values(), largest]:
        print(" | ".join(str(r.get(c, "-")) for c in cols))
    results = targets(rows, largest)
    for what, measured, limit in results:
        print(f"{'ok  ' if measured <= limit else 'MISS'} {what}: {measured} (target <= {limit})")
    Path("out").mkdir(exist_ok=True)
    Path("out/bench.json").write_text(json.dumps({"sizes": [*rows.values(), largest], "targets": [
        {"what": w, "measured": m, "limit": lim} for w, m, lim in results]}, indent=2) + "\n")
    print("wrote out/bench.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
