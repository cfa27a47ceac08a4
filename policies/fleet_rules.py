"""Rules over a MultiKueue manager stack: its ClusterQueues' checks, what its MultiKueueConfigs and
MultiKueueClusters name, its teams on every worker they are dispatched to, the workers' Kueue release and
their credentials. They read the objects as declared (a fleet manager's objects on a worker carry the
gke-ai-batch.io/fleet-worker annotation, model.promises.worker_of), so they judge any program's fleet.

Kueue v0.19.2 (kubernetes-sigs/kueue at the tag): pkg/cache/scheduler/clusterqueue.go marks a ClusterQueue
inactive with more than one MultiKueue check, a per-flavor one, or one beside a ProvisioningRequest check
(kueue#8347); the MultiKueueConfig CRD holds 1 to 20 clusters; a MultiKueueCluster's kubeconfig is a Secret
in Kueue's namespace; ClusterProfile access is alpha and off (gate MultiKueueClusterProfile)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gke_ai_batch.admission.queues import cluster_queue_flavors
from gke_ai_batch.model.fleet_config import MAX_TOKEN_DAYS
from gke_ai_batch.model.promises import Res, StackIndex, annotations_of, index_of, worker_holds
from gke_ai_batch.model.words import name_list
from gke_ai_batch.plan.admission_policies import FLEET_FLAVOR
from gke_ai_batch.plan.fleet import MAX_DISPATCH, version_skew
from gke_ai_batch.plan.fleet_access import READ_VERBS, SERVICE_ACCOUNT
from gke_ai_batch.vocabulary import (
    KUEUE_NAMESPACE,
    KUEUE_VERSION_ANNOTATION,
    MULTIKUEUE_CONTROLLER,
    NODES_ON_WORKER_ANNOTATION,
    PROVISIONING_CONTROLLER,
    SECRET,
    TEAM_LABEL,
    TOKEN_GENERATION_ANNOTATION,
    TOKEN_ROTATION_ANNOTATION,
    WORKER_HOLDS_ANNOTATION,
    kueue_type,
)

from .stack_rules import Findings

VAP = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
VAP_BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"


FLEET_KINDS = (kueue_type("MultiKueueCluster"), kueue_type("MultiKueueConfig"))
ADMISSION_CHECK = kueue_type("AdmissionCheck")


def _is_fleet_object(r: Res) -> bool:
    return r.type in FLEET_KINDS or (r.type == ADMISSION_CHECK
                                      and _spec(r).get("controllerName") == MULTIKUEUE_CONTROLLER)


def _fleet(resources: Sequence[Res]) -> StackIndex | None:
    """The stack indexed, if it has MultiKueue objects; else None, and the fleet rules have nothing to judge (a
    stack without them pays one pass over the types, not an index). A flavor on a worker no MultiKueueCluster
    names is flavor-has-nodes' to judge."""
    return index_of(resources) if any(_is_fleet_object(r) for r in resources) else None


def _spec(r: Res) -> dict[str, Any]:
    return dict(r.props.get("spec") or {})


def _checks_by_controller(ix: StackIndex, controller: str) -> set[str]:
    return {name for name, ac in ix.kueue["AdmissionCheck"].items() if _spec(ac).get("controllerName") == controller}


