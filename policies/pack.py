"""The policy pack as data: each policy's name, description, default level and rule. `policies()`
builds the CrossGuard objects that `pulumi preview --policy-pack policies` and the offline check
both run; levels can be overridden through the pack's config (`enforcementLevel` per policy)."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from gke_ai_batch import vocabulary
from gke_ai_batch.model.promises import Res, Stack
from gke_ai_batch.vocabulary import KUEUE_GROUP_TYPE_PREFIX, PRIORITY_CLASS, SHARED_QUEUE_LABEL, kueue_type

from . import fleet_rules as fr
from . import resource_rules as rr
from . import stack_rules as sr
from .props import as_declared

PACK_NAME = "gke-ai-batch-policies"
MANDATORY, ADVISORY = EnforcementLevel.MANDATORY, EnforcementLevel.ADVISORY
REQUIRED_LABELS = ["environment", "owner"]
CLUSTER, NODE_POOL = vocabulary.CLUSTER, vocabulary.NODE_POOL
BUCKET_GRANTS = (vocabulary.BUCKET_IAM_MEMBER, vocabulary.BUCKET_IAM_BINDING)


@dataclass(frozen=True)
class ResourcePolicy:
    name: str
    description: str
    level: EnforcementLevel
    types: tuple[str, ...]  # resource types it judges; a trailing ':' matches a prefix
    rule: Callable[[Mapping[str, Any]], list[str]]

    def applies(self, resource_type: str) -> bool:
        return any(resource_type == t or (t.endswith(":") and resource_type.startswith(t)) for t in self.types)


@dataclass(frozen=True)
class StackPolicy:
    name: str
    description: str
    level: EnforcementLevel
    rule: Callable[[list[Res]], list[tuple[str | None, str]]]


RESOURCE_POLICIES = [
    ResourcePolicy("tpu-pool-shape", "A TPU pool's machine type, topology, placement, zone and size agree with "
                   "the TPU catalog.", MANDATORY, (NODE_POOL,), rr.tpu_pool_shape),
    ResourcePolicy("gpu-pool-shape", "A GPU pool's accelerator type and count match its machine type.",
                   MANDATORY, (NODE_POOL,), rr.gpu_pool_shape),
    ResourcePolicy("gpudirect-networks", "A pool of a GPU machine whose multi-node performance needs GPUDirect "
                   "(A3 High 8g, A3 Mega, A3 Ultra, A4, A4X) declares the additional node networks it needs, or "
                   "sets networkConfig.acceleratorNetworkProfile auto.", ADVISORY, (NODE_POOL,),
                   rr.gpudirect_networks),
    ResourcePolicy("flex-start-pool", "Flex-start pools take no reservation, scale from 0, skip auto-repair and "
                   "are not spot.", MANDATORY, (NODE_POOL,), rr.flex_start_pool),
    ResourcePolicy("queued-provisioning-pool", "Queued-provisioning pools take no reservation, scale in total from "
                   "0 with location policy ANY, and skip auto-repair.", MANDATORY, (NODE_POOL,),
                   rr.queued_provisioning_pool),
    ResourcePolicy("cluster-baseline", "Workload Identity, shielded nodes, a release channel, no legacy ABAC, no "
                   "client certificate, network policy.", MANDATORY, (CLUSTER,),
                   lambda p: rr.cluster_baseline(p, rr.is_production(p))[0]),
    ResourcePolicy("production-hardening", "Production clusters: private nodes, a closed control plane and "
                   "deletion protection.", MANDATORY, (CLUSTER,),
                   lambda p: rr.cluster_baseline(p, True)[1] if rr.is_production(p) else []),
    ResourcePolicy("hardening-advisory", "Non-production clusters: the production hardening, as advice.",
                   ADVISORY, (CLUSTER,),
                   lambda p: [] if rr.is_production(p) else rr.cluster_baseline(p, False)[1]),
    ResourcePolicy("required-labels", "Clusters and node pools carry the environment and owner labels (cost "
                   "reports and ownership).", MANDATORY, (CLUSTER, NODE_POOL),
                   lambda p: rr.required_labels(p.get("resourceLabels") or (p.get("nodeConfig") or {}).get(
                       "resourceLabels"), REQUIRED_LABELS, p.get("name", "resource"))),
    ResourcePolicy("kueue-api-version", "Kueue objects use kueue.x-k8s.io/v1beta2 (v1beta1 is deprecated).",
                   MANDATORY, (KUEUE_GROUP_TYPE_PREFIX,),
                   lambda p: rr.kueue_api_version(p, p.get("kind", "object"))),
    ResourcePolicy("cluster-queue-namespaces", "A ClusterQueue admits only its teams' namespaces unless it is "
                   "declared shared.", MANDATORY, (kueue_type("ClusterQueue"),),
                   lambda p: rr.open_cluster_queue(p, ((p.get("metadata") or {}).get("labels") or {}).get(
                       SHARED_QUEUE_LABEL) == "true")),
    ResourcePolicy("priority-class-value", "PriorityClass values stay below 1,000,000,000 (reserved for the "
                   "system).", MANDATORY, (PRIORITY_CLASS,), rr.priority_value),
    ResourcePolicy("node-workload-metadata", "Node pools give Pods GKE's metadata server (their own Workload "
                   "Identity), never the node service account's credentials.", MANDATORY, (NODE_POOL,),
                   rr.node_workload_metadata),
    ResourcePolicy("bucket-private", "Buckets have uniform bucket-level access and public access prevention "
                   "enforced.", MANDATORY, (vocabulary.BUCKET,), rr.bucket_private),
    ResourcePolicy("bucket-not-public", "No grant on a bucket names allUsers or allAuthenticatedUsers.", MANDATORY,
                   BUCKET_GRANTS, rr.bucket_not_public),
]

STACK_POLICIES = [
    StackPolicy("gke-rules", "Every cluster and node pool satisfies GKE's create-time rules (docs/gke-rules.md): "
                "GKE refuses the rest at apply time.", MANDATORY, sr.gke_rules),
    StackPolicy("quota-within-capacity", "Team nominal quotas on a flavor backed by on-demand or reserved pools do "
                "not exceed what those pools hold: chips, GPUs, allocatable cpu and memory; nor, on a compute class's "
                "flavor, what the class has at most.", MANDATORY,
                sr.quota_over_capacity),
    StackPolicy("quota-not-guaranteed", "Nominal quotas beyond a flavor's guaranteed capacity rest on spot, flex-start "
                "or queued capacity that may not come (of a compute class, only its reserved priority is "
                "guaranteed).", ADVISORY, sr.quota_not_guaranteed),
    StackPolicy("quota-over-capacity", "Nominal quotas above what a flavor's spot, flex-start or queued pools hold "
                "at full size: no capacity mode gives them (on on-demand or reserved pools and compute classes, "
                "quota-within-capacity refuses them).", ADVISORY, sr.quota_beyond_full_size),
    StackPolicy("team-over-budget", "A team's promised quota costs more at list price than its teams[].budget (USD a "
                "month; docs/cost.md).", ADVISORY, sr.team_over_budget),
    StackPolicy("quota-idle-capacity", "Fixed-capacity accelerators that no team's nominal quota covers sit idle.",
                ADVISORY, sr.quota_below_capacity),
    StackPolicy("kueue-references", "Every LocalQueue, ClusterQueue, AdmissionCheck and Cohort names objects "
                "that exist.", MANDATORY, sr.kueue_references),
    StackPolicy("topology-on-reserved-capacity", "A topology-aware flavor rests on reserved or on-demand pools: "
                "GKE places spot and flex-start capacity less densely, so required topologies may not fit.",
                ADVISORY, sr.topology_on_uncertain_capacity),
    StackPolicy("flavor-has-nodes", "Every flavor that selects TPU or GPU nodes selects a node pool of the stack "
                "(not judged without node pools): otherwise its quota is admitted and never runs.", MANDATORY,
                sr.flavors_without_nodes),
    StackPolicy("plain-node-pool", "A Standard cluster with flex-start or queued-provisioning pools also has a "
                "pool without them.", MANDATORY, sr.plain_pool_present),
    StackPolicy("jobset-installed", "JobSet is installed when a multi-host TPU pool exists.", MANDATORY,
                sr.jobset_installed),
    StackPolicy("slice-controller-enabled", "An AdmissionCheck of GKE's slice controller is answered: the cluster "
                "turns the controller on.", MANDATORY, sr.slice_controller_enabled),
    StackPolicy("kueue-after-release", "Kueue objects depend on the Kueue Helm release.", MANDATORY,
                sr.kueue_after_release),
    StackPolicy("kueue-controller-size", "The Kueue controller's memory suits the number of queues it holds.",
                ADVISORY, sr.kueue_controller_size),
    StackPolicy("one-global-default-priority", "At most one PriorityClass is the global default.", MANDATORY,
                sr.one_global_default),
    StackPolicy("node-service-account", "Every node pool and auto-provisioning default runs as a dedicated service "
                "account, not the Compute Engine default one (GKE: Configure GKE node service accounts; CIS GKE "
                "5.2.1).", MANDATORY,
                sr.node_service_account),
    StackPolicy("privileged-namespace-flavors", "A privileged team namespace names the flavors its pods may run "
                "on (teams[].pod_security[].flavors), so its host access stays off other teams' nodes.", MANDATORY,
                sr.privileged_without_flavors),
    StackPolicy("team-has-members", "Every team names the Google groups of its members (teams[].groups): "
                "without them its namespaces and quota exist and no one may use them.", ADVISORY,
                sr.teams_without_members),
    StackPolicy("private-node-egress", "A cluster with private nodes has a Cloud NAT in its region, so that its "
                "nodes can pull images from registries outside Google (Kueue's and JobSet's: registry.k8s.io).",
                MANDATORY, sr.private_node_egress),
    StackPolicy("multikueue-queues", "A fleet manager's ClusterQueue has one MultiKueue check, on all its flavors, "
                "and no ProvisioningRequest check (Kueue keeps such a queue inactive; kueue#8347); a queue with "
                "quota in a worker's flavor dispatches, and that flavor states what the worker holds.",
                MANDATORY, fr.multikueue_queues),
    StackPolicy("multikueue-dispatch", "Each MultiKueue check names a MultiKueueConfig of 1 to 20 declared "
                "MultiKueueClusters, each connecting through a kubeconfig Secret in Kueue's namespace; the manager "
                "holds jobs to one worker's flavor (ValidatingAdmissionPolicy gke-ai-batch-fleet-flavor).",
                MANDATORY, fr.multikueue_dispatch),
    StackPolicy("fleet-teams-on-workers", "Every LocalQueue of a dispatching ClusterQueue exists on each worker it "
                "may be dispatched to, pointing at a ClusterQueue there that holds the manager's quota in that "
                "worker's flavors.", MANDATORY, fr.teams_on_workers),
    StackPolicy("fleet-kueue-version", "Every worker runs the manager's Kueue minor release, at its patch or a "
                "later one, stated on its MultiKueueCluster.", MANDATORY, fr.worker_versions),
    StackPolicy("fleet-credentials", "Every worker's kubeconfig Secret states its token's generation and its "
                "rotation, at most yearly; the token's identity writes only in team namespaces.", MANDATORY,
                fr.worker_credentials),
]


def _resource_validate(spec: ResourcePolicy) -> Callable[[ResourceValidationArgs, ReportViolation], None]:
    """The CrossGuard callback for a resource rule: props as declared (as_declared: the wire has only floats)."""
    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        if spec.applies(args.resource_type):
            for message in spec.rule(as_declared(args.props)):
                report(message, None)
    return validate


def _stack_validate(spec: StackPolicy) -> Callable[[StackValidationArgs, ReportViolation], None]:
    """The CrossGuard callback for a stack rule: every resource's props as declared, as in _resource_validate."""
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        for urn, message in spec.rule(_stack(args.resources)):
            report(message, urn)
    return validate


class StackResources(list[PolicyResource]):
    """The stack as the offline check gives it to every stack policy at once: the rules' reading of it (props as
    declared, indexed) is kept on it and built once. The engine's analyzer builds a plain list per policy, which
    each rule reads anew."""

    read: Stack | None = None


def _stack(resources: list[PolicyResource]) -> Stack:
    if isinstance(resources, StackResources) and resources.read is not None:
        return resources.read
    stack = Stack(Res(r.resource_type, r.urn, as_declared(r.props), tuple(d.urn for d in r.dependencies))
                  for r in resources)
    if isinstance(resources, StackResources):
        resources.read = stack
    return stack


def policies() -> list[Policy]:
    return ([ResourceValidationPolicy(name=p.name, description=p.description, enforcement_level=p.level,
                                      validate=_resource_validate(p)) for p in RESOURCE_POLICIES]
            + [StackValidationPolicy(name=p.name, description=p.description, enforcement_level=p.level,
                                     validate=_stack_validate(p)) for p in STACK_POLICIES])
