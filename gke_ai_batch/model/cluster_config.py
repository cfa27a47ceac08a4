"""The cluster block of the stack config: control plane, network, maintenance and node image access."""
from __future__ import annotations

from typing import Literal

from pydantic import (
    field_validator,
)

from gke_ai_batch.model.compute_class_config import AutoProvisioning
from gke_ai_batch.model.field_rules import (
    AR_LOCATION,
    AR_REPOSITORY,
    CLUSTER_NAME,
    DNS_LABEL,
    PROJECT_ID,
    SERVICE_ACCOUNT,
    Model,
    text,
)
from gke_ai_batch.vocabulary import ClusterMode


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
    auto_provisioning: AutoProvisioning | None = None
    """Node auto-provisioning for the compute classes (Standard only); unset: on, with derived limits,
    where the stack declares compute classes."""
    adopt: str | None = None
    """An existing cluster to import instead of creating one: its GKE name, projects/PROJECT/locations/
    LOCATION/clusters/NAME, which must be this stack's project, location and name. Pulumi imports it only if
    the plan's inputs match what it has: `make diff` lists them (docs/operating.md, "Adopting a cluster")."""

    @field_validator("dns_endpoint_reason")
    @classmethod
    def _reason_says_something(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise ValueError("an empty reason: say why the production control plane must take traffic over the "
                             "DNS-based endpoint, or drop the key")
        return v
