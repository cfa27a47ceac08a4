"""The stack config: one validated document per environment (key `gke-ai-batch:platform`).

Shape and single-field rules live here. Rules that relate a field to others or to the catalog are checked
where the value they judge is derived (the plan/ module that derives it: pools, scheduling, network,
storage, tenancy, identity and the rest), and GKE's own rules in model/gke_rules.py, run over the exact
inputs; every error names its config path.

Every field's docstring is its description in the JSON Schema (`make schema`) and in the README's config
reference, so they are written for the people who write stack files.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from gke_ai_batch.model.catalog import GPU_TYPES, TPU_GENERATIONS, CatalogError
from gke_ai_batch.model.labels import K8S_VALUE_RULE, k8s_key_ok, k8s_value_ok
from gke_ai_batch.model.machines import unknown_machine
from gke_ai_batch.model.quantity import FORMAT_HELP, parse_quantity
from gke_ai_batch.model.releases import (
    JOBSET_CHART,
    JOBSET_RELEASES,
    KUEUE_CHART,
    KUEUE_RELEASES,
    unknown_chart,
    unknown_version,
)
from gke_ai_batch.model.words import unknown_key
from gke_ai_batch.vocabulary import COST_CENTER_LABEL, Capacity, ClusterMode

CONFIG_KEY = "platform"


class TextRule(NamedTuple):
    """A text rule as a pattern (for validation and the schema) and in words (for error messages)."""

    pattern: str
    words: str


DNS_LABEL = TextRule(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
                 "lowercase letters, digits and '-', starting and ending with a letter or digit")
CLUSTER_NAME = TextRule(r"^[a-z]([-a-z0-9]*[a-z0-9])?$",
                    "lowercase letters, digits and '-', starting with a letter and not ending with '-'")
PROJECT_ID = TextRule(r"^[a-z][-a-z0-9]{4,28}[a-z0-9]$", "a Google Cloud project ID: 6 to 30 lowercase letters, "
                  "digits and '-', starting with a letter and not ending with '-'")
REGION = TextRule(r"^[a-z]+-[a-z]+\d+$", "a Google Cloud region such as us-east5")
LABEL_VALUE = TextRule(r"^[a-z0-9_-]{1,63}$", "a label value: 1 to 63 lowercase letters, digits, '_' and '-'")
SECONDS = TextRule(r"^\d+s$", "whole seconds followed by s, such as 86400s")
DURATION = TextRule(r"^\d+(s|m|h)$", "a whole number followed by s, m or h, such as 10m")
SERVICE_ACCOUNT = TextRule(r"^[a-z0-9][-a-z0-9]*@[-a-z0-9.]+\.gserviceaccount\.com$",
                       "a service account's email, NAME@PROJECT.iam.gserviceaccount.com")
BUCKET_LOCATION = TextRule(r"^([a-z]+-[a-z]+\d+|US|EU|ASIA|[A-Z]{3,4}\d)$",
                       "a region such as us-east5, a multi-region (US, EU, ASIA) or a dual-region such as NAM4")
# Artifact Registry ("Create standard repositories"): a repository name "can only contain lowercase letters,
# numbers, and hyphens", starting with a letter and ending with a letter or number; locations are regions
# and the multi-regions us, europe and asia.
AR_REPOSITORY = TextRule(r"^[a-z]([-a-z0-9]*[a-z0-9])?$",
                     "lowercase letters, digits and '-', starting with a letter and ending with a letter or digit")
AR_LOCATION = TextRule(r"^([a-z]+-[a-z]+\d+|us|europe|asia)$", "a region such as us-east5, or us, europe or asia")
GROUP_EMAIL = TextRule(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$",
                   "a Google group's email address, such as ml-team@example.com")
RULES_IN_WORDS = {r.pattern: r.words for r in (DNS_LABEL, CLUSTER_NAME, PROJECT_ID, REGION, LABEL_VALUE, SECONDS,
                                                DURATION, SERVICE_ACCOUNT, BUCKET_LOCATION, AR_REPOSITORY, AR_LOCATION)}


def text(rule: TextRule, default: Any = ..., max_length: int | None = None) -> Any:
    """A text field that follows `rule` (its words go into the schema, next to the pattern)."""
    return Field(default, pattern=rule.pattern, max_length=max_length, json_schema_extra={"x-rule": rule.words})


def refused_by(rule: Callable[[str], str | None]) -> Callable[[Any], Any]:
    """A validator that raises the problem `rule` finds in a value (a release's version or chart, a machine
    type); None passes."""
    def check(value: Any) -> Any:
        if value is not None and (problem := rule(value)):
            raise ValueError(problem)
        return value
    return check


def taint_key_problem(key: str) -> str | None:
    return None if k8s_key_ok(key) else f"not a taint key: an optional DNS prefix and '/', then {K8S_VALUE_RULE}"


def taint_value_problem(value: str) -> str | None:
    return None if k8s_value_ok(value) else f"not a taint value: {K8S_VALUE_RULE}"


def unknown_gpu(gpu: str) -> str | None:
    return None if gpu in GPU_TYPES else str(CatalogError("GPU type", gpu, list(GPU_TYPES)))


def _number_as_quantity(v: object) -> object:
    """YAML reads `cpu: 2.5` as a float; Kubernetes quantities allow decimals, so keep it as text."""
    if isinstance(v, float):
        return int(v) if v.is_integer() else repr(v)
    return v


QUANTITY_SCHEMA = {"anyOf": [{"type": "number"}, {"type": "string"}], "x-rule": FORMAT_HELP}
Quantity = Annotated[int | str, BeforeValidator(_number_as_quantity), WithJsonSchema(QUANTITY_SCHEMA)]


def _quota_or_quantity(schema: dict[str, Any]) -> None:
    """In the schema, a quota may also be written as a bare quantity (its nominal quota)."""
    per_resource = schema["additionalProperties"]
    per_resource["additionalProperties"] = {"anyOf": [per_resource["additionalProperties"], QUANTITY_SCHEMA]}


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        """An unknown key is named, with the closest known one, before any field is checked (else a
        misspelt `nominl` reads as "`nominal`: field required")."""
        if isinstance(data, dict):
            for key in data:
                if key not in cls.model_fields:
                    raise PydanticCustomError("unknown_key", "{words}",
                                              {"key": str(key), "words": unknown_key(str(key), cls.model_fields)})
        return data


CpuCapacity = Literal[Capacity.ON_DEMAND, Capacity.SPOT]  # the capacity the platform offers CPU pools


class AuthorizedNetwork(Model):
    cidr: str
    """An IPv4 range in CIDR notation, such as 10.0.0.0/8, allowed to reach the control plane."""
    name: str = ""
    """A display name for the range."""


class MaintenanceExclusion(Model):
    name: str
    """The exclusion's name."""
    start: str
    """Start time, RFC 3339 (2025-12-20T00:00:00Z)."""
    end: str
    """End time, RFC 3339."""
    scope: Literal["NO_UPGRADES", "NO_MINOR_UPGRADES", "NO_MINOR_OR_NODE_UPGRADES"] = "NO_MINOR_OR_NODE_UPGRADES"
    """What GKE holds back during the exclusion."""


