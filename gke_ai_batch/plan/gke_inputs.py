"""The inputs the platform sends to GKE, built once from the plans: the cluster and every node pool.

The components pass these to pulumi-gcp unchanged, and the planner checks them against the GKE
rules table before any resource exists (`engine_form` gives the camelCase shape the engine and the
policy pack see), so the rules judge exactly what would be sent.
"""
from __future__ import annotations

import re
from typing import Any, cast

from gke_ai_batch.model.cluster_config import DNS_ENDPOINT_REASON_LABEL
from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.gpudirect import AUTO_PROFILE
from gke_ai_batch.model.pool_facts import KUBERNETES_EFFECTS
from gke_ai_batch.model.words import shorten
from gke_ai_batch.plan.compute_classes import auto_provisioning, plan_compute_classes
from gke_ai_batch.plan.identity import node_identity
from gke_ai_batch.plan.network import plan_network
from gke_ai_batch.plan.pools import PoolPlan, WorkloadPolicyPlan, plan_pools
from gke_ai_batch.vocabulary import (
    PRODUCTION_ENVIRONMENTS,
    RESERVATION_KEY,
    SCALES_FROM_ZERO,
    Capacity,
    ClusterMode,
    PoolKind,
)

NODE_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]


def cluster_location(cfg: PlatformConfig) -> str:
    """A regional (or Autopilot) cluster lives in the region, a zonal one in the first zone (none
    given: no location, which the cluster-zones rule refuses)."""
    c = cfg.cluster
    if c.regional or c.mode == ClusterMode.AUTOPILOT:
        return cfg.region
    return cfg.zones[0] if cfg.zones else ""


def is_production(cfg: PlatformConfig) -> bool:
    """A production stack, as the policy pack judges the cluster it labels (resource_rules.is_production)."""
    return cfg.production or cfg.environment in PRODUCTION_ENVIRONMENTS


def dns_endpoint_open(cfg: PlatformConfig) -> bool:
    """Whether the DNS-based endpoint takes user traffic (allowExternalTraffic: "Controls whether user
    traffic is allowed over this endpoint", GKE API DNSEndpointConfig). It answers any network that
    reaches Google APIs, guarded by IAM alone (GKE: About network isolation), so production keeps it
    closed unless the stack says why; a reason where it changes nothing is refused."""
    c, production, reason = cfg.cluster, is_production(cfg), cfg.cluster.dns_endpoint_reason
    at = path_of("cluster", "dns_endpoint_reason")
    if reason is not None and not production:
        raise ConfigError(at, f"{shorten(repr(reason))}: only production stacks close the DNS-based endpoint, so a "
                          "reason changes nothing here (the endpoint is on unless dns_endpoint is false); drop the key")
    if reason is not None and c.dns_endpoint is False:
        raise ConfigError(at, f"{shorten(repr(reason))} with dns_endpoint false: the reason opens nothing; drop one "
                          "of the two keys")
    if production and c.dns_endpoint and reason is None:
        raise ConfigError(path_of("cluster", "dns_endpoint"), "true in a production stack opens the control plane "
                          "to every network that reaches Google APIs, with IAM as the only guard; say why in "
                          "cluster.dns_endpoint_reason, or drop the key (production default: off) and reach the "
                          "cluster over its IP endpoint from the authorized networks")
    return reason is not None if production else c.dns_endpoint is not False


def ip_endpoint(cfg: PlatformConfig) -> str:
    """private (no external endpoint), authorized (external, closed to Google Cloud's addresses) or
    public. Production defaults to private where private nodes allow it, else authorized: "if IP based
    access is required, disable the external IP based endpoint or restrict it to trusted networks only"
    (CIS GKE Benchmark v2.0.0, 5.6.4)."""
    c = cfg.cluster
    if c.ip_endpoint is not None:
        if c.ip_endpoint == "authorized" and not c.master_authorized_networks:
            raise ConfigError(path_of("cluster", "ip_endpoint"), "authorized closes the external endpoint to all "
                              "but the authorized networks, and none are listed: list them in "
                              "master_authorized_networks, or use private or public")
        return c.ip_endpoint
    if is_production(cfg):
        return "private" if c.private_nodes else "authorized"
    return "public"