def multikueue_queues(resources: Sequence[Res]) -> Findings:
    """A ClusterQueue Kueue would keep inactive: several MultiKueue checks, one on some flavors only, or one
    beside a ProvisioningRequest check (that belongs on the worker's ClusterQueue); and one with quota on a
    worker's nodes that does not dispatch."""
    ix, found = _fleet(resources), Findings()
    if ix is None:
        return found
    multikueue = _checks_by_controller(ix, MULTIKUEUE_CONTROLLER)
    provisioning = _checks_by_controller(ix, PROVISIONING_CONTROLLER)
    for name, flavor in ix.kueue["ResourceFlavor"].items():
        if annotations_of(flavor.props).get(NODES_ON_WORKER_ANNOTATION) and worker_holds(flavor.props) is None:
            found.append((flavor.urn, f"flavor {name} names a worker's nodes but does not state what they hold "
                                      f"({WORKER_HOLDS_ANNOTATION}): the quota policies could not judge its quota"))
    for name, cq in ix.kueue["ClusterQueue"].items():
        checks = (_spec(cq).get("admissionChecksStrategy") or {}).get("admissionChecks") or []
        mine = [c for c in checks if c.get("name") in multikueue]
        if not mine:
            found += _not_dispatching(ix, name, cq)
            continue
        if len(mine) > 1:
            found.append((cq.urn, f"ClusterQueue {name}: Cannot use multiple MultiKueue AdmissionChecks on the same "
                                  f"ClusterQueue, found: {name_list(c['name'] for c in mine)} (Kueue keeps it "
                                  "inactive)"))
        on = set(mine[0].get("onFlavors") or [])
        if on and on != set(cluster_queue_flavors(cq.props)):
            found.append((cq.urn, f"ClusterQueue {name}: Cannot specify MultiKueue AdmissionCheck per flavor, found: "
                                  f"{mine[0]['name']} on {name_list(on)} (Kueue keeps it inactive): drop onFlavors"))
        prov = [c["name"] for c in checks if c.get("name") in provisioning]
        if prov:
            found.append((cq.urn, f"ClusterQueue {name}: Cannot use both MultiKueue and ProvisioningRequest "
                                  f"AdmissionChecks together, found: {mine[0]['name']}, {name_list(prov)} (Kueue keeps "
                                  "it inactive, kueue#8347): queued provisioning belongs on the worker's ClusterQueue"))
    return found


def _not_dispatching(ix: StackIndex, name: str, cq: Res) -> Findings:
    """A queue with quota in a flavor whose nodes are a worker's, without a MultiKueue check: it would admit
    jobs to run on the manager, which has no such nodes."""
    remote = sorted(f for f in set(cluster_queue_flavors(cq.props))
                    if (flavor := ix.kueue["ResourceFlavor"].get(f)) is not None
                    and annotations_of(flavor.props).get(NODES_ON_WORKER_ANNOTATION))
    if not remote:
        return Findings()
    return Findings([(cq.urn, f"ClusterQueue {name} has quota in {name_list(remote)}, whose nodes are a worker's, "
                              "but no MultiKueue check: it would admit jobs to run here, where no node can take them")])


def multikueue_dispatch(resources: Sequence[Res]) -> Findings:
    """Each MultiKueue check names a declared MultiKueueConfig of 1 to 20 declared clusters, each named once,
    each connecting through a kubeconfig Secret the stack declares in Kueue's namespace."""
    ix, found = _fleet(resources), Findings()
    if ix is None:
        return found
    configs, clusters = ix.kueue["MultiKueueConfig"], ix.kueue["MultiKueueCluster"]
    for name in sorted(_checks_by_controller(ix, MULTIKUEUE_CONTROLLER)):
        ac = ix.kueue["AdmissionCheck"][name]
        target = (_spec(ac).get("parameters") or {}).get("name")
        if target not in configs:
            found.append((ac.urn, f"AdmissionCheck {name}: its MultiKueueConfig {target!r} is not declared; "
                                  f"declared: {name_list(configs)}"))
    for name, config in configs.items():
        names = list(_spec(config).get("clusters") or [])
        if not 1 <= len(names) <= MAX_DISPATCH or len(set(names)) != len(names):
            found.append((config.urn, f"MultiKueueConfig {name}: {len(names)} clusters; Kueue takes 1 to "
                                      f"{MAX_DISPATCH}, each named once"))
        for missing in (n for n in names if n not in clusters):
            found.append((config.urn, f"MultiKueueConfig {name}: cluster {missing!r} is not a declared "
                                      f"MultiKueueCluster; declared: {name_list(clusters)}"))
    secrets = {(s.props.get("metadata") or {}).get("name") for s in ix.by_type[SECRET]
               if (s.props.get("metadata") or {}).get("namespace") == KUEUE_NAMESPACE}
    all_clusters = [r for r in ix.kueue_objects if r.kind == "MultiKueueCluster"]
    for cluster in all_clusters:
        found += _cluster_source(cluster, secrets, [c.name for c in all_clusters].count(cluster.name))
    policies = {r.name for r in ix.by_type[VAP]}
    bound = {(r.props.get("spec") or {}).get("policyName") for r in ix.by_type[VAP_BINDING]}
    if all_clusters and not {FLEET_FLAVOR} <= policies & bound:
        found.append((None, f"the stack dispatches to workers without the admission policy {FLEET_FLAVOR} and its "
                            "binding: a job naming no flavor could be charged to one worker's flavor and run on "
                            "another"))
    return found


