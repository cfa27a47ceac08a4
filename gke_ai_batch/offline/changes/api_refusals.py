"""Changes of `make diff` that the API server, GKE or the engine would refuse or leave half-done, judged from
both sides of each resource: the way to make them is named with each refusal.

- a Kueue object's field its CRD makes immutable (Kueue v0.19.2 CRDs, `self == oldSelf`, and the
  ResourceFlavor's rules that hold once the OLD object has a topologyName) would be refused as an update;
- a ResourceFlavor, Topology or AdmissionCheck that the old plan's queues name is never replaced: Kueue keeps
  its `kueue.x-k8s.io/resource-in-use` finalizer while a ClusterQueue (a ResourceFlavor, for a Topology) names
  it (pkg/controller/core/resourceflavor_controller.go, admissioncheck_controller.go,
  pkg/controller/tas/topology_controller.go at v0.19.2), so a delete-first replacement hangs;
- a Kubernetes provider replaced takes every object on it with it (decided like the cluster's replacement);
- a GKE control-plane version that skips a minor version, or goes down;
- a subnet's secondary range that the cluster uses, edited or removed.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from gke_ai_batch.model.replacement import CRD_IMMUTABLE, HELD_IN_USE, TAS_FLAVOR_IMMUTABLE, field_at, shrinks
from gke_ai_batch.vocabulary import CLUSTER, K8S_PROVIDER, KUEUE_TYPE_PREFIX, SUBNETWORK

from .inputs import object_name

Resource = dict[str, Any]
FINALIZER = "kueue.x-k8s.io/resource-in-use"
# GKE docs, "Manually upgrading a cluster or node pool"
# (https://cloud.google.com/kubernetes-engine/docs/how-to/upgrading-a-cluster): "You cannot upgrade your cluster
# more than one minor version at a time. For example, you can upgrade a cluster from version 1.21.x to 1.22.x, but
# not directly from 1.20.x to 1.22.x" (the page's note as quoted from an earlier revision; the current revision's
# wording could not be read in the stored copy, only its opening). Nodes: GKE versioning and support
# (https://cloud.google.com/kubernetes-engine/versioning): "Nodes and node pool versions can be up to two minor
# versions older than the control plane, but cannot be newer". The platform pins no node version (node pools
# auto-upgrade, on the cluster's channel), so only the control plane's step is judged here.
# terraform-provider-google-beta resource_container_cluster.go updates the master only when min_master_version
# is above the running version, so a lower one is accepted and does nothing.
VERSION = re.compile(r"(\d+)\.(\d+)")
ADDITIONAL_RANGES = ("GKE docs, \"Create a VPC-native cluster\": a secondary range in use cannot be replaced without "
                     "putting the cluster into an unstable state; add another Pod range instead (discontiguous "
                     "multi-Pod CIDR: the cluster's additional Pod ranges, or a node pool's own pod range)")


def refused(steps: Iterable[tuple[str, Resource]], old: list[Resource], new: list[Resource],
            acknowledged: tuple[tuple[str, str], ...]) -> list[str]:
    """One line per step the API server, GKE or the engine would refuse, with the way to do it."""
    before = {r["urn"]: r for r in old}
    out: list[str] = []
    for op, r in steps:
        was = before.get(r["urn"])
        if was is not None and op in ("update", "replace"):
            out += _kueue_immutable(was, r) + _versions(was, r) + _secondary_ranges(was, r, old)
            out += _primary_range(was, r, old)
        if op == "replace" and was is not None and "replacedWith" not in r and (users := in_use(was, old)):
            out.append(_two_steps(was, users))
        if op == "replace" and r["type"] == K8S_PROVIDER:
            out += _provider(r, old, new, acknowledged)
    return out


def _kind(r: Resource) -> str | None:
    return r["type"].removeprefix(KUEUE_TYPE_PREFIX) if r["type"].startswith(KUEUE_TYPE_PREFIX) else None


def _kueue_immutable(was: Resource, now: Resource) -> list[str]:
    """The fields the old object's CRD rules forbid changing: a flavor's labels, tolerations and topology
    once it HAD a topologyName (turning topology-aware scheduling on is an update), and the others always."""
    kind = _kind(now)
    a, b = was.get("inputs") or {}, now.get("inputs") or {}
    paths: tuple[str, ...]
    if kind == "ResourceFlavor":
        paths = TAS_FLAVOR_IMMUTABLE if field_at(a, "spec.topologyName") is not None else ()
    else:
        paths = CRD_IMMUTABLE.get(kind or "", ()) if kind in HELD_IN_USE else ()
    changed = [p for p in paths if field_at(a, p) != field_at(b, p)]
    if not changed:
        return []
    field = changed[0].removeprefix("spec.")
    rule = (f"{field} are immutable when topologyName is set" if field in ("nodeLabels", "tolerations") else
            f"{field} is immutable when topologyName is set" if kind == "ResourceFlavor" else "field is immutable")
    return [f"update {kind} {object_name(now)}: the API server refuses {changed[0]} "
            f"({_value(a, changed[0])} -> {_value(b, changed[0])}): \"{rule}\" (Kueue v0.19.2 CRD "
            f"kueue.x-k8s.io_{(kind or '').lower()}s.yaml); {_way(kind or '', object_name(now))}"]


def _value(inputs: dict[str, Any], path: str) -> str:
    value = field_at(inputs, path)
    return "(absent)" if value is None else str(value)


def _way(kind: str, name: str) -> str:
    users = "queues" if kind != "Topology" else "flavors"
    return (f"add a new {kind} under another name and move the {users} to it in one change, then remove {name} "
            "in the next")


def in_use(r: Resource, plan: list[Resource]) -> list[str]:
    """What in the plan names this ResourceFlavor, Topology or AdmissionCheck (Kueue holds its finalizer)."""
    kind, name = _kind(r), object_name(r)
    if kind not in HELD_IN_USE:
        return []
    users = []
    for other in plan:
        spec = (other.get("inputs") or {}).get("spec") or {}
        if kind == "Topology" and _kind(other) == "ResourceFlavor" and spec.get("topologyName") == name:
            users.append(f"ResourceFlavor {object_name(other)}")
        elif _kind(other) == "ClusterQueue" and name in _named_by_queue(spec, kind or ""):
            users.append(f"ClusterQueue {object_name(other)}")
    return users


def _named_by_queue(spec: dict[str, Any], kind: str) -> set[str]:
    if kind == "ResourceFlavor":
        return {str(f.get("name")) for g in spec.get("resourceGroups") or [] for f in g.get("flavors") or []}
    strategy = (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []
    return {str(c) for c in spec.get("admissionChecks") or []} | {str(c.get("name")) for c in strategy}


def _two_steps(r: Resource, users: list[str]) -> str:
    kind = _kind(r) or ""
    return (f"replace {kind} {object_name(r)}: it is in use ({', '.join(users)}), and Kueue keeps its {FINALIZER} "
            f"finalizer while a queue names it, so a delete-first replacement hangs; {_way(kind, object_name(r))}")


def _versions(was: Resource, now: Resource) -> list[str]:
    """A control-plane version that skips a minor version or goes down."""
    if now["type"] != CLUSTER:
        return []
    a, b = (VERSION.match(str((r.get("inputs") or {}).get("minMasterVersion") or "")) for r in (was, now))
    if a is None or b is None:
        return []
    (ma, na), (mb, nb) = (int(a[1]), int(a[2])), (int(b[1]), int(b[2]))
    given = [str((r.get("inputs") or {}).get("minMasterVersion")) for r in (was, now)]
    before, after = (tuple(int(n) for n in re.findall(r"\d+", v)) for v in given)
    if after < before:
        return [f"cluster.version: {given[0]} -> {given[1]} goes down: GKE does not downgrade a control plane, and "
                "the provider leaves a min_master_version below the running one unapplied (a no-op); keep "
                f"{given[0]} or later"]
    if mb == ma and nb > na + 1:
        return [f"cluster.version: {a[0]} -> {b[0]} skips {ma}.{na + 1}: GKE upgrades a control plane one minor "
                f"version at a time; set {ma}.{na + 1} first, land it, then {b[0]}"]
    return []


def _primary_range(was: Resource, now: Resource, old: list[Resource]) -> list[str]:
    """A primary range moved or shrunk on the subnet BASE's cluster runs in: the provider replaces the subnet
    (replacement.SUBNET_RANGE), which no order can do: a new one first meets the old one's fixed name ("already
    exists"), deleting the old one first is refused while the cluster's nodes use it. GCP only expands a primary
    range in place (gcloud compute networks subnets expand-ip-range)."""
    if now["type"] != SUBNETWORK or not any(c["type"] == CLUSTER for c in old):
        return []
    a, b = ((r.get("inputs") or {}).get("ipCidrRange") for r in (was, now))
    if a is None or b is None or not shrinks(a, b):
        return []
    return [f"subnet {(now.get('inputs') or {}).get('name')}: its range {a} -> {b} leaves addresses out, and the "
            "cluster's nodes run in it: GCP cannot shrink or move a subnet's primary range, and the subnet cannot "
            "be replaced under the cluster; expand the range instead (a larger prefix that holds the old one), or "
            "build a new network and cluster beside this one and move the teams"]


def _secondary_ranges(was: Resource, now: Resource, old: list[Resource]) -> list[str]:
    """A secondary range of the subnet that BASE's cluster uses, whose range changes or goes."""
    if now["type"] != SUBNETWORK:
        return []
    used = {str(v) for c in old if c["type"] == CLUSTER for k, v in
            ((c.get("inputs") or {}).get("ipAllocationPolicy") or {}).items() if k.endswith("SecondaryRangeName")}
    ranges = [{str(x.get("rangeName")): x.get("ipCidrRange") for x in (r.get("inputs") or {}).get(
        "secondaryIpRanges") or []} for r in (was, now)]
    return [f"subnet {(now.get('inputs') or {}).get('name')}: secondary range {name} ({cidr} -> "
            f"{ranges[1].get(name, '(absent)')}) is in use by the cluster; {ADDITIONAL_RANGES}"
            for name, cidr in ranges[0].items() if name in used and ranges[1].get(name) != cidr]


def _provider(r: Resource, old: list[Resource], new: list[Resource],
              acknowledged: tuple[tuple[str, str], ...]) -> list[str]:
    """A replaced Kubernetes provider replaces every object on it: refused like the cluster's replacement."""
    clusters = {c["urn"]: str((c.get("inputs") or {}).get("name")) for c in [*old, *new] if c["type"] == CLUSTER}
    name = next((clusters[u] for u in r.get("dependencies") or [] if u in clusters), None)
    if name is not None and ("cluster", name) in acknowledged:
        return []
    objects = sum(1 for o in new if o.get("provider") == r["urn"])
    way = (f"add `acknowledge: [{{cluster: {name}, reason: ...}}]` if the cluster is replaced on purpose"
           if name else "keep the provider's clusterIdentifier")
    return [f"replace Kubernetes provider {r['name']}: the engine replaces every object on it ({objects}), "
            "named ones delete-first: team namespaces are deleted and the Kueue release uninstalled with its CRDs "
            f"and Workloads; {way}"]
