"""GkeCluster: a Standard or Autopilot cluster, its kubeconfig and a Kubernetes provider for the
components that install into it. Every setting comes from gke_ai_batch.plan (cluster_inputs),
checked against GKE's cluster rules.

No `from __future__ import annotations`: the component analyzer reads the annotations at run time."""
from typing import NotRequired, TypedDict

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from gke_ai_batch.model.replacement import cluster_identifier
from gke_ai_batch.plan import component_plans
from gke_ai_batch.plan.declarations import ClusterDeclaration
from gke_ai_batch.plan.identity import REPOSITORY_READER, NodeIdentity
from gke_ai_batch.vocabulary import component_type

from .argument_errors import own_plan
from .cluster_network import ClusterNetwork


class AuthorizedNetworkArgs(TypedDict):
    """A CIDR allowed to reach the control plane."""

    cidr: str
    """The range, e.g. 203.0.113.0/24."""
    name: NotRequired[str]
    """A display name."""


class MaintenanceWindowArgs(TypedDict):
    """A recurring maintenance window (RFC 5545 RRULE); GKE needs 48 hours in any 32 days."""

    start: str
    """RFC 3339 start of the first window."""
    end: str
    """RFC 3339 end of the first window."""
    recurrence: str
    """RRULE, e.g. FREQ=WEEKLY;BYDAY=SA,SU."""


class MaintenanceExclusionArgs(TypedDict):
    """A period without upgrades, e.g. around a long training run."""

    name: str
    """The exclusion's name."""
    start: str
    """RFC 3339 start."""
    end: str
    """RFC 3339 end."""
    scope: NotRequired[str]
    """NO_UPGRADES, NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES (default)."""


class ExistingNatArgs(TypedDict):
    """An adopted network's Cloud NAT, read by the stack."""

    router: str
    """The Cloud Router's name, in the network's project and the region."""
    name: str
    """The NAT's name on that router."""


class NetworkArgs(TypedDict, total=False):
    """The cluster's VPC network: created (default) or adopted (stack config: the network block)."""

    adopt: bool
    """Use an existing network and subnet; the stack creates nothing."""
    name: str
    """The network's name (created default: <cluster>-net; adopted: required)."""
    subnetwork: str
    """The subnet's name (created default: <cluster>-<region>; adopted: required, or its path)."""
    host_project: str
    """Adopted: the shared VPC host project."""
    nodes_cidr: str
    """Created: the nodes' range (default 10.0.0.0/20)."""
    pods_cidr: str
    """Created: the Pods' range (default 10.4.0.0/14)."""
    services_cidr: str
    """Created: the Services' range (default 10.8.0.0/20)."""
    pods_range: str
    """The Pods secondary range's name (created default: pods; adopted: required)."""
    services_range: str
    """The Services secondary range's name (created default: services; adopted: required)."""
    cloud_nat: bool
    """Created: a Cloud Router with Cloud NAT (default: with private nodes)."""
    existing_nat: ExistingNatArgs
    """Adopted: the Cloud NAT private nodes go out through."""


class ImageRepositoryArgs(TypedDict):
    """An Artifact Registry repository the nodes read."""

    repository: str
    """The repository's ID."""
    location: str
    """A region (us-east5) or a multi-region (us, europe, asia)."""
    project: NotRequired[str]
    """Its project (default: the platform's)."""


class AutoProvisioningArgs(TypedDict, total=False):
    """Node auto-provisioning (stack config: cluster.auto_provisioning)."""

    enabled: bool
    """Cluster-level auto-provisioning (default on)."""
    limits: dict[str, int]
    """The most of each resource the cluster may have: cpu (vCPUs), memory (GB), accelerators by GKE's type;
    unset ones: what the cluster's pools reach at full size."""
    locations: list[str]
    """Zones auto-provisioned pools may be created in (default: the platform's zones)."""


