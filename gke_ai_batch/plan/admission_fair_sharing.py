"""Fair use inside a ClusterQueue: Kueue's Admission Fair Sharing (beta and on since 0.15) orders the queue's
pending workloads by the recent usage of the LocalQueues they come from, so that one user's sweep of 500
jobs does not hold a team's quota for days while its other LocalQueues wait.

A ClusterQueue asks for it with `admissionScope.admissionMode: UsageBasedAdmissionFairSharing`, each
LocalQueue's `fairSharing.weight` divides its usage (Kueue v0.19.2 CRDs; concepts/admission_fair_sharing.md),
and the controller's `admissionFairSharing` block (plan.kueue_configuration) says how usage is measured.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.quantity import render_quantity
from gke_ai_batch.model.team_config import TeamConfig
from gke_ai_batch.plan.team_namespaces import TeamPlan
from gke_ai_batch.vocabulary import USAGE_BASED_ADMISSION, Manifest

DEFAULT_WEIGHT = 1  # LocalQueue spec.fairSharing.weight's default (v1beta2 CRD)


def local_queue_counts(teams: Sequence[TeamPlan]) -> Counter[str]:
    """How many LocalQueues submit to each ClusterQueue: each team's names that point at it, in each of its
    namespaces (counted once for all queues: a count per queue over every team grew with teams squared)."""
    counts: Counter[str] = Counter()
    for t in teams:
        for _, cq in t.local_queues:
            counts[cq] += len(t.namespaces)
    return counts


def uses_admission_fair_sharing(setting: bool | None, shared: bool, count: int) -> bool:
    """The queue's own setting; unset: on for a team's own queue with two or more LocalQueues."""
    return setting if setting is not None else (not shared and count >= 2)


def weights(team: TeamConfig) -> dict[str, int | str]:
    """The team's LocalQueue names that local_queues gives a weight -> the weight (the others': 1)."""
    return {lq.name: lq.fair_sharing_weight for lq in team.local_queues if lq.fair_sharing_weight is not None}


def apply(cfg: PlatformConfig, queues: Sequence[tuple[str, str, bool | None, bool, Manifest]],
          teams: Sequence[TeamPlan]) -> frozenset[str]:
    """Turn admission fair sharing on in the ClusterQueues that use it and weigh their LocalQueues;
    `queues`: (name, config path, setting, shared, manifest). Returns the queues that use it. Refuses it on a
    queue with fewer than two LocalQueues (nothing to order between) and a weight where it is off (a key that
    would do nothing)."""
    on: set[str] = set()
    counts = local_queue_counts(teams)
    for name, path, setting, shared, manifest in queues:
        count = counts[name]
        if setting and count < 2:
            raise ConfigError(f"{path}.admission_fair_sharing", f"true, but {plural_queues(count)} submit to "
                              f"ClusterQueue {name!r}: admission fair sharing orders the LocalQueues of one "
                              "ClusterQueue by their usage, so it needs two or more (more local_queues or "
                              "namespaces); drop the key or set it false")
        if uses_admission_fair_sharing(setting, shared, count):
            manifest["spec"]["admissionScope"] = {"admissionMode": USAGE_BASED_ADMISSION}
            on.add(name)
    for i, (team, plan) in enumerate(zip(cfg.teams, teams, strict=True)):
        _weigh(i, team, plan, on)
    return frozenset(on)


def _weigh(i: int, team: TeamConfig, plan: TeamPlan, on: set[str]) -> None:
    given = weights(team)
    for j, lq in enumerate(team.local_queues):
        cq = dict(plan.local_queues)[lq.name]
        if lq.fair_sharing_weight is not None and cq not in on:
            raise ConfigError(path_of("teams", i, "local_queues", j, "fair_sharing_weight"),
                              f"{lq.fair_sharing_weight!r} would do nothing: ClusterQueue {cq!r} does not use "
                              "admission fair sharing; set its queue's admission_fair_sharing: true, or drop "
                              "the weight")
    for m in plan.local_queue_manifests:
        if m["spec"]["clusterQueue"] in on:
            weight = given.get(m["metadata"]["name"], DEFAULT_WEIGHT)
            m["spec"]["fairSharing"] = {"weight": render_quantity(weight)}


def plural_queues(count: int) -> str:
    return "no LocalQueue" if count == 0 else "1 LocalQueue" if count == 1 else f"{count} LocalQueues"
