"""Which input changes replace a resource, and which in-place updates GKE carries out by recreating nodes.

One table with sources, like the GKE rules table: `make diff` reads it to print `+- replace` with the input
that forces it, and to mark disruptive updates. Paths are the Pulumi input paths `make diff` prints
(`nodeConfig.spot`, `spec.clusterQueue`); a rule matches its path, everything under it, and a block above it
that appears, disappears or changes with the rule's field set on either side (`networkConfig: (absent) ->
{...additionalNodeNetworkConfigs...}`). The program's own `replaceOnChanges` (plan.lifecycle) count too: they are
read from each resource's options.
"""
from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gke_ai_batch import vocabulary as v

# pulumi-gcp 10.x bridges terraform-provider-google-beta 8.x (pulumi-gcp's v10 migration guide). The newest
# source readable here is google-beta branch release-8.0.0 @ 93c65b2d; its ForceNew flags for these resources
# are the same as v7.45.0's and the GA provider's release-8.0.0.
TPG = "terraform-provider-google-beta release-8.0.0 (93c65b2d)"
CONTAINER = f"ForceNew in {TPG} google-beta/services/container/"
# pulumi-kubernetes replaces an object when its name or namespace changes, and for the fields its provider's
# forceNew table lists (provider/pkg/provider, `var forceNew`) of the kinds here: a binding's roleRef (which
# Kubernetes refuses to change), a Secret's type and data, a ResourceQuota's scopes.
K8S_FORCE_NEW = "pulumi-kubernetes forceNew table"
K8S_IDENTITY = f"{K8S_FORCE_NEW}: an object's name and namespace"
MIGRATES = ("GKE API UpdateNodePoolRequest: 'Initiates an upgrade operation that migrates the nodes in the node "
            "pool' (google/container/v1/cluster_service.proto)")


@dataclass(frozen=True)
class Rule:
    """A change at `path` on a resource of type `type` forces replacement (or, in RECREATES_NODES, is applied
    in place by recreating the nodes); `why` says so with its source. A rule matches its path and everything
    under it, unless `whole`: then only the block's appearing or disappearing (Terraform's ForceNew on a
    block counts its presence, not its fields). A change reported at a block above the path matches when the
    field is set on either side and the block is still there: a block that appears holding the field replaces,
    one removed whole does not, since terraform-provider-google keeps an Optional+Computed block that leaves the
    config as it is (privateClusterConfig, a node pool's networkConfig)."""

    type: str
    path: str
    why: str
    whole: bool = False

    def matches(self, changed: str, old: Inputs, new: Inputs) -> bool:
        if changed == self.path or (not self.whole and changed.startswith((f"{self.path}.", f"{self.path}["))):
            return True
        if not (changed == "" or self.path.startswith(f"{changed}.")):
            return False
        if changed and field_at(new, changed) is None:
            return False  # a block removed whole: the provider keeps it (Optional+Computed blocks stay as they are)
        return field_at(old, self.path) is not None or field_at(new, self.path) is not None


Inputs = Mapping[str, Any]


def field_at(inputs: Inputs, path: str) -> Any:
    """The value at a dotted input path (`networkConfig.additionalNodeNetworkConfigs`), or None when unset."""
    value: Any = inputs
    for key in path.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _rules(type_: str, why: str, *paths: str) -> tuple[Rule, ...]:
    return tuple(Rule(type_, p, why) for p in paths)


# Fields Kueue v0.19.2's CRDs make immutable (x-kubernetes-validations `self == oldSelf`, "field is
# immutable"; gke_ai_batch/conform/schemas/kueue-v0.19.2). pulumi-kubernetes does not know them, so an update would be
# refused by the API server: the program declares them as replaceOnChanges (plan.lifecycle.manifest), except
# on the objects Kueue holds while in use (HELD_IN_USE), whose delete-first replacement would hang:
# `make diff` refuses those changes instead, judged from the old object (offline.changes.api_refusals).
CRD_IMMUTABLE: dict[str, tuple[str, ...]] = {
    "LocalQueue": ("spec.clusterQueue",),
    "AdmissionCheck": ("spec.controllerName",),
    "Topology": ("spec.levels",),
}
# A ResourceFlavor with a topologyName keeps its node labels, tolerations and topology (ResourceFlavor CRD at
# v0.19.2: "nodeLabels are immutable when topologyName is set", and the same of tolerations and topologyName).
TAS_FLAVOR_IMMUTABLE = ("spec.nodeLabels", "spec.tolerations", "spec.topologyName")
# Kueue keeps its kueue.x-k8s.io/resource-in-use finalizer on these while a ClusterQueue (for a Topology, a
# ResourceFlavor) names them (kueue v0.19.2 pkg/controller/core/resourceflavor_controller.go,
# admissioncheck_controller.go, pkg/controller/tas/topology_controller.go).
HELD_IN_USE = ("ResourceFlavor", "Topology", "AdmissionCheck")
CRD_SOURCE = "Kueue v0.19.2 CRD kueue.x-k8s.io_{plural}.yaml: x-kubernetes-validations self == oldSelf"
# Built-in fields the API server makes immutable, which pulumi-kubernetes' forceNew table leaves out (it has no
# scheduling.k8s.io group), so its update would be refused: the program declares them as replaceOnChanges too.
# A WorkloadPriorityClass's value is not among them: Kueue's CRD lets it change in place.
API_IMMUTABLE: dict[str, tuple[str, ...]] = {"PriorityClass": ("value", "preemptionPolicy")}
PRIORITY_CLASS_IMMUTABLE = (
    "Kubernetes ValidatePriorityClassUpdate (pkg/apis/scheduling/validation/validation.go): value and "
    "preemptionPolicy \"may not be changed in an update\"; while it is replaced the API server refuses every pod "
    "naming it (plugin/pkg/admission/priority: \"no PriorityClass with name ... was found\")")

