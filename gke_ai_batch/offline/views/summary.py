"""The readable plan: the cluster, its node pools, the teams and their queues, and the quota each
ClusterQueue holds on each flavor against what the flavor's pools hold. `make plan` prints it (long
tables cut short), and writes it whole as out/<stack>/summary.md with the queue diagram."""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gke_ai_batch.admission.queues import cluster_queue_flavors
from gke_ai_batch.model.fleet_facts import WORKER_OUTPUT
from gke_ai_batch.model.promises import ClassFacts, FlavorCapacity, class_facts, show_amount, worker_of
from gke_ai_batch.model.words import name_list, plural
from gke_ai_batch.vocabulary import (
    BUCKET,
    BUCKET_IAM_MEMBER,
    COMPUTE_CLASS,
    FIXED_CAPACITY,
    FLEET_STACK_ANNOTATION,
    HELM_RELEASE,
    K8S_PROVIDER,
    KUEUE_GROUP_TYPE_PREFIX,
    KUEUE_VERSION_ANNOTATION,
    NODE_POOL,
    ROUTER_NAT,
    SUBNETWORK,
    Capacity,
    component_type,
    kueue_type,
)

from ..engine.runtime import Registration
from .credentials import first_deploy, get_credentials, reached_from
from .mermaid import Diagram, diagram
from .price_view import price_line
from .text import FULL_AT, Block, Row, Table, console, markdown
from .view import ClusterQueue, Flavor, LocalQueue, Pool, QueueQuota, StackView, Team, stack_view

CONSOLE_POOLS = 30  # the console shows this many node pools; summary.md shows all
CONSOLE_TEAMS = 30  # and this many teams
CONSOLE_QUEUES_PER_QUOTA = 10  # and this many ClusterQueues per flavor and resource
NOT_GUARANTEED = "*"
OVER_CAPACITY = "!"


def guaranteed_text(resource: str, cap: FlavorCapacity) -> str:
    """What of a flavor's full size is guaranteed, marked when some is not: the console and report.html
    mark it alike."""
    return show_amount(resource, cap.fixed) + (f" {NOT_GUARANTEED}" if cap.fixed < cap.total else "")


def over_capacity(promised: Decimal, cap: FlavorCapacity | None) -> bool:
    """Promised above what the flavor's pools hold at full size (quota-over-capacity, or
    quota-within-capacity's refusal); a flavor without pools (None) is not judged."""
    return cap is not None and promised > cap.total


def promised_text(resource: str, promised: Decimal, cap: FlavorCapacity | None) -> str:
    """The sum promised, marked when over capacity: the console and report.html mark it alike."""
    return show_amount(resource, promised) + (f" {OVER_CAPACITY}" if over_capacity(promised, cap) else "")


def _cluster_line(view: StackView) -> list[str]:
    i = view.cluster
    if i is None:
        return []
    mode = "Autopilot" if i.get("enableAutopilot") else "Standard"
    return [f"cluster {i['name']} ({mode}, {i['location']}, channel {(i.get('releaseChannel') or {}).get('channel')})",
            f"kubectl, after pulumi up, {reached_from(i)}: {get_credentials(i)}"]


def _first_deploy_line(regs: Sequence[Registration], view: StackView) -> list[str]:
    """For a control plane closed to the deployer's network: the first deploy in two passes."""
    own = f"{component_type('GkeCluster')}${K8S_PROVIDER}::"  # the GkeCluster's provider, not a fleet worker's
    provider = next((r for r in regs if r.type == K8S_PROVIDER and own in r.urn), None)
    line = first_deploy(view.cluster, provider.urn) if view.cluster and provider else None
    return [line] if line else []


def short_zones(zones: Sequence[str]) -> str:
    """Zones of one region in brace form for the console (us-east5-{a,b,c}); summary.md lists them."""
    regions = {z.rsplit("-", 1)[0] for z in zones}
    if len(zones) < 2 or len(regions) != 1:
        return ", ".join(zones) or "-"
    return f"{regions.pop()}-{{{','.join(z.rsplit('-', 1)[1] for z in zones)}}}"


def _pool_row(p: Pool, zones: str) -> Row:
    f = p.facts
    accelerator = f"{p.generation} ({f.accelerator})" if p.generation else f.accelerator or "-"
    capacity = f"{f.capacity} ({p.reservation})" if p.reservation else f.capacity
    return (f.name, accelerator, f.topology or "-", f.machine_type, p.facts.sizing(), capacity, zones,
            f"{f.accelerators:,}" if f.resource else "-")


