"""Rules over one resource's camelCase props. Each returns the violation messages (empty: passes).
They take plain dicts so the offline check, the policy pack and the tests call them alike."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gke_ai_batch.model import catalog
from gke_ai_batch.model.cluster_config import DNS_ENDPOINT_REASON_LABEL
from gke_ai_batch.model.gpudirect import gpudirect_gap
from gke_ai_batch.model.pool_facts import pool_facts
from gke_ai_batch.model.words import or_list
from gke_ai_batch.plan.priorities import MAX_USER_PRIORITY
from gke_ai_batch.vocabulary import KUEUE_API, PRODUCTION_ENVIRONMENTS, PUBLIC_MEMBERS

Props = Mapping[str, Any]


def tpu_pool_shape(props: Props) -> list[str]:
    f = pool_facts(props)
    machine = catalog.tpu_machine(f.machine_type)
    if machine is None:
        return []
    if (props.get("nodeConfig") or {}).get("guestAccelerators"):
        return [f"node pool {f.name}: {f.machine_type} is a TPU machine; drop nodeConfig.guestAccelerators"]
    placement = props.get("placementPolicy") or {}
    topology = placement.get("tpuTopology")
    if not topology:
        return []
    if topology not in machine.topologies:
        gen = catalog.tpu_machine_generation(f.machine_type)
        assert gen is not None  # a TPU machine belongs to a generation
        return [f"node pool {f.name}: topology {topology} does not exist on {f.machine_type} ({gen.name}); "
                f"use one of: {', '.join(machine.topologies[:12])}"]
    vms = catalog.slice_vms(topology, machine.chips_per_vm)
    if vms <= 1:
        return [f"node pool {f.name}: {topology} fits on one {f.machine_type} VM (single-host); drop "
                "placementPolicy.tpuTopology"]
    out = []
    if placement.get("type") != "COMPACT" and f.machine_type not in catalog.WORKLOAD_POLICY_MACHINES:
        out.append(f"node pool {f.name}: a multi-host slice needs placementPolicy.type COMPACT")
    if len(f.zones) != 1:
        out.append(f"node pool {f.name}: a multi-host slice lives in one zone; set exactly one nodeLocation "
                   f"(has {list(f.zones) or 'the cluster default'})")
    size = f.fixed_nodes if f.fixed_nodes is not None else f.max_nodes
    if size != vms:
        out.append(f"node pool {f.name}: a {topology} slice on {f.machine_type} is {vms} VMs; set nodeCount "
                   f"(or autoscaling max) to {vms}, not {size}")
    return out


def gpu_pool_shape(props: Props) -> list[str]:
    nc = props.get("nodeConfig") or {}
    gpus = nc.get("guestAccelerators") or []
    if not gpus:
        return []
    gpu, count, machine = gpus[0].get("type"), gpus[0].get("count"), nc.get("machineType")
    known = catalog.GPU_TYPES.get(gpu)
    if known is None:
        return [f"node pool {props.get('name')}: unknown GPU {gpu!r}; known: {', '.join(catalog.GPU_TYPES)}"]
    if machine not in known.machines:
        return [f"node pool {props.get('name')}: {gpu} does not come on {machine}; use one of "
                f"{', '.join(known.machines)}"]
    allowed = known.counts.get(machine, (known.machines[machine],))
    if count not in allowed:
        counts = or_list(allowed)
        return [f"node pool {props.get('name')}: {machine} carries {counts} x {gpu}; set "
                f"guestAccelerators count to {counts}, not {count}"]
    return []


def gpudirect_networks(props: Props) -> list[str]:
    """A GPU machine whose multi-node performance needs GPUDirect's extra NICs has one additional node
    network per NIC, or GKE's automatic accelerator network profile (gke_ai_batch.model.gpudirect)."""
    gap = gpudirect_gap(props)
    return [gap] if gap else []


def flex_start_pool(props: Props) -> list[str]:
    nc = props.get("nodeConfig") or {}
    if not nc.get("flexStart"):
        return []
    name, out = props.get("name", "?"), []
    if (nc.get("reservationAffinity") or {}).get("consumeReservationType") != "NO_RESERVATION":
        out.append(f"flex-start pool {name}: set nodeConfig.reservationAffinity.consumeReservationType NO_RESERVATION")
    auto = props.get("autoscaling") or {}
    if not auto or auto.get("minNodeCount", auto.get("totalMinNodeCount", 0)) != 0:
        out.append(f"flex-start pool {name}: enable autoscaling from 0 nodes (capacity arrives on demand)")
    if (props.get("management") or {}).get("autoRepair", True):
        out.append(f"flex-start pool {name}: turn management.autoRepair off (repairs recreate flex-start VMs)")
    if nc.get("spot") or nc.get("preemptible"):
        out.append(f"flex-start pool {name}: flex-start and spot exclude each other; drop nodeConfig.spot")
    return out


