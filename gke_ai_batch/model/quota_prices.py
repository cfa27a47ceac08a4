"""What the platform and each team's promises cost at list price, read from a stack's planned resources with the
price table (model.prices): the plan prints the platform's month, `make diff` its change, report.html each team's
promised quota, and the team-over-budget policy compares that with teams[].budget.

The platform: the cluster management fee, and every node pool at full size (autoscaled pools at their maximum);
guaranteed, the fee and the on-demand and reserved pools (what stays, as promises.FlavorCapacity counts it). A
team's promise: the nominal quota of each ClusterQueue its LocalQueues point at, on each flavor, in the flavor's
priced resource (its chips or GPUs, or cpu on a CPU flavor), at what that resource costs on the pools the flavor
serves. A ClusterQueue several teams share is counted in full for each. Compute classes, Autopilot's pods and a
fleet worker's pools have no price here; whatever has none is named, never counted as 0."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from gke_ai_batch.model.gke_cluster_rules import cluster_region
from gke_ai_batch.model.pool_facts import PoolFacts
from gke_ai_batch.model.prices import CLUSTER_FEE, PriceRow, lookup, node_hourly
from gke_ai_batch.model.promises import StackIndex, annotations_of, class_of, compute_classes, worker_holds
from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.vocabulary import ACCELERATOR_RESOURCES, BUDGET_ANNOTATION, CLUSTER, NAMESPACE, TEAM_LABEL


@dataclass
class PlatformPrice:
    """List price an hour of what the stack declares: at full size and guaranteed, and what has no price."""

    region: str
    full: Decimal = Decimal(0)
    guaranteed: Decimal = Decimal(0)
    unpriced: list[str] = field(default_factory=list)  # "pool (machine, capacity)", the fee, compute classes


def _pool_label(f: PoolFacts) -> str:
    return f"{f.name} ({f.machine_type}, {f.capacity})"


def platform_price(ix: StackIndex, rows: Sequence[PriceRow] | None = None) -> PlatformPrice | None:
    """None for a stack without a GKE cluster (kubernetesOnly): it declares nothing Google bills by the hour."""
    clusters = ix.by_type[CLUSTER]
    if not clusters:
        return None
    price = PlatformPrice(cluster_region(clusters[0].props))
    fee = lookup(CLUSTER_FEE, "cluster", "any", price.region, rows)
    if fee is None:
        price.unpriced.append("the cluster management fee")
    else:
        price.full += fee.usd_per_hour * len(clusters)
        price.guaranteed += fee.usd_per_hour * len(clusters)
    for _, f in sorted(ix.pools, key=lambda rf: rf[1].name):
        hourly = node_hourly(f, price.region, rows)
        if hourly is None:
            price.unpriced.append(_pool_label(f))
            continue
        price.full += hourly * f.nodes
        price.guaranteed += hourly * f.nodes if f.fixed_capacity else 0
    price.unpriced += [f"compute class {name}" for name in sorted(compute_classes(ix))]
    if clusters[0].props.get("enableAutopilot"):  # billed by what its Pods request, besides the fee (GKE pricing)
        price.unpriced.append("Autopilot's Pods")
    return price


def priced_resource(pools: Sequence[PoolFacts]) -> str:
    """What a flavor's quota is priced by: its accelerator where its pools have one, else cpu."""
    return next((f.resource for f in pools if f.resource in ACCELERATOR_RESOURCES), None) or "cpu"


def flavor_unit_prices(ix: StackIndex, region: str,
                       rows: Sequence[PriceRow] | None = None) -> dict[str, tuple[str, Decimal | None]]:
    """flavor -> (priced resource, list price of one unit of it an hour): what its pools cost at full size over what
    they hold of it (a per-zone flavor, its zone's nodes). None: some pool of it has no price, or it has no pools
    of this stack (a compute class, a fleet worker's)."""
    classes = compute_classes(ix)
    out: dict[str, tuple[str, Decimal | None]] = {}
    for name, flavor in ix.kueue["ResourceFlavor"].items():
        spec = flavor.props.get("spec") or {}
        served = [f for _, f in ix.pools if f.serves(spec)]
        resource = priced_resource(served)
        if not served or worker_holds(flavor.props) is not None or class_of(flavor.props, classes) is not None:
            out[name] = (resource, None)
            continue
        cost, amount = Decimal(0), Decimal(0)
        for f in served:
            hourly, held = node_hourly(f, region, rows), f.provides_in(spec.get("nodeLabels") or {}).get(resource)
            if hourly is None or not held or not f.nodes:
                cost = Decimal(-1)
                break
            per_node = f.provides()[resource] / f.nodes
            cost, amount = cost + hourly * held / per_node, amount + held
        out[name] = (resource, cost / amount if cost >= 0 and amount else None)
    return out


@dataclass
class TeamPrice:
    """A team's promised quota at list price an hour, the flavors with no price, and its budget a month."""

    team: str
    hourly: Decimal = Decimal(0)
    unpriced: list[str] = field(default_factory=list)
    budget: Decimal | None = None
    namespace_urn: str | None = None


def _team_queues(ix: StackIndex) -> tuple[dict[str, set[str]], dict[str, TeamPrice]]:
    teams: dict[str, TeamPrice] = {}
    ns_team: dict[str, str] = {}
    for ns in ix.by_type[NAMESPACE]:
        team = str(((ns.props.get("metadata") or {}).get("labels") or {}).get(TEAM_LABEL) or "")
        if not team:
            continue
        ns_team[ns.name] = team
        t = teams.setdefault(team, TeamPrice(team, namespace_urn=ns.urn))
        stated = annotations_of(ns.props).get(BUDGET_ANNOTATION)
        if stated is not None and t.budget is None:
            try:
                t.budget = Decimal(str(stated))
            except InvalidOperation:  # a hand-written annotation the rule cannot read: no budget to judge
                pass
    queues: dict[str, set[str]] = defaultdict(set)
    for lq in (r for r in ix.kueue_objects if r.kind == "LocalQueue"):
        meta = lq.props.get("metadata") or {}
        owner = ns_team.get(str(meta.get("namespace") or ""))
        if owner:
            queues[owner].add(str((lq.props.get("spec") or {}).get("clusterQueue") or ""))
    return queues, teams


def team_prices(ix: StackIndex, rows: Sequence[PriceRow] | None = None) -> list[TeamPrice]:
    """Each team's promised quota at list price, by team name; none for a stack without a GKE cluster."""
    clusters = ix.by_type[CLUSTER]
    if not clusters:
        return []
    units = flavor_unit_prices(ix, cluster_region(clusters[0].props), rows)
    queues, teams = _team_queues(ix)
    for name, t in teams.items():
        for cq_name in sorted(queues.get(name, ())):
            cq = ix.kueue["ClusterQueue"].get(cq_name)
            for group in ((cq.props.get("spec") or {}).get("resourceGroups") or []) if cq else []:
                for fl in group.get("flavors") or []:
                    resource, unit = units.get(fl["name"], ("cpu", None))
                    nominal = sum((parse_quantity(r["nominalQuota"]) for r in fl.get("resources") or []
                                   if r["name"] == resource), Decimal(0))
                    if not nominal:
                        continue
                    if unit is None:
                        t.unpriced.append(fl["name"])
                    else:
                        t.hourly += nominal * unit
        t.unpriced = sorted(set(t.unpriced))
    return [teams[n] for n in sorted(teams)]
