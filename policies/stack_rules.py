"""Rules over a whole stack. Each takes the stack's resources (type, urn, props, dependency urns)
once, indexes them in one pass, and returns (urn or None, message) findings."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from gke_ai_batch.model.gke_cluster_rules import region_of
from gke_ai_batch.model.gke_rules import (
    class_findings,
    cluster_findings,
    network_findings,
    pool_findings,
    stack_findings,
)
from gke_ai_batch.model.gke_slicing_rules import slice_controller
from gke_ai_batch.model.prices import monthly, usd
from gke_ai_batch.model.promises import (
    ClassFacts,
    FlavorCapacity,
    Promise,
    Res,
    StackIndex,
    annotations_of,
    class_of,
    class_pool_facts,
    compute_classes,
    flavor_capacity,
    headline,
    index_of,
    nominal_quotas,
    promises,
    show_amount,
    worker_of,
)
from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.model.quota_prices import team_prices
from gke_ai_batch.model.team_config import ObjectQuotas
from gke_ai_batch.model.words import name_list
from gke_ai_batch.plan.identity import is_default_compute_account
from gke_ai_batch.plan.installs import namespace_text_bytes, recommended_memory
from gke_ai_batch.vocabulary import (
    ACCELERATOR_LABELS,
    ACCELERATOR_RESOURCES,
    CLUSTER,
    COMPUTE_CLASS,
    FIXED_CAPACITY,
    FLAVORS_ANNOTATION,
    NAMESPACE,
    NODE_POOL,
    NODES_ON_WORKER_ANNOTATION,
    OBJECT_SIZE_ANNOTATION,
    POD_SECURITY_LABEL,
    RESOURCE_QUOTA,
    ROLE_BINDING,
    ROUTER_NAT,
    SCALES_FROM_ZERO,
    SLICE_CONTROLLER,
    SUBNETWORK,
    TEAM_LABEL,
    TEAM_ROLE,
    WORKLOAD_COUNT,
    ZONE_LABEL,
)

DEFAULT_OBJECT_SIZE = ObjectQuotas().object_size


class Findings(list[tuple[str | None, str]]):
    """What a stack rule reports: (URN of the resource, or None for the stack; message)."""


def zone_flavors_over_total(ix: StackIndex) -> list[tuple[str | None, str]]:
    """A pool with a total autoscaling limit lends each per-zone flavor all of its nodes (they may all land
    in one zone), so each flavor's quota can fit while together they promise more than the pool ever holds."""
    quotas, found = nominal_quotas(ix), Findings()
    for res, f in ix.pools:
        if not (f.total_autoscaling and f.resource):
            continue
        zoned = sorted(name for name, fl in ix.kueue["ResourceFlavor"].items()
                       if ZONE_LABEL in ((spec := fl.props.get("spec") or {}).get("nodeLabels") or {})
                       and f.serves(spec))
        promised = sum((quotas.get((name, f.resource), [Decimal(0)])[0] for name in zoned), Decimal(0))
        held = f.provides()[f.resource]
        if len(zoned) > 1 and promised > held:
            found.append((res.urn, f"pool {f.name}: its per-zone flavors {name_list(zoned)} are promised "
                                   f"{show_amount(f.resource, promised)} {f.resource} together, but its total "
                                   f"autoscaling limit holds {show_amount(f.resource, held)} in all zones; lower "
                                   "their nominal quotas"))
    return found


def _class_flavors(ix: StackIndex) -> dict[str, ClassFacts]:
    """Flavors that select a compute class's nodes, with the class."""
    classes = compute_classes(ix)
    return {name: cc for name, fl in ix.kueue["ResourceFlavor"].items() if (cc := class_of(fl.props, classes))}


def quota_over_capacity(resources: Sequence[Res]) -> list[tuple[str | None, str]]:
    """Quotas beyond what on-demand and reserved pools hold, or beyond the most a compute class may have."""
    ix = index_of(resources)
    classes = _class_flavors(ix)
    pools = [(ix.kueue["ResourceFlavor"][flavor].urn,
              f"flavor {flavor}: teams are promised {show_amount(res, promised)} {res} ({name_list(queues)}) but "
              f"its on-demand/reserved pools hold {show_amount(res, cap.fixed)}; lower the nominal quotas or add "
              "nodes")
             for flavor, res, promised, cap, queues in headline([
                 p for p in promises(ix) if p[0] not in classes and p[3].total and p[3].fixed == p[3].total
                 and p[2] > p[3].fixed])]
    over_classes = [(ix.kueue["ResourceFlavor"][flavor].urn,
                     f"flavor {flavor}: teams are promised {show_amount(res, promised)} {res} ({name_list(queues)}) "
                     f"but compute class {classes[flavor].name} has at most {show_amount(res, cap.total)} "
                     f"({classes[flavor].max_nodes} nodes); lower the nominal quotas or raise the class's max_nodes")
                    for flavor, res, promised, cap, queues in headline([
                        p for p in promises(ix) if p[0] in classes and p[2] > p[3].total])]
    return zone_flavors_over_total(ix) + pools + over_classes