class MaintenanceWindow(Model):
    """A recurring window (RFC 5545 RRULE). The default, weekends from 00:00 to 08:00 UTC, leaves
    64 hours in the worst 32 days; GKE requires at least 48 (gke_rules, maintenance-availability)."""

    start: str = "2025-01-04T00:00:00Z"
    """First window's start, RFC 3339; its time of day is every window's start."""
    end: str = "2025-01-04T08:00:00Z"
    """First window's end, RFC 3339."""
    recurrence: str = "FREQ=WEEKLY;BYDAY=SA,SU"
    """An RFC 5545 RRULE: FREQ=DAILY, or FREQ=WEEKLY;BYDAY=... ."""


class ExistingNat(Model):
    """A Cloud NAT that already gives an adopted network's private nodes their way out."""

    router: str = text(DNS_LABEL, max_length=63)
    """The Cloud Router's name, in the network's project and the platform's region."""
    name: str = text(DNS_LABEL, max_length=63)
    """The NAT's name on that router."""


class NetworkConfig(Model):
    """The cluster's VPC network: created by the stack (a network, a subnet in the region with
    secondary ranges for Pods and Services, Private Google Access, and a Cloud Router with Cloud NAT
    for private nodes), or an existing one adopted by name, of which the stack creates nothing."""

    adopt: bool = False
    """false: create the network; true: use an existing network and subnet (a shared VPC's included)."""
    name: str | None = text(DNS_LABEL, None, max_length=56)
    """The VPC network's name (at most 56 characters: its router is <name>-router); created, default:
    <cluster>-net; adopted: required."""
    subnetwork: str | None = None
    """The subnet in the platform's region: its name (created, default: <cluster>-<region>; adopted:
    required), or for an adopted one also projects/PROJECT/regions/REGION/subnetworks/NAME."""
    host_project: str | None = text(PROJECT_ID, None)
    """Adopted only: the shared VPC host project that owns the network; unset: the platform's project."""
    nodes_cidr: str | None = None
    """Created only: the subnet's primary range, for node addresses (default 10.0.0.0/20)."""
    pods_cidr: str | None = None
    """Created only: the secondary range for Pods, a /24 per node (default 10.4.0.0/14, 1,024 nodes)."""
    services_cidr: str | None = None
    """Created only: the secondary range for Services' cluster IPs (default 10.8.0.0/20)."""
    pods_range: str | None = text(DNS_LABEL, None, max_length=63)
    """The Pods secondary range's name; created, default: pods; adopted: required (the subnet's range)."""
    services_range: str | None = text(DNS_LABEL, None, max_length=63)
    """The Services secondary range's name; created, default: services; adopted: required."""
    cloud_nat: bool | None = None
    """Created only: a Cloud Router with Cloud NAT in the region (default: on with private nodes)."""
    existing_nat: ExistingNat | None = None
    """Adopted only: the Cloud NAT private nodes go out through; the stack reads it, so a deploy
    fails if it is missing, and the policy pack sees it."""


# The cluster label that records a production stack's dns_endpoint_reason, so that the policy pack,
# which sees only the Cluster's inputs, accepts the open DNS-based endpoint as a declared exception.
DNS_ENDPOINT_REASON_LABEL = ("dns-endpoint", "open-with-reason")


class ImageRepository(Model):
    """An Artifact Registry repository the nodes read."""

    repository: str = text(AR_REPOSITORY, max_length=63)
    """The repository's ID."""
    location: str = text(AR_LOCATION)
    """Its location: a region (us-east5) or a multi-region (us, europe, asia)."""
    project: str | None = text(PROJECT_ID, None)
    """Its project; unset: the platform's."""