def queued_provisioning_pool(props: Props) -> list[str]:
    if not (props.get("queuedProvisioning") or {}).get("enabled"):
        return []
    name, out = props.get("name", "?"), []
    nc = props.get("nodeConfig") or {}
    if (nc.get("reservationAffinity") or {}).get("consumeReservationType") != "NO_RESERVATION":
        out.append(f"queued-provisioning pool {name}: set reservationAffinity NO_RESERVATION (it cannot change later)")
    auto = props.get("autoscaling") or {}
    # A TPU slice takes per-zone limits (GKE sizes a slice by maxNodeCount); GPUs take total ones (page 004).
    tpu = catalog.tpu_machine(nc.get("machineType") or "") is not None
    low, high = ("minNodeCount", "maxNodeCount") if tpu else ("totalMinNodeCount", "totalMaxNodeCount")
    if auto.get(low, 0) != 0 or high not in auto:
        out.append(f"queued-provisioning pool {name}: autoscale with {low} 0 and a {high}")
    if auto.get("locationPolicy") != "ANY":
        out.append(f"queued-provisioning pool {name}: set autoscaling.locationPolicy ANY (the only one supported)")
    if (props.get("management") or {}).get("autoRepair", True):
        out.append(f"queued-provisioning pool {name}: turn management.autoRepair off so that running nodes are "
                   "not recreated")
    return out


def is_production(cluster_props: Mapping[str, Any]) -> bool:
    labels = cluster_props.get("resourceLabels") or {}
    return labels.get("production") == "true" or labels.get("environment") in PRODUCTION_ENVIRONMENTS


def cluster_baseline(props: Props, production: bool) -> tuple[list[str], list[str]]:
    """(always mandatory, mandatory only in production) findings for a cluster."""
    autopilot = bool(props.get("enableAutopilot"))
    name, base, prod = props.get("name", "?"), [], []
    if not autopilot and not (props.get("workloadIdentityConfig") or {}).get("workloadPool"):
        base.append(f"cluster {name}: enable Workload Identity (workloadIdentityConfig.workloadPool)")
    if not autopilot and not props.get("enableShieldedNodes"):
        base.append(f"cluster {name}: enable shielded nodes")
    if not (props.get("releaseChannel") or {}).get("channel"):
        base.append(f"cluster {name}: set a release channel")
    if props.get("enableLegacyAbac"):
        base.append(f"cluster {name}: disable legacy ABAC; use RBAC")
    if ((props.get("masterAuth") or {}).get("clientCertificateConfig") or {}).get("issueClientCertificate"):
        base.append(f"cluster {name}: do not issue a client certificate")
    dataplane_v2 = props.get("datapathProvider") == "ADVANCED_DATAPATH"
    if not autopilot and not dataplane_v2 and not (props.get("networkPolicy") or {}).get("enabled"):
        base.append(f"cluster {name}: enforce network policy (datapathProvider ADVANCED_DATAPATH)")
    if not (props.get("privateClusterConfig") or {}).get("enablePrivateNodes"):
        prod.append(f"cluster {name}: use private nodes (privateClusterConfig.enablePrivateNodes)")
    blocks = ((props.get("masterAuthorizedNetworksConfig") or {}).get("cidrBlocks") or [])
    if not blocks:
        prod.append(f"cluster {name}: restrict the control plane to authorized networks")
    if any(b.get("cidrBlock") == "0.0.0.0/0" for b in blocks):
        prod.append(f"cluster {name}: the control plane is open to 0.0.0.0/0; list your own networks instead")
    if props.get("deletionProtection") is False:
        prod.append(f"cluster {name}: turn deletion protection on")
    return base, prod + control_plane_closed(props)