def _holder(cc: ClassFacts | None, res: str, cap: FlavorCapacity) -> str:
    """What backs a flavor: its pools, or a compute class whose reserved priority alone is guaranteed."""
    if cc is not None:
        return (f"compute class {cc.name} ({' -> '.join(cc.ways)}) reaches {show_amount(res, cap.total)}, of which "
                f"{show_amount(res, cap.fixed)} guaranteed (its reserved priority only; the rest depend on whether "
                "GKE can get them)")
    return (f"its pools hold {show_amount(res, cap.total)} at full size, of which {show_amount(res, cap.fixed)} "
            "guaranteed (spot, flex-start and queued capacity may not come)")


def _beyond_full_size(p: Promise, classes: dict[str, ClassFacts]) -> bool:
    """A pool flavor, partly spot, flex-start or queued, promised more than its pools hold at full size: no
    capacity mode can give it. (All-fixed flavors and compute classes are quota-within-capacity's.)"""
    flavor, _, promised, cap, _ = p
    return flavor not in classes and cap.fixed < cap.total < promised


def quota_beyond_full_size(resources: Sequence[Res]) -> list[tuple[str | None, str]]:
    """Quotas above what a flavor's pools hold at full size, where some of the pools are spot, flex-start or
    queued: with quota-within-capacity (all on-demand or reserved, or a compute class), any capacity mode's
    over-promise is flagged once."""
    ix = index_of(resources)
    classes = _class_flavors(ix)
    return [(ix.kueue["ResourceFlavor"][flavor].urn,
             f"flavor {flavor}: teams are promised {show_amount(res, promised)} {res} ({name_list(queues)}) but its "
             f"pools hold {show_amount(res, cap.total)} at full size, even if every node comes; lower the nominal "
             "quotas or raise the pools' max nodes")
            for flavor, res, promised, cap, queues in headline(
                [p for p in promises(ix) if _beyond_full_size(p, classes)])]


def quota_not_guaranteed(resources: Sequence[Res]) -> list[tuple[str | None, str]]:
    """Quotas beyond the guaranteed part of what a flavor holds, within its full size (beyond it, the
    over-capacity advisory speaks instead)."""
    ix = index_of(resources)
    classes = _class_flavors(ix)
    return [(ix.kueue["ResourceFlavor"][flavor].urn,
             f"flavor {flavor}: teams are promised {show_amount(res, promised)} {res} ({name_list(queues)}); "
             f"{_holder(classes.get(flavor), res, cap)}")
            for flavor, res, promised, cap, queues in headline([
                p for p in promises(ix) if p[3].fixed < p[3].total and p[2] > p[3].fixed
                and not _beyond_full_size(p, classes)])]


def team_over_budget(resources: Sequence[Res]) -> list[tuple[str | None, str]]:
    """A team whose promised quota costs more a month at list price than its budget (model.quota_prices: what
    report.html shows). Flavors with no price known are left out of the sum and named; a budget is never judged
    against a price of 0 made up for them."""
    found = Findings()
    for t in team_prices(index_of(resources)):
        cost = monthly(t.hourly)
        if t.budget is None or cost <= t.budget:
            continue
        left_out = f" (no price known for {', '.join(t.unpriced)}, left out)" if t.unpriced else ""
        found.append((t.namespace_urn, f"team {t.team}: its promised quota costs {usd(cost)} a month at list price"
                      f"{left_out}, above its budget of {usd(t.budget)}; lower its nominal quotas or raise "
                      "teams[].budget"))
    return found