def pool_table(view: StackView) -> Table | None:
    """Each pool's shape, size, capacity mode (with its reservation) and zones; the TPU generation as
    the config writes it beside the label GKE puts on the nodes; totals per accelerator at full size."""
    if not view.pools:
        return None
    totals: dict[str, int] = defaultdict(int)
    for p in view.pools:
        if p.facts.resource:
            totals[f"{p.facts.accelerator} ({p.facts.resource})"] += p.facts.accelerators
    return Table("Node pools", plural(len(view.pools), "node pool"),
                 ("pool", "accelerator", "topology", "machine", "nodes", "capacity", "zones", "chips/GPUs"),
                 [_pool_row(p, ", ".join(p.zones) or "-") for p in view.pools],
                 notes=[f"total {acc}: {n:,} at full size" for acc, n in sorted(totals.items())]
                 + (["at full size: autoscaled pools at their maximum, which they reach only when work waits for "
                     "it and the capacity comes"] if any(p.facts.fixed_nodes is None for p in view.pools) else []),
                 console_rows=[_pool_row(p, short_zones(p.zones)) for p in view.pools],
                 console_limit=CONSOLE_POOLS, counted="node pool")


def _queue_cell(view: StackView, name: str) -> str:
    cq = view.cluster_queues.get(name)
    if cq is None:
        return f"{name} (not declared)"
    notes = [f"shared by {plural(len(cq.teams), 'team')}"] if len(cq.teams) > 1 else ["shared"] if cq.shared else []
    notes += ["any namespace"] if cq.admits_all else []  # namespaceSelector {}: not only its teams'
    notes += ["LocalQueues ordered by usage"] if cq.usage_ordered else []  # admission fair sharing
    return f"{name} ({'; '.join(notes)})" if notes else name


def _cohort_cell(view: StackView, queues: Sequence[str]) -> str:
    cohorts = sorted({c for q in queues if (cq := view.cluster_queues.get(q)) and (c := cq.cohort)})
    return ", ".join(f"{c} (in {view.cohorts[c]})" if view.cohorts.get(c) else c for c in cohorts) or "-"


def _local_queue_label(q: LocalQueue) -> str:
    """Its name, its weight where its ClusterQueue orders LocalQueues by usage, and its jobs' time limit."""
    notes = [f"weight {q.weight}"] if q.weight is not None else []
    notes += [f"jobs up to {_duration(q.runtime[0])}, default {_duration(q.runtime[1])}"] if q.runtime else []
    return f"{q.name} ({'; '.join(notes)})" if notes else q.name


def _duration(seconds: int) -> str:
    """86400 -> 24h, 90 -> 90s: the unit the stack file would use."""
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _team_row(view: StackView, t: Team, priority: str) -> Row:
    names = sorted({_local_queue_label(q) for q in t.local_queues})
    same = all(sorted(_local_queue_label(q) for q in t.local_queues if q.namespace == ns) == names
               for ns in {q.namespace for q in t.local_queues})
    lqs = ", ".join(names) if same else ", ".join(f"{q.namespace}/{_local_queue_label(q)}" for q in t.local_queues)
    return (t.name, ", ".join(t.namespaces) or "-", lqs or "-",
            ", ".join(_queue_cell(view, q) for q in t.cluster_queues) or "-", _cohort_cell(view, t.cluster_queues),
            priority, ", ".join(t.priorities) or "none")


def team_table(view: StackView) -> Table:
    """Who queues where: each team's namespaces, its LocalQueue, the ClusterQueue that admits its jobs
    (and whether it shares it), the cohort it borrows in, the priority its jobs get by default and the
    priorities it may name."""
    p = view.default_priority
    priority = f"{p[0]} ({p[1]:,})" if p else "none (0)"
    return Table("Teams", plural(len(view.teams), "team"),
                 ("team", "namespaces", "LocalQueue", "ClusterQueue", "cohort", "default priority",
                  "may use"),
                 [_team_row(view, t, priority) for t in view.teams],
                 notes=["default priority: what a job naming no priority gets, the global default PriorityClass "
                        "(Kueue has no per-team default); may use: the priorities the team's admission policies "
                        "allow (teams[].priorities)"],
                 console_limit=CONSOLE_TEAMS, counted="team")


def _limit(q: QueueQuota, limit: Decimal | None) -> str:
    return "-" if limit is None else show_amount(q.resource, limit)