def dns_reason_label(cfg: PlatformConfig) -> dict[str, str]:
    """The label that tells the production policy the open DNS-based endpoint is a declared exception."""
    key, value = DNS_ENDPOINT_REASON_LABEL
    return {key: value} if is_production(cfg) and cfg.cluster.dns_endpoint_reason is not None else {}


def _authorized_networks(cfg: PlatformConfig, ip: str) -> dict[str, Any] | None:
    """The list, and outside public mode: no access from Google Cloud's external addresses
    (gcpPublicCidrsAccessEnabled false, gcloud --no-enable-google-cloud-access: authorized networks
    otherwise let in "the given CIDR blocks, Google Compute Engine Public IPs and Google Prod IPs", GKE
    API MasterAuthorizedNetworksConfig) and the list enforced on the internal endpoint too
    (privateEndpointEnforcementEnabled, --enable-authorized-networks-on-private-endpoint, off by default;
    GKE: Customize your network isolation). public sends only the list, as before: the provider keeps
    the values GKE last reported for the two flags it does not send."""
    listed = cfg.cluster.master_authorized_networks
    networks = [{"cidr_block": n.cidr, "display_name": n.name or n.cidr} for n in listed]
    if not networks:
        return None
    closed = {"gcp_public_cidrs_access_enabled": False, "private_endpoint_enforcement_enabled": True}
    return {"cidr_blocks": networks, **(closed if ip != "public" else {})}


def _control_plane(cfg: PlatformConfig) -> dict[str, Any]:
    """The endpoints: the DNS-based one open or closed, the IP ones private, authorized or public
    (privateClusterConfig.enablePrivateEndpoint: "Whether the master's internal IP address is used as
    the cluster endpoint", GKE API), and the authorized networks."""
    c, autopilot, ip = cfg.cluster, cfg.cluster.mode == ClusterMode.AUTOPILOT, ip_endpoint(cfg)
    private: dict[str, bool | str] | None = None
    if c.private_nodes or ip == "private":
        # The GKE API deprecates these two fields for NetworkConfig.default_enable_private_nodes and
        # ControlPlaneEndpointsConfig.IPEndpointsConfig.enable_public_endpoint (google/container/v1
        # cluster_service.proto), but pulumi-gcp 10.2 has neither (its ip_endpoints_config takes only
        # `enabled`), so privateClusterConfig stays the way to send them.
        # Without private nodes a private endpoint is sent as asked, for the gke_rules rule
        # private-endpoint-private-nodes to refuse at cluster.ip_endpoint.
        private = {"enable_private_nodes": c.private_nodes, "enable_private_endpoint": ip == "private"}
        if c.private_nodes and not autopilot:
            private["master_ipv4_cidr_block"] = c.master_ipv4_cidr
    # Sent either way: left out, the provider would keep the endpoint GKE last reported.
    dns = {"dns_endpoint_config": {"allow_external_traffic": dns_endpoint_open(cfg)}}
    return dict(
        private_cluster_config=private,
        control_plane_endpoints_config=dns,
        master_authorized_networks_config=_authorized_networks(cfg, ip),
        enable_legacy_abac=False,
        master_auth={"client_certificate_config": {"issue_client_certificate": False}},
        authenticator_groups_config={"security_group": c.security_group} if c.security_group else None,
    )


def _maintenance(cfg: PlatformConfig) -> dict[str, Any]:
    c = cfg.cluster
    w = c.maintenance_window
    return {
        "recurring_window": {"start_time": w.start, "end_time": w.end, "recurrence": w.recurrence},
        "maintenance_exclusions": [
            {"exclusion_name": e.name, "start_time": e.start, "end_time": e.end,
             "exclusion_options": {"scope": e.scope}} for e in c.maintenance_exclusions],
    }


def gcs_fuse_driver(cfg: PlatformConfig) -> bool:
    """The Cloud Storage FUSE CSI driver: as set, else on when a team declares buckets (GKE: it is
    off by default on Standard, on by default on Autopilot, and needs Workload Identity)."""
    on = cfg.cluster.gcs_fuse_csi_driver
    if on is False and cfg.cluster.mode == ClusterMode.AUTOPILOT:
        raise ConfigError(path_of("cluster", "gcs_fuse_csi_driver"), "Autopilot always runs the Cloud Storage "
                          "FUSE CSI driver; drop the key")
    return any(t.buckets for t in cfg.teams) if on is None else on


