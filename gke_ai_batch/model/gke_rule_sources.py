"""What a GKE rule is (its id, subject, config field, requirement, source and check) and the documents the
rules come from, each once."""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gke_ai_batch.model import gpudirect

Props = Mapping[str, Any]


@dataclass(frozen=True)
class Source:
    title: str
    url: str


@dataclass(frozen=True)
class Finding:
    message: str
    at: str = ""  # below the rule's field, e.g. "[1].end"
    pool: int | None = None  # for rules over all pools: the pool it points at


@dataclass(frozen=True)
class GkeRule:
    id: str
    subject: str  # "cluster" or "node pool"
    field: str  # config path below `platform.`, or below the pool's entry for node pool rules
    requirement: str  # what GKE requires, in words
    source: Source
    check: Callable[..., Iterator[Finding]]


MAINTENANCE = Source("GKE: Configure maintenance windows and exclusions",
                     "https://cloud.google.com/kubernetes-engine/docs/how-to/maintenance-windows-and-exclusions")
EXCLUSIONS = Source("GKE release notes, 2 June 2026 (90-day No upgrades exclusions); GKE: About release channels",
                    "https://cloud.google.com/kubernetes-engine/docs/release-notes")
PRIVATE = Source("GKE: Create a private cluster",
                 "https://cloud.google.com/kubernetes-engine/docs/how-to/private-clusters")
PRIVATE_ENDPOINT = Source("pulumi-gcp Cluster privateClusterConfig.enablePrivateEndpoint (\"This field only applies "
                          "to private clusters, when enable_private_nodes is true\"); GKE: Customize your network "
                          "isolation", "https://www.pulumi.com/registry/packages/gcp/api-docs/container/cluster/")
GROUPS = Source("GKE: Configure Google Groups for RBAC",
                "https://cloud.google.com/kubernetes-engine/docs/how-to/google-groups-rbac")
GCP_LABELS = Source("Compute Engine: Requirements for labels",
                    "https://cloud.google.com/compute/docs/labeling-resources#requirements")
K8S_LABELS = Source("Kubernetes: Labels, syntax and character set",
                    "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set")
RESERVATIONS = Source("GKE: Consume reserved zonal resources",
                      "https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations")
AUTO_UPGRADE = Source("GKE: About release channels",
                      "https://cloud.google.com/kubernetes-engine/docs/concepts/release-channels")
QUEUED = Source("GKE: Run a large-scale workload with flex-start with queued provisioning",
                "https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest")
FLEX_START = Source("GKE: About flex-start (source page 003: TPUs need 1.33.0-gke.1712000)",
                    "https://cloud.google.com/kubernetes-engine/docs/concepts/dws")
TPU7X = Source("GKE: About Ironwood (TPU7x) in GKE",
               "https://cloud.google.com/kubernetes-engine/docs/concepts/tpu-ironwood")
NAMES = Source("GKE API: NodePool.name (the 40-character limit in the API's error, pulumi-gcp#1510)",
               "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters.nodePools")
LARGE = Source("GKE: Plan for large-size GKE clusters",
               "https://cloud.google.com/kubernetes-engine/docs/concepts/planning-large-clusters")
LOCATIONS = Source("GKE: About cluster configuration choices, locations",
                   "https://cloud.google.com/kubernetes-engine/docs/concepts/types-of-clusters")
ALIAS_IPS = Source("GKE: VPC-native clusters (ranges must not overlap); VPC: Subnets (4 reserved addresses)",
                   "https://cloud.google.com/kubernetes-engine/docs/concepts/alias-ips")
POD_RANGE = Source("GKE: Configure maximum Pods per node (110 Pods: a /24 per node); About surge upgrades",
                   "https://cloud.google.com/kubernetes-engine/docs/how-to/flexible-pod-cidr")
MAX_RUN = Source("GKE: About flex-start (capacity for up to seven days)",
                 "https://cloud.google.com/kubernetes-engine/docs/concepts/dws")
AUTOSCALER = Source("GKE: Autoscale a cluster (--total-min-nodes and --total-max-nodes are mutually exclusive with "
                    "--min-nodes and --max-nodes)",
                    "https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-autoscaler")
LOCATION_POLICY = Source("GKE: About cluster autoscaler, location policy (\"BALANCED is not supported for flex-start "
                         "provisioning mode node pools\")",
                         "https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-autoscaler")