def _queue_label(cq: ClusterQueue) -> str:
    """The ClusterQueue, with its teams when they are not just the team it is named after."""
    return cq.name if cq.teams in ([], [cq.name]) else f"{cq.name} ({name_list(cq.teams, 3)})"


def _capacity(view: StackView, flavor: str, resource: str) -> FlavorCapacity | None:
    """What the flavor holds of the resource; None without pools and without a fleet worker's stated
    capacity: nothing to judge."""
    fl = view.flavors.get(flavor)
    return fl.capacity.get(resource, FlavorCapacity()) if fl and (fl.pools or fl.capacity) else None


def _quota_group(view: StackView, flavor: str, resource: str,
                 quotas: list[tuple[ClusterQueue, QueueQuota]]) -> list[Row]:
    """One flavor and resource: what its pools hold and the sum promised on the first row, then one row
    per ClusterQueue with its nominal quota, borrowing limit and lending limit."""
    cap = _capacity(view, flavor, resource)
    full = "-" if cap is None else show_amount(resource, cap.total)
    guaranteed = "-" if cap is None else guaranteed_text(resource, cap)
    promised = promised_text(resource, sum((q.nominal for _, q in quotas), Decimal(0)), cap)
    head: Row = (flavor, resource, full, guaranteed, promised)
    return [(*(head if i == 0 else ("",) * len(head)), _queue_label(cq), show_amount(resource, q.nominal),
             _limit(q, q.borrowing_limit), _limit(q, q.lending_limit)) for i, (cq, q) in enumerate(quotas)]


def _pools_hold(view: StackView, flavor: str, resource: str) -> bool:
    fl = view.flavors.get(flavor)
    return bool(fl and fl.capacity.get(resource, FlavorCapacity()).total)


def _not_guaranteed_note(view: StackView) -> list[str]:
    def uncertain(f: Flavor) -> list[str]:  # of a compute class's chain, on-demand may not come either
        return [m for m in f.modes if m != Capacity.RESERVATION] if f.compute_class else \
            [m for m in f.modes if m not in FIXED_CAPACITY]
    shaky = [f"{f.name} ({', '.join(uncertain(f))})" for f in view.flavors.values()
             if any(c.fixed < c.total for c in f.capacity.values())]
    if not shaky:
        return []
    return [f"{NOT_GUARANTEED} not guaranteed (may be reclaimed or never come): {', '.join(shaky)}"]


def _over_capacity_note(view: StackView) -> list[str]:
    promised: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    for cq in view.cluster_queues.values():
        for q in cq.quotas:
            promised[(q.flavor, q.resource)] += q.nominal
    over = sorted({flavor for (flavor, resource), amount in promised.items()
                   if over_capacity(amount, _capacity(view, flavor, resource))})
    if not over:
        return []
    return [f"{OVER_CAPACITY} promised above what the pools hold at full size (whatever capacity comes): "
            f"{', '.join(over)}"]


def quota_table(view: StackView) -> Table:
    """The flavor-by-queue quota table: per flavor and resource, each ClusterQueue's nominal quota,
    borrowing limit and lending limit, their sum, and what the flavor's pools hold at full size and of
    that for sure. Policies judge the same numbers; here the reader sees who holds them."""
    groups: dict[tuple[str, str], list[tuple[ClusterQueue, QueueQuota]]] = defaultdict(list)
    for cq in view.cluster_queues.values():
        for q in cq.quotas:
            groups[(q.flavor, q.resource)].append((cq, q))
    rows: list[Row] = []
    short: list[Row] = []
    for (flavor, resource), quotas in sorted(groups.items()):
        if not any(q.nominal for _, q in quotas) and not _pools_hold(view, flavor, resource):
            continue  # covered at 0 only so that Kueue refuses it on this flavor, and no node has it
        group = _quota_group(view, flavor, resource, quotas)
        rows += group
        short += group[:CONSOLE_QUEUES_PER_QUOTA]
        if len(group) > CONSOLE_QUEUES_PER_QUOTA:
            short.append(("",) * 5 + (f"... {len(group) - CONSOLE_QUEUES_PER_QUOTA:,} more", "", "", ""))
    cut = [f"at most {CONSOLE_QUEUES_PER_QUOTA} ClusterQueues per flavor and resource here; the full table is in "
           f"{FULL_AT}"] if len(short) < len(rows) else []
    return Table("Quota by flavor and ClusterQueue", "quota by flavor and ClusterQueue",
                 ("flavor", "resource", "at full size", "guaranteed", "promised", "ClusterQueue", "nominal",
                  "borrowing limit", "lending limit"), rows,
                 notes=["promised: sum of the nominal quotas; at full size: what the flavor's pools hold (of cpu "
                        "and memory, what GKE leaves allocatable); -: no limit, or no pools",
                        *_not_guaranteed_note(view), *_over_capacity_note(view)],
                 console_rows=short, console_notes=cut)