def _cluster_source(cluster: Res, secrets: set[Any], times: int) -> Findings:
    found = Findings()
    source = _spec(cluster).get("clusterSource") or {}
    config = source.get("kubeConfig") or {}
    if times > 1:
        found.append((cluster.urn, f"MultiKueueCluster {cluster.name} is declared {times} times: name each worker "
                                   "once"))
    if "clusterProfileRef" in source:
        found.append((cluster.urn, f"MultiKueueCluster {cluster.name}: a ClusterProfile needs the alpha gate "
                                   "MultiKueueClusterProfile, off in Kueue 0.19: connect through a kubeconfig Secret"))
    elif config.get("locationType", "Secret") != "Secret" or config.get("location") not in secrets:
        found.append((cluster.urn, f"MultiKueueCluster {cluster.name}: its kubeconfig is not a Secret this stack "
                                   f"declares in {KUEUE_NAMESPACE} ({config.get('locationType', 'Secret')} "
                                   f"{config.get('location')!r})"))
    return found


def teams_on_workers(resources: Sequence[Res]) -> Findings:
    """Every LocalQueue of a dispatching ClusterQueue exists, in a namespace declared there, on each worker it may
    be dispatched to (Kueue's MultiKueue setup: the workers mirror the manager's namespaces and LocalQueues, or
    the dispatched workload is never admitted), pointing at a ClusterQueue there that holds the manager's quota
    in that worker's flavors and no other: more would run work the manager never charged."""
    ix, found = _fleet(resources), Findings()
    if ix is None:
        return found
    checks = {name: (_spec(ac).get("parameters") or {}).get("name")
              for name, ac in ix.kueue["AdmissionCheck"].items()
              if _spec(ac).get("controllerName") == MULTIKUEUE_CONTROLLER}
    local = [r for r in ix.kueue_objects if r.kind == "LocalQueue"]
    owners = {f: annotations_of(r.props).get(NODES_ON_WORKER_ANNOTATION) for f, r in ix.kueue["ResourceFlavor"].items()}
    for name, cq in ix.kueue["ClusterQueue"].items():
        checks_here = (_spec(cq).get("admissionChecksStrategy") or {}).get("admissionChecks") or []
        config = next((ix.kueue["MultiKueueConfig"].get(str(checks[c["name"]])) for c in checks_here
                       if c.get("name") in checks), None)
        if config is None:
            continue
        queues = [(lq.props["metadata"].get("namespace"), lq.name) for lq in local
                  if _spec(lq).get("clusterQueue") == name]
        for worker in _spec(config).get("clusters") or []:
            found += _mirrored(cq, name, worker, queues, ix.workers.get(worker, []), owners)
    return found


def _mirrored(cq: Res, name: str, worker: str, queues: list[tuple[Any, str]], objects: list[Res],
              owners: dict[str, Any]) -> Findings:
    there = {(r.props["metadata"].get("namespace"), r.name): str(_spec(r).get("clusterQueue"))
             for r in objects if r.kind == "LocalQueue"}
    worker_queues = {r.name: r for r in objects if r.kind == "ClusterQueue"}
    namespaces = {r.name for r in objects if r.kind == "Namespace"}
    found = Findings()
    for ns, lq in queues:
        if (ns, lq) not in there or ns not in namespaces:
            found.append((cq.urn, f"ClusterQueue {name} dispatches to worker {worker}, which has no "
                                  f"{'LocalQueue' if ns in namespaces else 'namespace or LocalQueue'} {ns}/{lq}: a "
                                  "workload dispatched there is never admitted"))
        elif there[(ns, lq)] not in worker_queues:
            found.append((cq.urn, f"worker {worker}'s LocalQueue {ns}/{lq} points at ClusterQueue "
                                  f"{there[(ns, lq)]!r}, which is not declared there"))
        elif problem := _quota_mirrors(cq, worker_queues[there[(ns, lq)]], worker, owners):
            found.append((cq.urn, f"worker {worker}'s ClusterQueue {there[(ns, lq)]} {problem}"))
    return found


def _quotas_by_flavor(cq: Res) -> dict[str, Any]:
    """flavor -> its resources' quotas."""
    return {f["name"]: f.get("resources")
            for g in _spec(cq).get("resourceGroups") or [] for f in g.get("flavors") or []}