K8S_KINDS = (v.KUEUE_TYPE_PREFIX, "kubernetes:core/v1:", "kubernetes:rbac.authorization.k8s.io/v1:",
             "kubernetes:scheduling.k8s.io/v1:", "kubernetes:networking.k8s.io/v1:",
             "kubernetes:admissionregistration.k8s.io/v1:", "kubernetes:monitoring.googleapis.com/v1:",
             f"kubernetes:{v.GKE_NETWORKING_API}:")
# A subnet's primary range: terraform-provider-google-beta resource_compute_subnetwork.go, CustomizeDiff
# `customdiff.ForceNewIfChange("ip_cidr_range", IsShrinkageIpCidr)`: a new range that does not hold the old one
# (a move or a shrink) replaces the subnet; an expansion is an update.
SUBNET_RANGE = (f"{TPG} google-beta/services/compute/resource_compute_subnetwork.go: ForceNewIfChange(ip_cidr_range, "
                "IsShrinkageIpCidr), a range that does not hold the old one")
# pulumi-kubernetes 4.34 provider/pkg/provider/provider.go DiffConfig: with `clusterIdentifier` set and unchanged
# the provider is never replaced (an endpoint or credential change is an update); a changed identifier
# replaces it; adding or removing one replaces nothing by itself.
PROVIDER_IDENTITY = "pulumi-kubernetes provider.go DiffConfig: a changed clusterIdentifier replaces the provider"
IAM = f"ForceNew in {TPG} google-beta/tpgiamresource/resource_iam_member.go (no update function)"
COMPUTE = f"ForceNew in {TPG} google-beta/services/compute/"
# The monitoring and BigQuery resources were read at newer commits of the same repository: `project` is the
# monitoring ones' only ForceNew field (the alert policy's update mask never names it).
MONITORING = "ForceNew in terraform-provider-google-beta google-beta/services/monitoring/"
BIGQUERY = "ForceNew in terraform-provider-google-beta google-beta/services/bigquery/"