def _network_line(regs: Sequence[Registration], view: StackView) -> list[str]:
    """Where the nodes live: the created network's ranges and NAT, or an adopted network's named ranges."""
    c = view.cluster
    if c is None:
        return []
    subnet = next((r.inputs for r in regs if r.type == SUBNETWORK and r.inputs.get("name") == c.get("subnetwork")),
                  None)
    nat = "; Cloud NAT" if any(r.type == ROUTER_NAT for r in regs) else ""
    ranges = c.get("ipAllocationPolicy") or {}
    if subnet:
        pods, services = (r["ipCidrRange"] for r in subnet["secondaryIpRanges"])
        how = f"created: nodes {subnet['ipCidrRange']}, Pods {pods}, Services {services}{nat}"
    elif ranges:
        pods, services = ranges["clusterSecondaryRangeName"], ranges["servicesSecondaryRangeName"]
        how = f"adopted: Pods {pods}, Services {services}{nat}"
    else:
        how = f"existing, ranges made by GKE{nat}"
    return [f"network {c.get('network')}, subnet {c.get('subnetwork')} ({how})"]


def _gpudirect_line(regs: Sequence[Registration]) -> list[str]:
    """The GPU pools whose NCCL traffic has networks of its own, and how many."""
    pools = []
    for r in sorted((r for r in regs if r.type == NODE_POOL), key=lambda r: str(r.inputs.get("name"))):
        network = r.inputs.get("networkConfig") or {}
        extra = network.get("additionalNodeNetworkConfigs") or []
        if extra:
            vpcs = len({n["network"] for n in extra})
            pools.append(f"{r.inputs['name']} {plural(len(extra), 'extra network')} in {plural(vpcs, 'VPC')}")
        elif network.get("acceleratorNetworkProfile"):
            pools.append(f"{r.inputs['name']} GKE's automatic networks")
    return [f"gpudirect: {', '.join(pools)}"] if pools else []


def _storage_line(regs: Sequence[Registration]) -> list[str]:
    buckets = sum(r.type == BUCKET for r in regs)
    grants = sum(r.type == BUCKET_IAM_MEMBER for r in regs)
    if not grants:
        return []
    return [f"storage: {plural(buckets, 'bucket')} created, {plural(grants, 'bucket grant')} to team service accounts"]


def _kueue_line(regs: Sequence[Registration], view: StackView) -> str:
    kinds = Counter(r.type.rsplit(":", 1)[-1] for r in regs if r.type.startswith(KUEUE_GROUP_TYPE_PREFIX))
    queues = list(view.cluster_queues)
    listed = f" ({name_list(queues, 5)})" if queues else ""
    return (f"kueue: {plural(kinds['ResourceFlavor'], 'flavor')}, {plural(kinds['Cohort'], 'cohort')}, "
            f"{plural(len(queues), 'ClusterQueue')}{listed}, {plural(kinds['LocalQueue'], 'LocalQueue')}, "
            f"{plural(kinds['AdmissionCheck'], 'admission check')}")


def _class_row(c: ClassFacts) -> Row:
    node = f"{c.machine_type}, {c.per_node} {c.resource}" if c.resource else c.machine_type
    guaranteed = f"{c.reserved_nodes} ({c.reserved_nodes * c.per_node} {c.resource})" if c.resource else \
        str(c.reserved_nodes)
    return (c.name, node, " -> ".join(c.ways), str(c.max_nodes), guaranteed)


def compute_class_table(regs: Sequence[Registration]) -> Table | None:
    """Each compute class: its node, its chain of ways in GKE's order, the most nodes it may have, and how many of
    them are guaranteed (the reserved priority's; the other ways depend on whether GKE can get them)."""
    classes = [f for r in regs if r.type == COMPUTE_CLASS and (f := class_facts(r.inputs)) is not None]
    if not classes:
        return None
    return Table("Compute classes", f"{len(classes):,} compute class{'' if len(classes) == 1 else 'es'}",
                 ("class", "node", "chain (GKE tries in order)", "max nodes", "guaranteed nodes"),
                 [_class_row(c) for c in classes],
                 notes=["guaranteed: what the reserved priority holds; flex-start, spot and on-demand nodes come "
                        "only if GKE can get them when pods wait"])