def control_plane_closed(props: Props) -> list[str]:
    """Production's closed control plane (GKE: About network isolation): the DNS-based endpoint takes no
    user traffic unless the stack gave a reason (the cluster then carries DNS_ENDPOINT_REASON_LABEL);
    the external IP endpoint is off, or closed to Google Cloud's external addresses; the authorized
    networks also gate the internal endpoint. No IP endpoints at all (ipEndpointsConfig.enabled
    false) leaves nothing for the last two to judge."""
    name, out = props.get("name", "?"), []
    endpoints = props.get("controlPlaneEndpointsConfig") or {}
    key, value = DNS_ENDPOINT_REASON_LABEL
    excepted = (props.get("resourceLabels") or {}).get(key) == value
    if (endpoints.get("dnsEndpointConfig") or {}).get("allowExternalTraffic") and not excepted:
        out.append(f"cluster {name}: the DNS-based endpoint takes traffic from every network that reaches Google "
                   "APIs, with IAM as the only guard (controlPlaneEndpointsConfig.dnsEndpointConfig."
                   "allowExternalTraffic true); turn it off (cluster.dns_endpoint false, the production default), "
                   "or in production say why it is needed in cluster.dns_endpoint_reason")
    if (endpoints.get("ipEndpointsConfig") or {}).get("enabled") is False:
        return out
    authorized = props.get("masterAuthorizedNetworksConfig") or {}
    external = not (props.get("privateClusterConfig") or {}).get("enablePrivateEndpoint")
    if external and authorized.get("gcpPublicCidrsAccessEnabled") is not False:
        out.append(f"cluster {name}: the external IP endpoint is on and not closed to Google Cloud's external "
                   "addresses, any project's VMs (privateClusterConfig.enablePrivateEndpoint not true, "
                   "masterAuthorizedNetworksConfig.gcpPublicCidrsAccessEnabled not false); set cluster.ip_endpoint "
                   "private (no external endpoint; needs private nodes) or authorized (closed to all but the "
                   "authorized networks)")
    if authorized.get("cidrBlocks") and not authorized.get("privateEndpointEnforcementEnabled"):
        out.append(f"cluster {name}: the authorized networks do not gate the internal IP endpoint, which then "
                   "answers every address of the VPC and the networks connected to it (masterAuthorizedNetworksConfig."
                   "privateEndpointEnforcementEnabled not true); set cluster.ip_endpoint private or authorized")
    return out


def required_labels(labels: Mapping[str, Any] | None, required: list[str], what: str) -> list[str]:
    missing = [k for k in required if not (labels or {}).get(k)]
    return [f"{what}: add the label(s) {', '.join(missing)}"] if missing else []


def kueue_api_version(props: Props, kind: str) -> list[str]:
    api = props.get("apiVersion", "")
    if api.startswith("kueue.x-k8s.io/") and api != KUEUE_API:
        return [f"{kind} {props.get('metadata', {}).get('name')}: {api} is deprecated or gone; emit {KUEUE_API}"]
    return []


def open_cluster_queue(props: Props, shared: bool) -> list[str]:
    if (props.get("spec") or {}).get("namespaceSelector") == {} and not shared:
        return [f"ClusterQueue {props['metadata']['name']}: namespaceSelector {{}} admits every namespace; "
                "select the team's namespaces, or declare the queue shared (shared_queues, admit: all)"]
    return []


def priority_value(props: Props) -> list[str]:
    v = props.get("value")
    # Kubernetes' HighestUserDefinablePriority: user classes up to 1,000,000,000, higher ones are the
    # system-critical classes. Team priorities stay below it (config), the controllers' class is it.
    if isinstance(v, int) and v > MAX_USER_PRIORITY:
        return [f"PriorityClass {props['metadata']['name']}: value {v:,} is reserved for system-critical pods; "
                f"user classes go up to {MAX_USER_PRIORITY:,}"]
    return []


def node_workload_metadata(props: Props) -> list[str]:
    """Pods on the node reach GKE's metadata server, which hands out their own Workload Identity,
    never the node service account's credentials (Checkov CKV_GCP_69)."""
    mode = ((props.get("nodeConfig") or {}).get("workloadMetadataConfig") or {}).get("mode")
    if mode != "GKE_METADATA":
        return [f"node pool {props.get('name', '?')}: set nodeConfig.workloadMetadataConfig.mode GKE_METADATA "
                f"(has {mode or 'none'}), so that Pods cannot use the node service account's credentials"]
    return []


def bucket_private(props: Props) -> list[str]:
    """IAM decides all access (no object ACLs) and nothing is ever public, whatever the organisation
    policy says (Checkov CKV_GCP_29, CKV_GCP_114)."""
    name, out = props.get("name", "?"), []
    if not props.get("uniformBucketLevelAccess"):
        out.append(f"bucket {name}: turn uniformBucketLevelAccess on, so that only IAM grants access (no object ACLs)")
    if props.get("publicAccessPrevention") != "enforced":
        out.append(f"bucket {name}: set publicAccessPrevention enforced, so that no grant can make it public")
    return out


def bucket_not_public(props: Props) -> list[str]:
    """No grant on a bucket names everyone (Checkov CKV_GCP_28)."""
    members = [props.get("member"), *(props.get("members") or [])]
    public = [m for m in members if m in PUBLIC_MEMBERS]
    if public:
        return [f"bucket {props.get('bucket', '?')}: {', '.join(public)} in {props.get('role')} makes its objects "
                "public; grant groups, service accounts or workload principals instead"]
    return []
