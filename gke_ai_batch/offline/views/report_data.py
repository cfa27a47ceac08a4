"""What the HTML plan report shows, read back from a plan's registrations with the summary's own view
(offline.views.view), so the page and `make check` never disagree: per flavor and resource what its pools hold
(at full size and guaranteed) against each team's nominal quota; per team its queues, priorities, buckets,
alerts and its promised quota's list price; the queue graph; and, against a BASE, each team's quotas before and
after."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from gke_ai_batch.model.promises import FlavorCapacity, show_amount
from gke_ai_batch.vocabulary import ALERT_POLICY, BUCKET, TEAM_COST_LABEL

from ..changes.quota_changes import Key, either_side
from ..engine.runtime import Registration
from .price_view import team_price_rows
from .summary import guaranteed_text, over_capacity, promised_text
from .view import StackView, natural, stack_view


def _number(amount: Decimal) -> float:
    return float(amount)


def flavor_rows(view: StackView) -> list[dict[str, Any]]:
    """One row per flavor and resource some team is promised or some pool holds."""
    promised: dict[tuple[str, str], dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    for team in view.teams:
        for cq in team.cluster_queues:
            for q in view.cluster_queues[cq].quotas if cq in view.cluster_queues else []:
                promised[(q.flavor, q.resource)][team.name] += q.nominal
    rows = []
    for (flavor, resource), teams in sorted(promised.items(), key=lambda kv: (natural(kv[0][0]), kv[0][1])):
        fl = view.flavors.get(flavor)
        cap = fl.capacity.get(resource, FlavorCapacity()) if fl else FlavorCapacity()
        held = cap if fl and (fl.pools or fl.capacity) else None  # as the console's quota table judges it
        if not cap.total and not any(teams.values()):
            continue
        rows.append({"flavor": flavor, "resource": resource, "modes": fl.modes if fl else [],
                     "full": _number(cap.total), "guaranteed": _number(cap.fixed),
                     "fullText": show_amount(resource, cap.total), "guaranteedText": guaranteed_text(resource, cap),
                     "promisedText": promised_text(resource, promised_sum := sum(teams.values(), Decimal(0)), held),
                     "over": over_capacity(promised_sum, held),
                     "promised": [{"team": t, "amount": _number(a), "text": show_amount(resource, a)}
                                  for t, a in sorted(teams.items()) if a]})
    return rows


def _by_team(regs: Sequence[Registration], kind: str, read: Any) -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for r in regs:
        labels = r.inputs.get("labels") or r.inputs.get("userLabels") or {}
        if r.type == kind and TEAM_COST_LABEL in labels:
            found[labels[TEAM_COST_LABEL]].append(read(r))
    return found


def team_rows(regs: Sequence[Registration], view: StackView) -> list[dict[str, Any]]:
    buckets = _by_team(regs, BUCKET, lambda r: r.inputs["name"])
    alerts = _by_team(regs, ALERT_POLICY, lambda r: r.inputs["displayName"])
    prices = team_price_rows(regs)
    return [{"name": t.name, "namespaces": t.namespaces, "priorities": t.priorities, "price": prices.get(t.name),
             "localQueues": [{"namespace": q.namespace, "name": q.name, "clusterQueue": q.cluster_queue}
                             for q in t.local_queues],
             "buckets": sorted(buckets.get(t.name, [])), "alerts": sorted(alerts.get(t.name, []))}
            for t in view.teams]


def graph(view: StackView) -> dict[str, list[list[str]]]:
    """The queue graph's edges, column by column: LocalQueue -> ClusterQueue -> cohort, ClusterQueue -> flavor."""
    local = sorted({(f"{q.namespace}/{q.name}", q.cluster_queue) for t in view.teams for q in t.local_queues})
    cohorts = sorted((cq.name, cq.cohort) for cq in view.cluster_queues.values() if cq.cohort)
    flavors = sorted({(cq.name, q.flavor) for cq in view.cluster_queues.values() for q in cq.quotas if q.nominal})
    return {"local": [list(e) for e in local], "cohort": [list(e) for e in cohorts],
            "flavor": [list(e) for e in flavors]}


def quota_changes(before: dict[Key, Decimal], after: dict[Key, Decimal]) -> list[dict[str, Any]]:
    return [{"team": k[0], "clusterQueue": k[1], "flavor": k[2], "resource": k[3],
             "before": _number(before[k]) if k in before else None,
             "after": _number(after[k]) if k in after else None} for k in either_side(before, after)]


def report_data(stack: str, regs: Sequence[Registration], changes: list[dict[str, Any]] | None = None,
                base: str | None = None) -> dict[str, Any]:
    view = stack_view(regs)
    cluster = dict(view.cluster or {})
    return {"stack": stack, "cluster": cluster.get("name", ""), "flavors": flavor_rows(view),
            "teams": team_rows(regs, view), "graph": graph(view), "base": base, "quotaChanges": changes}
