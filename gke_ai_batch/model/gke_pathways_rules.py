"""What Pathways needs of the platform a team runs it on: a Standard cluster, TPU slices of a generation Pathways
drives, and a JobSet release that has the fields Pathways' JobSet sets.

A Pathways rule's check takes one team's Pathways facts, which the planner gathers (plan.pathways): whether the
cluster is Autopilot (`enableAutopilot`), the generations of the TPU flavors the team has quota in
(`tpuGenerations`) and the JobSet release the platform installs (`jobsetVersion`). These facts live in the team
blocks, not in GKE resources, so the planner checks these rules and the policy pack does not.
"""
from __future__ import annotations

from collections.abc import Iterator

from gke_ai_batch.model.gke_pool_rules import version_below
from gke_ai_batch.model.gke_rule_sources import (
    PATHWAYS_CLUSTER,
    PATHWAYS_JOBSET,
    PATHWAYS_TPUS,
    Finding,
    GkeRule,
    Props,
)
from gke_ai_batch.model.words import or_list

# xpk (src/xpk/core/system_characteristics.py @367c8382) gives each TPU a Pathways instance type, the
# resource manager's `--instance_type=<type>:<topology>`: these are the catalog's generations it names.
# GKE's Pathways pages show v5e and v6e slices; Cluster Toolkit enables Pathways on its v5e, v5p, v6e and
# TPU7x blueprints (`enable_pathways_for_tpus`). No page restricts Pathways to fewer generations.
PATHWAYS_INSTANCE_TYPES = {"v4": "tpuv4", "v5e": "tpuv5e", "v5p": "tpuv5", "v6e": "tpuv6e", "tpu7x": "tpu7x"}
# Pathways' JobSet (xpk's template) sets spec.failurePolicy.restartStrategy, first in JobSet v0.7.0, and
# spec.coordinator and spec.network.publishNotReadyAddresses, from v0.6.0 (api/jobset/v1alpha2/jobset_types.go
# at each tag). xpk installs v0.10.1; the platform's releases are in model/releases.py.
PATHWAYS_MIN_JOBSET = "0.7.0"


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


PATHWAYS_RULES: tuple[GkeRule, ...] = (
    GkeRule("pathways-standard-cluster", "pathways", "pathways",
            "a team runs Pathways on a Standard cluster, not Autopilot", PATHWAYS_CLUSTER, _standard_cluster),
    GkeRule("pathways-tpu-generations", "pathways", "pathways",
            f"Pathways drives TPU {', '.join(PATHWAYS_INSTANCE_TYPES)} (resource manager instance types "
            f"{', '.join(PATHWAYS_INSTANCE_TYPES.values())}); no GPUs", PATHWAYS_TPUS, _tpu_generations),
    GkeRule("pathways-jobset-version", "pathways", "platform.jobset.version",
            f"the platform installs JobSet v{PATHWAYS_MIN_JOBSET} or later where a team runs Pathways",
            PATHWAYS_JOBSET, _jobset_version),
)
