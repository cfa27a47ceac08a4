"""GPUDirect networking as data: the extra node networks a GPU machine needs for its documented
multi-node performance, and what a node pool that declares too few of them is missing.

A GPU VM of these shapes has NICs beyond the primary one. GPUDirect lets NCCL move data between GPUs
of different nodes over those NICs. GKE attaches them only when the node pool declares one additional
node network for each (networkConfig.additionalNodeNetworkConfigs). The cluster must then have
multi-networking and Dataplane V2. Without the networks the pool is still created and single-node
jobs run as usual, but multi-node NCCL traffic falls back to the primary NIC and the pool
underperforms without any error. The alternative is networkConfig.acceleratorNetworkProfile "auto":
GKE then creates the VPCs and subnets itself.

Sources (the pages, as dated 2026-04, are quoted in the comments of GPUDIRECT below):
- [AIH-A3HM] https://docs.cloud.google.com/ai-hypercomputer/docs/create/create-vms-in-bulk-a3-high-mega
- [GKE-TCPX] https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx
- [AIH-A4/A3U] https://docs.cloud.google.com/ai-hypercomputer/docs/create/gke-ai-hypercompute-custom
- [AIH-A4X] https://docs.cloud.google.com/ai-hypercomputer/docs/create/gke-ai-hypercompute-custom-a4x
- [GKE-AUTO] https://docs.cloud.google.com/kubernetes-engine/docs/how-to/config-auto-net-for-accelerators,
  and pulumi-gcp's NodePoolNetworkConfigArgs.accelerator_network_profile: 'Setting to "auto" enables
  GKE to automatically configure high-performance networking settings for nodes with accelerators
  (like GPUs). GKE manages the underlying resources (like VPCs and subnets)'. xpk passes
  --accelerator-network-profile=auto for all of these shapes (AI-Hypercomputer/xpk).
- Cluster: [AIH-A4/A3U] "gcloud container clusters create CLUSTER_NAME ... --enable-dataplane-v2
  --enable-ip-alias --enable-multi-networking"; [AIH-A4X] uses the same flags. In Pulumi these are
  Cluster enableMultiNetworking true and datapathProvider ADVANCED_DATAPATH.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gke_ai_batch.model.words import plural

AUTO_PROFILE = "auto"  # networkConfig.acceleratorNetworkProfile: GKE creates the networks

# GKE's accelerator network profile ("Allocate network resources with DRA", Requirements, dated 2026-04-10):
# "Standard: 1.34.1-gke.1829001 or later ... GKE Dataplane V2 is enabled on the cluster", for the machine
# types its table lists; the API (google/container/v1 NodeNetworkConfig.accelerator_network_profile) calls it
# immutable with "auto" its only value. Cluster Toolkit (gke-node-pool main.tf) refuses it together with
# additional networks: "DRANET automatically configures networks. additional_networks must not be
# provided". xpk also passes it for A3 High and Mega, which the page does not list: the docs win.
# The page's node pool command also labels the nodes for GKE's DRANET driver, which gives pods the RDMA NICs
# through ResourceClaims: "--accelerator-network-profile=auto --node-labels=cloud.google.com/gke-networking-
# dra-driver=true" (Cluster Toolkit's gke-node-pool sets the same label with the profile).
DRA_DRIVER_LABEL = "cloud.google.com/gke-networking-dra-driver"
AUTO_PROFILE_PAGE = "https://docs.cloud.google.com/kubernetes-engine/docs/how-to/allocate-network-resources-dra"
AUTO_PROFILE_MIN_VERSION = "1.34.1-gke.1829001"
AUTO_PROFILE_MACHINES = ("a3-ultragpu-8g", "a4-highgpu-8g", "a4x-highgpu-4g", "a4x-maxgpu-4g-metal",
                         "tpu7x-standard-4t", "ct6e-standard-8t", "ct6e-standard-4t", "ct6e-standard-1t")


@dataclass(frozen=True)
class GpuDirect:
    flavour: str  # the GPUDirect technology the machine uses
    networks: int  # additional node networks one node pool declares
    layout: str  # how those networks map onto VPCs and subnets, in words
    source: str  # where the count is documented
    mtu: int  # the MTU its pages create the VPCs with
    rdma_subnets: int = 0  # RDMA: subnets of one RoCE VPC after the gVNIC network; 0: one VPC per network
    installer: str | None = None  # GKE's NCCL installer DaemonSet (plan/upstream_installers), where vendored

    @property
    def rdma(self) -> bool:
        return self.rdma_subnets > 0


_RDMA_A4_A3U = GpuDirect(
    "GPUDirect RDMA", 9, "1 gVNIC network plus 8 RDMA subnets of one RoCE VPC",
    # [AIH-A4/A3U] "Eight 400 Gbps CX-7 NICs for GPU-to-GPU networking / Two 200 Gbps Google Titanium
    # NICs"; "One of the Google Titanium NICs ... uses the default network in GKE"; "You can create one
    # VPC for the second CPU Titanium NIC (gVNIC) and another VPC for the eight CX-7 RDMA NICs"; the node
    # pool command has one --additional-node-network for the gVNIC subnet and eight for -sub-0 ... -sub-7.
    # MTU: that page sets none; the A4/A3 Ultra VM page: "For A4 or A3 Ultra machine types, the recommended
    # MTU is 8896 bytes" (both gVNIC networks and the RoCE network), Cluster Toolkit's default too.
    # Installer: "kubectl apply -f .../gpudirect-rdma/nccl-rdma-installer.yaml" (its nodeAffinity: H200, B200).
    "https://docs.cloud.google.com/ai-hypercomputer/docs/create/gke-ai-hypercompute-custom", 8896, 8,
    "nccl-rdma-installer.yaml")
_RDMA_A4X = GpuDirect(
    "GPUDirect RDMA", 5, "1 gVNIC network plus 4 RDMA subnets of one RoCE VPC",
    # [AIH-A4X] "Four 400 Gbps CX-7 network interface cards (NICs) for GPU-to-GPU networking / Two 200
    # Gbps Google Titanium network interface cards"; "# Create HPC VPC for the RDMA NICs with 4 subnets.";
    # the node pool command has the gVNIC --additional-node-network plus -sub-0 ... -sub-3; "networks create
    # GVNIC_NETWORK_PREFIX-net --subnet-mode=custom --mtu=8896", "The RDMA VPC defaults to ... 8896".
    "https://docs.cloud.google.com/ai-hypercomputer/docs/create/gke-ai-hypercompute-custom-a4x", 8896, 4)

GPUDIRECT: dict[str, GpuDirect] = {  # machine type -> what its multi-node performance needs
    # [AIH-A3HM] "A3 High require four data networks ... for N in $(seq 1 4)"; [GKE-TCPX] "Up to four
    # secondary NICs, each supporting up to 200 Gbps". xpk: "there are 4 NICs for GPU-GPU bw".
    "a3-highgpu-8g": GpuDirect(
        "GPUDirect-TCPX", 4, "4 separate VPCs, one subnet each",
        "https://docs.cloud.google.com/ai-hypercomputer/docs/create/create-vms-in-bulk-a3-high-mega", 8244),
    # [AIH-A3HM] "A3 Mega requires eight data networks ... for N in $(seq 1 8); do gcloud compute networks
    # create NETWORK_NAME_PREFIX-data-net-$N ... --mtu=8244"; [GKE-TCPX] (ja): up to 8 secondary NICs on
    # A3 Mega. xpk adds 8 --additional-node-network flags.
    "a3-megagpu-8g": GpuDirect(
        "GPUDirect-TCPXO", 8, "8 separate VPCs, one subnet each",
        "https://docs.cloud.google.com/ai-hypercomputer/docs/create/create-vms-in-bulk-a3-high-mega", 8244),
    "a3-ultragpu-8g": _RDMA_A4_A3U,  # H200
    "a4-highgpu-8g": _RDMA_A4_A3U,  # B200
    "a4x-highgpu-4g": _RDMA_A4X,  # GB200
    "a4x-highgpu-4g-nolssd": _RDMA_A4X,  # [AIH-A4X] "a4x-highgpu-4g or a4x-highgpu-4g-nolssd"
}


def gpudirect_gap(props: Mapping[str, Any]) -> str | None:
    """What a node pool (camelCase props) is missing for GPUDirect, or None: a machine without
    GPUDirect, an automatic accelerator network profile, or enough additional node networks."""
    machine = (props.get("nodeConfig") or {}).get("machineType")
    need = GPUDIRECT.get(machine) if isinstance(machine, str) else None
    if need is None:
        return None
    network = props.get("networkConfig") or {}
    if network.get("acceleratorNetworkProfile") == AUTO_PROFILE:
        return None
    declared = len(network.get("additionalNodeNetworkConfigs") or [])
    if declared >= need.networks:
        return None
    has = "none" if declared == 0 else str(declared)
    auto = (f", or set networkConfig.acceleratorNetworkProfile: {AUTO_PROFILE} (`gpudirect: {AUTO_PROFILE}` on the "
            "stack's pool) so that GKE creates them") if machine in AUTO_PROFILE_MACHINES else ""
    return (f"node pool {props.get('name', '?')}: {machine} needs {plural(need.networks, 'additional node network')} "
            f"for {need.flavour} ({need.layout}) and the pool declares {has}. It still works for single-node jobs, "
            "but multi-node NCCL traffic falls back to the primary NIC. Declare the "
            f"{need.networks} networks in networkConfig.additionalNodeNetworkConfigs, on a cluster with "
            f"enableMultiNetworking true and datapathProvider ADVANCED_DATAPATH{auto} (see {need.source})")


CREATE = "create"  # gpudirect: create, the stack creates the networks GPUDIRECT describes

# The pages' ranges: [AIH-A4/A3U] and [AIH-A4X] "--range=192.168.0.0/24" for the gVNIC subnet and
# "--range=192.168.$((N+1)).0/24" for RDMA subnet N; [AIH-A3HM] "--range=192.168.$N.0/24" for data network
# N from 1. Every one is its own VPC, or its own subnet of the RoCE VPC, so two pools may repeat them; the
# interfaces of one VM may not overlap ("A network interface must connect to a subnet that has an IP address
# range that does not overlap with the IP address range of another interface on the same instance", VPC:
# "Create VMs with multiple network interfaces"), so they must stay clear of the nodes' own subnet.
MULTI_NIC_PAGE = "https://cloud.google.com/vpc/docs/create-use-multiple-interfaces"
GVNIC_RANGE = "192.168.0.0/24"


def data_range(index: int) -> str:
    """The range of the index-th network after the gVNIC one (RDMA subnet N is index N, TCPX network N is N)."""
    return f"192.168.{index + 1}.0/24"


def roce_profile(project: str, zone: str) -> str:
    """The RDMA network profile of a zone. [AIH-A4/A3U] "networks create ${RDMA_NETWORK_PREFIX}-net
    --network-profile=${ZONE}-vpc-roce"; VPC's RDMA profiles page: "All subnets created in an RoCE VPC
    network must be located in the region that contains the zone of the RoCE network profile", and the
    RDMA NICs of a VM attach to it, so the pool's nodes live in that one zone."""
    return f"projects/{project}/global/networkProfiles/{zone}-vpc-roce"


def pod_network_names(need: GpuDirect, pool: str) -> list[tuple[str, str]]:
    """(GKE Network name, deviceMode) per additional network, in the node pool's order. [AIH-A4/A3U]: "the
    second CPU Titanium NIC (gVNIC) needs to be configured in NetDevice mode and each of the eight CX-7
    RDMA NICs need to be configured in RDMA mode", named gvnic-1 and rdma-0 ... rdma-7; TCPX and TCPXO
    name them vpc1 ... vpcN in NetDevice mode (xpk core/network.py, Cluster Toolkit k8s_network_names).
    The objects are cluster-wide and each names one VPC, so a cluster with two such pools needs a set per
    pool: the pool's name prefixes the pages' names."""
    if need.rdma:
        return [(f"{pool}-gvnic-1", "NetDevice")] + [(f"{pool}-rdma-{i}", "RDMA") for i in range(need.rdma_subnets)]
    return [(f"{pool}-vpc{i + 1}", "NetDevice") for i in range(need.networks)]