# GKE's page gives the atomic unit (its zh-cn translation, "Atomicity": GKE treats all interconnected nodes as one
# unit and scales the whole group down to 0 and creates new nodes; "if GKE can't deploy one node in the slice, no
# nodes are deployed"); that max nodes must be the slice's VM count no GKE page read here says, so that half stands
# on peers, named as such: docs win where they speak.
SLICE_SCALING = Source("GKE: About TPUs in GKE (a multi-host slice is one atomic unit: scaled down to 0 and "
                       "recreated whole); peers for the node count: Cluster Toolkit's TPU example (max nodes \"Must "
                       "match your topology\") and the GKE API's error in vllm-project/ci-infra#545 (\"Maximum node "
                       "count 0 is not a valid size of TPU pod slice\")",
                       "https://docs.cloud.google.com/kubernetes-engine/docs/concepts/tpus")
GPU_VERSIONS = Source("GKE: Run a small batch workload with GPUs and flex-start (1.33.0-gke.1712000); each GPU's "
                      "floor: AI Hypercomputer's GKE pages and Run GPUs in GKE Standard node pools",
                      "https://cloud.google.com/kubernetes-engine/docs/how-to/dws-flex-start-training")
FLEX_START_ZONES = Source("GKE: About flex-start (TPU v6e in asia-northeast1-b, us-east5-a and us-east5-b; v5e in "
                          "us-west4-a; v5p in us-east5-a)",
                          "https://cloud.google.com/kubernetes-engine/docs/concepts/dws")
# A gap, not a GKE rule: no GKE page read here documents queued provisioning for TPUs. A peer is all there is, so
# the rule is the conservative one: only the generations and the version that peer shows working are allowed;
# every other TPU is refused.
QUEUED_TPUS = Source("Peer, not GKE docs (no GKE page documents queued provisioning for TPUs): Cluster Toolkit PR "
                     "#5218, \"Adding GKE TPU DWS Queued Provisioning support for v6e and 7x\" (its blueprint pins GKE "
                     "1.35)",
                     "https://github.com/GoogleCloudPlatform/cluster-toolkit/pull/5218")
GPU_CAPACITY = Source("Compute Engine: GPU machine types (A3 Ultra, A4: reserved, Spot or Flex-start capacity); AI "
                      "Hypercomputer: A4X (the reservation-bound provisioning model only)",
                      "https://cloud.google.com/compute/docs/gpus")
AUTO_NETWORKS = Source("GKE: Allocate network resources with DRA (accelerator network profile requirements)",
                       gpudirect.AUTO_PROFILE_PAGE)
MULTI_NETWORK = Source("GKE: Set up multi-network support for Pods (\"requires GKE Dataplane V2\"); AI "
                       "Hypercomputer's A4/A3 Ultra and A4X pages create the cluster with --enable-dataplane-v2 "
                       "--enable-multi-networking",
                       "https://cloud.google.com/kubernetes-engine/docs/how-to/setup-multinetwork-support-for-pods")
BOOT_DISKS = Source("GKE: Use custom boot disks; Compute Engine: each machine series' supported disk types",
                    "https://cloud.google.com/kubernetes-engine/docs/how-to/custom-boot-disks")
LOCAL_SSDS = Source("Compute Engine: About Local SSD disks (the counts each machine type takes)",
                    "https://cloud.google.com/compute/docs/disks/local-ssd")
# A gap: the 48 is read only in secondary copies of this page ("The maximum number of containers that can use
# time-sharing in a single physical GPU is 48"); the GKE API's GPUSharingConfig says only "The max number of
# containers that can share a physical GPU". More than 48 stays refused rather than assumed to work.
TIME_SHARING = Source("GKE: Share GPUs with multiple workloads using time-sharing (at most 48 containers per GPU: "
                      "read in secondary copies of the page only, not confirmed on it)",
                      "https://cloud.google.com/kubernetes-engine/docs/how-to/timesharing-gpus")
# The cloud.google.com/ and sandbox.gke.io/ halves are the API's errors seen by peers; GKE's own page contradicts
# the first for one key (About custom ComputeClasses: put cloud.google.com/compute-class on a manual pool). The
# platform binds no manual pool to a class, so refusing the prefix is the conservative side (gke_pool_rules).
RESERVED_LABELS = Source("pulumi-gcp NodePool nodeConfig.labels (\"The kubernetes.io/ and k8s.io/ prefixes are "
                         "reserved\"); peers: the GKE API's errors for cloud.google.com/ keys "
                         "(terraform-provider-google#19677) and sandbox.gke.io/ keys "
                         "(terraform-google-kubernetes-engine#252)",
                         "https://www.pulumi.com/registry/packages/gcp/api-docs/container/nodepool/")
COMPUTE_CLASSES = Source("GKE: About custom ComputeClasses (\"available to use in GKE Autopilot mode and GKE Standard "
                         "mode in version 1.30.3-gke.1451000 and later\")",
                         "https://docs.cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes")