class ClusterConfig(Model):
    name: str = text(CLUSTER_NAME, max_length=40)
    """The GKE cluster's name (GKE allows at most 40 characters)."""
    mode: ClusterMode = ClusterMode.STANDARD
    """standard (node pools declared here) or autopilot (GKE provisions nodes; no node pools)."""
    regional: bool = True
    """A regional cluster (control plane and nodes across the region's zones) or a zonal one in the first zone."""
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = "REGULAR"
    """GKE release channel; flex-start and some accelerators need versions that reach RAPID first."""
    version: str | None = None
    """Minimum control-plane version (GKE's min_master_version); unset: the channel's default."""
    network: str = "default"
    """An existing VPC network's name, with GKE-managed secondary ranges; the platform's `network`
    block replaces it (created or adopted network, named ranges)."""
    subnetwork: str = "default"
    """An existing subnet's name, in the platform's region; see `network`."""
    private_nodes: bool = False
    """Nodes without external addresses (ip_endpoint private needs them)."""
    master_ipv4_cidr: str = "172.16.0.0/28"
    """The control plane's /28 range, for private nodes."""
    master_authorized_networks: list[AuthorizedNetwork] = []
    """Ranges allowed to reach the control plane's IP endpoints: the external one, and with ip_endpoint
    private or authorized the internal one too; empty: no restriction list."""
    ip_endpoint: Literal["private", "authorized", "public"] | None = None
    """The control plane's IP endpoints. private: no external endpoint, only the internal address,
    from the VPC and networks connected to it in the cluster's region (needs private_nodes);
    authorized: the external endpoint stays, closed to Google Cloud's external addresses (other
    projects' VMs). Both make the authorized networks gate the internal endpoint as well. public:
    GKE's defaults, the authorized networks gating the external endpoint only. Default: private in
    production (authorized without private nodes), public elsewhere."""
    dns_endpoint: bool | None = None
    """GKE's DNS-based control-plane endpoint takes user traffic: reachable from any network that
    reaches Google APIs, every request authorized by IAM, no authorized-network list; the kubeconfig
    uses it when it is on, else the IP endpoint. Default: on, but off in production, where true needs
    dns_endpoint_reason."""
    dns_endpoint_reason: str | None = None
    """Production only: why the control plane must take traffic over the DNS-based endpoint (say,
    runners outside the VPC, with VPC Service Controls around container.googleapis.com). It turns
    the endpoint on and labels the cluster so that the production policy accepts it; refused
    elsewhere and with dns_endpoint false, where it would change nothing."""
    maintenance_window: MaintenanceWindow = MaintenanceWindow()
    """When GKE may upgrade; must leave at least 48 hours in any 32 days."""
    maintenance_exclusions: list[MaintenanceExclusion] = []
    """Periods when GKE holds upgrades back."""
    deletion_protection: bool = True
    """Refuse `pulumi destroy` of the cluster until this is set false."""
    security_group: str | None = None
    """gke-security-groups@<your domain>, for Google Groups for RBAC (needed when teams name groups)."""
    node_service_account: str | None = text(SERVICE_ACCOUNT, None)
    """The nodes' IAM service account, an existing one's email; unset: a dedicated one is created
    (`<cluster>-nodes`) with only the role GKE documents for nodes. The Compute Engine default
    account is refused in production."""
    node_image_repositories: list[ImageRepository] = []
    """Private Artifact Registry repositories the nodes pull images from: the node service account gets
    roles/artifactregistry.reader on each one, and on nothing else."""
    gcs_fuse_csi_driver: bool | None = None
    """The Cloud Storage FUSE CSI driver, to mount buckets as volumes (default: on when a team declares
    buckets; Autopilot always has it)."""
    multi_networking: bool | None = None
    """Multi-networking, for nodes with extra NICs (default: on when a GPU pool declares GPUDirect
    networks; GKE needs it for them, with Dataplane V2, which Standard clusters here have)."""
    labels: dict[str, str] = {}
    """Extra labels on the cluster, added to the platform's labels."""

    @field_validator("dns_endpoint_reason")
    @classmethod
    def _reason_says_something(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise ValueError("an empty reason: say why the production control plane must take traffic over the "
                             "DNS-based endpoint, or drop the key")
        return v


class SystemPoolConfig(Model):
    """The CPU pool that runs the controllers (Kueue, JobSet, GKE's own)."""

    name: str = text(DNS_LABEL, "system", max_length=63)
    """The node pool's name."""
    machine_type: Annotated[str, AfterValidator(refused_by(unknown_machine))] = "e2-standard-4"
    """A Compute Engine machine type the catalog knows (gke_ai_batch/model/machines.py)."""
    min_nodes: int = Field(1, ge=0)
    """Autoscaling minimum, per zone."""
    max_nodes: int = Field(3, ge=1)
    """Autoscaling maximum, per zone."""
    disk_size_gb: int = Field(100, ge=10)
    """Boot disk size in GB."""


class Autoscaling(Model):
    """Cluster autoscaler limits: the pool grows for pods that wait and shrinks when nodes idle.
    A multi-host TPU slice scales as a unit, from 0 to all of its VMs."""

    min_nodes: int = Field(0, ge=0)
    """The fewest nodes (per zone, or over all zones with total: true)."""
    max_nodes: int | None = Field(None, ge=1)
    """The most nodes (per zone, or over all zones with total: true); a multi-host slice's default
    and only value is its VM count."""
    total: bool | None = None
    """true: the limits count nodes over all the pool's zones (GKE's total limits); false: per zone.
    Default: true for flex-start and queued-provisioning GPU pools (as GKE's commands for them), else
    false; a multi-host TPU slice always takes per-zone limits."""
    location_policy: Literal["BALANCED", "ANY"] | None = None
    """Where the autoscaler adds nodes: BALANCED spreads them over the zones, ANY takes whichever zone
    has capacity (default: ANY for flex-start and queued provisioning, which refuse BALANCED; else
    GKE's default, BALANCED)."""


class LocalSsd(Model):
    """Local SSDs on every node, as fast scratch space."""

    count: int = Field(ge=1)
    """How many local SSD disks each node gets; the machine type decides which counts are allowed."""
    use: Literal["ephemeral-storage", "raw-block"] = "ephemeral-storage"
    """ephemeral-storage: they back the node's emptyDir volumes and container storage; raw-block:
    NVMe block devices a workload formats and mounts itself."""


class Taint(Model):
    key: Annotated[str, AfterValidator(refused_by(taint_key_problem))]
    """The taint's key, a Kubernetes label key (Kubernetes validates taints with the label key rule)."""
    value: Annotated[str, AfterValidator(refused_by(taint_value_problem))] = ""
    """The taint's value, a Kubernetes label value."""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"
    """What happens to pods that do not tolerate it."""


class NodeSettings(Model):
    """What accelerator and worker pools set on their nodes besides the machine itself."""

    disk_type: str | None = None
    """The boot disk's type (pd-balanced, pd-ssd, hyperdisk-balanced...); unset: GKE's default for
    the machine type."""
    disk_size_gb: int | None = Field(None, ge=10)
    """The boot disk's size in GB; unset: GKE's default (100)."""
    local_ssd: LocalSsd | None = None
    """Local SSDs on each node, as ephemeral storage or raw block devices."""
    node_labels: dict[str, str] = {}
    """Extra Kubernetes labels on the nodes; workloads may select them (the flavor does not)."""
    taints: list[Taint] = []
    """Extra taints on the nodes; the pool's flavor tolerates them, so admitted workloads do too."""
    autoscaling: Autoscaling | None = None
    """Autoscaling limits; unset: a fixed size (flex-start and queued pools always autoscale)."""


class TpuPoolConfig(NodeSettings):
    """TPU slices of one shape: each slice is one node pool (a multislice pool is `slices` node pools)."""

    name: str = text(DNS_LABEL, max_length=36)
    """The pool's name; node pools are named <name>-<slice> when there are several slices."""
    generation: str = Field(json_schema_extra={"enum": list(TPU_GENERATIONS)})
    """TPU generation, from the catalog."""
    topology: str
    """Slice topology such as 2x4 or 4x4x4; the catalog lists each generation's shapes."""
    machine_type: str | None = None
    """A TPU machine type of the generation; unset: the 4-chip machine (the -8t for single-host shapes)."""
    slices: int = 1
    """Number of slices (node pools) of this shape; more than one makes a multislice pool. A
    single-host pool that autoscales is one node pool: set autoscaling.max_nodes instead."""
    capacity: Capacity = Capacity.ON_DEMAND
    """How the capacity is obtained: on-demand, spot, reservation, flex-start or queued-provisioning."""
    reservation: str | None = None
    """With capacity reservation: NAME (this project), projects/OWNER/reservations/NAME (shared), or a
    block of one (NAME/reservationBlocks/BLOCK[/reservationSubBlocks/SUB_BLOCK])."""
    zones: list[str] = []
    """The zone of the slices; unset: the platform's first zone."""
    max_run_duration: str | None = text(SECONDS, None)
    """Flex-start and queued provisioning only: how long a node may run before GKE reclaims it."""
    flavor: str | None = text(DNS_LABEL, None, max_length=63)
    """The Kueue ResourceFlavor; pools of one shape may share one. Unset: the pool's name."""


class GpuSharing(Model):
    """Several containers on one physical GPU: time-sharing, or MIG partitions (A100, H100, H200, B200)."""

    strategy: Literal["time-sharing", "mig"]
    """time-sharing: containers take turns on a whole GPU; mig: the GPU is split into isolated partitions."""
    max_clients: int | None = Field(None, ge=2, le=48)
    """time-sharing: containers that share one GPU (2 to 48); each GPU counts as this many
    nvidia.com/gpu. With mig: containers that share each partition."""
    partition_size: str | None = None
    """mig: a partition size GKE's GPU device plugin takes for the GPU (A100 40GB 1g.5gb ... 7g.40gb, 80GB
    GPUs 1g.10gb ... 7g.80gb, H200 1g.18gb ... 7g.141gb, B200 1g.23gb ... 7g.180gb); each GPU counts as
    its partitions."""


class NodeNetwork(Model):
    """An existing VPC network and one of its subnets, in the cluster's region, for one extra NIC."""

    network: str = text(CLUSTER_NAME, max_length=63)
    """The VPC network's name (in the cluster's project)."""
    subnetwork: str = text(CLUSTER_NAME, max_length=63)
    """The subnet's name."""


class GpuDirectNetworks(Model):
    """Existing networks for GPUDirect, one per extra NIC in the order GKE's pages attach them: A3 High 4
    and A3 Mega 8 VPCs of one subnet each; A3 Ultra and A4 the gVNIC network, then the 8 subnets of one RoCE
    VPC; A4X the gVNIC network, then 4 RoCE subnets."""

    networks: list[NodeNetwork] = Field(min_length=1)
    """The networks, in the node pool's order."""


class GpuPoolConfig(NodeSettings):
    name: str = text(DNS_LABEL, max_length=36)
    """The node pool's name."""
    gpu: str = Field(json_schema_extra={"enum": list(GPU_TYPES)})
    """GKE's GPU name, from the catalog."""
    machine_type: str | None = None
    """A machine type that carries the GPU; unset: the catalog's default for it."""
    gpus_per_node: int | None = Field(None, ge=1)
    """GPUs on each VM, where the machine type leaves a choice (N1 with T4: 1, 2 or 4); unset: the
    catalog's count for the machine type."""
    capacity: Capacity = Capacity.ON_DEMAND
    """on-demand, spot, reservation, flex-start, or queued-provisioning (Dynamic Workload Scheduler)."""
    reservation: str | None = None
    """With capacity reservation: NAME (this project), projects/OWNER/reservations/NAME (shared), or a
    block of one (NAME/reservationBlocks/BLOCK[/reservationSubBlocks/SUB_BLOCK])."""
    nodes: int = Field(1, ge=0)
    """Fixed node count per zone, for a pool without autoscaling."""
    max_nodes: int | None = Field(None, ge=1)
    """Queued provisioning: the total autoscaling ceiling (the same as autoscaling.max_nodes)."""
    zones: list[str] = []
    """The pool's zones; unset: the platform's first zone (all of them for queued provisioning)."""
    driver_version: Literal["DEFAULT", "LATEST", "INSTALLATION_DISABLED"] = "LATEST"
    """The NVIDIA driver GKE installs; INSTALLATION_DISABLED: none, for users who install it themselves."""
    sharing: GpuSharing | None = None
    """GPU sharing: time-sharing or MIG partitions, which multiply the nvidia.com/gpu each node offers."""
    gvnic: bool = True
    """Google Virtual NIC, for the network bandwidth GPU machines are rated for."""
    gpudirect: Literal["auto", "create"] | GpuDirectNetworks | None = None
    """The extra networks GPUDirect moves multi-node NCCL traffic over (A3 High, A3 Mega, A3 Ultra, A4, A4X).
    create: the stack creates the VPCs and subnets GKE's pages create for the machine, with the GKE network
    objects pods name, on a cluster with multi-networking; {networks: [...]}: the same from existing
    networks; auto: GKE's accelerator network profile creates them (A3 Ultra, A4, A4X; GKE
    1.34.1-gke.1829001 or later). Unset: the pool has only its primary NIC, so multi-node NCCL traffic
    runs slower (the gpudirect-networks policy says so)."""
    max_run_duration: str | None = text(SECONDS, None)
    """Flex-start and queued provisioning only: how long a node may run before GKE reclaims it."""
    flavor: str | None = text(DNS_LABEL, None, max_length=63)
    """The Kueue ResourceFlavor; pools of one shape may share one. Unset: the pool's name."""
    zone_flavors: bool = False
    """One flavor per zone (<flavor>-<zone>), so queues can hold quota per zone and Kueue picks a zone."""


class CpuPoolConfig(NodeSettings):
    """A CPU worker pool, for the cpu and memory of data loading, preprocessing and evaluation."""

    name: str = text(DNS_LABEL, max_length=40)
    """The node pool's name."""
    machine_type: Annotated[str, AfterValidator(refused_by(unknown_machine))]
    """A Compute Engine machine type the catalog knows (gke_ai_batch/model/machines.py), such as n2-standard-8."""
    capacity: CpuCapacity = Capacity.ON_DEMAND
    """on-demand or spot."""
    nodes: int = Field(1, ge=0)
    """Fixed node count per zone, for a pool without autoscaling."""
    zones: list[str] = []
    """The pool's zones; unset: the platform's zones."""
    flavor: str | None = text(DNS_LABEL, None, max_length=63)
    """The Kueue ResourceFlavor; unset: the pool's name."""


class AutopilotTpu(Model):
    generation: str = Field(json_schema_extra={"enum": list(TPU_GENERATIONS)})
    """TPU generation, from the catalog."""
    topology: str
    """Slice topology; Autopilot creates a slice of this shape for each workload that selects it."""


class AutopilotFlavorConfig(Model):
    """An accelerator flavor on Autopilot: the node labels Autopilot provisions nodes from, which
    Kueue adds to the pods it admits under the flavor."""

    name: str = text(DNS_LABEL, max_length=63)
    """The Kueue ResourceFlavor's name; quotas name it."""
    tpu: AutopilotTpu | None = None
    """TPU slices of one generation and topology."""
    gpu: Annotated[str | None, AfterValidator(refused_by(unknown_gpu))] = Field(
        None, json_schema_extra={"enum": list(GPU_TYPES)})
    """GPUs of one type (GKE's name, from the catalog)."""
    spot: bool = False
    """Spot capacity (cloud.google.com/gke-spot)."""
    compute_class: str | None = text(DNS_LABEL, None, max_length=63)
    """An Autopilot compute class (cloud.google.com/compute-class), such as Accelerator."""


class QuotaSpec(Model):
    """A team's quota of one resource in one flavor. Written as a bare quantity (`google.com/tpu: 16`),
    it is the nominal quota."""

    nominal: Quantity
    """What the queue is guaranteed, as a Kubernetes quantity (16, 500m, 64Gi, 2.5)."""
    borrowing_limit: Quantity | None = None
    """How much more it may borrow from its cohort; unset: no limit. Needs a cohort."""
    lending_limit: Quantity | None = None
    """How much of its nominal quota it may lend to its cohort; unset: all of it. Needs a cohort."""

    @field_validator("nominal", "borrowing_limit", "lending_limit")
    @classmethod
    def _quantity(cls, v: int | str | None) -> int | str | None:
        if v is not None:
            parse_quantity(v)
        return v


def _quota_spec(v: object) -> object:
    return v if isinstance(v, dict) else {"nominal": v}


class BorrowWithinCohort(Model):
    policy: Literal["Never", "LowerPriority"] = "LowerPriority"
    """Whether a borrowing workload may preempt lower-priority work in the cohort."""
    max_priority_threshold: int | None = None
    """Only workloads at or below this priority may be preempted so."""


class Preemption(Model):
    """Kueue's ClusterQueue preemption policy."""

    reclaim_within_cohort: Literal["Never", "LowerPriority", "Any"] = "Any"
    """Whether the queue may take back lent quota by preempting the cohort's borrowers."""
    within_cluster_queue: Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"] = "LowerPriority"
    """Whether a workload may preempt others of its own queue."""
    borrow_within_cohort: BorrowWithinCohort | None = None
    """Preemption while borrowing (not with fair sharing)."""


class QueueSpec(Model):
    """What a ClusterQueue holds: quota per flavor and resource, and how it shares and preempts."""

    cohort: str | None = None
    """The cohort it borrows from and lends to; one of `cohorts`."""
    quotas: dict[str, dict[str, QuotaSpec]] = Field({}, json_schema_extra=_quota_or_quantity)
    """Per flavor (a pool's flavor), per resource (google.com/tpu, nvidia.com/gpu, cpu, memory...): a quota."""
    queueing_strategy: Literal["BestEffortFIFO", "StrictFIFO"] = "BestEffortFIFO"
    """Kueue's queueing strategy: BestEffortFIFO lets smaller jobs past one that does not fit."""
    preemption: Preemption = Preemption()
    """When the queue's workloads may preempt others."""
    fair_sharing_weight: Quantity | None = None
    """The queue's weight under fair sharing (kueue.fair_sharing: true)."""

    @field_validator("quotas", mode="before")
    @classmethod
    def _short_quotas(cls, v: object) -> object:
        if isinstance(v, dict):
            return {f: ({r: _quota_spec(q) for r, q in res.items()} if isinstance(res, dict) else res)
                    for f, res in v.items()}
        return v


class SharedQueue(QueueSpec):
    """A ClusterQueue several teams share (source page 002). `admit: all` selects every namespace."""

    name: str = text(DNS_LABEL, max_length=63)
    """The ClusterQueue's name; teams name it in `cluster_queue`."""
    admit: Literal["teams", "all"] = "teams"
    """teams: only the namespaces of teams that name it; all: every namespace."""


NO_TEAM_DEFAULT_PRIORITY = (
    "a per-team default priority cannot take effect, so the key was removed: Kueue 0.19 takes a job's "
    "priority from its kueue.x-k8s.io/priority-class label (a WorkloadPriorityClass), else its pods' "
    "priorityClassName, else the global default PriorityClass, and applies no per-namespace default "
    "(WorkloadPriorityClassDefaulting is alpha and cluster-wide). Label each job with its priority, or "
    "mark one priority global_default: true; then drop default_priority")


class BucketConfig(Model):
    """A Cloud Storage bucket a team's workloads use, through its Kubernetes service account."""

    name: str
    """The bucket's globally unique name: 3 to 63 lowercase letters, digits, '-', '_' and '.'."""
    access: Literal["read", "read-write"]
    """read (datasets: roles/storage.objectViewer) or read-write (checkpoints: roles/storage.objectUser)."""
    existing: bool = False
    """An existing bucket: the stack only grants access; false: the stack creates it, with uniform
    bucket-level access and public access prevention enforced."""
    location: str | None = text(BUCKET_LOCATION, None)
    """Created only: a region (default: the platform's, next to the accelerators), or a multi-region
    (US, EU, ASIA) or predefined dual-region (NAM4, EUR4, ASIA1...)."""
    versioning: bool | None = None
    """Created only: keep overwritten and deleted objects as noncurrent versions (default off)."""
    soft_delete_days: int | None = None
    """Created only: days a deleted object stays restorable, 7 to 90, or 0 for none (default 7)."""


class LocalQueueConfig(Model):
    """One of a team's LocalQueues, in each of its namespaces."""

    name: str = text(DNS_LABEL, max_length=63)
    """The LocalQueue's name; jobs name it in the kueue.x-k8s.io/queue-name label."""
    cluster_queue: str | None = text(DNS_LABEL, None, max_length=63)
    """The ClusterQueue it submits to: the team's own or a shared one; unset: the team's."""


class PodSecurityException(Model):
    """A namespace of the team held to another Pod Security level than `baseline`, for a workload
    that truly needs it (raw local SSDs it formats itself, GPUDirect's host networking), with why."""

    namespace: str
    """One of the team's namespaces; keep the exception to a namespace of its own where you can."""
    level: Literal["privileged", "baseline", "restricted"]
    """The Pod Security Standard the namespace enforces: privileged (no checks), baseline or restricted."""
    reason: str = Field(min_length=1)
    """Why the workload needs it, kept beside the exception for reviewers."""


class ObjectQuotas(Model):
    """Most objects of each kind a team may hold in each of its namespaces (a Kubernetes
    ResourceQuota), so that one team's flood cannot starve Kueue's admissions for every team."""

    jobs: int = Field(500, ge=1, strict=True)
    """Jobs (count/jobs.batch)."""
    jobsets: int = Field(100, ge=1, strict=True)
    """JobSets (count/jobsets.jobset.x-k8s.io)."""
    workloads: int = Field(1000, ge=1, strict=True)
    """Kueue Workloads (count/workloads.kueue.x-k8s.io): one per job, and one per pod of a Deployment,
    StatefulSet or plain Pod."""
    pods: int = Field(2000, ge=1, strict=True)
    """Pods that are not finished, gated ones included."""


class TeamConfig(Model):
    """One team: its namespaces, a LocalQueue in each, and its own or a shared ClusterQueue."""

    name: str = text(DNS_LABEL, max_length=40)
    """The team's name."""
    namespaces: list[str] = []
    """Its namespaces (names of lowercase letters, digits and '-'); unset: one named after the team."""
    groups: list[str] = []
    """Google groups (email addresses) whose members may run the team's workloads in its namespaces
    (the platform's team role; needs cluster.security_group)."""
    priorities: list[str] | None = None
    """The priorities the team's pods and jobs may name; unset: the global default and those below it."""
    pod_security: list[PodSecurityException] = []
    """Namespaces held to another Pod Security level than baseline, each with its reason."""
    object_quotas: ObjectQuotas = ObjectQuotas()
    """Most Jobs, JobSets, Workloads and pods per namespace."""
    default_priority: str | None = None
    """Refused: Kueue 0.19 has no per-team default priority (see the error for what to do)."""
    local_queue: str | None = text(DNS_LABEL, None, max_length=63)
    """The LocalQueue's name in each namespace; unset: <name>-queue. For several, use local_queues."""
    local_queues: list[LocalQueueConfig] = []
    """Several LocalQueues in each namespace (train, eval...), each to the team's ClusterQueue or a shared one."""
    cluster_queue: str | None = text(DNS_LABEL, None, max_length=63)
    """A shared queue's name, or the name of the team's own ClusterQueue (default: the team's name)."""
    queue: QueueSpec | None = None
    """The team's own ClusterQueue; leave it out to use a shared queue named in cluster_queue."""
    cost_center: str | None = text(LABEL_VALUE, None)
    """The cost-center label of its namespaces, for GKE cost allocation (default: the platform's)."""
    service_account: str | None = None
    """The Kubernetes service account its workloads run as, created in each namespace and granted the
    buckets through Workload Identity Federation for GKE (default: <name>-workload)."""
    buckets: list[BucketConfig] = []
    """Cloud Storage buckets its workloads read or write (created, or existing ones by name)."""
    state: Literal["active", "draining"] = "active"
    """active, or draining: its queues admit nothing new (Kueue's stopPolicy) and production lifts the
    protection of its namespaces and buckets, so that a later change may remove the team (`make diff`
    refuses removing a team that was not draining first)."""
    stop_policy: Literal["HoldAndDrain", "Hold"] | None = None
    """While draining, what happens to its admitted work: HoldAndDrain (the default) evicts it, Hold lets
    it run to completion. Only for a draining team."""

    @model_validator(mode="after")
    def _stop_policy_when_draining(self) -> TeamConfig:
        if self.stop_policy is not None and self.state != "draining":
            raise ValueError(f"stop_policy {self.stop_policy!r} applies to a draining team only: set state: "
                             "draining, or drop stop_policy")
        return self

    @field_validator("default_priority")
    @classmethod
    def _no_default_priority(cls, v: str | None) -> str | None:
        if v is not None:
            raise ValueError(NO_TEAM_DEFAULT_PRIORITY)
        return v

    @field_validator("groups")
    @classmethod
    def _groups(cls, v: list[str]) -> list[str]:
        import re
        for g in v:
            if g.startswith("system:"):
                raise ValueError(f"{g!r} is a Kubernetes system group (every user, or every pod): a team's "
                                 "groups must be Google groups of its own members")
            if not re.match(GROUP_EMAIL.pattern, g):
                raise ValueError(f"{g!r} is not {GROUP_EMAIL.words}")
        return v

    @field_validator("namespaces")
    @classmethod
    def _ns(cls, v: list[str]) -> list[str]:
        import re
        for ns in v:
            if not re.match(DNS_LABEL.pattern, ns) or len(ns) > 63:
                raise ValueError(f"namespace {ns!r} is not a namespace name: {DNS_LABEL.words}, "
                                 "at most 63 characters")
        return v


class Acknowledgement(Model):
    """A decision to delete or replace one resource that holds running work or data, with why. It lifts
    production's protection of that resource, and covers one change: the next change removes it. To
    delete a protected resource, land the acknowledgement first (the engine deletes only what its last
    update left unprotected), then remove the resource and the acknowledgement together."""

    cluster: str | None = None
    """The GKE cluster, by name."""
    node_pool: str | None = None
    """A node pool, by its name in the stack file (for a TPU pool: every slice of it)."""
    namespace: str | None = None
    """A team namespace (removing a whole team takes `state: draining` instead)."""
    bucket: str | None = None
    """A bucket the stack created, by name."""
    release: Literal["kueue", "jobset"] | None = None
    """The Kueue or JobSet Helm release."""
    reason: str = Field(min_length=1)
    """Why, for reviewers: what runs there now and where it goes."""

    @model_validator(mode="after")
    def _one_resource(self) -> Acknowledgement:
        named = [k for k in DECISION_KINDS if getattr(self, k) is not None]
        if len(named) != 1:
            raise ValueError(f"name exactly one resource ({', '.join(DECISION_KINDS)}); this names "
                             f"{len(named) or 'none'}{': ' + ', '.join(named) if named else ''}")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in DECISION_KINDS if getattr(self, k) is not None)

    @property
    def name(self) -> str:
        return str(getattr(self, self.kind))