def quota_below_capacity(resources: Sequence[Res]) -> list[tuple[str | None, str]]:
    """Fixed capacity in no team's quota. A stack without ClusterQueues is not judged: a fleet worker's queues
    are its manager's, declared from the manager's stack."""
    ix = index_of(resources)
    if not ix.kueue["ClusterQueue"]:
        return []
    quotas, found = nominal_quotas(ix), Findings()
    for flavor, caps in flavor_capacity(ix).items():
        for resource, cap in caps.items():
            q = quotas.get((flavor, resource), [0, []])
            if resource in ACCELERATOR_RESOURCES and cap.fixed and cap.fixed == cap.total and q[0] < cap.fixed:
                found.append((ix.kueue["ResourceFlavor"][flavor].urn,
                              f"flavor {flavor}: {show_amount(resource, cap.fixed - q[0])} of "
                              f"{show_amount(resource, cap.fixed)} {resource} are in no team's nominal quota and "
                              "idle unless borrowed; give them to a queue or shrink the pools"))
    return found


def flavors_without_nodes(resources: Sequence[Res]) -> list[tuple[str | None, str]]:
    """A flavor that selects accelerator nodes no node pool or compute class of the stack has: its quota is
    admitted and its pods never run. A shape stated twice, in a pool and in the queues' layer, that differs ends
    here (a layer's 4x4 against a pool's 2x4); a program passes the pool's `spec` to state it once. A stack
    without node pools (Autopilot, or pools another program declares) is not judged, nor a fleet manager's
    flavor of a worker the stack connects to (its nodes are the worker's)."""
    ix = index_of(resources)
    if not ix.pools:
        return []
    found = Findings()
    nodes = [f for _, f in ix.pools] + [f for r in ix.by_type[COMPUTE_CLASS] if (f := class_pool_facts(r.props))]
    for name, flavor in ix.kueue["ResourceFlavor"].items():
        if annotations_of(flavor.props).get(NODES_ON_WORKER_ANNOTATION) in ix.kueue["MultiKueueCluster"]:
            continue
        spec = flavor.props.get("spec") or {}
        labels = spec.get("nodeLabels") or {}
        if any(k in labels for k in ACCELERATOR_LABELS) and not any(f.serves(spec) for f in nodes):
            selects = ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
            found.append((flavor.urn, f"flavor {name} selects nodes no node pool of the stack has ({selects}): its "
                                      "quota would be admitted and its pods never scheduled; make its labels the "
                                      "pool's (pass the pool component's `spec` to KueueLayer)"))
    return found


def topology_on_uncertain_capacity(resources: Sequence[Res]) -> list[tuple[str | None, str]]:
    """GKE: "TAS works best with densely placed capacity, which can be obtained through reservations. With
    Flex-start VMs or Spot VMs, your capacity is less likely to allocated close together, so TAS might not work
    well" (Schedule GKE workloads with Topology Aware Scheduling)."""
    ix = index_of(resources)
    found = Findings()
    for name, flavor in ix.kueue["ResourceFlavor"].items():
        spec = flavor.props.get("spec") or {}
        loose = sorted({f.capacity for _, f in ix.pools if f.serves(spec)} - set(FIXED_CAPACITY))
        if spec.get("topologyName") and loose:
            found.append((flavor.urn, f"flavor {name} is topology-aware on {', '.join(loose)} capacity, which GKE "
                                      "places less densely than a reservation: required topologies may not fit"))
    return found


def kueue_references(resources: Sequence[Res]) -> list[tuple[str | None, str]]:
    ix = index_of(resources)
    k, found = ix.kueue, Findings()

    def missing(kind: str, name: str | None) -> bool:
        return name not in k[kind]

    for lq in (r for r in ix.kueue_objects if r.kind == "LocalQueue"):
        cq = (lq.props.get("spec") or {}).get("clusterQueue")
        if missing("ClusterQueue", cq):
            found.append((lq.urn, f"LocalQueue {lq.name}: ClusterQueue {cq!r} does not exist; "
                                  f"existing: {name_list(k['ClusterQueue'])}"))
    for cq in k["ClusterQueue"].values():
        spec = cq.props.get("spec") or {}
        for group in spec.get("resourceGroups") or []:
            for fl in group.get("flavors") or []:
                if missing("ResourceFlavor", fl["name"]):
                    found.append((cq.urn, f"ClusterQueue {cq.name}: ResourceFlavor {fl['name']!r} does not exist"))
        for check in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []:
            if missing("AdmissionCheck", check["name"]):
                found.append((cq.urn, f"ClusterQueue {cq.name}: AdmissionCheck {check['name']!r} does not exist"))
        if spec.get("cohortName") and missing("Cohort", spec["cohortName"]):
            found.append((cq.urn, f"ClusterQueue {cq.name}: Cohort {spec['cohortName']!r} is not declared"))
    for ac in k["AdmissionCheck"].values():
        params = (ac.props.get("spec") or {}).get("parameters") or {}
        if params.get("kind") == "ProvisioningRequestConfig" and missing("ProvisioningRequestConfig", params["name"]):
            found.append((ac.urn, f"AdmissionCheck {ac.name}: ProvisioningRequestConfig {params['name']!r} "
                                  "does not exist"))
    for co in k["Cohort"].values():
        parent = (co.props.get("spec") or {}).get("parentName")
        if parent and missing("Cohort", parent):
            found.append((co.urn, f"Cohort {co.name}: parent Cohort {parent!r} does not exist"))
    return found