def blocks(regs: Sequence[Registration], view: StackView, fleet: Block | None = None,
           registered: int | None = None) -> list[Block]:
    """The summary's blocks; `fleet`: a fleet's table or line; `registered`: the count, when `regs` is the stack
    without what a fleet manager declares on its workers."""
    out: list[Block] = [*_cluster_line(view), *_first_deploy_line(regs, view), *_network_line(regs, view),
                        *_gpudirect_line(regs), *_storage_line(regs)]
    pools = pool_table(view)
    if pools:
        out.append(pools)
    out += price_line(regs)
    classes = compute_class_table(regs)
    if classes:
        out.append(classes)
    out.append(_kueue_line(regs, view))
    if view.teams:
        out.append(team_table(view))
    quotas = quota_table(view)
    if quotas.rows:
        out.append(quotas)
    if fleet:
        out.append(fleet)
    releases = sorted(f"{r.inputs['name']} {r.inputs['version']}" for r in regs if r.type == HELM_RELEASE)
    count = len(regs) if registered is None else registered
    out += [f"helm: {', '.join(releases) or '(none)'}", f"{plural(count, 'resource')} registered"]
    return out


@dataclass
class PlanSummary:
    """The summary of one plan, built once and shown twice: on the console and as summary.md."""

    blocks: list[Block]
    diagram: Diagram

    def console(self, full_at: str = "summary.md") -> str:
        return console(self.blocks, full_at)

    def markdown(self, title: str) -> str:
        lines = markdown(self.blocks, title)
        lines += ["## Queues", "", "Teams, their LocalQueues, ClusterQueues, cohorts, flavors and node pools "
                  "(also in queues.mmd).", ""]
        lines += self.diagram.markdown()
        return "\n".join(lines) + "\n"


def fleet_table(regs: Sequence[Registration]) -> Table | None:
    """A fleet manager's workers: the stack each is read from, its Kueue release, and what the manager declares
    on it (its ClusterQueues' flavors, and the teams' LocalQueues)."""
    clusters = [r.inputs for r in regs if r.type == kueue_type("MultiKueueCluster")]
    if not clusters:
        return None
    on: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in regs:
        if r.type.startswith("kubernetes:") and (worker := worker_of(r.inputs)):
            on[worker].append(r.inputs)
    rows: list[Row] = []
    for c in clusters:
        name, notes = str(c["metadata"]["name"]), c["metadata"].get("annotations") or {}
        objects = on.get(name, [])
        queues = sorted(f"{o['metadata']['name']} ({', '.join(cluster_queue_flavors(o))})"
                        for o in objects if o.get("kind") == "ClusterQueue")
        local = sorted(f"{o['metadata']['namespace']}/{o['metadata']['name']}"
                       for o in objects if o.get("kind") == "LocalQueue")
        rows.append((name, str(notes.get(FLEET_STACK_ANNOTATION, "-")), str(notes.get(KUEUE_VERSION_ANNOTATION, "-")),
                     ", ".join(queues) or "-", ", ".join(local) or "-"))
    return Table("Fleet", f"fleet: {plural(len(rows), 'worker')} this manager dispatches to (MultiKueue)",
                 ("worker", "stack", "kueue", "ClusterQueues (flavors)", "LocalQueues"), rows,
                 notes=["each worker's objects are declared through its own provider (manifests/worker-<name>/)"])


def plan_summary(regs: Sequence[Registration]) -> PlanSummary:
    """The stack's own cluster, then a fleet manager's workers (what it declares on them is theirs, apart)."""
    fleet: Block | None = fleet_table(regs)
    if WORKER_OUTPUT in (getattr(regs, "outputs", None) or {}):  # a planned stack (runtime.Planned) knows its outputs
        fleet = (f"fleet: a worker (stack output {WORKER_OUTPUT}); its teams' namespaces, LocalQueues and "
                 "ClusterQueues are declared by its manager's stack")
    registered = len(regs)
    regs = [r for r in regs if not (r.type.startswith("kubernetes:") and worker_of(r.inputs))]
    view = stack_view(regs)
    return PlanSummary(blocks(regs, view, fleet, registered), diagram(view))
