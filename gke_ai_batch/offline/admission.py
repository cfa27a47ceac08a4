"""Would Kueue v0.19.2 admit this Job or JobSet on an empty cluster, and would it then actually run?

A pure model (no Pulumi) of Kueue's admission decision for one workload, read from Kueue's source at
tag v0.19.2 (paths below are in kubernetes-sigs/kueue), so that a stack's queues, flavors and quotas
can be checked against the workloads users will submit before anything exists. The reasons are in
Kueue's own words, so what this prints is what `kubectl describe workload` would say.

"Empty cluster" means nothing else is admitted: available quota equals potential quota, so a flavor
either fits (maybe borrowing) or does not fit at all; preemption never comes into play.

Kueue checks quota, not hardware. The physical checks Kueue does not do (does a TPU slice of that
shape exist behind the flavor, are there enough slices, can a queued-provisioning node pool grow
to what the ProvisioningRequest asks for) are reported separately as `warnings`, and a workload
with warnings counts as inadmissible: it would reserve quota and then never run.

Not modelled: Topology Aware Scheduling, partial admission (`kueue.x-k8s.io/job-min-parallelism`),
resource transformations, DRA, LimitRanges and RuntimeClass overhead, fair sharing, MultiKueue,
and the 18-podSet limit of the Workload API.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from functools import cached_property
from typing import Any

import yaml

from gke_ai_batch import vocabulary
from gke_ai_batch.model import catalog
from gke_ai_batch.model.pool_facts import PoolFacts
from gke_ai_batch.model.quantity import parse_quantity
from gke_ai_batch.vocabulary import (
    PRIORITY_LABEL,
    PROVISIONING_CONTROLLER,
    QUEUE_LABEL,
    QUEUED_PROVISIONING_CLASS,
    Capacity,
    PoolKind,
)

NAME_LABEL = "kubernetes.io/metadata.name"
DEFAULT_LOCAL_QUEUE = "default"
BLOCK_UNDECLARED, IGNORE_UNDECLARED = "BlockUndeclared", "IgnoreUndeclared"
# Kinds and the integration that manages them. Pods of a Deployment or StatefulSet are each gated and
# admitted as a single-pod workload (pkg/controller/jobs/pod, deployment, statefulset).
FRAMEWORKS = {"Job": "batch/job", "JobSet": "jobset.x-k8s.io/jobset", "Pod": "pod", "Deployment": "deployment",
              "StatefulSet": "statefulset"}
POD_TEMPLATE_KINDS = ("Deployment", "StatefulSet")
BUILTIN_PRIORITY_CLASSES = {"system-cluster-critical", "system-node-critical"}
POD_LEVEL_RESOURCES = ("cpu", "memory")
BINARY_RESOURCES = ("memory", "ephemeral-storage")
ISSUE_5129 = "https://github.com/kubernetes-sigs/kueue/issues/5129"
_DECIMAL_SUFFIX = {-3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIX = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]

Obj = Mapping[str, Any]  # a Kubernetes object, or a part of one, as parsed from YAML or JSON
Node = tuple[str, str]  # a quota tree node: ("cq", ClusterQueue name) or ("cohort", Cohort name)


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FlavorChoice:
    """The flavor one resource group got for a pod set, and whether it needs cohort quota."""

    flavor: str
    resources: tuple[str, ...]
    borrowing: bool


@dataclass(frozen=True)
class PodSetAssignment:
    name: str
    count: int
    flavors: tuple[FlavorChoice, ...]

    @property
    def borrowing(self) -> bool:
        return any(f.borrowing for f in self.flavors)


@dataclass(frozen=True)
class AdmissionResult:
    """Kueue's verdict (`reason` is None when it reserves quota) plus the physical `warnings`."""

    kind: str
    namespace: str
    name: str
    cluster_queue: str | None = None
    pod_sets: tuple[PodSetAssignment, ...] = ()
    checks: tuple[str, ...] = ()
    reason: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def quota_reserved(self) -> bool:
        return self.reason is None

    @property
    def admitted(self) -> bool:
        """Kueue reserves quota and nothing physical stops the pods afterwards."""
        return self.reason is None and not self.warnings

    @property
    def problems(self) -> list[str]:
        return ([self.reason] if self.reason else []) + list(self.warnings)


@dataclass(frozen=True)
class PodSet:
    """One podSet of the Workload Kueue builds from a Job or JobSet."""

    name: str
    count: int  # pods in the pod set
    replicas: int  # JobSet replicas of the replicated job (1 for a Job): slices, for TPUs
    spec: dict[str, Any]  # pod template spec
    per_pod: dict[str, int]  # resource -> amount per pod, Kueue units (cpu in millicores)

    def total(self) -> dict[str, int]:
        return {r: v * self.count for r, v in self.per_pod.items()}

    @property
    def pods_per_replica(self) -> int:
        return self.count // self.replicas if self.replicas else 0


class AssignmentError(Exception):
    """A selector Kueue cannot evaluate: `failed to assign flavors to pod set ...`."""


# ---------------------------------------------------------------------------------------------
# Quantities: Kueue's integer units and its message formatting
# ---------------------------------------------------------------------------------------------

def amount(resource: str, quantity: int | str) -> int:
    """Kueue's integer value: millicores for cpu, whole units rounded up otherwise
    (`ResourceValue` in pkg/resources/requests.go)."""
    return _amount(resource, parse_quantity(quantity))


def _amount(resource: str, value: Decimal) -> int:
    scaled = value * 1000 if resource == "cpu" else value
    return max(0, math.ceil(scaled))


def _decimal_si(value: int, exponent: int) -> str:
    """k8s Quantity's canonical DecimalSI form: the largest power-of-1000 suffix that keeps an integer."""
    if value == 0:
        return "0"
    while value % 1000 == 0 and exponent < 18:
        value, exponent = value // 1000, exponent + 3
    return f"{value}{_DECIMAL_SUFFIX[exponent]}"