def plain_pool_present(resources: Sequence[Res]) -> list[tuple[str | None, str]]:
    ix = index_of(resources)
    clusters = [c for c in ix.by_type[CLUSTER] if not c.props.get("enableAutopilot")]
    special = [f for _, f in ix.pools if f.capacity in SCALES_FROM_ZERO]
    if clusters and special and all(f.capacity in SCALES_FROM_ZERO for _, f in ix.pools):
        return [(clusters[0].urn, "a Standard cluster with flex-start or queued-provisioning pools needs one pool "
                                  "without them (GKE requires it; system pods run there): add a system pool")]
    return []


def jobset_installed(resources: Sequence[Res]) -> list[tuple[str | None, str]]:
    ix = index_of(resources)
    multi = [r for r, f in ix.pools if f.multi_host]
    if multi and not ix.releases("jobset"):
        return [(multi[0].urn, "multi-host TPU pools run JobSets (one Job per slice): install the JobSet chart "
                               "(jobset.install: auto or always)")]
    return []


def slice_controller_enabled(resources: Sequence[Res]) -> list[tuple[str | None, str]]:
    """An AdmissionCheck of GKE's slice controller answers only where the cluster turns the controller on
    (model.dynamic_slicing): elsewhere every workload on its flavors waits for a check no one answers."""
    ix = index_of(resources)
    checks = [r for r in ix.kueue.get("AdmissionCheck", {}).values()
              if (r.props.get("spec") or {}).get("controllerName") == SLICE_CONTROLLER]
    clusters = ix.by_type[CLUSTER]
    if checks and clusters and not any(slice_controller(c.props) for c in clusters):
        return [(checks[0].urn, f"AdmissionCheck {checks[0].name} ({SLICE_CONTROLLER}): the cluster does not turn "
                                "on GKE's slice controller (addonsConfig.sliceControllerConfig.enabled), so "
                                "workloads on its flavors wait forever; declare the pool with dynamic_slicing, or "
                                "drop the check")]
    return []


def kueue_after_release(resources: Sequence[Res]) -> list[tuple[str | None, str]]:
    """Kueue's objects wait for its release. A stack with neither a release nor a GKE cluster deploys onto a
    cluster whose Kueue runs already (kubernetesOnly, gke_ai_batch.model.kubernetes_only): nothing to wait for."""
    ix = index_of(resources)
    releases = {r.urn for r in ix.releases("kueue")}
    if not releases and not ix.by_type[CLUSTER]:
        return []
    found = Findings()
    for r in ix.kueue_objects:
        if not releases.intersection(r.dependencies):
            found.append((r.urn, f"{r.kind} {r.name}: create it after the Kueue release (dependsOn), or its "
                                 "webhook rejects it while Kueue starts"))
    return found


def one_global_default(resources: Sequence[Res]) -> list[tuple[str | None, str]]:
    """At most one globalDefault PriorityClass per cluster (a fleet manager's workers are clusters of their own)."""
    by_cluster: dict[str | None, list[Res]] = {}
    for r in resources:
        if r.type.endswith(":PriorityClass") and r.props.get("globalDefault"):
            by_cluster.setdefault(worker_of(r.props), []).append(r)
    found = Findings()
    for defaults in by_cluster.values():
        found += [(r.urn, f"PriorityClass {r.name}: {len(defaults)} classes are globalDefault "
                          f"({name_list(d.name for d in defaults)}); keep one") for r in defaults[1:]]
    return found





