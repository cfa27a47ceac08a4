"""Pathways per team: the cpu and memory quota of its Pathways heads on the head pool's flavor, beside
its TPU quota, and the checks that the head pool can run them.

Upstream facts (xpk, AI-Hypercomputer/xpk@367c8382, src/xpk/templates/pathways_workload_create.yaml.j2
and src/xpk/core/pathways.py): a Pathways JobSet has one `pathways-head` replicated job (1 pod, placed on
the CPU pool `cpu-np`, one per node by `alpha.jobset.sigs.k8s.io/exclusive-topology: kubernetes.io/hostname`)
whose pod runs `pathways-proxy` (limits cpu 16, memory 100G) and `pathways-rm` (limits cpu 8, memory 32G),
and TPU `worker` replicated jobs, one per slice; "Pathways workloads can only be run on TPUs". Kueue takes
limits as missing requests and sums a pod's containers and sidecars (admission.pod_sets), so a head
counts 24 cpu and 132G of memory. Cluster Toolkit (GoogleCloudPlatform/cluster-toolkit,
modules/management/kubectl-apply/kueue/kueue-configuration-pathways.yaml.tftpl) gives the ClusterQueue the
same shape: the head pool's flavor (`pathways-flavor`, nodeLabels gke-nodepool: cpu-np) in the TPU flavor's
resource group, with cpu and memory quota and google.com/tpu 0. What Pathways needs of the cluster, its TPUs and
JobSet is in the rules table (model.gke_pathways_rules).
"""
from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from gke_ai_batch import vocabulary
from gke_ai_batch.model import catalog
from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ROOT, ConfigError, path_of
from gke_ai_batch.model.gke_rules import pathways_findings
from gke_ai_batch.model.machines import shape
from gke_ai_batch.model.pathways_config import PathwaysConfig
from gke_ai_batch.model.quantity import format_quantity, parse_quantity
from gke_ai_batch.model.team_config import QueueSpec, QuotaSpec, TeamConfig
from gke_ai_batch.model.words import name_list
from gke_ai_batch.plan.pools import PoolPlan
from gke_ai_batch.vocabulary import ClusterMode, PoolKind

HEAD_CONTAINERS = {"pathways-proxy": {"cpu": "16", "memory": "100G"},
                   "pathways-rm": {"cpu": "8", "memory": "32G"}}
HEAD_REQUESTS: dict[str, Decimal] = {r: sum((parse_quantity(c[r]) for c in HEAD_CONTAINERS.values()), Decimal(0))
                                     for r in ("cpu", "memory")}
# xpk src/xpk/core/pathways.py `get_pathways_machine_types`: the head pool's machine needs guestCpus >= 49 and
# memoryMb >= 233 * 1024, "large enough to handle the control plane workload plus GKE system overhead".
HEAD_MACHINE_MIN = (49, 233 * 1024)  # vCPUs, MiB


def _quantity(resource: str, value: Decimal) -> int | str:
    """cpu as whole cores (a number, as quotas are written) or millicores; memory in G where whole (as xpk
    writes it), else in bytes."""
    if resource == "cpu":
        text = format_quantity(value)
        return int(text) if text.isdigit() else text
    return format_quantity(value, "G")


def _head_pool(cfg: PlatformConfig, path: str, p: PathwaysConfig, pools: list[PoolPlan]) -> PoolPlan:
    """The cpu pool the heads run on; a TPU or GPU pool is refused (the head is a CPU process)."""
    if p.head_pool is None:
        raise ConfigError(f"{path}.head_pool", "Pathways needs a head pool: the cpu_pools entry its heads run on "
                          f"({name_list(c.name for c in cfg.cpu_pools)}; a node of at least {HEAD_MACHINE_MIN[0]} "
                          f"vCPUs and {HEAD_MACHINE_MIN[1] // 1024} GiB per head)")
    for key, kind in (("tpu_pools", "TPU"), ("gpu_pools", "GPU")):
        if any(q.name == p.head_pool for q in getattr(cfg, key)):
            cpu_pools = name_list(c.name for c in cfg.cpu_pools)
            raise ConfigError(f"{path}.head_pool", f"{p.head_pool!r} is a {kind} pool ({key}): the Pathways head "
                              "(proxy and resource manager) runs on CPU nodes, as xpk and Cluster Toolkit place it "
                              f"on their cpu-np pool; name a cpu_pools entry ({cpu_pools})")
    found = [q for q in pools if q.source == p.head_pool and q.kind == PoolKind.CPU]
    if not found:
        raise ConfigError(f"{path}.head_pool", f"no cpu pool named {p.head_pool!r}; cpu_pools: "
                          f"{name_list(c.name for c in cfg.cpu_pools)} (add one for the heads, such as n2-standard-64)")
    return found[0]


def _nodes(pool: PoolPlan) -> int:
    """Most nodes the pool can have: its fixed size or autoscaling maximum, per zone unless total."""
    per = pool.node_count if pool.node_count is not None else (pool.max_nodes or 0)
    return per if pool.total else per * len(pool.zones)