AUTO_CREATION = Source("GKE: About custom ComputeClasses, Node pool auto-creation and ComputeClasses (\"If your "
                       "cluster is running a version earlier than GKE version 1.33.3-gke.1136000, you must also "
                       "enable cluster-level node auto-provisioning\"); Configure node pool auto-creation, "
                       "Limitations says the same",
                       "https://docs.cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes")
# Read in the page's Japanese translation (an earlier revision, "Resource limits": at the node pool level,
# auto-provisioned node pools are limited to 1,000 nodes; at the cluster level, the limits count the CPU and memory
# of all node pools, not only auto-provisioned ones); the current English revision's section was not reachable here.
NAP_LIMITS = Source("GKE: About node auto-provisioning, resource limits (\"auto-provisioned node pools are limited to "
                    "1,000 nodes\"; cluster limits count the cpu and memory of every node pool); pulumi-gcp "
                    "ClusterClusterAutoscaling.enabled (cpu and memory limits must be defined to enable it)",
                    "https://cloud.google.com/kubernetes-engine/docs/concepts/node-auto-provisioning")
# The English page's list is cut off in the stored copy after "Surg"; its Japanese and Korean translations (same
# URL, ?hl=ja, ?hl=ko) give both items whole: surge or blue-green upgrades, and node integrity and secure boot.
CLASS_UNSUPPORTED = Source("GKE: Configure node pool auto-creation, Limitations (\"The following settings aren't "
                           "supported by ComputeClasses\": surge upgrades or blue-green upgrades; node integrity and "
                           "secure boot)",
                           "https://docs.cloud.google.com/kubernetes-engine/docs/how-to/node-auto-provisioning")

PATHWAYS_CLUSTER = Source("AI Hypercomputer: Create a GKE cluster with Pathways (a Standard cluster: TPU slice node "
                          "pools and the cpu-np node pool for the Pathways controller); GKE: About privileged workload "
                          "admission in Autopilot mode (pods outside Autopilot's default constraints run only from "
                          "allowlists); xpk's Pathways JobSet runs its head and workers with hostNetwork",
                          "https://docs.cloud.google.com/ai-hypercomputer/docs/workloads/pathways-on-cloud/"
                          "create-gke-cluster")
PATHWAYS_TPUS = Source("xpk src/xpk/core/system_characteristics.py (a Pathways instance type per TPU; \"Pathways "
                       "workloads can only be run on TPUs\", src/xpk/core/pathways.py); AI Hypercomputer: "
                       "Introduction to Pathways on Cloud (Pathways-managed TPUs on GKE)",
                       "https://docs.cloud.google.com/ai-hypercomputer/docs/workloads/pathways-on-cloud/pathways-intro")
PATHWAYS_JOBSET = Source("JobSet API at v0.7.0 (failurePolicy.restartStrategy; coordinator and "
                         "network.publishNotReadyAddresses from v0.6.0), the fields xpk's Pathways JobSet sets",
                         "https://github.com/kubernetes-sigs/jobset/blob/v0.7.0/api/jobset/v1alpha2/jobset_types.go")
PATHWAYS_HEAD_POOL = Source("AI Hypercomputer: Create a GKE cluster with Pathways (\"the required cpu-np CPU node "
                            "pool\" for the Pathways controller); xpk's Pathways JobSet (the pathways-head on "
                            "cpu-np, one per node: exclusive-topology kubernetes.io/hostname)",
                            "https://docs.cloud.google.com/ai-hypercomputer/docs/workloads/pathways-on-cloud/"
                            "create-gke-cluster")
PATHWAYS_HEAD_MACHINE = Source("xpk src/xpk/core/pathways.py get_pathways_machine_types (guestCpus >= 49, memoryMb >= "
                               "233 GiB) and its JobSet template (proxy 16 cpu, 100G; resource manager 8 cpu, 32G)",
                               "https://github.com/AI-Hypercomputer/xpk/blob/main/src/xpk/core/pathways.py")
SUB_SLICING = Source("GKE: Schedule dynamic slices with Kueue and TAS, Requirements (\"For dynamic sub-slicing "
                     "configuration (topologies smaller than 4x4x4), use version 1.36.0-gke.3712000 or later\")",
                     "https://docs.cloud.google.com/kubernetes-engine/docs/how-to/use-gke-dynamic-slicing")
DYNAMIC_SLICING = Source("GKE: Schedule dynamic slices with Kueue and TAS, Requirements (a Standard cluster in the "
                         "Rapid channel, 1.35.2-gke.1842000 or later for super-slicing; Container-Optimized OS nodes)",
                         "https://docs.cloud.google.com/kubernetes-engine/docs/how-to/use-gke-dynamic-slicing")
