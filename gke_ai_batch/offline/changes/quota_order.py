"""The note `make plan` and `make check` give a stack whose `quotas` are written in another order than Kueue
tries their flavors in, among flavors of one capacity. The program cannot give it: `pulumi up` hands it the
config with every mapping's keys sorted (gke_ai_batch.offline.engine.stackfile.engine_json), so a queue's flavors
are tried in the order they are declared (gke_ai_batch.plan.scheduling.CAPACITY_ORDER), and the order a user
wrote them in is seen only here, in the stack file. Until this rule, the offline plan followed the written
order while `pulumi up` followed the sorted one: such a stack is told which order it now gets."""
from __future__ import annotations

from typing import Any

from gke_ai_batch.model.config import CONFIG_KEY
from gke_ai_batch.model.fleet_facts import WORKER_OUTPUT
from gke_ai_batch.plan.platform import build_platform
from gke_ai_batch.plan.scheduling import overruled_quota_orders

from ..engine.runtime import Planned, reference_key
from ..engine.stackfile import StackFile, project

ORDER_RULE = ("flavors of one capacity are tried in the order they are declared (tpu_pools, gpu_pools, cpu_pools, "
              "compute_classes, each as listed), not in the order of `quotas`, whose keys `pulumi up` hands the "
              "program sorted; reorder the pools to change it, or the quotas to match it (docs/queues.md)")


def quota_order_notes(stack: StackFile, planned: Planned) -> list[str]:
    """One `note:` line per ClusterQueue whose written quota order the plan does not follow. The stack is
    planned again, purely and from the file's order, with the workers' outputs the offline run read; a
    program that reads no platform block from the stack file (one reusing the components) gets none."""
    def workers(fleet: Any) -> dict[str, Any]:
        return {w.name: planned.references[str(reference_key(w.stack))].outputs.get(WORKER_OUTPUT)
                for w in fleet.workers}
    raw = stack.config.get(f"{project().name}:{CONFIG_KEY}")
    if not isinstance(raw, dict):  # a program of its own (examples/reuse) declares its platform in code
        return []
    platform = build_platform(raw, project().name, worker_outputs=workers)
    return [f"note: {path} lists {first!r} before {second!r}, but Kueue tries {second!r} first: {ORDER_RULE}"
            for path, first, second in overruled_quota_orders(platform.scheduling)]
