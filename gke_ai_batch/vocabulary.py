"""The names the layers share: capacity modes and pool kinds, the labels and taints GKE and the platform
put on nodes and namespaces, API versions, and resource type tokens. Planner, components, policies and
offline tools spell them from here (tests/test_vocabulary.py finds a capacity mode spelt elsewhere).
The enums are StrEnums: a member is its value in f-strings, JSON and comparisons with plain strings."""
from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

PRODUCTION_ENVIRONMENTS = ("prod", "production")  # environments the policies treat as production
Manifest = dict[str, Any]  # a Kubernetes object as plain data, as the plan derives it
Obj = Mapping[str, Any]  # a Kubernetes object, or a part of one, as the offline models read it
Key = tuple[str, str, str]  # an object's identity: (kind, namespace, name)
PACKAGE = "gke-ai-batch"  # the Pulumi package name: component type tokens are `gke-ai-batch:index:<Type>`


def component_type(name: str) -> str:
    return f"{PACKAGE}:index:{name}"


class ClusterMode(StrEnum):
    STANDARD = "standard"
    AUTOPILOT = "autopilot"


class Capacity(StrEnum):
    """Where a pool's VMs come from. On-demand and reserved capacity stays; the rest can vanish or
    may never come (spot is reclaimed, flex-start and queued provisioning wait for stock)."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVATION = "reservation"
    FLEX_START = "flex-start"
    QUEUED = "queued-provisioning"


FIXED_CAPACITY = (Capacity.ON_DEMAND, Capacity.RESERVATION)
SCALES_FROM_ZERO = (Capacity.FLEX_START, Capacity.QUEUED)  # nodes exist only while work needs them


class PoolKind(StrEnum):
    SYSTEM = "system"  # the plain CPU pool the controllers run on
    TPU = "tpu"
    GPU = "gpu"
    CPU = "cpu"  # a node pool without accelerators, as read back from any program


# Extended resources pods request.
TPU_RESOURCE = "google.com/tpu"
GPU_RESOURCE = "nvidia.com/gpu"
ACCELERATOR_RESOURCES = (TPU_RESOURCE, GPU_RESOURCE)

# Node labels and taints GKE sets (source pages 000-004, listed with their addresses in docs/source-pages.md).
TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TPU_TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
GPU_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
ACCELERATOR_LABELS = (TPU_ACCELERATOR_LABEL, GPU_ACCELERATOR_LABEL)
SPOT_LABEL = "cloud.google.com/gke-spot"
ZONE_LABEL = "topology.kubernetes.io/zone"  # Kubernetes' well-known label: per-zone flavors select by it
# The compute class a node belongs to: GKE labels the nodes it creates for a class with it, and taints them
# with it (NoSchedule, value the class's name), so only pods that select the class land there. GKE: About custom
# ComputeClasses (docs.cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes), "Configure
# manually-created node pools": "Node label: cloud.google.com/compute-class=COMPUTE_CLASS", "Taint:
# cloud.google.com/compute-class=COMPUTE_CLASS:NoSchedule", which "auto-created node pools in GKE Standard mode
# perform [...] for you"; GKE: Selectively enforce firewall policies in GKE (stored copy, address not kept): "GKE
# automatically applies a taint to the nodes created for that class and adds a corresponding toleration to your
# workload's Pods", its admission policy matching the toleration by key cloud.google.com/compute-class and the
# class's name as value.
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"  # GKE labels every node with its pool's name
FLEX_START_LABEL = "cloud.google.com/gke-flex-start"  # source page 003: workloads select it
QUEUED_TAINT = {"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NoSchedule"}  # page 004
RESERVATION_KEY = "compute.googleapis.com/reservation-name"  # reservationAffinity key for a named reservation

# Taints: GKE's on accelerator nodes (it adds the matching toleration to pods that request the
# accelerator), and the one for a node pool kept for GKE's system components, whose managed components
# tolerate it (the GKE page could not be read here: Cluster Toolkit's system pool default and its Kueue
# and JobSet values, which tolerate "the default gke-managed-components taint", are the source).
TPU_TAINT_KEY = TPU_RESOURCE
GPU_TAINT_KEY = GPU_RESOURCE
SYSTEM_POOL_TAINT = {"key": "components.gke.io/gke-managed-components", "value": "true", "effect": "NoSchedule"}

# Labels the platform sets. GKE documents reservation labels only as ComputeClass selectors, so the
# reservation label is ours; its value is label-safe (model.labels.label_safe).
RESERVATION_LABEL = "gke-ai-batch.io/reservation"
FLAVOR_LABEL = "gke-ai-batch.io/flavor"  # on accelerator pools: each flavor selects exactly its pools
TEAM_LABEL = "gke-ai-batch.io/team"  # on team namespaces: what Kueue manages (managedJobsNamespaceSelector)
ADMITTED_BY_PREFIX = "cluster-queue.gke-ai-batch.io"  # on team namespaces: one key per ClusterQueue admitting them
TEAM_COST_LABEL = "team"  # on team namespaces and buckets: GKE cost allocation splits spend by it
COST_CENTER_LABEL = "cost-center"  # on every resource and team namespace
SHARED_QUEUE_LABEL = "gke-ai-batch.io/shared-queue"  # on a ClusterQueue declared shared by several teams
FLEET_WORKER_ANNOTATION = "gke-ai-batch.io/fleet-worker"  # on what a fleet manager declares on a worker: its name
NODES_ON_WORKER_ANNOTATION = "gke-ai-batch.io/nodes-on-worker"  # on a fleet manager's flavor: whose nodes it names
WORKER_HOLDS_ANNOTATION = "gke-ai-batch.io/worker-holds"  # on a fleet manager's flavor: its worker's capacity (JSON)
FLEET_STACK_ANNOTATION = "gke-ai-batch.io/fleet-stack"  # on a MultiKueueCluster: the worker's stack
KUEUE_VERSION_ANNOTATION = "gke-ai-batch.io/kueue-version"  # on a MultiKueueCluster: the worker's Kueue release
TOKEN_GENERATION_ANNOTATION = "gke-ai-batch.io/token-generation"  # on a worker's kubeconfig Secret
TOKEN_ROTATION_ANNOTATION = "gke-ai-batch.io/rotate-every-days"  # on a worker's kubeconfig Secret: its stated lifetime
PRIORITIES_ANNOTATION = "gke-ai-batch.io/priorities"  # on team namespaces: the priorities its pods may name
BUDGET_ANNOTATION = "gke-ai-batch.io/budget-usd-month"  # on team namespaces: teams[].budget, for team-over-budget
OBJECT_SIZE_ANNOTATION = "gke-ai-batch.io/object-size"  # on team namespaces: bytes of text one workload may hold
SCRAPE_SAMPLES_ANNOTATION = "gke-ai-batch.io/scrape-samples"  # on team namespaces: a PodMonitoring's sample cap
SCRAPE_INTERVAL_ANNOTATION = "gke-ai-batch.io/scrape-interval"  # on team namespaces: shortest scrape interval, seconds
FLAVORS_ANNOTATION = "gke-ai-batch.io/flavors"  # on privileged team namespaces: the only flavors its pods may use
GRACE_ANNOTATION = "gke-ai-batch.io/termination-grace"  # on team namespaces: longest pod grace period, seconds
GROUPS_ANNOTATION = "gke-ai-batch.io/groups"  # on team namespaces: the team's groups, whom the holds bind
TEAM_ROLE = "gke-ai-batch-team"  # the ClusterRole team groups are bound to in their namespaces
QUEUE_VIEWER = "gke-ai-batch-queue-viewer"  # the ClusterRole and binding that let team groups read the quota tree
CONTROLLER_PRIORITY = "gke-ai-batch-controllers"  # the PriorityClass of Kueue and JobSet, above every team's
POD_SECURITY_LABEL = "pod-security.kubernetes.io"  # <prefix>/enforce, /enforce-version, /warn, /audit...

# GKE custom compute classes (GKE: ComputeClass CRD reference), and what the platform states on them for the
# quota model: the most nodes a class may have and how many of them its reservations hold.
COMPUTE_CLASS_API = "cloud.google.com/v1"
COMPUTE_CLASS = f"kubernetes:{COMPUTE_CLASS_API}:ComputeClass"
MAX_NODES_ANNOTATION = "gke-ai-batch.io/max-nodes"
RESERVED_NODES_ANNOTATION = "gke-ai-batch.io/reserved-nodes"


def compute_class_toleration(name: str) -> dict[str, str]:
    return {"key": COMPUTE_CLASS_LABEL, "operator": "Equal", "value": name, "effect": "NoSchedule"}


# Kueue and JobSet.
KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_API = f"{KUEUE_GROUP}/v1beta2"
# ClusterQueue spec.admissionScope.admissionMode that orders its LocalQueues by usage (v1beta2 CRD at v0.19.2).
USAGE_BASED_ADMISSION = "UsageBasedAdmissionFairSharing"
QUEUE_LABEL = f"{KUEUE_GROUP}/queue-name"
# A job's time limit in seconds; Kueue deactivates its Workload when the admitted time runs out
# (pkg/controller/constants at v0.19.2).
MAX_EXEC_TIME_LABEL = f"{KUEUE_GROUP}/max-exec-time-seconds"
# On team namespaces, + a LocalQueue's name: its maximum and default time limit in seconds (plan.runtime_limits).
MAX_RUNTIME_ANNOTATION = "max-runtime.gke-ai-batch.io/"
DEFAULT_RUNTIME_ANNOTATION = "default-runtime.gke-ai-batch.io/"
PRIORITY_LABEL = f"{KUEUE_GROUP}/priority-class"
POD_GROUP_LABEL = f"{KUEUE_GROUP}/pod-group-name"  # Kueue's plain-pod groups
MANAGED_LABEL = f"{KUEUE_GROUP}/managed"  # on pods Kueue manages (pkg/constants/constants.go)
SUSPENDING_PARENT_ANNOTATION = f"{KUEUE_GROUP}/pod-suspending-parent"  # pkg/controller/jobs/pod/constants
PROVISIONING_CONTROLLER = f"{KUEUE_GROUP}/provisioning-request"
MULTIKUEUE_CONTROLLER = f"{KUEUE_GROUP}/multikueue"  # the AdmissionCheck controller of MultiKueue
# The AdmissionCheck controller of GKE's slice controller (TPU7x dynamic slicing): the name Cluster Toolkit
# (modules/management/kubectl-apply/kueue/kueue-configuration-dynamic-slicing.yaml.tftpl) and xpk
# (src/xpk/templates/kueue_config.yaml.j2) give it; GKE's page "Schedule dynamic slices with Kueue and TAS" has a
# Kueue admission check create the Slice resources.
SLICE_CONTROLLER = "accelerator.gke.io/slice"
SLICE_ADMISSION_CHECK = "dynamic-slicing"  # the AdmissionCheck's name (ours)
# A dynamically sliced pod template's slice shape, as xpk writes it (src/xpk/core/scheduling.py
# `create_tpu_slice_topology_annotation`); no GKE page read here shows the workload side.
SLICE_TOPOLOGY_ANNOTATION = "cloud.google.com/gke-tpu-slice-topology"
QUEUED_PROVISIONING_CLASS = "queued-provisioning.gke.io"
JOBSET_FRAMEWORK = "jobset.x-k8s.io/jobset"
JOBSET_API = "jobset.x-k8s.io/v1alpha2"  # the version JobSet v0.12.0 serves (model.releases)
KUEUE_NAMESPACE = "kueue-system"
# Kueue's controller replicas: leader election picks one scheduler; every replica serves the webhooks (fail-closed
# for pods). The install sets it and the KueueDegraded alert fires below it.
KUEUE_REPLICAS = 2
JOBSET_NAMESPACE = "jobset-system"

# Deletion and the garbage collector (k8s.io/apimachinery v0.33.13 pkg/apis/meta/v1/types.go): the finalizer
# that makes the collector orphan an object's dependents, and DeleteOptions' propagationPolicy values.
ORPHAN_FINALIZER = "orphan"  # metav1.FinalizerOrphanDependents
PROPAGATION_POLICIES = ("Orphan", "Background", "Foreground")
# The resources (group, version, plural) whose registry strategy orphans dependents when a DELETE names no
# policy (kubernetes v1.33.13 pkg/registry/*/strategy.go `DefaultGarbageCollectionPolicy`: batch/v1 Jobs and
# v1 ReplicationControllers "for backwards compatibility"; every other built-in kind, and every custom
# resource, whose strategy has none, deletes them in the background).
ORPHAN_BY_DEFAULT = (("batch", "v1", "jobs"), ("", "v1", "replicationcontrollers"))

# Pulumi resource type tokens the policies and offline tools read.
CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
RESOURCE_POLICY = "gcp:compute/resourcePolicy:ResourcePolicy"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
ROUTER_NAT = "gcp:compute/routerNat:RouterNat"
ROUTER = "gcp:compute/router:Router"
NETWORK = "gcp:compute/network:Network"
K8S_PROVIDER = "pulumi:providers:kubernetes"
KUBERNETES_ONLY_PROVIDER = "kubernetes-only"  # the one provider of a stack declared with kubernetesOnly
BUCKET = "gcp:storage/bucket:Bucket"
BQ_DATASET = "gcp:bigquery/dataset:Dataset"
BQ_TABLE = "gcp:bigquery/table:Table"
DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
BUCKET_IAM_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
BUCKET_IAM_BINDING = "gcp:storage/bucketIAMBinding:BucketIAMBinding"
PUBLIC_MEMBERS = ("allUsers", "allAuthenticatedUsers")  # IAM's members for anyone, signed in or not
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
KUEUE_GROUP_TYPE_PREFIX = f"kubernetes:{KUEUE_GROUP}/"  # any Kueue API version
KUEUE_TYPE_PREFIX = f"kubernetes:{KUEUE_API}:"
PRIORITY_CLASS = "kubernetes:scheduling.k8s.io/v1:PriorityClass"
RESOURCE_QUOTA = "kubernetes:core/v1:ResourceQuota"
ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
NAMESPACE = "kubernetes:core/v1:Namespace"
SECRET = "kubernetes:core/v1:Secret"
SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"  # a Secret type: the token controller fills it
WORKLOAD_COUNT = f"count/workloads.{KUEUE_GROUP}"  # the object-count quota of Kueue Workloads
# ResourceQuota's object counts of the kinds a team creates (Kubernetes "Resource Quotas": `count/<resource>.<group>`):
# the team quota sets them (plan.tenancy) and the simulated API server charges them (apiserver.resource_quotas).
JOB_COUNT = "count/jobs.batch"
CRON_JOB_COUNT = "count/cronjobs.batch"
JOBSET_COUNT = f"count/jobsets.{JOBSET_API.split('/')[0]}"
DEPLOYMENT_COUNT = "count/deployments.apps"
REPLICASET_COUNT = "count/replicasets.apps"
STATEFULSET_COUNT = "count/statefulsets.apps"
SERVICE_COUNT = "count/services"
CONFIGMAP_COUNT = "count/configmaps"
SECRET_COUNT = "count/secrets"


def admitted_by_label(cluster_queue: str) -> str:
    """The namespace label a ClusterQueue selects its teams' namespaces by: one key per queue, so a
    namespace whose LocalQueues point at several ClusterQueues is admitted by each of them."""
    return f"{ADMITTED_BY_PREFIX}/{cluster_queue}"


def kueue_type(kind: str) -> str:
    """`kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue` from `ClusterQueue`."""
    return f"{KUEUE_TYPE_PREFIX}{kind}"


# The Kueue chart's fullname is its release name (chart _helpers.tpl, as the release name contains the
# chart's name): the chart's object names and its pods' app.kubernetes.io/instance label follow from it.
KUEUE_RELEASE = "kueue"
JOBSET_RELEASE = "jobset"
RBAC_GROUP = "rbac.authorization.k8s.io"

# Google Cloud Managed Service for Prometheus: the PodMonitoring API and the managed collector's
# ServiceAccount, whose namespace depends on the cluster mode (GKE tutorial "kueue-cohort").
GMP_API = "monitoring.googleapis.com/v1"
POD_MONITORING_COUNT = f"count/podmonitorings.{GMP_API.split('/')[0]}"  # the object-count quota of PodMonitorings
GMP_COLLECTOR = "collector"
# The collector DaemonSet's pod selector label ("DO NOT MODIFY - label selectors are immutable"; prometheus-engine
# v0.17.2 manifests/operator.yaml, whose pods carry GKE's components.gke.io/component-name: managed_prometheus).
GMP_COLLECTOR_LABELS = {"app.kubernetes.io/name": GMP_COLLECTOR}
GMP_NAMESPACES = {ClusterMode.STANDARD: "gmp-system", ClusterMode.AUTOPILOT: "gke-gmp-system"}

# The Cloud Storage FUSE CSI driver, the one CSI driver whose inline (ephemeral) volumes team pods may mount
# (GKE "Mount Cloud Storage buckets as CSI ephemeral volumes": `csi: {driver: gcsfuse.csi.storage.gke.io}`).
GCS_FUSE_CSI_DRIVER = "gcsfuse.csi.storage.gke.io"

# GKE's multi-network objects (GKENetworkParamSet, Network) that name a node's extra NICs for pods
# (GoogleCloudPlatform/gke-networking-api; its CRDs are vendored in gke_ai_batch/conform/schemas/gke-networking-api).
GKE_NETWORKING_API = "networking.gke.io/v1"
