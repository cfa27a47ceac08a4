"""One size, in its own process (so peak memory is this size's): prints a JSON line.

A first plan and floor run warm the process (imports, the SDK's first registrations) and are not counted;
then RUNS rounds, each a plan, its policy check and the floor, so that plan and floor share the machine's
state of the moment. The ratio is the median of the rounds' plan/floor ratios, with their spread. With
`--once`, a single plan (the largest size: its time and peak memory are the figure)."""
from __future__ import annotations

import gc
import json
import resource
import runpy
import statistics
import sys
import time
from pathlib import Path

from gke_ai_batch.offline.engine.runtime import close_thread_loops, record, run_program
from gke_ai_batch.offline.engine.stackfile import StackFile, project
from gke_ai_batch.offline.views.check import violations

from .synthetic import platform

RUNS = 5
FLOOR_PROGRAM = Path(__file__).with_name("floor_program.py")


def floor(regs: list) -> float:
    """The same mock runtime registering the same resource graph (types, names, inputs, parents,
    providers, dependencies) with no program logic, entered the same way (runpy): what the Pulumi SDK
    costs for this graph."""
    todo = [r for r in regs if r.type != "pulumi:pulumi:Stack"]
    gc.collect()
    start = time.perf_counter()
    record(lambda: runpy.run_path(str(FLOOR_PROGRAM), init_globals={"TODO": todo}), "floor")
    return time.perf_counter() - start


def timed(stack: StackFile) -> tuple[float, list]:
    gc.collect()  # each run starts from a clean heap: the last one's garbage is not this one's cost
    start = time.perf_counter()
    regs = run_program(stack)
    return time.perf_counter() - start, regs


def peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def rounds(stack: StackFile) -> dict:
    floor(timed(stack)[1])  # the warm-up round, whose peak memory is the size's (later rounds add the SDK's leftovers)
    peak = peak_mb()
    plans, checks, floors, ratios = [], [], [], []
    for _ in range(RUNS):
        plan_s, regs = timed(stack)
        start = time.perf_counter()
        found = violations(regs)
        checks.append(time.perf_counter() - start)
        floors.append(floor(regs))
        plans.append(plan_s)
        ratios.append(plan_s / floors[-1])
    assert not [v for v in found if v["level"] == "mandatory"], found
    plan_s, check_s = statistics.median(plans), statistics.median(checks)
    return {"resources": len(regs), "plan_s": round(plan_s, 3), "check_s": round(check_s, 3),
            "floor_s": round(statistics.median(floors), 3), "plan_over_floor": round(statistics.median(ratios), 2),
            "spread": f"{min(ratios):.2f}..{max(ratios):.2f}", "check_over_plan": round(check_s / plan_s, 3),
            "peak_mb": peak}


def main(teams: int, once: bool) -> dict:
    stack = StackFile(name=f"bench-{teams}", path=Path("bench"),
                      config={f"{project().name}:platform": json.dumps(platform(teams))})
    if once:
        plan_s, regs = timed(stack)
        row = {"resources": len(regs), "plan_s": round(plan_s, 1)}
    else:
        row = rounds(stack)
    close_thread_loops()
    return {"teams": teams, "peak_mb": peak_mb(), **row}


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), "--once" in sys.argv)))