def node_service_account(resources: Sequence[Res]) -> Findings:
    """Every node pool, and every cluster's auto-provisioning defaults (Autopilot's nodes, or node
    auto-provisioning on Standard), names a service account other than the Compute Engine default one,
    which usually holds the project's Editor role: GKE uses that one when nodeConfig.serviceAccount is
    unset ("By default, GKE uses the Compute Engine default service account", Configure GKE node service
    accounts). In any stack and any program using the components, not only production."""
    out, ix = Findings(), index_of(resources)
    holders = [(p, f"node pool {p.name}", (p.props.get("nodeConfig") or {}).get("serviceAccount"))
               for p in ix.by_type[NODE_POOL]]
    for cluster in ix.by_type[CLUSTER]:
        autoscaling = cluster.props.get("clusterAutoscaling") or {}
        if cluster.props.get("enableAutopilot") or autoscaling.get("enabled"):
            defaults = autoscaling.get("autoProvisioningDefaults") or {}
            holders.append((cluster, f"cluster {cluster.name} (its auto-provisioned nodes)",
                            defaults.get("serviceAccount")))
    for res, what, account in holders:
        if not account or is_default_compute_account(str(account)):
            out.append((res.urn, f"{what}: runs as the Compute Engine default service account ("
                                 f"{'serviceAccount unset' if not account else account}); run the nodes as a "
                                 "dedicated one with roles/container.defaultNodeServiceAccount (a component's "
                                 "service_account: GkeCluster's node_service_account output)"))
    return out


def private_node_egress(resources: Sequence[Res]) -> Findings:
    """Private nodes have no external address: without a Cloud NAT in their region (created by the
    stack, or an adopted network's, read by it) they cannot pull Kueue's and JobSet's images from
    registry.k8s.io, and the Helm installs hang."""
    ix, out = index_of(resources), Findings()
    nat_regions = {str(r.props.get("region")) for r in ix.by_type[ROUTER_NAT]}
    for cluster in ix.by_type[CLUSTER]:
        region = region_of(str(cluster.props.get("location") or ""))
        private = (cluster.props.get("privateClusterConfig") or {}).get("enablePrivateNodes")
        if private and region not in nat_regions:
            out.append((cluster.urn, f"cluster {cluster.name}: private nodes and no Cloud NAT in {region}: declare "
                                     "the network (network.cloud_nat), or name an adopted network's "
                                     "(network.existing_nat)"))
    return out


def teams_without_members(resources: Sequence[Res]) -> Findings:
    """A team whose block names no `groups` binds the team role to no one: its namespaces, queues and quota
    exist, and no one may run a workload there (`make access` answers no to everything)."""
    ix = index_of(resources)
    namespaces: dict[str, Res] = {}
    members: set[str | None] = set()
    for ns in ix.by_type[NAMESPACE]:
        team = _team_of(ns)
        if team:
            namespaces.setdefault(team, ns)
    for b in ix.by_type[ROLE_BINDING]:
        if (b.props.get("roleRef") or {}).get("name") == TEAM_ROLE and any(
                s.get("kind") == "Group" for s in b.props.get("subjects") or ()):
            members.add(_team_of(b))
    return Findings((ns.urn, f"team {team}: its block names no `groups` (teams[].groups), so no one may run its "
                             "workloads; list the Google groups of its members there")
                    for team, ns in namespaces.items() if team not in members)


def privileged_without_flavors(resources: Sequence[Res]) -> Findings:
    """A privileged team namespace that names no flavors: its pods may run privileged, with hostPath and hostPID,
    on any node its queues reach, beside other teams' work (plan.namespace_policies binds it only to named ones)."""
    ix = index_of(resources)
    out = []
    for ns in ix.by_type[NAMESPACE]:
        meta = ns.props.get("metadata") or {}
        level = (meta.get("labels") or {}).get(f"{POD_SECURITY_LABEL}/enforce")
        if _team_of(ns) and level == "privileged" and FLAVORS_ANNOTATION not in (meta.get("annotations") or {}):
            out.append((ns.urn, f"namespace {meta.get('name')} of team {_team_of(ns)} is privileged on every flavor: "
                                "name the flavors of pools of its own in its exception "
                                "(teams[].pod_security[].flavors), so its host access stays off other teams' nodes"))
    return Findings(out)


def _team_of(r: Res) -> str | None:
    team = ((r.props.get("metadata") or {}).get("labels") or {}).get(TEAM_LABEL)
    return str(team) if team else None


def _pools_by_cluster(ix: StackIndex) -> list[tuple[Res | None, list[Res]]]:
    """Each cluster with the node pools that name it; a pool whose cluster is not known yet (an
    unknown output in a first preview) belongs to the stack's only cluster."""
    clusters = ix.by_type[CLUSTER]
    groups: dict[str, tuple[Res | None, list[Res]]] = {c.name: (c, []) for c in clusters}
    for pool in ix.by_type[NODE_POOL]:
        name = pool.props.get("cluster")
        key = name if name in groups else (clusters[0].name if len(clusters) == 1 else "")
        groups.setdefault(key, (None, []))[1].append(pool)
    return list(groups.values())


