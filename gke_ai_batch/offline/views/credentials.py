"""The `gcloud container clusters get-credentials` line of a planned cluster, from the inputs it is created
with, so that the walkthrough's kubectl step is the stack's own (its name, location, project and endpoint).

gcloud's reference (https://cloud.google.com/sdk/gcloud/reference/container/clusters/get-credentials):
`get-credentials NAME [--dns-endpoint] [--internal-ip] [--location=LOCATION]`. The location is the
cluster's: a zone for a zonal cluster, the region for a regional one. The endpoint is the one the
program's own kubeconfig uses (components.gke_cluster): the DNS-based endpoint where it takes user
traffic (controlPlaneEndpointsConfig.dnsEndpointConfig.allowExternalTraffic, which "controls whether user
traffic is allowed over this endpoint", GKE API), else an IP endpoint: the internal one of a cluster with
private nodes, reached from the VPC or networks connected to it, in an authorized network; else the
external one."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Props = Mapping[str, Any]

# Every deploy runs with the project's policy pack (getting-started, the workflow): without it, the mandatory
# policies (a node pool running as the Compute Engine default account, ...) stop nothing.
POLICY_PACK = "--policy-pack policies"


def get_credentials(cluster: Props) -> str:
    """The command line, with --project so that it does not depend on gcloud's configured project."""
    flag = endpoint_flag(cluster)
    return (f"gcloud container clusters get-credentials {cluster.get('name')} --location {cluster.get('location')} "
            f"--project {cluster.get('project')}" + (f" {flag}" if flag else ""))


def endpoint_flag(cluster: Props) -> str | None:
    """--dns-endpoint, --internal-ip, or None for the external IP endpoint (gcloud's default)."""
    if ((cluster.get("controlPlaneEndpointsConfig") or {}).get("dnsEndpointConfig") or {}).get("allowExternalTraffic"):
        return "--dns-endpoint"
    if (cluster.get("privateClusterConfig") or {}).get("enablePrivateNodes"):
        return "--internal-ip"
    return None


def first_deploy(cluster: Props, provider_urn: str) -> str | None:
    """The first `pulumi up` of a cluster whose control plane answers only inside its authorized networks,
    which the same deploy may create (the VPC): none where the DNS-based endpoint takes traffic. The Kubernetes
    objects go through the cluster's Kubernetes provider, so excluding it with its dependents
    (`--exclude-dependents`: the resources that use the provider or depend on it, pulumi
    pkg/resource/deploy/step_generator.go isExcludedFromUpdate) leaves the network, identities, cluster and
    node pools, which reach only Google's APIs; a runner in an authorized network then runs the whole stack."""
    if endpoint_flag(cluster) == "--dns-endpoint":
        return None
    stack = provider_urn.removeprefix("urn:pulumi:").split("::", 1)[0]
    up = f"pulumi up --stack {stack} {POLICY_PACK}"
    return (f"first pulumi up, from outside those networks: {up} --exclude '{provider_urn}' --exclude-dependents "
            f"(cloud resources only), then {up} from a runner in them")


def reached_from(cluster: Props) -> str:
    """Where the command's kubeconfig reaches the control plane from."""
    flag = endpoint_flag(cluster)
    blocks = ((cluster.get("masterAuthorizedNetworksConfig") or {}).get("cidrBlocks") or [])
    networks = ", ".join(f"{b.get('cidrBlock')}" + (f" ({b['displayName']})" if b.get("displayName") else "")
                         for b in blocks)
    if flag == "--dns-endpoint":
        return "from anywhere through the DNS-based endpoint, IAM authorizing"
    where = f"an authorized network: {networks}" if networks else "any network (no authorized networks)"
    if flag == "--internal-ip":
        return f"from inside the VPC or a network connected to it, in {where}"
    return f"from {where}"