REPLACES: tuple[Rule, ...] = (
    *_rules(v.CLUSTER, CONTAINER + "resource_container_cluster.go", "name", "location", "project", "network",
            "subnetwork", "description", "initialNodeCount", "clusterIpv4Cidr", "networkingMode",
            "defaultMaxPodsPerNode", "enableAutopilot", "datapathProvider", "enableTpu", "confidentialNodes",
            "ipAllocationPolicy.clusterIpv4CidrBlock", "ipAllocationPolicy.servicesIpv4CidrBlock",
            "ipAllocationPolicy.clusterSecondaryRangeName", "ipAllocationPolicy.servicesSecondaryRangeName",
            "privateClusterConfig.masterIpv4CidrBlock", "privateClusterConfig.privateEndpointSubnetwork"),
    *_rules(v.NODE_POOL, CONTAINER + "resource_container_node_pool.go", "name", "namePrefix", "cluster", "location",
            "project", "initialNodeCount", "maxPodsPerNode", "placementPolicy.policyName", "queuedProvisioning",
            "networkConfig.acceleratorNetworkProfile", "networkConfig.createPodRange", "networkConfig.podRange",
            "networkConfig.podIpv4CidrBlock", "networkConfig.additionalNodeNetworkConfigs",
            "networkConfig.additionalPodNetworkConfigs", "networkConfig.subnetwork"),
    Rule(v.NODE_POOL, "placementPolicy", CONTAINER + "resource_container_node_pool.go (the block's presence)",
         whole=True),
    *_rules(v.NODE_POOL, CONTAINER + "node_config.go", *(f"nodeConfig.{f}" for f in (
        "spot", "preemptible", "flexStart", "maxRunDuration", "reservationAffinity", "serviceAccount",
        "oauthScopes", "metadata", "minCpuPlatform", "guestAccelerators", "localSsdCount", "localNvmeSsdBlockConfig",
        "ephemeralStorageLocalSsdConfig", "localSsdEncryptionMode", "secondaryBootDisks", "bootDiskKmsKey",
        "shieldedInstanceConfig"))),
    *_rules(v.RESOURCE_POLICY, COMPUTE + "resource_compute_resource_policy.go", "region", "project",
            "workloadPolicy", "groupPlacementPolicy.gpuTopology", "groupPlacementPolicy.tpuTopology"),
    *_rules(v.NETWORK, COMPUTE + "resource_compute_network.go", "name", "project",
            "autoCreateSubnetworks", "description", "networkProfile"),
    *_rules("gcp:compute/firewall:Firewall", COMPUTE + "resource_compute_firewall.go", "name", "direction",
            "project"),
    *_rules(v.SUBNETWORK, COMPUTE + "resource_compute_subnetwork.go", "name", "network", "region", "project",
            "description"),
    *_rules(v.ROUTER, COMPUTE + "resource_compute_router.go", "name", "network", "region",
            "project"),
    *_rules(v.ROUTER_NAT, COMPUTE + "resource_compute_router_nat.go", "name", "router", "region", "project",
            "type", "endpointTypes"),
    *_rules(v.BUCKET, f"ForceNew in {TPG} google-beta/services/storage/resource_storage_bucket.go", "name",
            "location", "project", "enableObjectRetention", "customPlacementConfig.dataLocations",
            "hierarchicalNamespace"),
    *_rules(v.BUCKET_IAM_MEMBER, IAM, "bucket", "role", "member", "condition"),
    *_rules("gcp:projects/iAMMember:IAMMember", IAM, "project", "role", "member", "condition"),
    *_rules("gcp:serviceaccount/account:Account",
            f"ForceNew in {TPG} google-beta/services/resourcemanager/resource_google_service_account.go",
            "accountId", "project"),
    *_rules(v.ALERT_POLICY, MONITORING + "resource_monitoring_alert_policy.go (at 07a6fa4a)", "project"),
    *_rules(v.DASHBOARD, MONITORING + "resource_monitoring_dashboard.go (at 1484cfdd)", "project"),
    *_rules(v.BQ_DATASET, BIGQUERY + "resource_bigquery_dataset.go (at 0123f388)", "project", "datasetId", "location"),
    *_rules(v.BQ_TABLE, BIGQUERY + "resource_bigquery_table.go (at 04d67043; a view's query is an update)", "project",
            "datasetId", "tableId"),
    *_rules(v.HELM_RELEASE, "a Helm release is identified by its name and namespace", "name", "namespace"),
    *(Rule(prefix, p, K8S_IDENTITY) for prefix in K8S_KINDS for p in ("metadata.name", "metadata.namespace")),
    *(Rule(f"{v.KUEUE_TYPE_PREFIX}{kind}", path, CRD_SOURCE.format(plural=kind.lower() + "s"))
      for kind, paths in CRD_IMMUTABLE.items() if kind not in HELD_IN_USE for path in paths),
    *(Rule(f"kubernetes:rbac.authorization.k8s.io/v1:{kind}", "roleRef", f"{K8S_FORCE_NEW}: a binding's roleRef")
      for kind in ("RoleBinding", "ClusterRoleBinding")),
    *_rules("kubernetes:core/v1:Secret", f"{K8S_FORCE_NEW}: a Secret's type and data", "type", "data", "stringData"),
    *_rules(v.PRIORITY_CLASS, PRIORITY_CLASS_IMMUTABLE, *API_IMMUTABLE["PriorityClass"]),
    Rule(v.RESOURCE_QUOTA, "spec.scopes", f"{K8S_FORCE_NEW}: a ResourceQuota's scopes"),
)

# In-place node pool updates GKE carries out by replacing the VMs, per the pool's upgrade strategy. Labels
# and taints are not among them: GKE applies those "without re-creating the node pool and disrupting running
# workloads" (GKE docs, "Update existing node pools").
RECREATES_NODES: tuple[Rule, ...] = (
    *_rules(v.NODE_POOL, MIGRATES, "nodeConfig.machineType", "nodeConfig.diskType", "nodeConfig.diskSizeGb"),
    Rule(v.NODE_POOL, "nodeConfig.imageType", f"{TPG} container_node_pool docs: 'changing the image type will "
         "delete and recreate all nodes in the node pool'"),
)