def multi_networking(cfg: PlatformConfig) -> bool:
    """As set, else on when a GPU pool attaches extra networks: GKE's GPUDirect pages create the cluster
    with --enable-multi-networking for them (the automatic profile does without)."""
    on = cfg.cluster.multi_networking
    if on is not None and cfg.cluster.mode == ClusterMode.AUTOPILOT:
        raise ConfigError(path_of("cluster", "multi_networking"), "an Autopilot cluster here has no GPU node pools "
                          "to attach extra networks to; drop the key")
    return any(g.gpudirect not in (None, AUTO_PROFILE) for g in cfg.gpu_pools) if on is None else on


def cluster_inputs(cfg: PlatformConfig, labels: dict[str, str]) -> dict[str, Any]:
    """The Cluster's inputs: VPC-native on the planned network's named ranges, the DNS-based
    endpoint, cost allocation; on Standard also Workload Identity, shielded nodes, Dataplane V2,
    managed Prometheus and the FUSE driver as planned (Autopilot enforces them itself), no default
    node pool."""
    c, net, fuse = cfg.cluster, plan_network(cfg), gcs_fuse_driver(cfg)
    inputs = dict(
        name=c.name, project=cfg.project, location=cluster_location(cfg), network=net.network_ref,
        subnetwork=net.subnetwork_ref, release_channel={"channel": c.release_channel}, min_master_version=c.version,
        deletion_protection=c.deletion_protection, resource_labels={**labels, **c.labels, **dns_reason_label(cfg)},
        ip_allocation_policy=net.ip_allocation_policy, maintenance_policy=_maintenance(cfg),
        cost_management_config={"enabled": True}, **_control_plane(cfg),
        # No Service may claim externalIPs (CVE-2020-8554: a tenant's Service intercepting traffic to any
        # address). GKE allows them unless told (GKE API ServiceExternalIPsConfig "Config to block services
        # with externalIPs field"; pulumi-gcp container.Cluster service_external_ips_config: "enabled by default").
        service_external_ips_config={"enabled": False},
    )
    if c.mode == ClusterMode.AUTOPILOT:
        # Autopilot's nodes take their service account from the cluster (gcloud container clusters
        # create-auto --service-account; the provider's cluster_autoscaling.auto_provisioning_defaults).
        if c.auto_provisioning is not None:
            raise ConfigError(path_of("cluster", "auto_provisioning"), "Autopilot provisions every node itself; "
                              "drop the key")
        defaults = {"service_account": node_identity(cfg).email, "oauth_scopes": NODE_SCOPES}
        return {**inputs, "enable_autopilot": True, "cluster_autoscaling": {"auto_provisioning_defaults": defaults}}
    return {
        **inputs,
        **_node_auto_provisioning(cfg),
        "remove_default_node_pool": True,
        "initial_node_count": 1,
        "node_locations": list(cfg.zones) if c.regional and cfg.zones else None,
        "workload_identity_config": {"workload_pool": f"{cfg.project}.svc.id.goog"},
        "enable_shielded_nodes": True,
        "datapath_provider": "ADVANCED_DATAPATH",
        "addons_config": {"gcs_fuse_csi_driver_config": {"enabled": fuse}, **_slice_controller(cfg)},
        "enable_multi_networking": multi_networking(cfg),
        # Managed Service for Prometheus collects Kueue's metrics (plan.monitoring); Autopilot has it on.
        "monitoring_config": {"managed_prometheus": {"enabled": True}},
    }


def _slice_controller(cfg: PlatformConfig) -> dict[str, Any]:
    """GKE's slice controller where a TPU pool is dynamically sliced (`--enable-slice-controller`; pulumi-gcp
    addonsConfig.sliceControllerConfig). Left out otherwise, so other stacks send what they sent before."""
    if not any(t.dynamic_slicing for t in cfg.tpu_pools):
        return {}
    return {"slice_controller_config": {"enabled": True}}


