"""What Pathways needs of the platform a team runs it on: a Standard cluster, TPU slices of a generation Pathways
drives, a JobSet release that has the fields Pathways' JobSet sets, and a CPU pool that holds the team's heads.

A Pathways rule's check takes one team's Pathways facts, which the planner gathers (plan.pathways): whether the
cluster is Autopilot (`enableAutopilot`), the generations of the TPU flavors the team has quota in
(`tpuGenerations`), the JobSet release the platform installs (`jobsetVersion`), the head pool it names
(`headPool`: its name, the stack's pool list it is in, its machine and shape, its most nodes), the stack's
`cpuPools`, and the heads of this team (`heads`) and of the teams before it on the same pool (`headsBefore`).
These facts live in the team blocks, not in GKE resources, so the planner checks these rules and the policy
pack does not.
"""
from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from gke_ai_batch.model.gke_pool_rules import version_below
from gke_ai_batch.model.gke_rule_sources import (
    PATHWAYS_CLUSTER,
    PATHWAYS_HEAD_MACHINE,
    PATHWAYS_HEAD_POOL,
    PATHWAYS_JOBSET,
    PATHWAYS_TPUS,
    Finding,
    GkeRule,
    Props,
)
from gke_ai_batch.model.quantity import format_quantity, parse_quantity
from gke_ai_batch.model.words import name_list, or_list

# xpk (src/xpk/core/system_characteristics.py @367c8382) gives each TPU a Pathways instance type, the
# resource manager's `--instance_type=<type>:<topology>`: these are the catalog's generations it names.
# GKE's Pathways pages show v5e and v6e slices; Cluster Toolkit enables Pathways on its v5e, v5p, v6e and
# TPU7x blueprints (`enable_pathways_for_tpus`). No page restricts Pathways to fewer generations.
PATHWAYS_INSTANCE_TYPES = {"v4": "tpuv4", "v5e": "tpuv5e", "v5p": "tpuv5", "v6e": "tpuv6e", "tpu7x": "tpu7x"}
# Pathways' JobSet (xpk's template) sets spec.failurePolicy.restartStrategy, first in JobSet v0.7.0, and
# spec.coordinator and spec.network.publishNotReadyAddresses, from v0.6.0 (api/jobset/v1alpha2/jobset_types.go
# at each tag). xpk installs v0.10.1; the platform's releases are in model/releases.py.
PATHWAYS_MIN_JOBSET = "0.7.0"
# The head (xpk, src/xpk/templates/pathways_workload_create.yaml.j2): one pod of the proxy and the resource
# manager, with these limits, which Kueue takes as the missing requests and sums per pod.
HEAD_CONTAINERS = {"pathways-proxy": {"cpu": "16", "memory": "100G"},
                   "pathways-rm": {"cpu": "8", "memory": "32G"}}
HEAD_REQUESTS: dict[str, Decimal] = {r: sum((parse_quantity(c[r]) for c in HEAD_CONTAINERS.values()), Decimal(0))
                                     for r in ("cpu", "memory")}
# xpk src/xpk/core/pathways.py `get_pathways_machine_types`: the head pool's machine needs guestCpus >= 49 and
# memoryMb >= 233 * 1024, "large enough to handle the control plane workload plus GKE system overhead".
HEAD_MACHINE_MIN = (49, 233 * 1024)  # vCPUs, MiB
# The head runs on a CPU pool: GKE's "Create a GKE cluster with Pathways" provisions "the required cpu-np CPU
# node pool" for it. PathwaysJob (google/pathways-job, a peer) also offers colocate_head_with_workers, the head
# beside a TPU worker, which xpk has deprecated; the docs win, and a TPU or GPU head pool is refused.
HEAD_POOL_LISTS = {"tpu_pools": "TPU", "gpu_pools": "GPU"}


def head_quantity(resource: str, value: Decimal) -> int | str:
    """cpu as whole cores (a number, as quotas are written) or millicores; memory in G where whole (as xpk
    writes it), else in bytes."""
    if resource == "cpu":
        text = format_quantity(value)
        return int(text) if text.isdigit() else text
    return format_quantity(value, "G")


def _standard_cluster(p: Props) -> Iterator[Finding]:
    if p.get("enableAutopilot"):
        yield Finding("Pathways runs on a Standard cluster: its heads take a CPU node pool of their own (cpu_pools) "
                      "and its head and workers use the host network, which Autopilot admits only from "
                      "allowlisted workloads; no Pathways page documents Autopilot. Set cluster.mode: standard, or "
                      "drop pathways")


def _tpu_generations(p: Props) -> Iterator[Finding]:
    unknown = sorted(set(p.get("tpuGenerations") or ()) - set(PATHWAYS_INSTANCE_TYPES))
    if unknown:
        yield Finding(f"the team's TPU quota is on TPU {', '.join(unknown)}, which Pathways does not drive; it drives "
                      f"{or_list(list(PATHWAYS_INSTANCE_TYPES))}")