def _typed(rules: Iterable[Rule], type_: str) -> list[Rule]:
    return [r for r in rules if type_ == r.type or (r.type.endswith(":") and type_.startswith(r.type))]


def replacing(type_: str, changed: Sequence[str], old: Inputs, new: Inputs,
              replace_on_changes: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(changed path, why) for each change that replaces a resource of this type, its inputs `old` and `new`
    telling whether a block that appears or disappears holds a field that forces it."""
    rules = _typed(REPLACES, type_) + [Rule(type_, _plain(p), "the program's replaceOnChanges (plan.lifecycle)")
                                        for p in replace_on_changes]
    out = []
    for c in changed:
        rule = next((r for r in rules if r.matches(c, old, new)), None)
        if rule is not None:
            out.append((c, rule.why))
        elif type_ == v.SUBNETWORK and c == "ipCidrRange" and shrinks(field_at(old, c), field_at(new, c)):
            out.append((c, SUBNET_RANGE))
        elif type_ == v.K8S_PROVIDER and c == "clusterIdentifier" and None not in (old.get(c), new.get(c)):
            out.append((c, PROVIDER_IDENTITY))
    return out


def shrinks(old: Any, new: Any) -> bool:
    """Whether a subnet's new primary range leaves out part of the old one (a move or a shrink): the
    provider replaces the subnet then, and updates it in place for an expansion (SUBNET_RANGE)."""
    try:
        was, will = ipaddress.ip_network(str(old)), ipaddress.ip_network(str(new))
    except ValueError:
        return bool(old != new)
    if isinstance(was, ipaddress.IPv4Network) and isinstance(will, ipaddress.IPv4Network):
        return not was.subnet_of(will)
    if isinstance(was, ipaddress.IPv6Network) and isinstance(will, ipaddress.IPv6Network):
        return not was.subnet_of(will)
    return True


# Blocks terraform-provider-google keeps (Optional+Computed) when the config drops them whole: the resource stays
# as it was (Rule's docstring), so removing one changes nothing in the cloud.
KEPT_WHEN_REMOVED = {(v.CLUSTER, "privateClusterConfig"), (v.NODE_POOL, "networkConfig")}
BLOCK_KEPT = ("no effect: the provider keeps this block when the config drops it (Optional and Computed in "
        "terraform-provider-google), so it stays as it is; only a replacement undoes it")


def kept_blocks(type_: str, changed: Sequence[str], old: Inputs, new: Inputs) -> list[str]:
    """The changed paths that drop a block the provider keeps: a no-op however the diff reads."""
    return [c for c in changed if (type_, c) in KEPT_WHEN_REMOVED and field_at(old, c) is not None
            and field_at(new, c) is None]


def recreating_nodes(type_: str, changed: Sequence[str], old: Inputs, new: Inputs) -> list[str]:
    """The changed paths GKE applies in place by recreating every node of the pool (evicting its pods)."""
    rules = _typed(RECREATES_NODES, type_)
    return [c for c in changed if any(r.matches(c, old, new) for r in rules)]


def evicting_taints(old: Inputs, new: Inputs) -> list[str]:
    """The NoExecute taints a node pool update adds: Kubernetes evicts every running pod that does not tolerate
    one (kubernetes.io/docs "Taints and Tolerations": NoExecute "Pods that do not tolerate the taint are
    evicted immediately"), and GKE applies a pool's taints to its live nodes (GKE docs, "Update existing node
    pools")."""
    def no_execute(inputs: Inputs) -> set[str]:
        taints = field_at(inputs, "nodeConfig.taints") or []
        return {f"{t.get('key')}={t.get('value', '')}" for t in taints
                if isinstance(t, Mapping) and t.get("effect") == "NO_EXECUTE"}
    return sorted(no_execute(new) - no_execute(old))


def cluster_identifier(project: str, location: str, name: str) -> str:
    """The Kubernetes provider's clusterIdentifier: the cluster as GKE names it. It stays the same through an
    endpoint change, a credential or IP rotation and a replacement under the same name, so pulumi-kubernetes
    updates its provider instead of replacing it with every object on it (DiffConfig clears the replacement
    while the identifier is unchanged); a renamed or moved cluster replaces it. After a replacement under the
    same name the objects are not in the new cluster until `pulumi up --refresh` (docs/operating.md)."""
    return f"projects/{project}/locations/{location}/clusters/{name}"


def _plain(path: str) -> str:
    """A replaceOnChanges path without wildcards (`a[*].b` matches any change under `a`)."""
    return re.split(r"\[\*\]|\.\*", path, maxsplit=1)[0]