class ClusterSettingsArgs(TypedDict):
    """The cluster's own settings (stack config: the cluster block)."""

    name: str
    """The cluster's name: up to 40 lowercase letters, digits and '-'."""
    mode: NotRequired[str]
    """standard (default) or autopilot."""
    regional: NotRequired[bool]
    """A regional control plane (default true)."""
    release_channel: NotRequired[str]
    """RAPID, REGULAR (default), STABLE or EXTENDED."""
    version: NotRequired[str]
    """A pinned minimum GKE version."""
    network: NotRequired[str]
    """VPC network (default: default)."""
    subnetwork: NotRequired[str]
    """Subnetwork (default: default)."""
    private_nodes: NotRequired[bool]
    """Nodes without external addresses."""
    master_ipv4_cidr: NotRequired[str]
    """The control plane's /28 for private nodes."""
    master_authorized_networks: NotRequired[list[AuthorizedNetworkArgs]]
    """Who may reach the control plane's IP endpoints."""
    ip_endpoint: NotRequired[str]
    """The control plane's IP endpoints: private (internal only; needs private_nodes), authorized or public."""
    dns_endpoint: NotRequired[bool]
    """GKE's DNS-based control-plane endpoint, IAM-authorized (default on; the kubeconfig uses it)."""
    dns_endpoint_reason: NotRequired[str]
    """Production only: why the control plane takes traffic over the DNS-based endpoint."""
    maintenance_window: NotRequired[MaintenanceWindowArgs]
    """Default: weekends 00:00-08:00 UTC."""
    maintenance_exclusions: NotRequired[list[MaintenanceExclusionArgs]]
    """At most 20."""
    deletion_protection: NotRequired[bool]
    """Refuse to delete the cluster (default true)."""
    security_group: NotRequired[str]
    """gke-security-groups@<domain>, for Google Groups for RBAC."""
    node_service_account: NotRequired[str]
    """An existing service account for the nodes; default: a dedicated one is created."""
    gcs_fuse_csi_driver: NotRequired[bool]
    """The Cloud Storage FUSE CSI driver, to mount buckets (default off for a cluster on its own)."""
    multi_networking: NotRequired[bool]
    """Multi-networking, for GPU pools with GPUDirect networks (default off for a cluster on its own)."""
    labels: NotRequired[dict[str, str]]
    """Extra resource labels of the cluster."""
    adopt: NotRequired[str]
    """An existing cluster to import: its GKE name, projects/PROJECT/locations/LOCATION/clusters/NAME."""
    node_image_repositories: NotRequired[list[ImageRepositoryArgs]]
    """Private Artifact Registry repositories the nodes pull images from."""
    auto_provisioning: NotRequired[AutoProvisioningArgs]
    """Node auto-provisioning: the compute classes' node pools (Standard; default: off for a cluster on its own)."""


class GkeClusterArgs(TypedDict):
    """The environment a cluster belongs to and its settings."""

    project: str
    """The Google Cloud project."""
    region: str
    """The region, e.g. us-east5."""
    zones: NotRequired[list[str]]
    """The node zones (regional cluster) or the zone (zonal cluster)."""
    environment: str
    """The environment label, e.g. dev or prod."""
    owner: str
    """The owner label."""
    production: NotRequired[bool]
    """A production cluster (the policy pack then requires private nodes and a closed control plane)."""
    cost_center: NotRequired[str]
    """The cost-center label."""
    labels: NotRequired[dict[str, str]]
    """Extra resource labels of every resource."""
    network: NotRequired[NetworkArgs]
    """The VPC network, created or adopted (default: the existing cluster.network, GKE-made ranges)."""
    cluster: ClusterSettingsArgs
    """The cluster's settings."""


def kubeconfig(name: str, server: str, ca_certificate: str | None) -> str:
    """A kubeconfig that authenticates through gke-gcloud-auth-plugin: no static credentials. The
    DNS-based endpoint serves a publicly trusted certificate, so it carries no CA of its own (as
    `gcloud container clusters get-credentials --dns-endpoint` writes it); the IP endpoint needs
    the cluster's CA."""
    ca = f"\n    certificate-authority-data: {ca_certificate}" if ca_certificate else ""
    return f"""apiVersion: v1
kind: Config
clusters:
- name: {name}
  cluster:{ca}
    server: https://{server}
contexts:
- name: {name}
  context:
    cluster: {name}
    user: {name}
current-context: {name}
users:
- name: {name}
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: gke-gcloud-auth-plugin
      installHint: Install gke-gcloud-auth-plugin for use with kubectl by following
        https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin
      provideClusterInfo: true
"""