def _node_auto_provisioning(cfg: PlatformConfig) -> dict[str, Any]:
    """cluster_autoscaling where the compute classes need it (plan.compute_classes), else nothing: the
    provider then leaves the cluster's auto-provisioning as it is."""
    if not cfg.compute_classes and cfg.cluster.auto_provisioning is None:
        return {}
    pools = plan_pools(cfg)
    nap = auto_provisioning(cfg, pools, plan_compute_classes(cfg, pools), node_identity(cfg).email, NODE_SCOPES)
    return {"cluster_autoscaling": nap} if nap else {}


def reservation_affinity(plan: PoolPlan) -> dict[str, Any] | None:
    if plan.capacity == Capacity.RESERVATION:
        return {"consume_reservation_type": "SPECIFIC_RESERVATION", "key": RESERVATION_KEY,
                "values": [plan.reservation]}
    if plan.capacity in SCALES_FROM_ZERO:
        return {"consume_reservation_type": "NO_RESERVATION"}
    return None


def node_config(plan: PoolPlan, labels: dict[str, str], service_account: Any = None, **extra: Any) -> dict[str, Any]:
    """Shielded, Workload-Identity-only nodes with the platform's resource labels and the cluster's node
    service account (None: GKE's default, the Compute Engine one), and the settings of the plan's
    capacity mode (spot, flex-start, reservation affinity, maximum run duration)."""
    config: dict[str, Any] = {
        "machine_type": plan.machine_type,
        **({"service_account": service_account} if service_account is not None else {}),
        "oauth_scopes": NODE_SCOPES,
        "resource_labels": labels,
        "labels": dict(plan.custom_labels),
        "shielded_instance_config": {"enable_secure_boot": True, "enable_integrity_monitoring": True},
        "workload_metadata_config": {"mode": "GKE_METADATA"},
        **extra,
    }
    if plan.capacity == Capacity.SPOT:
        config["spot"] = True
    if plan.flex_start or plan.queued:
        config["flex_start"] = True  # queued provisioning runs on flex-start VMs (gke_rules)
    if plan.max_run_duration:
        config["max_run_duration"] = plan.max_run_duration
    affinity = reservation_affinity(plan)
    if affinity:
        config["reservation_affinity"] = affinity
    return config


def _sizing(p: PoolPlan) -> dict[str, Any]:
    """A fixed node count, or autoscaling limits per zone or in total (GKE takes one kind or the other)."""
    if not p.autoscaled:
        return dict(node_count=p.node_count)
    # The system pool starts with a node so that the controllers have somewhere to run.
    first = max(p.min_nodes or 0, 1 if p.kind == PoolKind.SYSTEM else 0)
    if p.total:
        limits = {"total_min_node_count": p.min_nodes, "total_max_node_count": p.max_nodes}
        first = 0
    else:
        limits = {"min_node_count": p.min_nodes, "max_node_count": p.max_nodes}
    policy = {"location_policy": p.location_policy} if p.location_policy else {}
    return dict(initial_node_count=first, autoscaling={**limits, **policy})


def _gpu_sharing(p: PoolPlan) -> dict[str, Any]:
    """MIG partitions and time-sharing clients (of each partition, with MIG), as GKE takes them."""
    if p.sharing is None:
        return {}
    out: dict[str, Any] = {"gpu_partition_size": p.sharing.partition_size} if p.sharing.strategy == "mig" else {}
    if p.sharing.max_clients:
        out["gpu_sharing_config"] = {"gpu_sharing_strategy": "TIME_SHARING",
                                     "max_shared_clients_per_gpu": p.sharing.max_clients}
    return out


def _accelerators(p: PoolPlan) -> dict[str, Any]:
    if p.kind != PoolKind.GPU:
        return {}
    return {"guest_accelerators": [{"type": p.accelerator, "count": p.gpus, **_gpu_sharing(p),
                                    "gpu_driver_installation_config": {"gpu_driver_version": p.driver_version}}],
            "gvnic": {"enabled": p.gvnic}}


