"""Pathways per team: the cpu and memory quota of its Pathways heads on the head pool's flavor, beside
its TPU quota, once the rules table's Pathways rules hold (a Standard cluster, TPUs Pathways drives, a JobSet
release with Pathways' fields, a cpu head pool with a node for every head).

Upstream facts (xpk, AI-Hypercomputer/xpk@367c8382, src/xpk/templates/pathways_workload_create.yaml.j2
and src/xpk/core/pathways.py): a Pathways JobSet has one `pathways-head` replicated job (1 pod, placed on
the CPU pool `cpu-np`, one per node by `alpha.jobset.sigs.k8s.io/exclusive-topology: kubernetes.io/hostname`)
whose pod runs `pathways-proxy` (limits cpu 16, memory 100G) and `pathways-rm` (limits cpu 8, memory 32G),
and TPU `worker` replicated jobs, one per slice; "Pathways workloads can only be run on TPUs". Kueue takes
limits as missing requests and sums a pod's containers and sidecars (admission.pod_sets), so a head
counts 24 cpu and 132G of memory. Cluster Toolkit (GoogleCloudPlatform/cluster-toolkit,
modules/management/kubectl-apply/kueue/kueue-configuration-pathways.yaml.tftpl) gives the ClusterQueue the
same shape: the head pool's flavor (`pathways-flavor`, nodeLabels gke-nodepool: cpu-np) in the TPU flavor's
resource group, with cpu and memory quota and google.com/tpu 0.
"""
from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from gke_ai_batch import vocabulary
from gke_ai_batch.model import catalog
from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ROOT, ConfigError, path_of
from gke_ai_batch.model.gke_pathways_rules import HEAD_POOL_LISTS, HEAD_REQUESTS, head_quantity
from gke_ai_batch.model.gke_rules import pathways_findings
from gke_ai_batch.model.machines import shape
from gke_ai_batch.model.pathways_config import PathwaysConfig
from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.model.team_config import QueueSpec, QuotaSpec, TeamConfig
from gke_ai_batch.plan.pools import PoolPlan
from gke_ai_batch.vocabulary import ClusterMode, PoolKind


def _head_pool(cfg: PlatformConfig, p: PathwaysConfig,
               pools: list[PoolPlan]) -> tuple[dict[str, Any], PoolPlan | None]:
    """The head pool's facts for the rules (which pool list names it, its machine, its most nodes), and its plan
    when it is a cpu pool."""
    if p.head_pool is None:
        return {}, None
    found = next((q for q in pools if q.source == p.head_pool and q.kind == PoolKind.CPU), None)
    listed = "cpu_pools" if found else next((key for key in HEAD_POOL_LISTS
                                             if any(q.name == p.head_pool for q in getattr(cfg, key))), None)
    facts: dict[str, Any] = {"name": p.head_pool, "list": listed}
    if found:
        facts.update(machineType=found.machine_type, nodes=_nodes(found),
                     shape=shape(found.machine_type) or (0, 0))  # cpu pools name catalog machines only
    return facts, found


def _nodes(pool: PoolPlan) -> int:
    """Most nodes the pool can have: its fixed size or autoscaling maximum, per zone unless total."""
    per = pool.node_count if pool.node_count is not None else (pool.max_nodes or 0)
    return per if pool.total else per * len(pool.zones)


def _with_heads(resources: Mapping[str, QuotaSpec], heads: int) -> dict[str, QuotaSpec]:
    """The flavor's quotas plus the heads' cpu and memory (added to any the team already gives there)."""
    out = dict(resources)
    for r, per_head in HEAD_REQUESTS.items():
        q = out.get(r)
        total = per_head * heads + (parse_quantity(q.nominal) if q else 0)
        nominal = head_quantity(r, Decimal(total))
        out[r] = q.model_copy(update={"nominal": nominal}) if q else QuotaSpec(nominal=nominal)
    return out


def _generations(queue: QueueSpec, tpu_flavors: Mapping[str, str | None]) -> list[str]:
    """The TPU generations of the flavors the team has chips in, by the accelerator their nodes carry."""
    accelerators = {tpu_flavors[f] for f, res in queue.quotas.items()
                    if f in tpu_flavors and vocabulary.TPU_RESOURCE in res}
    return sorted({g.name for g in catalog.TPU_GENERATIONS.values() if g.accelerator in accelerators})


def _team_facts(cfg: PlatformConfig, p: PathwaysConfig, generations: list[str], head_pool: dict[str, Any],
                heads_before: int) -> dict[str, Any]:
    """One team's facts for the rules table's Pathways rules (model.gke_pathways_rules)."""
    return {"enableAutopilot": cfg.cluster.mode == ClusterMode.AUTOPILOT, "jobsetVersion": cfg.jobset.version,
            "tpuGenerations": generations, "cpuPools": [c.name for c in cfg.cpu_pools], "headPool": head_pool,
            "heads": p.heads, "headsBefore": heads_before}


def _enforce_rules(cfg: PlatformConfig, i: int, facts: Mapping[str, Any]) -> None:
    """The rules table's Pathways rules over this team's facts, at each rule's config path."""
    for rule, finding in pathways_findings(facts):
        where = rule.field if rule.field.startswith(f"{ROOT}.") else f"{path_of('teams', i)}.{rule.field}"
        raise ConfigError(where + finding.at, finding.message)


def _check_team(cfg: PlatformConfig, path: str, t: TeamConfig) -> QueueSpec:
    if cfg.jobset.install == "never":
        raise ConfigError(path, "a Pathways job is a JobSet (a pathways-head and TPU workers) and jobset.install is "
                          "'never': set jobset.install to auto or always, or drop pathways")
    if t.queue is None:
        raise ConfigError(path, f"Pathways quota goes on the team's own ClusterQueue; team {t.name!r} uses the "
                          "shared queue in cluster_queue: give it a queue block, or drop pathways")
    # Any flavor's chips count here: a quota on a flavor that is gone or holds no TPUs gets the queue check's own
    # error (plan.scheduling), which names it, rather than this one.
    if not any(vocabulary.TPU_RESOURCE in res for res in t.queue.quotas.values()):
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
        queue = _check_team(cfg, path, t)
        head_pool, pool = _head_pool(cfg, t.pathways, pools)
        before = heads_on.get(t.pathways.head_pool or "", 0)
        _enforce_rules(cfg, i, _team_facts(cfg, t.pathways, _generations(queue, tpu_flavors), head_pool, before))
        assert pool is not None  # pathways-head-pool: a cpu pool
        heads_on[pool.source] = heads_on.get(pool.source, 0) + t.pathways.heads
        assert pool.flavor is not None  # every cpu pool names its flavor (plan.pools)
        quotas = {**queue.quotas, pool.flavor: _with_heads(queue.quotas.get(pool.flavor, {}), t.pathways.heads)}
        out[i] = queue.model_copy(update={"quotas": quotas})
    return out
