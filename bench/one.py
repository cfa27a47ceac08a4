"""One size, in its own process (so peak memory is this size's): prints a JSON line."""
from __future__ import annotations

import json
import resource
import runpy
import statistics
import sys
import time
from pathlib import Path

from gke_ai_batch.offline.check import violations
from gke_ai_batch.offline.runtime import close_thread_loops, record, run_program
from gke_ai_batch.offline.stackfile import StackFile, project

from .synthetic import platform

RUNS = 3


FLOOR_PROGRAM = Path(__file__).with_name("floor_program.py")


def floor(regs: list) -> float:
    """The same mock runtime registering the same resource graph (types, names, inputs, parents,
    providers, dependencies) with no program logic, entered the same way (runpy): what the Pulumi SDK
    costs for this graph."""
    todo = [r for r in regs if r.type != "pulumi:pulumi:Stack"]
    start = time.perf_counter()
    record(lambda: runpy.run_path(str(FLOOR_PROGRAM), init_globals={"TODO": todo}), "floor")
    return time.perf_counter() - start


def main(teams: int) -> dict:
    stack = StackFile(name=f"bench-{teams}", path=Path("bench"),
                      config={f"{project().name}:platform": json.dumps(platform(teams))})
    plan_times, check_times, floor_times = [], [], []
    for _ in range(RUNS):
        t = time.perf_counter()
        regs = run_program(stack)
        plan_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        found = violations(regs)
        check_times.append(time.perf_counter() - t)
        floor_times.append(floor(regs))
    assert not [v for v in found if v["level"] == "mandatory"], found
    plan_s, check_s, floor_s = (statistics.median(x) for x in (plan_times, check_times, floor_times))
    close_thread_loops()
    return {"teams": teams, "resources": len(regs), "plan_s": round(plan_s, 3), "check_s": round(check_s, 3),
            "floor_s": round(floor_s, 3), "plan_over_floor": round(plan_s / floor_s, 2),
            "check_over_plan": round(check_s / plan_s, 3),
            "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]))))