def _binary_si(value: int) -> str:
    """BinarySI for whole multiples of 1024, else DecimalSI, as Kueue's newCanonicalQuantity re-parses it."""
    power = 0
    while abs(value) >= 1024 and value % 1024 == 0 and power < len(_BINARY_SUFFIX) - 1:
        value, power = value // 1024, power + 1
    return f"{value}{_BINARY_SUFFIX[power]}" if power else _decimal_si(value, 0)


def format_amount(resource: str, value: int) -> str:
    """How Kueue prints a quantity in messages (pkg/resources/resource_formatter.go)."""
    if resource == "cpu":
        return _decimal_si(value, -3)
    if resource in BINARY_RESOURCES or resource.startswith("hugepages-"):
        return _binary_si(value)
    return _decimal_si(value, 0)


def resource_order(names: Iterable[str]) -> list[str]:
    """The order Kueue iterates a pod set's requests in v0.19.2: VectorizedResourceRequests (Beta, on)
    keeps them sorted by 64-bit FNV-1a hash of the name, then by name (pkg/resources/slice_requests.go).
    It decides which undeclared resource is named first: memory (hash 0x2e78...) before cpu (0xf5a8...)."""
    return sorted(names, key=lambda n: (_fnv1a64(n), n))


def _fnv1a64(text: str) -> int:
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


# ---------------------------------------------------------------------------------------------
# Workload -> pod sets and per-pod requests
# ---------------------------------------------------------------------------------------------

def _job_pods(job_spec: Obj) -> int:
    """min(parallelism, completions), parallelism defaulting to 1 (job_controller.go `podsCount`,
    jobset_controller.go `PodsCountPerReplica`)."""
    parallelism: int = job_spec.get("parallelism", 1)
    completions = job_spec.get("completions")
    return parallelism if completions is None else min(parallelism, completions)


def pod_sets_of(workload: Obj, config: Obj | None = None) -> list[PodSet]:
    """A Job is one pod set `main`; a JobSet has one per replicated job, named after it, with
    replicas x pods per replica (pkg/controller/jobs/job/job_controller.go and
    pkg/controller/jobs/jobset/jobset_controller.go, `PodSets`)."""
    kind, spec = workload.get("kind"), workload.get("spec") or {}
    excluded = tuple(((config or {}).get("resources") or {}).get("excludeResourcePrefixes") or ())
    if kind == "Job":
        count = _job_pods(spec)
        pod = spec["template"]["spec"]
        return [PodSet("main", count, 1, pod, pod_requests(pod, excluded))]
    if kind == "Pod":
        return [PodSet("main", 1, 1, spec, pod_requests(spec, excluded))]
    if kind in POD_TEMPLATE_KINDS:
        pod = spec["template"]["spec"]
        return [PodSet("main", 1, 1, pod, pod_requests(pod, excluded))]
    if kind == "JobSet":
        out: list[PodSet] = []
        for rj in spec.get("replicatedJobs") or []:
            job = rj["template"]["spec"]
            replicas = rj.get("replicas", 1)
            pod = job["template"]["spec"]
            out.append(PodSet(rj["name"], replicas * _job_pods(job), replicas, pod, pod_requests(pod, excluded)))
        return out
    raise ValueError(f"not a kind Kueue manages here ({', '.join(FRAMEWORKS)}): kind {kind!r}")


def _container_requests(resources: Obj | None) -> dict[str, Decimal]:
    """Requests with limits filling the missing ones: Kueue's `UseLimitsAsMissingRequestsInPod`
    (pkg/workload/resources.go), applied before the requests are summed."""
    resources = resources or {}
    merged = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
    return {k: parse_quantity(v) for k, v in merged.items()}


def _add(into: dict[str, Decimal], other: Mapping[str, Decimal]) -> dict[str, Decimal]:
    for k, v in other.items():
        into[k] = into.get(k, Decimal(0)) + v
    return into


def _max_into(into: dict[str, Decimal], other: Mapping[str, Decimal]) -> None:
    for k, v in other.items():
        into[k] = max(into.get(k, Decimal(0)), v)


def pod_requests(pod: Obj, excluded_prefixes: Sequence[str] = ()) -> dict[str, int]:
    """Per-pod requests as Kueue counts them: k8s component-helpers `PodRequests` (containers summed,
    sidecars added, max with each init container, pod-level cpu/memory override, overhead added), then
    excludeResourcePrefixes dropped and values rounded up per pod (pkg/workload/workload.go
    `totalRequestsFromPodSets`)."""
    total: dict[str, Decimal] = {}
    for c in pod.get("containers") or []:
        _add(total, _container_requests(c.get("resources")))
    sidecars: dict[str, Decimal] = {}
    init_max: dict[str, Decimal] = {}
    for c in pod.get("initContainers") or []:
        req = _container_requests(c.get("resources"))
        if c.get("restartPolicy") == "Always":
            _add(total, req)
            _add(sidecars, req)
            req = dict(sidecars)
        else:
            req = _add(dict(req), sidecars)
        _max_into(init_max, req)
    _max_into(total, init_max)
    pod_level = _container_requests(pod.get("resources"))
    total.update({k: v for k, v in pod_level.items() if k in POD_LEVEL_RESOURCES})
    _add(total, {k: parse_quantity(v) for k, v in (pod.get("overhead") or {}).items()})
    return {k: _amount(k, v) for k, v in total.items() if not any(k.startswith(p) for p in excluded_prefixes)}


# ---------------------------------------------------------------------------------------------
# Selectors, taints, node affinity
# ---------------------------------------------------------------------------------------------

def selector_matches(selector: Obj | None, labels: Obj) -> bool:
    """metav1.LabelSelector semantics: nil selects nothing, {} selects everything
    (`LabelSelectorAsSelector`; the ClusterQueue's namespaceSelector documents nil as "nothing")."""
    if selector is None:
        return False
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    return all(_requirement_matches(e, labels) for e in selector.get("matchExpressions") or [])