DECISION_KINDS = ("cluster", "node_pool", "namespace", "bucket", "release")


class CohortConfig(Model):
    name: str = text(DNS_LABEL, max_length=63)
    """The cohort's name; queues name it in `cohort`."""
    parent: str | None = None
    """A parent cohort, for hierarchical cohorts."""
    fair_sharing_weight: Quantity | None = None
    """The cohort's weight under fair sharing."""


class PriorityConfig(Model):
    name: str = text(DNS_LABEL, max_length=63)
    """The priority class's name; jobs name it in the kueue.x-k8s.io/priority-class label."""
    value: int
    """Higher runs first and may preempt lower; at most 999,999,999 (higher values are Kubernetes' system classes)."""
    description: str = ""
    """What the priority is for."""
    global_default: bool = False
    """The priority of pods and workloads that name none; at most one priority."""
    preemption_policy: Literal["PreemptLowerPriority", "Never"] = "PreemptLowerPriority"
    """Whether pods of this priority preempt lower-priority pods."""
    pod_priority_class: bool = True
    """Declare a scheduling.k8s.io/v1 PriorityClass."""
    workload_priority_class: bool = True
    """Declare a Kueue WorkloadPriorityClass."""


NO_WAIT_FOR_PODS_READY_OFF = (
    "Kueue 0.19 always waits for pods to be ready (on by default in its v1beta2 Configuration; only the "
    "deprecated alpha gate DisableWaitForPodsReady turns it off): drop the key, or set it true")