def _check_fits(path: str, p: PathwaysConfig, pool: PoolPlan, heads_before: int) -> None:
    cpus, gib = shape(pool.machine_type) or (0, 0)  # cpu pools name catalog machines only (model.machines)
    if cpus < HEAD_MACHINE_MIN[0] or gib * 1024 < HEAD_MACHINE_MIN[1]:
        head = f"{_quantity('cpu', HEAD_REQUESTS['cpu'])} cpu and {_quantity('memory', HEAD_REQUESTS['memory'])}"
        raise ConfigError(f"{path}.head_pool", f"{p.head_pool!r} runs {pool.machine_type} ({cpus} vCPUs, {gib} GiB); "
                          f"a Pathways head needs a machine of at least {HEAD_MACHINE_MIN[0]} vCPUs and "
                          f"{HEAD_MACHINE_MIN[1] // 1024} GiB (xpk: the head's {head} memory plus GKE's overhead), "
                          "such as n2-standard-64")
    if heads_before + p.heads > _nodes(pool):
        raise ConfigError(f"{path}.heads", f"{p.heads} head(s) need as many nodes of {p.head_pool!r} (one head "
                          f"per node){f', beside {heads_before} for other teams' if heads_before else ''}; it "
                          f"has at most {_nodes(pool)}: raise its nodes or autoscaling.max_nodes, or lower heads")


def _with_heads(resources: Mapping[str, QuotaSpec], heads: int) -> dict[str, QuotaSpec]:
    """The flavor's quotas plus the heads' cpu and memory (added to any the team already gives there)."""
    out = dict(resources)
    for r, per_head in HEAD_REQUESTS.items():
        q = out.get(r)
        total = per_head * heads + (parse_quantity(q.nominal) if q else 0)
        nominal = _quantity(r, Decimal(total))
        out[r] = q.model_copy(update={"nominal": nominal}) if q else QuotaSpec(nominal=nominal)
    return out


def _generations(queue: QueueSpec, tpu_flavors: Mapping[str, str | None]) -> list[str]:
    """The TPU generations of the flavors the team has chips in, by the accelerator their nodes carry."""
    accelerators = {tpu_flavors[f] for f, res in queue.quotas.items()
                    if f in tpu_flavors and vocabulary.TPU_RESOURCE in res}
    return sorted({g.name for g in catalog.TPU_GENERATIONS.values() if g.accelerator in accelerators})


def _enforce_rules(cfg: PlatformConfig, i: int, queue: QueueSpec, tpu_flavors: Mapping[str, str | None]) -> None:
    """The rules table's Pathways rules over this team's facts, at each rule's config path."""
    facts = {"enableAutopilot": cfg.cluster.mode == ClusterMode.AUTOPILOT, "jobsetVersion": cfg.jobset.version,
             "tpuGenerations": _generations(queue, tpu_flavors)}
    for rule, finding in pathways_findings(facts):
        where = rule.field if rule.field.startswith(f"{ROOT}.") else f"{path_of('teams', i)}.{rule.field}"
        raise ConfigError(where + finding.at, finding.message)


def _check_team(cfg: PlatformConfig, path: str, t: TeamConfig, tpu_flavors: Mapping[str, str | None]) -> QueueSpec:
    if cfg.jobset.install == "never":
        raise ConfigError(path, "a Pathways job is a JobSet (a pathways-head and TPU workers) and jobset.install is "
                          "'never': set jobset.install to auto or always, or drop pathways")
    if t.queue is None:
        raise ConfigError(path, f"Pathways quota goes on the team's own ClusterQueue; team {t.name!r} uses the "
                          "shared queue in cluster_queue: give it a queue block, or drop pathways")
    if not any(f in tpu_flavors and vocabulary.TPU_RESOURCE in res for f, res in t.queue.quotas.items()):
        raise ConfigError(path, f"team {t.name!r} has no {vocabulary.TPU_RESOURCE} quota in queue.quotas: Pathways "
                          "drives TPU workers only (xpk: 'Pathways workloads can only be run on TPUs'); add a TPU "
                          "flavor's quota, or drop pathways")
    return t.queue


def queues_with_heads(cfg: PlatformConfig, pools: list[PoolPlan],
                      tpu_flavors: Mapping[str, str | None]) -> dict[int, QueueSpec]:
    """Per team index: its queue with the Pathways heads' quota on the head pool's flavor, for the teams
    with a pathways block; the head pools checked to hold every team's heads. `tpu_flavors`: each TPU
    flavor's accelerator (its nodes' gke-tpu-accelerator label; None where it does not select one)."""
    out: dict[int, QueueSpec] = {}
    heads_on: dict[str, int] = {}
    for i, t in enumerate(cfg.teams):
        if t.pathways is None:
            continue
        path = path_of("teams", i, "pathways")
        queue = _check_team(cfg, path, t, tpu_flavors)
        _enforce_rules(cfg, i, queue, tpu_flavors)
        pool = _head_pool(cfg, path, t.pathways, pools)
        _check_fits(path, t.pathways, pool, heads_on.get(pool.source, 0))
        heads_on[pool.source] = heads_on.get(pool.source, 0) + t.pathways.heads
        assert pool.flavor is not None  # every cpu pool names its flavor (plan.pools)
        quotas = {**queue.quotas, pool.flavor: _with_heads(queue.quotas.get(pool.flavor, {}), t.pathways.heads)}
        out[i] = queue.model_copy(update={"quotas": quotas})
    return out