def _requirement_matches(expr: Obj, labels: Obj) -> bool:
    """In / NotIn / Exists / DoesNotExist, and node selectors' Gt / Lt on integer label values
    (NotIn and DoesNotExist match a missing key, as in k8s labels.Requirement)."""
    key, op, values = expr["key"], expr["operator"], expr.get("values") or []
    has = key in labels
    value: Any = labels.get(key)  # None when the key is missing, which int() refuses below
    if op == "In":
        return has and value in values
    if op == "NotIn":
        return not has or value not in values
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if op in ("Gt", "Lt"):
        try:
            left, right = int(value), int(values[0])
        except (TypeError, ValueError, IndexError):
            raise AssignmentError(f"{op} needs one integer value for key {key}, got {values} "
                                  f"and label value {value!r}") from None
        return has and (left > right if op == "Gt" else left < right)
    raise AssignmentError(f"{op!r} is not a valid node selector operator")


def tolerates(toleration: Obj, taint: Obj) -> bool:
    """k8s api core/v1 `Toleration.ToleratesTaint`: an empty effect or key matches any; Exists
    matches any value; Equal (or no operator) needs equal values; Gt/Lt compare integers."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    theirs: Any = taint.get("value")  # None when unset, which int() refuses below
    ours: Any = toleration.get("value")
    try:
        theirs, ours = int(theirs), int(ours)
    except (TypeError, ValueError):
        return False
    return theirs > ours if op == "Gt" else theirs < ours if op == "Lt" else False


def untolerated_taint(taints: Sequence[Obj], tolerations: Sequence[Obj]) -> Obj | None:
    """The first NoSchedule/NoExecute taint no toleration covers (`FindMatchingUntoleratedTaint`
    with the filter in flavorassigner.go: PreferNoSchedule taints never block)."""
    for taint in taints:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def taint_text(taint: Obj) -> str:
    """Go's %s of a v1.Taint struct, as Kueue prints it: `{key value NoSchedule <nil>}`."""
    return f"{{{taint.get('key', '')} {taint.get('value', '')} {taint.get('effect', '')} <nil>}}"


