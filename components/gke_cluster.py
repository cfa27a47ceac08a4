"""GkeCluster: a Standard or Autopilot cluster with secure defaults, its kubeconfig and a
Kubernetes provider for the components that install into it."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from gkebatch.config import ClusterConfig, ClusterMode

from . import PKG


@dataclass
class GkeClusterArgs:
    project: str
    region: str
    zones: list[str]
    cluster: ClusterConfig
    labels: dict[str, str]


def kubeconfig(name: str, endpoint: str, ca_certificate: str) -> str:
    """A kubeconfig that authenticates through gke-gcloud-auth-plugin: no static credentials."""
    return f"""apiVersion: v1
kind: Config
clusters:
- name: {name}
  cluster:
    certificate-authority-data: {ca_certificate}
    server: https://{endpoint}
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
    cluster: gcp.container.Cluster
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(f"{PKG}:index:GkeCluster", name, None, opts)
        c = args.cluster
        autopilot = c.mode == ClusterMode.AUTOPILOT
        location = args.region if c.regional or autopilot else args.zones[0]
        private = None
        if c.private_nodes:
            private = {"enable_private_nodes": True, "enable_private_endpoint": False}
            if not autopilot:
                private["master_ipv4_cidr_block"] = c.master_ipv4_cidr
        common = dict(
            name=c.name,
            project=args.project,
            location=location,
            network=c.network,
            subnetwork=c.subnetwork,
            release_channel={"channel": c.release_channel},
            min_master_version=c.version,
            deletion_protection=c.deletion_protection,
            resource_labels={**args.labels, **c.labels},
            ip_allocation_policy={},  # VPC-native: required for private nodes and Dataplane V2
            enable_legacy_abac=False,
            master_auth={"client_certificate_config": {"issue_client_certificate": False}},
            private_cluster_config=private,
            master_authorized_networks_config={"cidr_blocks": [
                {"cidr_block": n.cidr, "display_name": n.name or n.cidr} for n in c.master_authorized_networks]}
            if c.master_authorized_networks else None,
            maintenance_policy={
                "recurring_window": {"start_time": c.maintenance_window.start, "end_time": c.maintenance_window.end,
                                     "recurrence": c.maintenance_window.recurrence},
                "maintenance_exclusions": [
                    {"exclusion_name": e.name, "start_time": e.start, "end_time": e.end,
                     "exclusion_options": {"scope": e.scope}} for e in c.maintenance_exclusions],
            },
            authenticator_groups_config={"security_group": c.security_group} if c.security_group else None,
        )
        if autopilot:
            # Autopilot enforces Workload Identity, shielded nodes and Dataplane V2 itself.
            extra = dict(enable_autopilot=True)
        else:
            extra = dict(
                remove_default_node_pool=True,
                initial_node_count=1,
                node_locations=args.zones if c.regional and args.zones else None,
                workload_identity_config={"workload_pool": f"{args.project}.svc.id.goog"},
                enable_shielded_nodes=True,
                datapath_provider="ADVANCED_DATAPATH",  # Dataplane V2: network policy enforcement built in
            )
        self.cluster = gcp.container.Cluster(f"{name}-cluster", **common, **extra,
                                             opts=pulumi.ResourceOptions(parent=self))
        self.kubeconfig = pulumi.Output.secret(pulumi.Output.all(
            self.cluster.name, self.cluster.endpoint, self.cluster.master_auth.cluster_ca_certificate,
        ).apply(lambda v: kubeconfig(v[0], v[1], v[2])))
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig,
                                     opts=pulumi.ResourceOptions(parent=self))
        self.register_outputs({"name": self.cluster.name, "endpoint": self.cluster.endpoint,
                               "kubeconfig": self.kubeconfig})