class GkeCluster(pulumi.ComponentResource):
    """A GKE cluster with the platform's baseline (Workload Identity, shielded nodes, Dataplane V2, a
    release channel, maintenance windows GKE accepts, the DNS-based endpoint, cost allocation,
    managed Prometheus), its network unless adopted, its node service account, and a Kubernetes
    provider for it."""

    name: pulumi.Output[str]
    """The cluster's name: node pools join it."""
    location: pulumi.Output[str]
    """The cluster's location: node pools are created there."""
    endpoint: pulumi.Output[str]
    """The control plane's address."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig using gke-gcloud-auth-plugin (secret)."""
    node_service_account: pulumi.Output[str]
    """The nodes' IAM service account: node pools run as it."""

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None, *,
                 planned: ClusterDeclaration | None = None):
        plan = own_plan("GkeCluster", name, args, GkeClusterArgs, lambda: component_plans.cluster(name, args), planned)
        super().__init__(component_type("GkeCluster"), name, None, opts)
        inputs, network = plan.inputs, plan.network
        first = self._node_identity(name, str(args["project"]), plan.identity)
        if network.create or network.existing_nat:
            first.append(ClusterNetwork(f"{name}-network", network, pulumi.ResourceOptions(parent=self)))
        self.cluster = gcp.container.Cluster(f"{name}-cluster", **inputs, opts=pulumi.ResourceOptions(
            parent=self, depends_on=first, **plan.lifecycle.options()))
        self.node_service_account = pulumi.Output.from_input(plan.identity.email)
        self.name, self.location, self.endpoint = self.cluster.name, self.cluster.location, self.cluster.endpoint
        dns = inputs["control_plane_endpoints_config"]["dns_endpoint_config"]["allow_external_traffic"]
        self.kubeconfig = pulumi.Output.secret(self._kubeconfig(dns))
        # A stable identity: an endpoint change or a credential rotation updates the provider
        # (model.replacement.cluster_identifier).
        self.identifier = cluster_identifier(str(args["project"]), str(inputs["location"]), str(inputs["name"]))
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, cluster_identifier=self.identifier,
                                     opts=pulumi.ResourceOptions(parent=self))
        self.register_outputs({"name": self.name, "location": self.location, "endpoint": self.endpoint,
                               "kubeconfig": self.kubeconfig, "nodeServiceAccount": self.node_service_account})

    def _kubeconfig(self, dns: bool) -> pulumi.Output[str]:
        """Through the DNS-based endpoint where it is on (IAM decides who may connect, from anywhere,
        so the deploying pipeline needs no authorized network), else the IP endpoint."""
        c = self.cluster
        if dns:
            server = c.control_plane_endpoints_config.apply(
                lambda e: e.dns_endpoint_config.endpoint if e and e.dns_endpoint_config else None)
            return pulumi.Output.all(c.name, server).apply(lambda v: kubeconfig(v[0], v[1], None))
        return pulumi.Output.all(c.name, c.endpoint, c.master_auth.cluster_ca_certificate).apply(
            lambda v: kubeconfig(v[0], v[1], v[2]))

    def _node_identity(self, name: str, project: str, identity: NodeIdentity) -> list[pulumi.Resource]:
        """The dedicated node service account and its project roles (none for an existing account), and read
        access to each image repository it names: the cluster, and with it every node, waits until they
        are granted."""
        child = pulumi.ResourceOptions(parent=self)
        account = None if identity.account_id is None else gcp.serviceaccount.Account(
            f"{name}-nodes", project=project, account_id=identity.account_id,
            display_name=identity.display_name, opts=child)
        member = f"serviceAccount:{identity.email}"
        roles = [gcp.projects.IAMMember(f"{name}-nodes-{role.rsplit('/', 1)[-1]}", project=project, role=role,
                                        member=member, opts=child) for role in identity.roles]
        grant = pulumi.ResourceOptions(parent=self, depends_on=[account] if account else [])
        reads = [gcp.artifactregistry.RepositoryIamMember(
            f"{name}-nodes-read-{location}-{repository}", project=repo_project, location=location,
            repository=repository, role=REPOSITORY_READER, member=member, opts=grant)
            for repo_project, location, repository in identity.repositories]
        return [*([account] if account else []), *roles, *reads]