def affinity_matches(pod: Obj, flavor_labels: Obj) -> bool:
    """flavorassigner.go `flavorSelector`: only keys the flavor labels are kept from nodeSelector and
    from each required term; a term left empty drops all required affinity (terms are ORed); the
    rest must match a fake node carrying just the flavor's labels."""
    for key, value in (pod.get("nodeSelector") or {}).items():
        if key in flavor_labels and flavor_labels[key] != value:
            return False
    required = (((pod.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms: list[list[Obj]] = []
    for term in required.get("nodeSelectorTerms") or []:
        kept = [e for e in term.get("matchExpressions") or [] if e["key"] in flavor_labels]
        if not kept:
            return True
        terms.append(kept)
    return not terms or any(all(_requirement_matches(e, flavor_labels) for e in t) for t in terms)


def flavor_mismatch(flavor_name: str, flavor: Obj | None, pod: Obj) -> str | None:
    """Why a pod set cannot use a flavor, in Kueue's words (flavorassigner.go `checkFlavorForPodSets`):
    the flavor's own tolerations are added to the pod's before its nodeTaints are checked."""
    if flavor is None:
        return f"flavor {flavor_name} not found"
    spec = flavor.get("spec") or {}
    tolerations = list(pod.get("tolerations") or []) + list(spec.get("tolerations") or [])
    taint = untolerated_taint(spec.get("nodeTaints") or [], tolerations)
    if taint is not None:
        return f"untolerated taint {taint_text(taint)} in flavor {flavor_name}"
    if not affinity_matches(pod, spec.get("nodeLabels") or {}):
        return f"flavor {flavor_name} doesn't match node affinity"
    return None


# ---------------------------------------------------------------------------------------------
# Quota: ClusterQueues and Cohorts as one tree
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Quota:
    nominal: int
    borrowing_limit: int | None
    lending_limit: int | None


def quotas_of(spec: Obj | None) -> dict[tuple[str, str], Quota]:
    """(flavor, resource) -> Quota from a ClusterQueue's or Cohort's resourceGroups."""
    out: dict[tuple[str, str], Quota] = {}
    for group in (spec or {}).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for r in flavor.get("resources") or []:
                res = r["name"]
                limits = [None if r.get(k) is None else amount(res, r[k]) for k in ("borrowingLimit", "lendingLimit")]
                out[(flavor["name"], res)] = Quota(amount(res, r.get("nominalQuota", 0)), *limits)
    return out


class QuotaTree:
    """Kueue's cohort tree on an empty cluster (pkg/cache/scheduler/resource_node.go): a node's
    subtree quota is its nominal plus what each child puts in (its subtree minus the part its
    lendingLimit keeps local); a ClusterQueue can use its own subtree plus what its parent can,
    capped at nominal + borrowingLimit. Others thus lend min(nominal, lendingLimit)."""

    def __init__(self, objects: Mapping[str, Mapping[str, dict[str, Any]]]) -> None:
        self.quotas: dict[Node, dict[tuple[str, str], Quota]] = {}
        self.parent: dict[Node, Node | None] = {}
        for name, cq in (objects.get("ClusterQueue") or {}).items():
            spec = cq.get("spec") or {}
            cohort = spec.get("cohortName") or spec.get("cohort")
            self._add(("cq", name), spec, ("cohort", cohort) if cohort else None)
        for name, co in (objects.get("Cohort") or {}).items():
            spec = co.get("spec") or {}
            parent = spec.get("parentName") or spec.get("parent")
            self._add(("cohort", name), spec, ("cohort", parent) if parent else None)
        for node in [p for p in self.parent.values() if p and p not in self.parent]:
            self._add(node, {}, None)  # a cohort only named by its members: no quota of its own
        self.children: dict[Node, list[Node]] = defaultdict(list)
        for node, parent in self.parent.items():
            if parent:
                self.children[parent].append(node)

    def _add(self, node: Node, spec: Obj, parent: Node | None) -> None:
        self.quotas[node] = quotas_of(spec)
        self.parent[node] = parent

    def quota(self, node: Node, fr: tuple[str, str]) -> Quota:
        return self.quotas.get(node, {}).get(fr) or Quota(0, None, None)

    def chain(self, node: Node) -> list[Node]:
        """The node and its ancestors up to the root (a cycle ends the walk)."""
        out = [node]
        while (up := self.parent.get(out[-1])) and up not in out:
            out.append(up)
        return out

    def subtree(self, node: Node, fr: tuple[str, str], seen: frozenset[Node] = frozenset()) -> int:
        """`SubtreeQuota`: own nominal plus each child's subtree minus its local (unlent) part."""
        seen = seen | {node}
        total = self.quota(node, fr).nominal
        for child in self.children.get(node, []):
            if child not in seen:
                total += self.subtree(child, fr, seen) - self.local(child, fr, seen)
        return total

    def local(self, node: Node, fr: tuple[str, str], seen: frozenset[Node] = frozenset()) -> int:
        """Quota a lendingLimit keeps out of the parent's reach (`localQuota`)."""
        lending = self.quota(node, fr).lending_limit
        return 0 if lending is None else max(0, self.subtree(node, fr, seen) - lending)

    def potential(self, node: Node, fr: tuple[str, str]) -> int:
        """`potentialAvailable`: the most this node can use with nothing else admitted."""
        chain = self.chain(node)
        avail = self.subtree(chain[-1], fr)
        for n in reversed(chain[:-1]):
            avail = self.local(n, fr) + avail
            limit = self.quota(n, fr).borrowing_limit
            if limit is not None:
                avail = min(self.subtree(n, fr) + limit, avail)
        return avail

    def height(self, node: Node) -> int:
        """hierarchical_preemption.go `getNodeHeight`: 1 for a cohort of ClusterQueues, +1 per level."""
        kids = self.children.get(node, [])
        return max([min(len(kids), 1)] + [self.height(k) + 1 for k in kids if k[0] == "cohort"])

    def borrowing_level(self, node: Node, fr: tuple[str, str], val: int) -> int:
        """`FindHeightOfLowestSubtreeThatFits`: 0 within nominal, else the height of the lowest
        cohort whose subtree holds the request; > 0 means the pod set borrows."""
        chain = self.chain(node)
        if val <= self.quota(node, fr).nominal or len(chain) == 1:
            return 0
        remaining = val - self.local(node, fr)
        for ancestor in chain[1:]:
            if remaining <= self.subtree(ancestor, fr):
                return self.height(ancestor)
            remaining -= self.local(ancestor, fr)
        return self.height(chain[-1])


# ---------------------------------------------------------------------------------------------
# The cluster: objects, configuration, pools
# ---------------------------------------------------------------------------------------------

def kueue_config_from_values(values: Obj | None) -> dict[str, Any]:
    """Kueue's Configuration from the chart's `managerConfig.controllerManagerConfigYaml` string."""
    text = ((values or {}).get("managerConfig") or {}).get("controllerManagerConfigYaml")
    return (yaml.safe_load(text) or {}) if text else {}


def quota_check_strategy(config: Obj | None) -> str:
    """Unset means BlockUndeclared (cmd/kueue/main.go); the QuotaCheckStrategy gate is Beta and on in 0.19."""
    return ((config or {}).get("resources") or {}).get("quotaCheckStrategy") or BLOCK_UNDECLARED


@dataclass(frozen=True)
class Cluster:
    """What admission reads: the stack's objects by kind and name (LocalQueues by `ns/name`),
    Kueue's Configuration, and the node pools (gke_ai_batch.model.pool_facts.PoolFacts)."""

    objects: Mapping[str, Mapping[Any, dict[str, Any]]]  # kind -> name -> object
    config: Obj = field(default_factory=dict)
    pools: tuple[PoolFacts, ...] = ()

    @classmethod
    def build(cls, manifests: Iterable[Obj], config: Obj | None = None,
              pools: Iterable[PoolFacts] = ()) -> Cluster:
        """Index manifests (as `offline.render.manifest_of` gives them) by kind and name."""
        objects: dict[Any, dict[Any, dict[str, Any]]] = defaultdict(dict)
        for m in manifests:
            meta = m.get("metadata") or {}
            key = f"{meta.get('namespace', 'default')}/{meta.get('name')}" if m.get("kind") == "LocalQueue" \
                else meta.get("name")
            objects[m.get("kind")][key] = dict(m)
        return cls(dict(objects), dict(config or {}), tuple(pools))

    def get(self, kind: str, key: str | None) -> dict[str, Any] | None:
        return (self.objects.get(kind) or {}).get(key)

    def admit(self, workload: Obj) -> AdmissionResult:
        """The decision for one Job or JobSet; build the Cluster once to check many workloads."""
        return admit_in(self, workload)

    @cached_property
    def tree(self) -> QuotaTree:
        return QuotaTree(self.objects)

    def namespace_labels(self, ns: str) -> dict[str, Any]:
        """The namespace's labels plus the one the API server always sets."""
        labels = dict(((self.get("Namespace", ns) or {}).get("metadata") or {}).get("labels") or {})
        return {**labels, NAME_LABEL: ns}

    def pools_behind(self, flavor: str, resource: str | None = None) -> list[PoolFacts]:
        """Node pools the flavor puts pods on (PoolFacts.serves, as the quota policies and the summary judge)
        that provide `resource`."""
        spec = (self.get("ResourceFlavor", flavor) or {}).get("spec") or {}
        return [p for p in self.pools if p.serves(spec) and (resource is None or p.resource == resource)]


# ---------------------------------------------------------------------------------------------
# Before the scheduler: is the object managed, which queue, is the queue usable
# ---------------------------------------------------------------------------------------------

def _managed_jobs_selector(config: Obj) -> Obj:
    """Default from apis/config/v1beta2/defaults.go: every namespace but kube-system and Kueue's own."""
    default = {"matchExpressions": [{"key": NAME_LABEL, "operator": "NotIn",
                                     "values": ["kube-system", config.get("namespace") or "kueue-system"]}]}
    selector = config.get("managedJobsNamespaceSelector")
    return default if selector is None else selector


def management_blocker(cluster: Cluster, kind: str, ns: str) -> str | None:
    """Kueue ignores objects whose integration is off, and (ManagedJobsNamespaceSelectorAlwaysRespected,
    GA in 0.19) any job in a namespace the managedJobsNamespaceSelector does not select
    (pkg/controller/jobframework/reconciler.go: "Namespace not opted in for Kueue management")."""
    framework = FRAMEWORKS[kind]
    frameworks = ((cluster.config.get("integrations") or {}).get("frameworks")) or ["batch/job"]
    if framework not in frameworks:
        return f"Kueue does not manage {kind}s: integration {framework} is not in integrations.frameworks"
    if not selector_matches(_managed_jobs_selector(cluster.config), cluster.namespace_labels(ns)):
        return (f"Namespace not opted in for Kueue management: namespace {ns} does not match "
                f"managedJobsNamespaceSelector, so Kueue creates no Workload for this {kind}")
    return None


def queue_name(cluster: Cluster, workload: Obj, ns: str) -> tuple[str | None, str | None]:
    """The `kueue.x-k8s.io/queue-name` label, else the LocalQueue named `default` of the namespace
    (pkg/controller/jobframework/defaults.go `ApplyDefaultLocalQueue`, always on since 0.19)."""
    labels = (workload.get("metadata") or {}).get("labels") or {}
    if labels.get(QUEUE_LABEL):
        return labels[QUEUE_LABEL], None
    if cluster.get("LocalQueue", f"{ns}/{DEFAULT_LOCAL_QUEUE}"):
        return DEFAULT_LOCAL_QUEUE, None
    held = "stays gated (scheduling gate kueue.x-k8s.io/admission)" if workload.get("kind") in (
        "Pod", *POD_TEMPLATE_KINDS) else "stays suspended"
    fate = f"{held} (manageJobsWithoutQueueName)" if cluster.config.get("manageJobsWithoutQueueName") \
        else "is not managed by Kueue"
    return None, f"no {QUEUE_LABEL} label and no LocalQueue {DEFAULT_LOCAL_QUEUE} in namespace {ns}: the job {fate}"


def priority_blocker(cluster: Cluster, workload: Obj, pod_sets: Sequence[PodSet]) -> str | None:
    """`ExtractPriority` (pkg/controller/jobframework/reconciler.go) looks up the WorkloadPriorityClass
    label, else the first pod set's PriorityClass; a missing one fails Workload creation."""
    wpc = ((workload.get("metadata") or {}).get("labels") or {}).get(PRIORITY_LABEL)
    if wpc:
        return None if cluster.get("WorkloadPriorityClass", wpc) else \
            f'workloadpriorityclasses.kueue.x-k8s.io "{wpc}" not found'
    pc = pod_sets[0].spec.get("priorityClassName") if pod_sets else None
    if pc and pc not in BUILTIN_PRIORITY_CLASSES and not cluster.get("PriorityClass", pc):
        return f'priorityclasses.scheduling.k8s.io "{pc}" not found'
    return None


def _check_is_active(cluster: Cluster, check: Obj) -> bool:
    """The ProvisioningRequest controller marks its checks inactive when their
    ProvisioningRequestConfig is missing (pkg/controller/admissionchecks/provisioning); other
    controllers are assumed to be running."""
    spec = check.get("spec") or {}
    if spec.get("controllerName") != PROVISIONING_CONTROLLER:
        return True
    params = spec.get("parameters") or {}
    return params.get("kind") != "ProvisioningRequestConfig" or bool(cluster.get("ProvisioningRequestConfig",
                                                                                params.get("name")))


def _cq_check_names(cq: Obj) -> list[str]:
    spec = cq.get("spec") or {}
    strategy = (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []
    return [c["name"] for c in strategy] + list(spec.get("admissionChecks") or [])


def _cq_flavors(cq: Obj) -> list[str]:
    return [f["name"] for g in (cq.get("spec") or {}).get("resourceGroups") or [] for f in g.get("flavors") or []]


def inactive_message(cluster: Cluster, cq: Obj) -> str | None:
    """The ClusterQueue's Active=False message (pkg/cache/scheduler/clusterqueue.go `inactiveReason`)."""
    messages = []
    if (cq.get("spec") or {}).get("stopPolicy", "None") != "None":
        messages.append("is stopped")
    missing = [f for f in _cq_flavors(cq) if not cluster.get("ResourceFlavor", f)]
    if missing:
        messages.append(f"references missing ResourceFlavor(s): {','.join(missing)}")
    checks = _cq_check_names(cq)
    missing = [c for c in checks if not cluster.get("AdmissionCheck", c)]
    if missing:
        messages.append(f"references missing AdmissionCheck(s): {','.join(missing)}")
    inactive = [c for c in checks if (check := cluster.get("AdmissionCheck", c))
                and not _check_is_active(cluster, check)]
    if inactive:
        messages.append(f"references inactive AdmissionCheck(s): {','.join(inactive)}")
    return f"Can't admit new workloads: {', '.join(messages)}." if messages else None


def queue_blocker(cluster: Cluster, ns: str, queue: str) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(ClusterQueue, Kueue's message, details) in the workload controller's order
    (pkg/controller/core/workload_controller.go `getQueueBlocker`)."""
    lq = cluster.get("LocalQueue", f"{ns}/{queue}")
    if lq is None:
        return None, f"LocalQueue {queue} doesn't exist", ()
    if (lq.get("spec") or {}).get("stopPolicy", "None") != "None":
        return None, f"LocalQueue {queue} is inactive", ()
    cq_name = (lq.get("spec") or {}).get("clusterQueue")
    cq = cluster.get("ClusterQueue", cq_name)
    if cq is None:
        return cq_name, f"ClusterQueue {cq_name} doesn't exist", ()
    inactive = inactive_message(cluster, cq)
    if inactive:
        return cq_name, f"ClusterQueue {cq_name} is inactive", (f"ClusterQueue {cq_name}: {inactive}",)
    return cq_name, None, ()


# ---------------------------------------------------------------------------------------------
# The scheduler: flavor assignment (pkg/scheduler/flavorassigner/flavorassigner.go)
# ---------------------------------------------------------------------------------------------

def _group_of(cq: Obj, resource: str) -> Obj | None:
    return next((g for g in (cq.get("spec") or {}).get("resourceGroups") or []
                 if resource in (g.get("coveredResources") or [])), None)


def _quota_reason(res: str, flavor: str, used: int, request: int, cap: int) -> str:
    return (f"insufficient quota for {res} in flavor {flavor}, previously considered podsets requests "
            f"({format_amount(res, used)}) + current podset request ({format_amount(res, request)}) "
            f"> maximum capacity ({format_amount(res, cap)})")


def flavor_quota(cluster: Cluster, cq: str, flavor: str, requests: Mapping[str, int],
                 usage: Mapping[tuple[str, str], int]) -> tuple[bool, int, list[str]]:
    """`fitsResourceQuota` for each requested resource of the group: (fits, borrowing level, reasons).
    Every resource is checked even after one fails, so all reasons are reported. `usage` holds what
    earlier pod sets of this workload already took of the same flavor and resource."""
    node, fits, level, reasons = ("cq", cq), True, 0, []
    for res in resource_order(requests):
        fr = (flavor, res)
        val = usage.get(fr, 0) + requests[res]
        cap = cluster.tree.potential(node, fr)
        if val > cap:
            fits = False
            reasons.append(_quota_reason(res, flavor, usage.get(fr, 0), requests[res], cap))
            continue
        level = max(level, cluster.tree.borrowing_level(node, fr, val))
    return fits, level, reasons


def find_flavor(cluster: Cluster, cq: Obj, group: Obj, ps: PodSet, requests: Mapping[str, int],
                usage: Mapping[tuple[str, str], int]) -> tuple[FlavorChoice | None, list[str]]:
    """`findFlavorForPodSets`: flavors in resourceGroups order; with FlavorFungibility's default
    (whenCanBorrow: MayStopSearch) the first that fits wins even if it borrows; under TryNextFlavor
    the least-borrowing fit wins, ties to the earlier flavor. Reasons only matter if none fits."""
    covered = {r: q for r, q in requests.items() if r in (group.get("coveredResources") or [])}
    try_next = ((cq.get("spec") or {}).get("flavorFungibility") or {}).get("whenCanBorrow") == "TryNextFlavor"
    cq_name, best, reasons = cq["metadata"]["name"], None, []
    for f in group.get("flavors") or []:
        name = f["name"]
        mismatch = flavor_mismatch(name, cluster.get("ResourceFlavor", name), ps.spec)
        if mismatch:
            reasons.append(mismatch)
            continue
        fits, level, why = flavor_quota(cluster, cq_name, name, covered, usage)
        reasons += why
        if not fits:
            continue
        if best is None or level < best[1]:
            best = (name, level)
        if level == 0 or not try_next:
            break
    if best is None:
        return None, reasons
    return FlavorChoice(best[0], tuple(resource_order(covered)), best[1] > 0), []


def assign_pod_set(cluster: Cluster, cq: Obj, ps: PodSet, usage: Mapping[tuple[str, str], int],
                   strategy: str) -> tuple[PodSetAssignment | None, str | None]:
    """`assignFlavors` for one pod set: resources in Kueue's order; one not covered by any resource
    group blocks the pod set under BlockUndeclared (unless its request is 0) and is skipped under
    IgnoreUndeclared; the first resource of a group picks the flavor for the whole group."""
    requests = ps.total()
    if _group_of(cq, "pods") is not None:
        requests["pods"] = ps.count
    chosen: dict[str, FlavorChoice] = {}
    for res in resource_order(requests):
        group = _group_of(cq, res)
        if group is None:
            if requests[res] == 0 or strategy == IGNORE_UNDECLARED:
                continue
            return None, f"resource {res} unavailable in ClusterQueue"
        if res in chosen:
            continue
        choice, reasons = find_flavor(cluster, cq, group, ps, requests, usage)
        if choice is None:
            return None, ", ".join(sorted(reasons))
        chosen.update({r: choice for r in choice.resources})
    groups = tuple(dict.fromkeys(chosen.values()))
    return PodSetAssignment(ps.name, ps.count, groups), None


def assign_flavors(cluster: Cluster, cq: Obj, pod_sets: Sequence[PodSet],
                   strategy: str) -> tuple[list[PodSetAssignment], str | None]:
    """All pod sets in order; the first that fails stops the search (`Assignment.Message`:
    `couldn't assign flavors to pod set <name>: <sorted reasons>`)."""
    usage: dict[tuple[str, str], int] = defaultdict(int)
    out: list[PodSetAssignment] = []
    for ps in pod_sets:
        try:
            psa, why = assign_pod_set(cluster, cq, ps, usage, strategy)
        except AssignmentError as e:
            return out, f"failed to assign flavors to pod set {ps.name}: {e}"
        if psa is None:
            return out, f"couldn't assign flavors to pod set {ps.name}: {why}"
        requests = ps.total()
        for choice in psa.flavors:
            for res in choice.resources:
                usage[(choice.flavor, res)] += requests.get(res, ps.count if res == "pods" else 0)
        out.append(psa)
    return out, None


def applicable_checks(cq: Obj, assigned: Iterable[str]) -> tuple[str, ...]:
    """Checks whose flavors intersect the assigned ones; empty onFlavors means every flavor of the
    ClusterQueue (pkg/util/admissioncheck/admissioncheck.go `NewAdmissionChecks`,
    pkg/workload/workload.go `admissionChecksForAdmission`)."""
    assigned, spec = set(assigned), cq.get("spec") or {}
    every = set(_cq_flavors(cq))
    out = [c["name"] for c in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []
           if set(c.get("onFlavors") or every) & assigned]
    out += [name for name in spec.get("admissionChecks") or [] if every & assigned]
    return tuple(dict.fromkeys(out))


# ---------------------------------------------------------------------------------------------
# What Kueue does not check: TPU slices and queued-provisioning node pool sizes
# ---------------------------------------------------------------------------------------------

def _flavor_for(psa: PodSetAssignment, resource: str) -> str | None:
    return next((c.flavor for c in psa.flavors if resource in c.resources), None)


def _pool_matches_pod(pool: PoolFacts, pod: Obj) -> bool:
    """The pod's nodeSelector against the labels the pool is known to put on its nodes."""
    return all(pool.node_labels.get(k, v) == v for k, v in (pod.get("nodeSelector") or {}).items())


def _describe_pools(pools: Iterable[PoolFacts]) -> str:
    return ", ".join(f"{p.name} ({p.topology}: {p.slice_vms} VMs x {p.per_node} chips)" for p in pools) \
        or "no TPU node pool carries the flavor's labels"


def tpu_slice_warnings(cluster: Cluster, ps: PodSet, psa: PodSetAssignment) -> list[str]:
    """A multi-host TPU pod set runs one pod per VM of one slice, and a multi-host node pool is one
    slice: some pool behind the flavor must have per-VM chips equal to the pod's request, the pod's
    topology, and as many VMs as pods per replica; a JobSet needs one such pool per replica
    (exclusive placement on `cloud.google.com/gke-nodepool`)."""
    chips, flavor = ps.per_pod.get(vocabulary.TPU_RESOURCE, 0), _flavor_for(psa, vocabulary.TPU_RESOURCE)
    if not chips or flavor is None or not any(p.resource == vocabulary.TPU_RESOURCE for p in cluster.pools):
        return []  # no TPU node pools at all: Autopilot or auto-provisioning, nothing to judge against
    topology = (ps.spec.get("nodeSelector") or {}).get(vocabulary.TPU_TOPOLOGY_LABEL)
    pools = [p for p in cluster.pools_behind(flavor, vocabulary.TPU_RESOURCE) if _pool_matches_pod(p, ps.spec)]
    if not any(p.per_node >= chips for p in pools):
        return [f"pod set {ps.name}: a pod asks for {chips} {vocabulary.TPU_RESOURCE} but no node behind flavor "
                f"{flavor} has that many: {_describe_pools(pools)}"]
    multi = catalog.slice_vms(topology, chips) > 1 if topology else any(p.multi_host for p in pools)
    if not multi:
        return []
    per_slice = ps.pods_per_replica
    slices = [p for p in pools if p.multi_host and p.per_node == chips and p.slice_vms == per_slice]
    if not slices:
        return [f"pod set {ps.name}: {per_slice} pods x {chips} {vocabulary.TPU_RESOURCE} = {per_slice * chips} "
                f"chips per slice{f' in topology {topology}' if topology else ''} match no TPU slice behind "
                f"flavor {flavor}: {_describe_pools(pools)}"]
    if ps.replicas > len(slices):
        return [f"pod set {ps.name}: {ps.replicas} slices requested but flavor {flavor} has only {len(slices)} "
                f"node pool(s) of that shape ({', '.join(p.name for p in slices)}): one slice per node pool, "
                f"so {ps.replicas - len(slices)} replica(s) can never be placed"]
    return []


def accelerator_taint_warnings(cluster: Cluster, ps: PodSet, psa: PodSetAssignment) -> list[str]:
    """Kueue gives cpu and memory the first flavor with room, an accelerator's too: a pod set that requests
    no accelerator can get a TPU or GPU flavor when its ClusterQueue has no CPU flavor first. GKE taints
    those nodes with the accelerator's resource name, and the platform's placement policy lets team pods
    tolerate that taint only with a request for it: such pods never schedule, and hold the quota until
    waitForPodsReady evicts the workload."""
    out = []
    for choice in psa.flavors:
        pools = cluster.pools_behind(choice.flavor)
        taints = {p.resource for p in pools if p.kind in (PoolKind.TPU, PoolKind.GPU) and p.resource}
        if not pools or len(taints) != 1 or any(p.kind == PoolKind.CPU for p in pools):
            continue
        resource = taints.pop()
        taint = {"key": resource, "value": "present", "effect": "NoSchedule"}
        if ps.per_pod.get(resource) or not untolerated_taint([taint], ps.spec.get("tolerations") or []):
            continue
        nodes = ", ".join(p.name for p in pools)
        out.append(f"pod set {ps.name} requests no {resource} but got flavor {choice.flavor}, whose nodes ({nodes}) "
                   f"carry GKE's {resource}=present:NoSchedule taint: its pods never schedule, and hold the quota "
                   "until waitForPodsReady evicts the workload; request the accelerator, or send accelerator-free "
                   "work to a queue with a CPU flavor")
    return out


def _provisioning_setup(cluster: Cluster, check: str) -> Obj | None:
    """The ProvisioningRequestConfig spec behind a provisioning-request check, or None if another controller."""
    ac = cluster.get("AdmissionCheck", check) or {}
    spec = ac.get("spec") or {}
    if spec.get("controllerName") != PROVISIONING_CONTROLLER:
        return None
    params = spec.get("parameters") or {}
    return (cluster.get("ProvisioningRequestConfig", params.get("name")) or {}).get("spec") or {}


def _nodes_needed(pods: int, per_pod: int, per_node: int) -> int | None:
    """Nodes for `pods` pods of `per_pod` GPUs each: whole pods per node, rounded up (equals
    ceil(pods x per_pod / per_node) when per_pod divides per_node); None if one pod exceeds a node."""
    fit = per_node // per_pod if per_pod else 0
    return math.ceil(pods / fit) if fit else None


def provisioning_warnings(cluster: Cluster, cq: Obj, ps: PodSet, psa: PodSetAssignment) -> list[str]:
    """A queued-provisioning ProvisioningRequest for more nodes than the node pool's maximum fails
    with "Max nodepool size reached", the check goes to Retry, the workload is evicted and requeued
    and fails again, until the retries run out (Kueue issue 5129). Kueue's quota check passes."""
    out: list[str] = []
    for check in applicable_checks(cq, [c.flavor for c in psa.flavors]):
        setup = _provisioning_setup(cluster, check)
        gpus = ps.per_pod.get(vocabulary.GPU_RESOURCE, 0)
        managed = (setup or {}).get("managedResources") or []
        if setup is None or not gpus or (managed and not set(managed) & set(ps.per_pod)):
            continue
        flavor = _flavor_for(psa, vocabulary.GPU_RESOURCE)
        queued = setup.get("provisioningClassName", QUEUED_PROVISIONING_CLASS) == QUEUED_PROVISIONING_CLASS
        pools = [p for p in cluster.pools_behind(flavor, vocabulary.GPU_RESOURCE)
                 if not queued or p.capacity == Capacity.QUEUED] if flavor else []
        out += _pool_size_warning(ps, check, flavor, gpus, pools)
    return out


def _fits_pool(ps: PodSet, gpus: int, pool: PoolFacts) -> bool:
    needed = _nodes_needed(ps.count, gpus, pool.per_node)
    return needed is not None and needed <= pool.nodes


def _pool_size_warning(ps: PodSet, check: str, flavor: str | None, gpus: int, pools: list[PoolFacts]) -> list[str]:
    """Warn when no candidate pool can grow to what the pod set needs (one pool serves the request)."""
    if not pools or any(_fits_pool(ps, gpus, p) for p in pools):
        return []
    biggest = max(pools, key=lambda p: (p.nodes, p.per_node))
    needed = _nodes_needed(ps.count, gpus, biggest.per_node)
    need = (f"needs {needed} nodes of node pool {biggest.name} ({biggest.per_node} {vocabulary.GPU_RESOURCE} "
            f"per node) but the pool's maximum size is {biggest.nodes}") if needed else \
        (f"asks for {gpus} {vocabulary.GPU_RESOURCE} per pod but nodes of node pool {biggest.name} "
         f"have {biggest.per_node}")
    return [f"pod set {ps.name} ({ps.count} pods x {gpus} {vocabulary.GPU_RESOURCE}, flavor {flavor}) {need}: "
            f"the ProvisioningRequest of admission check {check} fails with \"Max nodepool size reached\" "
            f"and the check is retried and fails again and again (Kueue issue 5129, {ISSUE_5129})"]


def physical_warnings(cluster: Cluster, cq: Obj, pod_sets: Sequence[PodSet],
                      assignments: Sequence[PodSetAssignment]) -> tuple[str, ...]:
    """Problems Kueue's quota check cannot see, per assigned pod set: they make it inadmissible too."""
    out: list[str] = []
    for ps, psa in zip(pod_sets, assignments, strict=True):
        out += (accelerator_taint_warnings(cluster, ps, psa) + tpu_slice_warnings(cluster, ps, psa)
                + provisioning_warnings(cluster, cq, ps, psa))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# The whole decision
# ---------------------------------------------------------------------------------------------

def workload_identity(workload: Obj) -> tuple[str, str, str]:
    """(kind, namespace, name); namespace defaults to `default`, a generateName stands in for a name."""
    meta = workload.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName", "")
    return workload.get("kind", ""), meta.get("namespace") or "default", name


def _pre_scheduler(cluster: Cluster, workload: Obj, pod_sets: list[PodSet],
                   base: AdmissionResult) -> AdmissionResult:
    """Everything before the scheduler runs: management, queue, priority, queue health, namespaces
    (pkg/scheduler/scheduler.go `nominate` then pkg/workload/resources.go `ValidateAdmissibility`)."""
    ns = base.namespace
    blocker = management_blocker(cluster, base.kind, ns)
    queue, no_queue = (None, None) if blocker else queue_name(cluster, workload, ns)
    blocker = blocker or no_queue or priority_blocker(cluster, workload, pod_sets)
    if blocker:
        return replace(base, reason=blocker)
    assert queue is not None  # queue_name gives a queue or the reason there is none
    cq, blocker, details = queue_blocker(cluster, ns, queue)
    if blocker:
        return replace(base, cluster_queue=cq, reason=blocker, warnings=details)
    cq_object = cluster.get("ClusterQueue", cq)
    assert cq_object is not None  # queue_blocker found it
    selector = (cq_object.get("spec") or {}).get("namespaceSelector")
    if not selector_matches(selector, cluster.namespace_labels(ns)):
        return replace(base, cluster_queue=cq, reason="workload namespace doesn't match ClusterQueue selector")
    return replace(base, cluster_queue=cq)


def admit_in(cluster: Cluster, workload: Obj) -> AdmissionResult:
    """Kueue v0.19.2's decision for one Job or JobSet on an empty `cluster`, plus physical warnings."""
    kind, ns, name = workload_identity(workload)
    if kind not in FRAMEWORKS:
        raise ValueError(f"{ns}/{name}: not a kind Kueue manages here ({', '.join(FRAMEWORKS)}): kind {kind!r}")
    pod_sets = pod_sets_of(workload, cluster.config)
    result = _pre_scheduler(cluster, workload, pod_sets, AdmissionResult(kind, ns, name))
    if result.reason:
        return result
    cq = cluster.get("ClusterQueue", result.cluster_queue)
    assert cq is not None  # _pre_scheduler found it
    assignments, reason = assign_flavors(cluster, cq, pod_sets, quota_check_strategy(cluster.config))
    if reason:
        return replace(result, reason=reason)
    checks = applicable_checks(cq, [c.flavor for a in assignments for c in a.flavors])
    warnings = physical_warnings(cluster, cq, pod_sets, assignments)
    return replace(result, pod_sets=tuple(assignments), checks=checks, warnings=warnings)


def admit(manifests: Iterable[Obj], config: Obj | None, pools: Iterable[PoolFacts],
          workload: Obj) -> AdmissionResult:
    """Would Kueue admit `workload` given the stack's Kubernetes manifests, Kueue's Configuration
    (as parsed from the Helm values) and the node pools' PoolFacts, on an empty cluster?"""
    return admit_in(Cluster.build(manifests, config, pools), workload)
