"""GkeCluster: a Standard or Autopilot cluster (inputs from gke_ai_batch.plan.gke_inputs), its kubeconfig and a
Kubernetes provider for the components that install into it."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from . import PKG


@dataclass
class GkeClusterArgs:
    inputs: dict  # the Cluster's inputs, from gke_ai_batch.plan.gke_inputs.cluster_inputs


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
        self.cluster = gcp.container.Cluster(f"{name}-cluster", **args.inputs,
                                             opts=pulumi.ResourceOptions(parent=self))
        self.kubeconfig = pulumi.Output.secret(pulumi.Output.all(
            self.cluster.name, self.cluster.endpoint, self.cluster.master_auth.cluster_ca_certificate,
        ).apply(lambda v: kubeconfig(v[0], v[1], v[2])))
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig,
                                     opts=pulumi.ResourceOptions(parent=self))
        self.register_outputs({"name": self.cluster.name, "endpoint": self.cluster.endpoint,
                               "kubeconfig": self.kubeconfig})