def _quota_mirrors(manager: Res, there: Res, worker: str, owners: dict[str, Any]) -> str | None:
    """Why a worker's ClusterQueue does not hold what the manager's holds in that worker's flavors, or None."""
    mine, theirs = _quotas_by_flavor(manager), _quotas_by_flavor(there)
    foreign = sorted(f for f in theirs if owners.get(f) != worker)
    if foreign:
        return f"has flavors that are not worker {worker}'s on the manager: {name_list(foreign)}"
    differ = sorted(f for f, resources in theirs.items() if resources != mine.get(f))
    if differ:
        return f"holds other quota than the manager's ClusterQueue {manager.name} in {name_list(differ)}"
    return None


def worker_versions(resources: Sequence[Res]) -> Findings:
    """Each worker states its Kueue release on its MultiKueueCluster: the manager's minor release, at its patch
    or a later one."""
    ix, found = _fleet(resources), Findings()
    if ix is None:
        return found
    releases = ix.releases("kueue")
    manager = str(releases[0].props.get("version")) if releases else None
    for name, cluster in ix.kueue["MultiKueueCluster"].items():
        version = annotations_of(cluster.props).get(KUEUE_VERSION_ANNOTATION)
        if version is None:
            found.append((cluster.urn, f"MultiKueueCluster {name}: its Kueue release is not stated "
                                       f"({KUEUE_VERSION_ANNOTATION})"))
        elif manager is not None and (problem := version_skew(manager, str(version))):
            found.append((cluster.urn, f"worker {name} {problem}"))
    return found


def _identity_reach(worker: str, objects: list[Res]) -> Findings:
    """The manager's identity on a worker reads cluster-wide and writes only in team namespaces: a token read
    from the manager's Secret must not create pods in kube-system."""
    roles = {r.name: r for r in objects if r.kind == "ClusterRole"}
    teams = {r.name for r in objects
             if r.kind == "Namespace" and TEAM_LABEL in (r.props["metadata"].get("labels") or {})}
    found = Findings()
    for b in (r for r in objects if r.kind in ("ClusterRoleBinding", "RoleBinding")):
        if not any(s.get("kind") == "ServiceAccount" and s.get("name") == SERVICE_ACCOUNT
                   and s.get("namespace") == KUEUE_NAMESPACE for s in b.props.get("subjects") or []):
            continue
        ref = (b.props.get("roleRef") or {}).get("name")
        writes = ref not in roles or any(set(rule.get("verbs") or []) - set(READ_VERBS)
                                         for rule in roles[ref].props.get("rules") or [])
        where = b.props["metadata"].get("namespace")
        if writes and (b.kind == "ClusterRoleBinding" or where not in teams):
            scope = "cluster-wide" if b.kind == "ClusterRoleBinding" else f"in {where}"
            found.append((b.urn, f"worker {worker}: the manager's identity ({KUEUE_NAMESPACE}/{SERVICE_ACCOUNT}) may "
                                 f"write {scope} through {b.kind} {b.name} ({ref}): it reads cluster-wide and writes "
                                 "only in team namespaces"))
    return found


def worker_credentials(resources: Sequence[Res]) -> Findings:
    """Each worker's kubeconfig Secret states its token's generation and how often it is rotated (at most
    yearly): Kueue takes only an inline token, which lives until its Secret on the worker is deleted; and the
    token's identity reads cluster-wide and writes only in team namespaces (_identity_reach)."""
    ix, found = _fleet(resources), Findings()
    if ix is None:
        return found
    for worker, objects in ix.workers.items():
        found += _identity_reach(worker, objects)
    secrets = {(s.props.get("metadata") or {}).get("name"): s for s in ix.by_type[SECRET]
               if (s.props.get("metadata") or {}).get("namespace") == KUEUE_NAMESPACE}
    for name, cluster in ix.kueue["MultiKueueCluster"].items():
        location = ((_spec(cluster).get("clusterSource") or {}).get("kubeConfig") or {}).get("location")
        secret = secrets.get(location)
        if secret is None:
            continue  # multikueue_dispatch names it
        stated = annotations_of(secret.props)
        days = str(stated.get(TOKEN_ROTATION_ANNOTATION, ""))
        if TOKEN_GENERATION_ANNOTATION not in stated or not days.isdigit() or not 1 <= int(days) <= MAX_TOKEN_DAYS:
            found.append((secret.urn, f"Secret {location} (worker {name}): its token's generation "
                                      f"({TOKEN_GENERATION_ANNOTATION}) and rotation in days, 1 to {MAX_TOKEN_DAYS} "
                                      f"({TOKEN_ROTATION_ANNOTATION}), are not both stated"))
    return found