def _jobset_version(p: Props) -> Iterator[Finding]:
    version = p.get("jobsetVersion")
    if version_below(version, PATHWAYS_MIN_JOBSET):
        yield Finding(f"JobSet {version}: a Pathways JobSet sets spec.failurePolicy.restartStrategy, which JobSet has "
                      f"from v{PATHWAYS_MIN_JOBSET}; choose that release or a later one")


def _head_pool(p: Props) -> Iterator[Finding]:
    pool, cpu_pools = p.get("headPool") or {}, name_list(p.get("cpuPools") or ())
    name, listed = pool.get("name"), pool.get("list")
    if name is None:
        yield Finding(f"Pathways needs a head pool: the cpu_pools entry its heads run on ({cpu_pools}; a node of at "
                      f"least {HEAD_MACHINE_MIN[0]} vCPUs and {HEAD_MACHINE_MIN[1] // 1024} GiB per head)")
    elif listed in HEAD_POOL_LISTS:
        yield Finding(f"{name!r} is a {HEAD_POOL_LISTS[listed]} pool ({listed}): the Pathways head (proxy and "
                      "resource manager) runs on CPU nodes, as xpk and Cluster Toolkit place it on their cpu-np "
                      f"pool; name a cpu_pools entry ({cpu_pools})")
    elif listed != "cpu_pools":
        yield Finding(f"no cpu pool named {name!r}; cpu_pools: {cpu_pools} (add one for the heads, such as "
                      "n2-standard-64)")


def _head_machine(p: Props) -> Iterator[Finding]:
    pool = p.get("headPool") or {}
    if pool.get("list") != "cpu_pools":
        return  # pathways-head-pool
    cpus, gib = pool.get("shape") or (0, 0)
    if cpus < HEAD_MACHINE_MIN[0] or gib * 1024 < HEAD_MACHINE_MIN[1]:
        head = " and ".join(f"{head_quantity(r, v)}{' cpu' if r == 'cpu' else ''}" for r, v in HEAD_REQUESTS.items())
        yield Finding(f"{pool['name']!r} runs {pool.get('machineType')} ({cpus} vCPUs, {gib} GiB); a Pathways head "
                      f"needs a machine of at least {HEAD_MACHINE_MIN[0]} vCPUs and {HEAD_MACHINE_MIN[1] // 1024} GiB "
                      f"(xpk: the head's {head} memory plus GKE's overhead), such as n2-standard-64")


def _head_nodes(p: Props) -> Iterator[Finding]:
    pool, heads, before = p.get("headPool") or {}, p.get("heads") or 0, p.get("headsBefore") or 0
    if pool.get("list") == "cpu_pools" and before + heads > (nodes := pool.get("nodes") or 0):
        yield Finding(f"{heads} head(s) need as many nodes of {pool['name']!r} (one head per node)"
                      f"{f', beside {before} for other teams' if before else ''}; it has at most {nodes}: raise "
                      "its nodes or autoscaling.max_nodes, or lower heads")


PATHWAYS_RULES: tuple[GkeRule, ...] = (
    GkeRule("pathways-standard-cluster", "pathways", "pathways",
            "a team runs Pathways on a Standard cluster, not Autopilot", PATHWAYS_CLUSTER, _standard_cluster),
    GkeRule("pathways-tpu-generations", "pathways", "pathways",
            f"Pathways drives TPU {', '.join(PATHWAYS_INSTANCE_TYPES)} (resource manager instance types "
            f"{', '.join(PATHWAYS_INSTANCE_TYPES.values())}); no GPUs", PATHWAYS_TPUS, _tpu_generations),
    GkeRule("pathways-jobset-version", "pathways", "platform.jobset.version",
            f"the platform installs JobSet v{PATHWAYS_MIN_JOBSET} or later where a team runs Pathways",
            PATHWAYS_JOBSET, _jobset_version),
    GkeRule("pathways-head-pool", "pathways", "pathways.head_pool",
            "the heads (proxy and resource manager) run on a cpu_pools entry the team names, not on a TPU or GPU "
            "pool", PATHWAYS_HEAD_POOL, _head_pool),
    GkeRule("pathways-head-machine", "pathways", "pathways.head_pool",
            f"the head pool's machine has at least {HEAD_MACHINE_MIN[0]} vCPUs and {HEAD_MACHINE_MIN[1] // 1024} GiB "
            "(a head asks 24 cpu and 132G)", PATHWAYS_HEAD_MACHINE, _head_machine),
    GkeRule("pathways-head-nodes", "pathways", "pathways.heads",
            "the head pool has a node for every head of every team that names it (one head per node)",
            PATHWAYS_HEAD_POOL, _head_nodes),
)