NO_UNMETERED_RESOURCES = (
    "IgnoreUndeclared admits a pod's requests for resources its ClusterQueue does not cover, so a team with "
    "TPU quota could take GPUs and any team could run cpu work outside every quota: drop the key (the "
    "platform covers cpu and memory in every queue, derived from the accelerator quotas)")


class KueueConfig(Model):
    """The Kueue install and its controller Configuration."""

    version: Annotated[str, AfterValidator(refused_by(partial(unknown_version, "Kueue")))] = Field(
        "0.19.2", json_schema_extra={"enum": list(KUEUE_RELEASES)})
    """The Kueue release (Helm chart version): one of the releases gke_ai_batch/model/releases.py lists.
    `make diff` shows an upgrade's steps and refuses a downgrade."""
    chart: Annotated[str, AfterValidator(refused_by(partial(unknown_chart, "Kueue")))] = KUEUE_CHART
    """The Helm chart: registry.k8s.io's, or a mirror of it (an oci:// reference ending in /kueue)."""
    wait_for_pods_ready: bool | None = None
    """Always on in Kueue 0.19; false is refused."""
    wait_for_pods_ready_timeout: str = text(DURATION, "30m")
    """How long an admitted workload may take to get all its pods ready before Kueue evicts it: Kueue's
    default, 30m (apis/config/v1beta2/defaults.go). A slice scaling from zero needs its VMs created and
    its image pulled within it; the platform has no published figure to derive it from."""
    requeue_limit: int = Field(5, ge=1)
    """How many times Kueue requeues a workload whose pods were not ready in time before it deactivates
    it (backoffLimitCount; Kueue's default requeues forever): with its backoff of 60 s doubling, five
    requeues wait about half an hour in all. Its owner reactivates it with spec.active: true."""
    quota_check: Literal["IgnoreUndeclared", "BlockUndeclared"] = "BlockUndeclared"
    """BlockUndeclared (Kueue's default): a pod asking for a resource its ClusterQueue does not cover is
    not admitted. IgnoreUndeclared is refused: it let any team run unmetered on any node."""
    manage_jobs_without_queue_name: bool = True
    """Gate jobs and pods in team namespaces that name no queue, so nothing runs outside quota."""
    fair_sharing: bool = False
    """Kueue's fair sharing of borrowed quota within cohorts."""
    default_flavor: str = text(DNS_LABEL, "default-flavor", max_length=63)
    """The flavor for cpu and memory quotas on the system pool."""
    dws_admission_check: str = text(DNS_LABEL, "dws-prov", max_length=63)
    """The AdmissionCheck's name for queued provisioning (names from source page 004)."""
    dws_config: str = text(DNS_LABEL, "dws-config", max_length=63)
    """The ProvisioningRequestConfig's name."""
    controller_cpu: str = "500m"
    """The controller's cpu request and limit: fixed, so adding a team never restarts Kueue (the
    kueue-controller-size policy says when the number of queues outgrows it)."""
    controller_memory: str | None = None
    """The controller's memory request and limit; unset: 512Mi per 7,000 Workloads the teams' object
    quotas allow (kueue PR #566 measured 512Mi for about 7,000 jobs)."""

    @field_validator("wait_for_pods_ready")
    @classmethod
    def _always_ready(cls, v: bool | None) -> bool | None:
        if v is False:
            raise ValueError(NO_WAIT_FOR_PODS_READY_OFF)
        return v

    @field_validator("quota_check")
    @classmethod
    def _metered(cls, v: str) -> str:
        if v == "IgnoreUndeclared":
            raise ValueError(NO_UNMETERED_RESOURCES)
        return v

    @field_validator("controller_cpu", "controller_memory")
    @classmethod
    def _quantity(cls, v: str | None) -> str | None:
        if v is not None:
            parse_quantity(v)
        return v


