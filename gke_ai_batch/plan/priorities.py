"""The priority classes: a PriorityClass for the pods and a Kueue WorkloadPriorityClass for the workloads of each
declared priority, as the stack asks, checked for one global default and the range user classes may take."""
from __future__ import annotations

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.vocabulary import KUEUE_API, Manifest

MAX_USER_PRIORITY = 1_000_000_000  # values above are reserved for system-critical classes


def derive_priorities(cfg: PlatformConfig) -> tuple[tuple[Manifest, ...], tuple[Manifest, ...]]:
    pcs: list[Manifest] = []
    wpcs: list[Manifest] = []
    names: set[str] = set()
    defaults = [i for i, p in enumerate(cfg.priorities) if p.global_default]
    if len(defaults) > 1:
        raise ConfigError(path_of("priorities", defaults[1], "global_default"),
                          f"{cfg.priorities[defaults[0]].name!r} is already the global default; "
                          "at most one priority class may be")
    for i, p in enumerate(cfg.priorities):
        if p.name in names:
            raise ConfigError(path_of("priorities", i, "name"), f"priority {p.name!r} is declared twice")
        names.add(p.name)
        if not -MAX_USER_PRIORITY <= p.value < MAX_USER_PRIORITY:
            raise ConfigError(path_of("priorities", i, "value"), f"{p.value} is out of range: user priority "
                              f"classes take values from -{MAX_USER_PRIORITY:,} to {MAX_USER_PRIORITY - 1:,} "
                              "(higher values are reserved for system-critical pods)")
        if p.pod_priority_class:
            pc: Manifest = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": p.name},
                  "value": p.value, "globalDefault": p.global_default, "preemptionPolicy": p.preemption_policy}
            if p.description:
                pc["description"] = p.description
            pcs.append(pc)
        if p.workload_priority_class:
            wpc: Manifest = {"apiVersion": KUEUE_API, "kind": "WorkloadPriorityClass", "metadata": {"name": p.name},
                   "value": p.value}
            if p.description:
                wpc["description"] = p.description
            wpcs.append(wpc)
    return tuple(pcs), tuple(wpcs)