def gke_rules(resources: Sequence[Res]) -> list[tuple[str | None, str]]:
    """The GKE rules table (gke_ai_batch.model.gke_rules) over every cluster, node pool and created subnet."""
    found: list[tuple[str | None, str]] = []
    ix = index_of(resources)
    for cluster, pools in _pools_by_cluster(ix):
        cprops = cluster.props if cluster else {}
        if cluster:
            found += [(cluster.urn, f"cluster {cluster.name}: {f.message} ({rule.id})")
                      for rule, f in cluster_findings(cprops)]
        for pool in pools:
            found += [(pool.urn, f"node pool {pool.name}: {f.message} ({rule.id})")
                      for rule, f in pool_findings(pool.props, cprops)]
        found += [(pools[f.pool or 0].urn, f"node pool {pools[f.pool or 0].name}: {f.message} ({rule.id})")
                  for rule, f in stack_findings([p.props for p in pools], cprops)]  # rules over all pools name one
        subnet = _subnet_of(ix, cprops)
        if cluster and subnet:
            found += [(subnet.urn, f"subnet {subnet.name} of cluster {cluster.name}: {f.message} ({rule.id})")
                      for rule, f in network_findings(subnet.props, cprops, [p.props for p in pools])]
    clusters = ix.by_type[CLUSTER]
    if not clusters:  # kubernetesOnly: the classes go onto a cluster the planner judged from the stack's config
        return found
    cluster_props = clusters[0].props if len(clusters) == 1 else {}  # several clusters: whose is unknown
    for cc in ix.by_type[COMPUTE_CLASS]:
        found += [(cc.urn, f"compute class {cc.name}: {f.message} ({rule.id})")
                  for rule, f in class_findings(cc.props, cluster_props)]
    return found


def _subnet_of(ix: StackIndex, cluster: Mapping[str, Any]) -> Res | None:
    """The stack's Subnetwork the cluster names (by name or path); none when the subnet is adopted."""
    name = str(cluster.get("subnetwork") or "").rsplit("/", 1)[-1]
    return next((s for s in ix.by_type[SUBNETWORK] if s.name == name), None)


def kueue_controller_size(resources: Sequence[Res]) -> list[tuple[str | None, str]]:
    """The controller keeps every queue and every team workload in memory; its size is fixed config (so that
    onboarding a team never restarts it), and this says when the queues, or the teams' object quotas (count
    x size cap per namespace, plan.installs.namespace_text_bytes), have outgrown it."""
    ix = index_of(resources)
    queues = len(ix.kueue["ClusterQueue"]) + sum(1 for r in ix.kueue_objects if r.kind == "LocalQueue")
    quotas = [r.props for r in resources if r.type == RESOURCE_QUOTA]
    workloads = sum(int(parse_quantity(str(((q.get("spec") or {}).get("hard") or {}).get(WORKLOAD_COUNT, 0))))
                    for q in quotas)  # a quantity: 1000 comes back from the API server as 1k
    sizes = {str((r.props.get("metadata") or {}).get("name")): int(annotations[OBJECT_SIZE_ANNOTATION])
             for r in resources if OBJECT_SIZE_ANNOTATION in (annotations := annotations_of(r.props))}
    text = sum(namespace_text_bytes((q.get("spec") or {}).get("hard") or {},
                                    sizes.get(str((q.get("metadata") or {}).get("namespace")), DEFAULT_OBJECT_SIZE))
               for q in quotas)
    found = Findings()
    for release in ix.releases("kueue"):
        requests = (((release.props.get("values") or {}).get("controllerManager") or {}).get("manager") or {}).get(
            "resources", {}).get("requests", {})
        have = parse_quantity(requests.get("memory", "512Mi")) / 2**20
        want = recommended_memory(queues, workloads, text)
        if have < want:
            found.append((release.urn, f"{queues} queues and up to {workloads:,} workloads and {text / 2**20:,.0f}Mi "
                                       "of their objects' text (the teams' object quotas: count x object_size, per "
                                       f"replica): the Kueue controller asks for {have:g}Mi of memory; set "
                                       f"kueue.controller_memory to at least {want}Mi, or leave it unset to size it "
                                       "from the quotas (and raise controller_cpu)"))
    return found