def _disks(p: PoolPlan) -> dict[str, Any]:
    """Boot disk and local SSDs, where the pool sets them (else GKE's defaults for the machine)."""
    out: dict[str, Any] = {"disk_type": p.disk_type, "disk_size_gb": p.disk_size_gb}
    if p.local_ssd is not None:
        key = ("ephemeral_storage_local_ssd_config" if p.local_ssd.use == "ephemeral-storage"
               else "local_nvme_ssd_block_config")
        out[key] = {"local_ssd_count": p.local_ssd.count}
    return {k: v for k, v in out.items() if v is not None}


TAINT_EFFECTS = {k8s: gke for gke, k8s in KUBERNETES_EFFECTS.items()}


def _taints(p: PoolPlan) -> dict[str, Any]:
    """Our taints, in the GKE API's effect names; GKE adds its own (the queued-provisioning taint)."""
    if not p.custom_taints:
        return {}
    return {"taints": [{"key": t["key"], "value": t["value"], "effect": TAINT_EFFECTS[t["effect"]]}
                       for t in p.custom_taints]}


def node_pool_inputs(p: PoolPlan, labels: dict[str, str], service_account: Any = None) -> dict[str, Any]:
    """A node pool's inputs from its plan (without cluster and location, which are outputs).

    Multi-host TPU slices are placed COMPACT with their topology, or by the workload policy that
    replaces the topology on TPU7x. Flex-start and queued-provisioning pools autoscale from zero
    without auto-repair (source pages 003 and 004). Auto-upgrade stays on everywhere: GKE refuses it
    off under a release channel, and upgrades flex-start and queued nodes short-lived (a running
    node is never upgraded in place; new nodes start on the new version)."""
    settings = {**_accelerators(p), **_disks(p), **_taints(p)}
    inputs: dict[str, Any] = dict(name=p.name, node_locations=list(p.zones), **_sizing(p),
                  management={"auto_repair": p.auto_repair, "auto_upgrade": True},
                  node_config=node_config(p, labels, service_account, **settings))
    if p.kind == PoolKind.SYSTEM:
        inputs.pop("node_locations")
    if p.queued:
        inputs["queued_provisioning"] = {"enabled": True}
    if p.gpudirect == AUTO_PROFILE:
        inputs["network_config"] = {"accelerator_network_profile": p.gpudirect}
    elif p.node_networks:
        inputs["network_config"] = {"additional_node_network_configs": [
            {"network": n.network, "subnetwork": n.subnetwork} for n in p.node_networks]}
    if p.workload_policy:
        inputs["placement_policy"] = workload_placement(p)
    elif p.multi_host:
        inputs["placement_policy"] = {"type": "COMPACT", "tpu_topology": p.topology}
    return inputs


def workload_placement(p: PoolPlan) -> dict[str, Any]:
    """A TPU7x slice names its workload policy. The docs say the policy replaces the topology flag
    and xpk sends no placement type; GKE stores the policy name and the topology with no type, so
    the pool states exactly that, or every refresh would differ and replace the pool (vllm-project/
    ci-infra#547, verified on a live cluster)."""
    assert p.workload_policy is not None  # only TPU7x multi-host slices are placed by a workload policy
    return {"type": "", "policy_name": p.workload_policy.name, "tpu_topology": p.topology}


def workload_policy_inputs(wp: WorkloadPolicyPlan, project: str) -> dict[str, Any]:
    """`gcloud compute resource-policies create workload-policy NAME --type=HIGH_THROUGHPUT
    --accelerator-topology=T --region=R`, as pulumi-gcp's ResourcePolicy takes it."""
    policy = {"type": "HIGH_THROUGHPUT", "accelerator_topology": wp.topology}
    if wp.mode:  # a dynamically sliced sub-block (model.dynamic_slicing), as Cluster Toolkit's resource-policy
        policy["accelerator_topology_mode"] = wp.mode
    return dict(name=wp.name, project=project, region=wp.region, workload_policy=policy)


def _camel(key: str) -> str:
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), key)


def engine_form(inputs: dict[str, Any]) -> dict[str, Any]:
    """The camelCase shape the engine records and policies read (None values are not sent)."""
    def convert(v: Any) -> Any:
        if isinstance(v, dict):
            return {_camel(k): convert(x) for k, x in v.items() if x is not None}
        if isinstance(v, list):
            return [convert(x) for x in v]
        return v
    return cast(dict[str, Any], convert(inputs))  # a dict converts to a dict