class JobSetConfig(Model):
    version: Annotated[str, AfterValidator(refused_by(partial(unknown_version, "JobSet")))] = Field(
        "0.12.0", json_schema_extra={"enum": list(JOBSET_RELEASES)})
    """The JobSet release (Helm chart version): one of the releases gke_ai_batch/model/releases.py lists."""
    chart: Annotated[str, AfterValidator(refused_by(partial(unknown_chart, "JobSet")))] = JOBSET_CHART
    """The Helm chart: registry.k8s.io's, or a mirror of it (an oci:// reference ending in /jobset)."""
    install: Literal["auto", "always", "never"] = "auto"
    """auto: install JobSet when a pool is multi-host (multislice needs it)."""


class PlatformConfig(Model):
    """One environment: its cluster, node pools, Kueue and JobSet, cohorts, priorities and teams."""

    project: str = text(PROJECT_ID)
    """The Google Cloud project ID."""
    region: str = text(REGION)
    """The region of the cluster and its pools."""
    zones: list[str] = []
    """Zones of the region for nodes; accelerator pools default to the first."""
    environment: str = text(DNS_LABEL, max_length=63)
    """The environment's name (dev, prod...), a label on every resource."""
    production: bool = False
    """A production environment (so are ones named prod or production): the policy pack then requires
    private nodes, authorized networks for the control plane, and deletion protection."""
    owner: str = text(LABEL_VALUE)
    """The owning team, a label on every resource."""
    cost_center: str | None = text(LABEL_VALUE, None)
    """A cost-center label on every resource."""
    labels: dict[str, str] = {}
    """Extra labels on every resource."""
    network: NetworkConfig | None = None
    """The cluster's VPC network, created or adopted; unset: cluster.network and cluster.subnetwork."""
    cluster: ClusterConfig
    """The GKE cluster."""
    system_pool: SystemPoolConfig = SystemPoolConfig()
    """The CPU pool for the controllers."""
    tpu_pools: list[TpuPoolConfig] = []
    """TPU slice pools."""
    gpu_pools: list[GpuPoolConfig] = []
    """GPU node pools."""
    cpu_pools: list[CpuPoolConfig] = []
    """CPU worker pools, each with its own flavor for cpu and memory quotas."""
    autopilot_flavors: list[AutopilotFlavorConfig] = []
    """Autopilot only: accelerator flavors, by the node labels Autopilot provisions nodes from."""
    kueue: KueueConfig = KueueConfig()
    """The Kueue install."""
    jobset: JobSetConfig = JobSetConfig()
    """The JobSet install."""
    cohorts: list[CohortConfig] = []
    """Kueue cohorts: groups of queues that lend and borrow quota."""
    shared_queues: list[SharedQueue] = []
    """ClusterQueues several teams share."""
    priorities: list[PriorityConfig] = []
    """Priority classes, for preemption and hotswap."""
    teams: list[TeamConfig] = []
    """The teams, one block each."""
    group_domains: list[str] = []
    """Domains the teams' groups must belong to (example.com); unset: any domain."""
    acknowledge: list[Acknowledgement] = []
    """Deletions and replacements this change decides on (`make diff` refuses the others), one resource each."""

    def resource_labels(self) -> dict[str, str]:
        """Labels every GCP resource carries: environment, owner, cost-center, then the user's own."""
        labels = {"environment": self.environment, "owner": self.owner, "managed-by": "pulumi"}
        if self.cost_center:
            labels[COST_CENTER_LABEL] = self.cost_center
        if self.production:
            labels["production"] = "true"
        return {**labels, **self.labels}
