"""GKE's create-time rules as data: what each setting the platform sends to GKE must satisfy, the
config path it concerns and the document that states it.

The planner checks every rule against the inputs it is about to send (gke_inputs, in the engine's
camelCase form) and stops with a ConfigError at the rule's config path; the policy pack runs the same
rules over the resources of any program (a mandatory violation). `docs/gke-rules.md` is generated
from this table (`make docs`).

A cluster rule's check takes the Cluster's props; a node pool rule's check takes the pool's props
and its cluster's props; a rule over all node pools takes the list of them and the cluster's props;
a network rule takes the cluster's Subnetwork props, the cluster's props and its node pools' props.
Each yields Findings: a message, and where in the field (or which pool) it points.
"""
from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from gke_ai_batch.model import catalog, disks, gpudirect, labels
from gke_ai_batch.model.maintenance import WindowError, parse_time, worst_case_hours
from gke_ai_batch.model.pool_facts import capacity_of, pool_facts
from gke_ai_batch.model.words import or_list, plural
from gke_ai_batch.vocabulary import Capacity

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
SLICE_SCALING = Source("GKE: About TPUs in GKE (a multi-host slice scales atomically, from zero to all its nodes); "
                       "Cluster Toolkit's TPU example (max nodes \"Must match your topology\") and the GKE API's error "
                       "in vllm-project/ci-infra#545 (\"Maximum node count 0 is not a valid size of TPU pod slice\")",
                       "https://cloud.google.com/kubernetes-engine/docs/concepts/tpus")
GPU_VERSIONS = Source("GKE: Run a small batch workload with GPUs and flex-start (1.33.0-gke.1712000); each GPU's "
                      "floor: AI Hypercomputer's GKE pages and Run GPUs in GKE Standard node pools",
                      "https://cloud.google.com/kubernetes-engine/docs/how-to/dws-flex-start-training")
FLEX_START_ZONES = Source("GKE: About flex-start (TPU v6e in asia-northeast1-b, us-east5-a and us-east5-b; v5e in "
                          "us-west4-a; v5p in us-east5-a)",
                          "https://cloud.google.com/kubernetes-engine/docs/concepts/dws")
QUEUED_TPUS = Source("Cluster Toolkit PR #5218, \"Adding GKE TPU DWS Queued Provisioning support for v6e and 7x\" "
                     "(its blueprint pins GKE 1.35; no GKE page documents queued provisioning for TPUs)",
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
TIME_SHARING = Source("GKE: Share GPUs with multiple workloads using time-sharing (at most 48 containers per GPU, as "
                      "secondary sources quote it)",
                      "https://cloud.google.com/kubernetes-engine/docs/how-to/timesharing-gpus")
RESERVED_LABELS = Source("pulumi-gcp NodePool nodeConfig.labels (\"The kubernetes.io/ and k8s.io/ prefixes are "
                         "reserved\"); the GKE API's errors for cloud.google.com/ keys "
                         "(terraform-provider-google#19677) and sandbox.gke.io/ keys "
                         "(terraform-google-kubernetes-engine#252)",
                         "https://www.pulumi.com/registry/packages/gcp/api-docs/container/nodepool/")

# The English page says 48 h in any 32 days; a newer translation says 92 days. 48 h in the worst 32
# days implies at least 96 h in any 92, so checking 32 days is right under either text.
MIN_MAINTENANCE_HOURS = 48
NO_UPGRADES_MAX = timedelta(days=90)  # 30 days until the release of 2 June 2026
MAX_EXCLUSIONS = 20
MAX_RUN_DURATION = timedelta(days=7)
SECURITY_GROUP = re.compile(r"^gke-security-groups@[a-z0-9.-]+\.[a-z]{2,}$")


def _release_channel(c: Props) -> str | None:
    channel = (c.get("releaseChannel") or {}).get("channel")
    return channel if channel and channel != "UNSPECIFIED" else None


def _window(c: Props) -> Iterator[Finding]:
    w = (c.get("maintenancePolicy") or {}).get("recurringWindow")
    if not w:
        return
    try:
        hours = worst_case_hours(w["startTime"], w["endTime"], w["recurrence"])
    except WindowError as e:
        yield Finding(str(e))
        return
    if hours < MIN_MAINTENANCE_HOURS:
        yield Finding(f"{w['recurrence']} from {w['startTime']} to {w['endTime']} gives {hours:g} h in the worst "
                      f"32 days; GKE needs {MIN_MAINTENANCE_HOURS} (counting only windows of 4 h or more): "
                      "lengthen the window or add days")


def _exclusions(c: Props) -> Iterator[Finding]:
    exclusions = (c.get("maintenancePolicy") or {}).get("maintenanceExclusions") or []
    if len(exclusions) > MAX_EXCLUSIONS:
        yield Finding(f"{len(exclusions)} exclusions: a cluster has at most {MAX_EXCLUSIONS} at a time")
    for i, e in enumerate(exclusions):
        try:
            start, end = parse_time(e["startTime"]), parse_time(e["endTime"])
        except WindowError as err:
            yield Finding(str(err), f"[{i}]")
            continue
        scope = (e.get("exclusionOptions") or {}).get("scope", "NO_UPGRADES")
        if scope != "NO_UPGRADES" and not _release_channel(c):
            yield Finding(f"exclusion {e['exclusionName']!r}: scope {scope} needs a release channel; "
                          "without one only NO_UPGRADES is allowed", f"[{i}].scope")
        elif end <= start:
            yield Finding(f"exclusion {e['exclusionName']!r} ends before it starts", f"[{i}].end")
        elif scope == "NO_UPGRADES" and end - start > NO_UPGRADES_MAX:
            yield Finding(f"exclusion {e['exclusionName']!r} lasts {(end - start).days} days; a NO_UPGRADES "
                          f"exclusion lasts at most {NO_UPGRADES_MAX.days} days (NO_MINOR_UPGRADES and "
                          "NO_MINOR_OR_NODE_UPGRADES may last until the version's end of support)", f"[{i}].end")


def _cidr(value: str) -> ipaddress.IPv4Network | None:
    try:
        return ipaddress.IPv4Network(value)
    except ValueError:
        return None


def _master_cidr(c: Props) -> Iterator[Finding]:
    cidr = (c.get("privateClusterConfig") or {}).get("masterIpv4CidrBlock")
    if cidr is None:
        return
    net = _cidr(cidr)
    if net is None or net.prefixlen != 28 or not net.is_private:
        yield Finding(f"{cidr!r}: the control plane range is a /28 in a private (RFC 1918) range, "
                      "such as 172.16.0.0/28")


def _private_endpoint(c: Props) -> Iterator[Finding]:
    private = c.get("privateClusterConfig") or {}
    if private.get("enablePrivateEndpoint") and not private.get("enablePrivateNodes"):
        yield Finding("private: the external endpoint is turned off only on a cluster with private nodes (the "
                      "provider applies enablePrivateEndpoint only then): set private_nodes true, or use authorized "
                      "(the external endpoint closed to all but the authorized networks)")


def _authorized_networks(c: Props) -> Iterator[Finding]:
    for i, b in enumerate((c.get("masterAuthorizedNetworksConfig") or {}).get("cidrBlocks") or []):
        if _cidr(b.get("cidrBlock", "")) is None:
            yield Finding(f"{b.get('cidrBlock')!r} is not an IPv4 CIDR block such as 10.0.0.0/8", f"[{i}].cidr")


def _security_group(c: Props) -> Iterator[Finding]:
    group = (c.get("authenticatorGroupsConfig") or {}).get("securityGroup")
    if group is not None and not SECURITY_GROUP.match(group):
        yield Finding(f"{group!r}: the group must be named gke-security-groups@<your domain>")


def _cluster_labels(c: Props) -> Iterator[Finding]:
    problem = labels.gcp_labels_problem(c.get("resourceLabels") or {})
    if problem:
        yield Finding(problem)


def _zone_of(zone: str, region: str) -> bool:
    return bool(re.fullmatch(re.escape(region) + r"-[a-z]", zone))


def region_of(location: str) -> str:
    """us-east5 from us-east5 or us-east5-b (a zonal cluster's location)."""
    return location[:-2] if re.search(r"-[a-z]$", location) else location


def _region_of(c: Props) -> str:
    return region_of(c.get("location") or "")


def _zone_findings(zones: list[str], region: str) -> Iterator[Finding]:
    for i, z in enumerate(zones):
        if region and not _zone_of(z, region):
            yield Finding(f"zone {z!r} is not in the cluster's region {region!r}; use a zone such as {region}-a",
                          f"[{i}]")
        elif zones.index(z) != i:
            yield Finding(f"zone {z!r} is listed twice", f"[{i}]")


def _cluster_location(c: Props) -> Iterator[Finding]:
    if not c.get("location"):
        yield Finding("a zonal cluster needs a zone: list at least one in zones")
    yield from _zone_findings(list(c.get("nodeLocations") or []), _region_of(c))


CLUSTER_RULES: tuple[GkeRule, ...] = (
    GkeRule("maintenance-availability", "cluster", "cluster.maintenance_window",
         "a recurring maintenance window gives at least 48 hours in any 32-day period, counting only "
         "contiguous windows of at least 4 hours; times are RFC 3339", MAINTENANCE, _window),
    GkeRule("maintenance-exclusion", "cluster", "cluster.maintenance_exclusions",
         "at most 20 exclusions; times are RFC 3339 and end after they start; a NO_UPGRADES exclusion lasts at "
         "most 90 days; the other scopes need a release channel", EXCLUSIONS, _exclusions),
    GkeRule("private-control-plane-range", "cluster", "cluster.master_ipv4_cidr",
         "the control plane's range of a private cluster is a /28 from a private range", PRIVATE, _master_cidr),
    GkeRule("private-endpoint-private-nodes", "cluster", "cluster.ip_endpoint",
         "the external IP endpoint is turned off (privateClusterConfig.enablePrivateEndpoint) only on a cluster "
         "with private nodes", PRIVATE_ENDPOINT, _private_endpoint),
    GkeRule("authorized-networks", "cluster", "cluster.master_authorized_networks",
         "authorized networks are IPv4 CIDR blocks", PRIVATE, _authorized_networks),
    GkeRule("security-group-name", "cluster", "cluster.security_group",
         "Google Groups for RBAC names the group gke-security-groups@<domain>", GROUPS, _security_group),
    GkeRule("cluster-resource-labels", "cluster", "labels",
         "resource labels: at most 64, keys and values of at most 63 lowercase letters, digits, '-' and '_', "
         "keys beginning with a letter", GCP_LABELS, _cluster_labels),
    GkeRule("cluster-zones", "cluster", "zones",
         "a zonal cluster has a zone; node locations are distinct zones of the cluster's region",
         LOCATIONS, _cluster_location),
)


def _auto_upgrade(p: Props, c: Props) -> Iterator[Finding]:
    channel = _release_channel(c)
    if channel and (p.get("management") or {}).get("autoUpgrade") is False:
        yield Finding(f"node auto-upgrade cannot be turned off on a cluster in the {channel} release channel; "
                      "protect running work with maintenance exclusions instead")


def _reservation_zone(p: Props, c: Props) -> Iterator[Finding]:
    affinity = (p.get("nodeConfig") or {}).get("reservationAffinity") or {}
    zones = p.get("nodeLocations") or []
    if affinity.get("consumeReservationType") == "SPECIFIC_RESERVATION" and len(zones) != 1:
        yield Finding(f"{list(zones) or 'the cluster zones'}: a reservation is zonal, so a reserved pool's nodes "
                      "consume it only in the reservation's zone; give exactly that zone")


def _pool_zones(p: Props, c: Props) -> Iterator[Finding]:
    yield from _zone_findings(list(p.get("nodeLocations") or []), _region_of(c))


NODE_POOL_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")


def _pool_name(p: Props, c: Props) -> Iterator[Finding]:
    name = p.get("name") or ""
    if not NODE_POOL_NAME.match(name):
        yield Finding(f"node pool name {name!r}: at most 40 lowercase letters, digits and '-', beginning with a "
                      "letter and ending with a letter or digit (a TPU pool adds -<slice> to its name)")


def _node_labels(p: Props, c: Props) -> Iterator[Finding]:
    for key, value in ((p.get("nodeConfig") or {}).get("labels") or {}).items():
        problem = labels.k8s_label_problem(key, str(value))
        if problem:
            yield Finding(problem, f".{key}")


# Node label keys GKE refuses: the kubernetes.io/ and k8s.io/ prefixes and their subdomains (the API:
# "Applying kubernetes label is not allowed: node-role.kubernetes.io/..."), and cloud.google.com/ (the
# API: "Node labels with key \"cloud.google.com/compute-class\" are managed by GKE or Kubernetes and must
# not be manually specified"). No GKE page lists the reserved cloud.google.com/ keys, so all are refused
# but the ones GKE's own pages tell users to set on a node pool: the DRANET driver's ("Allocate network
# resources with DRA": "--node-labels=cloud.google.com/gke-networking-dra-driver=true"; Cluster Toolkit's
# gke-node-pool sets it too). Cluster Toolkit also sets gke-queued and the TPU labels, which no GKE page
# asks for: they stay refused (GKE sets them itself, and the flavors select by them).
# GKE Sandbox's prefix too: "Node label \"sandbox.gke.io/runtime\" is reserved for gke sandbox."
# (terraform-google-kubernetes-engine#252; terraform-provider-google's node_config.go treats it as GKE's).
KUBERNETES_LABEL_DOMAINS = ("kubernetes.io", "k8s.io")
GKE_LABEL_DOMAINS = ("cloud.google.com", "sandbox.gke.io")
GKE_SETTABLE_LABELS = (gpudirect.DRA_DRIVER_LABEL,)


def reserved_label_key(key: str) -> bool:
    """True for a key GKE refuses on nodes: the prefix is one GKE or Kubernetes owns (a subdomain of
    kubernetes.io or k8s.io counts: node-role.kubernetes.io is refused too)."""
    prefix = key.rpartition("/")[0]
    if key in GKE_SETTABLE_LABELS:
        return False
    return prefix in GKE_LABEL_DOMAINS or any(prefix == d or prefix.endswith(f".{d}") for d in KUBERNETES_LABEL_DOMAINS)


def _label_prefixes(p: Props, c: Props) -> Iterator[Finding]:
    for key in (p.get("nodeConfig") or {}).get("labels") or {}:
        if reserved_label_key(key):
            yield Finding(f"label key {key!r}: keys under {key.rpartition('/')[0]}/ are managed by GKE or "
                          "Kubernetes and cannot be set on nodes; use a prefix of your own, such as example.com/",
                          f".{key}")


def _pool_labels(p: Props, c: Props) -> Iterator[Finding]:
    problem = labels.gcp_labels_problem((p.get("nodeConfig") or {}).get("resourceLabels") or {})
    if problem:
        yield Finding(problem)


def _max_run_duration(p: Props, c: Props) -> Iterator[Finding]:
    value = (p.get("nodeConfig") or {}).get("maxRunDuration")
    if value is not None and int(value.rstrip("s")) > MAX_RUN_DURATION.total_seconds():
        yield Finding(f"{value}: nodes run at most {MAX_RUN_DURATION.days} days "
                      f"({int(MAX_RUN_DURATION.total_seconds())}s)")


QUEUED_MIN_VERSION = "1.32.2-gke.1652000"  # GPUs with queued provisioning (flex-start with queued provisioning)
# Flex-start GPUs without queued provisioning: "Run a small batch workload with GPUs and flex-start"
# asks for 1.33.0-gke.1712000; "About flex-start" says 1.32.2-gke.1652000 for GPUs. The how-to's
# higher number wins: a cluster that meets it meets both.
FLEX_START_GPU_MIN_VERSION = "1.33.0-gke.1712000"
FLEX_START_TPU_MIN_VERSION = "1.33.0-gke.1712000"
# "About flex-start": the TPUs flex-start runs and the zones it runs them in ("TPU v3 and v4 are not
# supported"). Queued provisioning, which also runs on flex-start VMs, is judged by its own rule.
FLEX_START_TPU_ZONES = {"v5e": ("us-west4-a",), "v5p": ("us-east5-a",),
                        "v6e": ("asia-northeast1-b", "us-east5-a", "us-east5-b")}
FLEX_START_TPU_GENERATIONS = tuple(FLEX_START_TPU_ZONES)
# Queued provisioning for TPUs: no GKE page documents it. Google's Cluster Toolkit added it for v6e and
# TPU7x only (PR #5218, whose blueprint pins version_prefix "1.35."); for other TPUs the API answered
# "Flex start node pools don't support TPUs with queued provisioning" (AI-Hypercomputer/xpk#900).
QUEUED_TPU_GENERATIONS = ("v6e", "tpu7x")
QUEUED_TPU_MIN_VERSION = "1.35"  # a prefix: any 1.35 patch
# "The maximum number of containers that can use time-sharing in a single physical GPU is 48" (GKE, as
# secondary sources quote it); fewer than 2 clients is no sharing.
TIME_SHARING_CLIENTS = (2, 48)
MAX_CLUSTER_NODES = 65_000


def version_key(version: str) -> tuple[int, ...] | None:
    """(1, 33, 2, 1240000) from 1.33.2-gke.1240000; None for an alias such as `latest`."""
    numbers = re.findall(r"\d+", version)
    return tuple(int(n) for n in numbers) if re.match(r"^\d+\.\d+", version) else None


def version_below(version: str | None, floor: str) -> bool:
    """True when a pinned version is older than the floor. A prefix (`1.33`) means the newest patch
    of that minor, so only the parts it gives are compared; an unpinned version is not judged."""
    have, need = version_key(version or ""), version_key(floor)
    return have is not None and need is not None and have < need[:len(have)]


def floor_of(version: str | None, floors: Sequence[str]) -> str | None:
    """The floor a pinned version is below, or None. Where GKE gives one floor per minor version, a
    version takes the floor of its own minor (or of the newest minor before it); a minor older than
    every floor takes the oldest floor, which it is below."""
    have = version_key(version or "")
    ordered = sorted(floors, key=lambda f: version_key(f) or ())
    if have is None or not ordered:
        return None
    earlier = [f for f in ordered if (version_key(f) or ())[:2] <= have[:2]]
    floor = earlier[-1] if earlier else ordered[0]
    return floor if version_below(version, floor) else None


def _floors_in_words(floors: Sequence[str]) -> str:
    """"1.32.1-gke.1729000 or later", or one floor per minor: "... or later on 1.32, ... or later from 1.33"."""
    if len(floors) == 1:
        return f"{floors[0]} or later"
    minors = [".".join(f.split(".")[:2]) for f in floors]
    parts = [f"{f} or later on {m}" for f, m in zip(floors[:-1], minors[:-1], strict=True)]
    return ", ".join(parts) + f", {floors[-1]} or later from {minors[-1]}"


def _tpu_generation(p: Props) -> catalog.TpuGeneration | None:
    return catalog.tpu_machine_generation((p.get("nodeConfig") or {}).get("machineType") or "")


def _gpu(p: Props) -> Props:
    """The pool's first guest accelerator (GKE takes one GPU type per pool), or {}."""
    return ((p.get("nodeConfig") or {}).get("guestAccelerators") or [{}])[0] or {}


def _gpu_type(p: Props) -> catalog.GpuType | None:
    return catalog.GPU_TYPES.get(_gpu(p).get("type") or "")


def _queued(p: Props) -> bool:
    return bool((p.get("queuedProvisioning") or {}).get("enabled"))


def _flex_start_only(p: Props) -> bool:
    """Flex-start without queued provisioning: what GKE's flex-start pages describe."""
    return bool((p.get("nodeConfig") or {}).get("flexStart")) and not _queued(p)


def _autoscaling(p: Props) -> Props:
    return p.get("autoscaling") or {}


def _queued_form(p: Props, c: Props) -> Iterator[Finding]:
    nc = p.get("nodeConfig") or {}
    if (p.get("queuedProvisioning") or {}).get("enabled") and not nc.get("flexStart"):
        yield Finding("queued provisioning runs on flex-start VMs: set nodeConfig.flexStart with "
                      "queuedProvisioning (gcloud --flex-start --enable-queued-provisioning)")


def _flex_start_support(p: Props, c: Props) -> Iterator[Finding]:
    gen = _tpu_generation(p)
    if _flex_start_only(p) and gen and gen.name not in FLEX_START_TPU_GENERATIONS:
        yield Finding(f"flex-start TPUs are {', '.join(FLEX_START_TPU_GENERATIONS)}; {gen.name} is not one")


def _cluster_zones(c: Props) -> list[str]:
    """The zones a pool without node locations runs in: the cluster's, or a zonal cluster's own zone."""
    location = c.get("location") or ""
    return list(c.get("nodeLocations") or ([location] if re.search(r"-[a-z]$", location) else []))


def _flex_start_zones(p: Props, c: Props) -> Iterator[Finding]:
    gen, own = _tpu_generation(p), list(p.get("nodeLocations") or [])
    if not (_flex_start_only(p) and gen and gen.name in FLEX_START_TPU_ZONES):
        return
    allowed = FLEX_START_TPU_ZONES[gen.name]
    for i, zone in enumerate(own or _cluster_zones(c)):
        if zone not in allowed:
            yield Finding(f"zone {zone!r}: GKE runs flex-start TPU {gen.name} in {or_list(allowed)} only",
                          f"[{i}]" if own else "")


def _queued_tpus(p: Props, c: Props) -> Iterator[Finding]:
    gen, version = _tpu_generation(p), c.get("minMasterVersion")
    if not (gen and _queued(p)):
        return
    if gen.name not in QUEUED_TPU_GENERATIONS:
        yield Finding(f"queued provisioning takes TPU {or_list(QUEUED_TPU_GENERATIONS)}; {gen.name} is not one "
                      "(GKE: \"Flex start node pools don't support TPUs with queued provisioning\")")
    elif version_below(version, QUEUED_TPU_MIN_VERSION):
        yield Finding(f"queued-provisioning TPUs need GKE {QUEUED_TPU_MIN_VERSION} or later; the cluster pins "
                      f"{version}")


def _version_floors(p: Props, c: Props) -> Iterator[Finding]:
    version, gen = c.get("minMasterVersion"), _tpu_generation(p)
    if gen is None:
        return  # GPU and CPU pools: gpu-version-floors
    floors = [(gen.min_gke_version, f"TPU {gen.name}")] if gen.min_gke_version else []
    if (p.get("nodeConfig") or {}).get("flexStart"):
        floors.append((FLEX_START_TPU_MIN_VERSION, "flex-start TPUs"))
    for floor, what in floors:
        if version_below(version, floor):
            yield Finding(f"{what} need GKE {floor} or later; the cluster pins {version}")


def _gpu_version_floors(p: Props, c: Props) -> Iterator[Finding]:
    version, gpu = c.get("minMasterVersion"), _gpu_type(p)
    if _tpu_generation(p):
        return
    if gpu and floor_of(version, gpu.min_gke_versions):
        yield Finding(f"{gpu.name} GPUs need GKE {_floors_in_words(gpu.min_gke_versions)}; the cluster pins {version}")
    floor, what = {Capacity.FLEX_START: (FLEX_START_GPU_MIN_VERSION, "flex-start pools without queued provisioning"),
                   Capacity.QUEUED: (QUEUED_MIN_VERSION, "queued-provisioning pools")}.get(
                       capacity_of(p), (None, ""))
    if floor and version_below(version, floor):
        yield Finding(f"{what} need GKE {floor} or later; the cluster pins {version}")


def _accelerator_network_profile(p: Props, c: Props) -> Iterator[Finding]:
    network = p.get("networkConfig") or {}
    if network.get("acceleratorNetworkProfile") != gpudirect.AUTO_PROFILE:
        return
    machine, version = (p.get("nodeConfig") or {}).get("machineType"), c.get("minMasterVersion")
    if machine not in gpudirect.AUTO_PROFILE_MACHINES:
        yield Finding(f"{machine} has no automatic accelerator network profile; GKE offers it for "
                      f"{or_list(gpudirect.AUTO_PROFILE_MACHINES)}")
    if "datapathProvider" in c and c["datapathProvider"] != "ADVANCED_DATAPATH":  # a lone pool's cluster is unknown
        yield Finding("the automatic accelerator network profile needs GKE Dataplane V2 on the cluster")
    if version_below(version, gpudirect.AUTO_PROFILE_MIN_VERSION):
        yield Finding(f"the automatic accelerator network profile needs GKE {gpudirect.AUTO_PROFILE_MIN_VERSION} or "
                      f"later; the cluster pins {version}")
    if network.get("additionalNodeNetworkConfigs"):
        yield Finding("the automatic accelerator network profile creates the networks itself: declare no "
                      "additional node networks with it")


def _multi_networking(p: Props, c: Props) -> Iterator[Finding]:
    if not (p.get("networkConfig") or {}).get("additionalNodeNetworkConfigs") or "datapathProvider" not in c:
        return  # a lone pool's cluster is unknown
    if not c.get("enableMultiNetworking"):
        yield Finding("a pool with extra node networks needs multi-networking on the cluster "
                      "(cluster.multi_networking)")
    if c["datapathProvider"] != "ADVANCED_DATAPATH":
        yield Finding("a pool with extra node networks needs GKE Dataplane V2 on the cluster")


def _gpu_capacity(p: Props, c: Props) -> Iterator[Finding]:
    gpu, capacity = _gpu_type(p), capacity_of(p)
    if gpu and gpu.capacities and capacity not in gpu.capacities:
        machine = (p.get("nodeConfig") or {}).get("machineType") or next(iter(gpu.machines))
        yield Finding(f"capacity {capacity}: GKE runs {gpu.name} ({machine}) only on {or_list(gpu.capacities)} "
                      "capacity")


PER_ZONE_LIMITS = ("minNodeCount", "maxNodeCount")
TOTAL_LIMITS = ("totalMinNodeCount", "totalMaxNodeCount")


def _limits(a: Props, keys: Sequence[str]) -> str:
    return ", ".join(f"{k} {a[k]}" for k in keys if a.get(k) is not None)


def _autoscaling_limits(p: Props, c: Props) -> Iterator[Finding]:
    a = _autoscaling(p)
    per_zone, total = _limits(a, PER_ZONE_LIMITS), _limits(a, TOTAL_LIMITS)
    if per_zone and total:
        yield Finding(f"autoscaling gives per-zone limits ({per_zone}) and total limits ({total}); GKE takes one "
                      "kind or the other: limits per zone, or in total over the pool's zones")


def _flex_start_location_policy(p: Props, c: Props) -> Iterator[Finding]:
    if (p.get("nodeConfig") or {}).get("flexStart") and _autoscaling(p).get("locationPolicy") == "BALANCED":
        yield Finding("location policy BALANCED: GKE does not support it on flex-start pools (queued provisioning "
                      "included); use ANY, flex-start's default")


def slice_vms(p: Props) -> int | None:
    """The VMs of a multi-host TPU slice pool (its topology's chips over its machine's chips per VM);
    None for any other pool."""
    topology = (p.get("placementPolicy") or {}).get("tpuTopology")
    tpu = catalog.tpu_machine((p.get("nodeConfig") or {}).get("machineType") or "")
    if not topology or tpu is None:
        return None
    vms = catalog.slice_vms(topology, tpu.chips_per_vm)
    return vms if vms > 1 else None


def _slice_autoscaling(p: Props, c: Props) -> Iterator[Finding]:
    vms, a = slice_vms(p), _autoscaling(p)
    if vms is None or not a:
        return
    low, high = a.get("minNodeCount") or 0, a.get("maxNodeCount")
    if _limits(a, TOTAL_LIMITS):
        yield Finding(f"a multi-host slice of {vms} VMs takes per-zone limits: GKE sizes the slice by maxNodeCount "
                      "and, with total limits, reads 0 (\"Maximum node count 0 is not a valid size of TPU pod slice\")")
    elif high != vms or low not in (0, vms):
        yield Finding(f"minNodeCount {low}, maxNodeCount {high}: a multi-host slice of {vms} VMs scales as a unit, "
                      f"from 0 to all of them (minNodeCount 0 or {vms}, maxNodeCount {vms})")


def _boot_disk(p: Props, c: Props) -> Iterator[Finding]:
    nc = p.get("nodeConfig") or {}
    disk_type = nc.get("diskType") or (nc.get("bootDisk") or {}).get("diskType")
    problem = disk_type and disks.boot_disk_problem(nc.get("machineType") or "", disk_type)
    if problem:
        yield Finding(problem)


LOCAL_SSD_CONFIGS = ("ephemeralStorageLocalSsdConfig", "localNvmeSsdBlockConfig", "ephemeralStorageConfig")


def _local_ssds(p: Props, c: Props) -> Iterator[Finding]:
    nc = p.get("nodeConfig") or {}
    counts = [nc.get("localSsdCount")] + [(nc.get(k) or {}).get("localSsdCount") for k in LOCAL_SSD_CONFIGS]
    for count in counts:
        problem = count and disks.local_ssd_problem(nc.get("machineType") or "", int(count), _gpu(p).get("type"))
        if problem:
            yield Finding(problem)


def _time_sharing(p: Props, c: Props) -> Iterator[Finding]:
    sharing, (low, high) = _gpu(p).get("gpuSharingConfig") or {}, TIME_SHARING_CLIENTS
    clients = sharing.get("maxSharedClientsPerGpu")
    if sharing.get("gpuSharingStrategy") == "TIME_SHARING" and clients is not None and not low <= int(clients) <= high:
        yield Finding(f"{clients} clients per GPU: time-sharing shares one GPU among {low} to {high} containers")


def _placement(p: Props, c: Props) -> Iterator[Finding]:
    machine = (p.get("nodeConfig") or {}).get("machineType") or ""
    placement = p.get("placementPolicy") or {}
    topology = placement.get("tpuTopology")
    tpu = catalog.tpu_machine(machine)
    if machine not in catalog.WORKLOAD_POLICY_MACHINES or not topology or tpu is None:
        return
    if catalog.slice_vms(topology, tpu.chips_per_vm) > 1 and (not placement.get("policyName")
                                                              or placement.get("type") == "COMPACT"):
        yield Finding(f"a multi-host {machine} slice is placed by a HIGH_THROUGHPUT workload policy named in "
                      "placementPolicy.policyName, not by a COMPACT placement")


def _cluster_nodes(pools: Sequence[Props], c: Props) -> Iterator[Finding]:
    total = 0
    for i, p in enumerate(pools):
        total += pool_facts(p, c.get("nodeLocations") or ()).nodes
        if total > MAX_CLUSTER_NODES:
            yield Finding(f"the node pools up to this one hold {total:,} nodes at full size; a GKE cluster "
                          f"has at most {MAX_CLUSTER_NODES:,}", pool=i)
            return


POOL_RULES: tuple[GkeRule, ...] = (
    GkeRule("auto-upgrade-with-release-channel", "node pool", "capacity",
         "node auto-upgrade stays on for every pool of a cluster enrolled in a release channel",
         AUTO_UPGRADE, _auto_upgrade),
    GkeRule("node-pool-name", "node pool", "name",
         "a node pool name is at most 40 lowercase letters, digits and '-', beginning with a letter", NAMES,
         _pool_name),
    GkeRule("pool-zones", "node pool", "zones", "a pool's node locations are distinct zones of the cluster's region",
         LOCATIONS, _pool_zones),
    GkeRule("reservation-zone", "node pool", "zones",
         "a pool consuming a specific reservation has exactly one zone, the reservation's", RESERVATIONS,
         _reservation_zone),
    GkeRule("node-labels", "node pool", "node_labels",
         "node labels are Kubernetes labels: values of at most 63 characters of letters, digits, '-', '_' "
         "and '.', beginning and ending with a letter or digit", K8S_LABELS, _node_labels),
    GkeRule("node-label-prefixes", "node pool", "node_labels",
         "node label keys are not under kubernetes.io/ or k8s.io/ (or their subdomains), cloud.google.com/ or "
         f"sandbox.gke.io/, which GKE and Kubernetes manage, but for {', '.join(GKE_SETTABLE_LABELS)}, which "
         "GKE's pages set on node pools", RESERVED_LABELS, _label_prefixes),
    GkeRule("node-resource-labels", "node pool", "platform.labels",
         "node resource labels follow the GCP label rules", GCP_LABELS, _pool_labels),
    GkeRule("max-run-duration", "node pool", "max_run_duration", "a node's maximum run duration is at most 7 days",
         MAX_RUN, _max_run_duration),
    GkeRule("queued-provisioning-flex-start", "node pool", "capacity",
         "a queued-provisioning pool is also a flex-start pool (--flex-start with --enable-queued-provisioning), "
         f"on GKE {QUEUED_MIN_VERSION} or later", QUEUED, _queued_form),
    GkeRule("flex-start-tpu-generations", "node pool", "generation",
         f"flex-start TPUs are {', '.join(FLEX_START_TPU_GENERATIONS)}", FLEX_START, _flex_start_support),
    GkeRule("flex-start-tpu-zones", "node pool", "zones",
         "flex-start TPUs run in their generation's zones: " + "; ".join(
             f"{gen} in {or_list(zones)}" for gen, zones in FLEX_START_TPU_ZONES.items()),
         FLEX_START_ZONES, _flex_start_zones),
    GkeRule("queued-tpu-generations", "node pool", "generation",
         f"queued provisioning takes TPU {or_list(QUEUED_TPU_GENERATIONS)}, on GKE {QUEUED_TPU_MIN_VERSION} or later",
         QUEUED_TPUS, _queued_tpus),
    GkeRule("gke-version-floors", "node pool", "generation",
         f"a pinned cluster version is at least what the TPU pool needs: flex-start TPUs "
         f"{FLEX_START_TPU_MIN_VERSION}, TPU7x 1.34.0-gke.2201000", TPU7X, _version_floors),
    GkeRule("gpu-version-floors", "node pool", "gpu",
         f"a pinned cluster version is at least what the GPU pool needs: flex-start without queued provisioning "
         f"{FLEX_START_GPU_MIN_VERSION}, queued provisioning {QUEUED_MIN_VERSION}, and each GPU's own floor (H200 "
         "1.31.5-gke.1169000, B200 1.32.1-gke.1729000, GB200 1.32.8-gke.1108000 on 1.32 and 1.33.4-gke.1036000 "
         "from 1.33, RTX PRO 6000 1.34.0-gke.1662000)", GPU_VERSIONS, _gpu_version_floors),
    GkeRule("accelerator-network-profile", "node pool", "gpudirect",
         "GPUDirect's automatic networks (acceleratorNetworkProfile auto) need a machine type GKE lists for it, "
         f"Dataplane V2, GKE {gpudirect.AUTO_PROFILE_MIN_VERSION} or later, and no additional node networks",
         AUTO_NETWORKS, _accelerator_network_profile),
    GkeRule("multi-networking", "node pool", "gpudirect",
         "a pool with extra node networks (GPUDirect) is in a cluster with multi-networking and Dataplane V2",
         MULTI_NETWORK, _multi_networking),
    GkeRule("gpu-capacity-model", "node pool", "capacity",
         "H200 (A3 Ultra) and B200 (A4) run on reserved, spot, flex-start or queued capacity, not on-demand; "
         "GB200 (A4X) on reserved capacity only", GPU_CAPACITY, _gpu_capacity),
    GkeRule("gpu-time-sharing-clients", "node pool", "sharing.max_clients",
         f"GPU time-sharing shares one GPU among {TIME_SHARING_CLIENTS[0]} to {TIME_SHARING_CLIENTS[1]} "
         "containers", TIME_SHARING, _time_sharing),
    GkeRule("autoscaling-limits", "node pool", "autoscaling",
         "an autoscaled pool sets per-zone limits or total limits, never both", AUTOSCALER, _autoscaling_limits),
    GkeRule("flex-start-location-policy", "node pool", "autoscaling.location_policy",
         "a flex-start pool (queued provisioning included) autoscales with location policy ANY, not BALANCED",
         LOCATION_POLICY, _flex_start_location_policy),
    GkeRule("multi-host-slice-autoscaling", "node pool", "autoscaling",
         "an autoscaled multi-host TPU slice sets per-zone limits: maxNodeCount its VM count, minNodeCount 0 or "
         "that count (it scales as a unit)", SLICE_SCALING, _slice_autoscaling),
    GkeRule("boot-disk-type", "node pool", "disk_type",
         f"the boot disk is {or_list(disks.BOOT_DISK_TYPES)}; A3 Ultra, A4, A4X, G4, C4, C4A, C4D, N4 and TPU v6e "
         "boot from hyperdisk-balanced only; G2 and A3 High, Mega and Edge not from pd-standard", BOOT_DISKS,
         _boot_disk),
    GkeRule("local-ssd-count", "node pool", "local_ssd.count",
         "a node's local SSD count is one its machine type takes (bundled machines: exactly theirs; E2, N4 and "
         "TPU machines: none)", LOCAL_SSDS, _local_ssds),
    GkeRule("tpu7x-workload-policy", "node pool", "topology",
         "a multi-host TPU7x slice names a HIGH_THROUGHPUT workload policy instead of a COMPACT placement",
         TPU7X, _placement),
)

STACK_RULES: tuple[GkeRule, ...] = (
    GkeRule("cluster-node-limit", "node pools", "",
         f"all node pools together hold at most {MAX_CLUSTER_NODES:,} nodes at full size", LARGE, _cluster_nodes),
)

RESERVED_PER_SUBNET = 4  # Google Cloud keeps 4 addresses of every subnet's primary range
POD_BLOCK_PER_NODE = 24  # 110 Pods per node (GKE's default): a /24 per node
SURGE_NODES_PER_POOL = 1  # GKE's default maxSurge during node upgrades
RANGE_KEYS = {"control plane": "master_ipv4_cidr", "node": "nodes_cidr", "Pod": "pods_cidr", "Service": "services_cidr"}


def subnet_ranges(subnet: Props, c: Props) -> dict[str, ipaddress.IPv4Network]:
    """The cluster's ranges by role (control plane, node, Pod, Service), those given and well formed:
    the subnet's primary range, the secondary ranges the cluster names, a private Standard cluster's /28."""
    secondary = {r.get("rangeName"): r.get("ipCidrRange") for r in subnet.get("secondaryIpRanges") or []}
    policy = c.get("ipAllocationPolicy") or {}
    given = {"control plane": (c.get("privateClusterConfig") or {}).get("masterIpv4CidrBlock"),
             "node": subnet.get("ipCidrRange"), "Pod": secondary.get(policy.get("clusterSecondaryRangeName")),
             "Service": secondary.get(policy.get("servicesSecondaryRangeName"))}
    return {role: net for role, value in given.items() if value and (net := _cidr(value)) is not None}


def _range_overlap(subnet: Props, c: Props, pools: Sequence[Props]) -> Iterator[Finding]:
    ranges = subnet_ranges(subnet, c)
    roles = list(ranges)
    for i, role in enumerate(roles):
        for before in roles[:i]:
            if ranges[role].overlaps(ranges[before]):
                yield Finding(f"{ranges[role]} overlaps the {before} range {ranges[before]}; the control-plane, "
                              "node, Pod and Service ranges must not overlap", f".{RANGE_KEYS[role]}")
                return


def nodes_at_most(pools: Sequence[Props], zones: Sequence[str]) -> int:
    """The most nodes the pools can hold at once: every pool at full size, plus a surge node each."""
    return sum(pool_facts(p, zones).nodes for p in pools) + SURGE_NODES_PER_POOL * len(pools)


def nodes_held(cidr: ipaddress.IPv4Network, role: str) -> int:
    """How many nodes a node range (its addresses less the reserved ones) or a Pod range (a /24 each) holds."""
    if role == "node":
        return cidr.num_addresses - RESERVED_PER_SUBNET
    return cidr.num_addresses >> (32 - POD_BLOCK_PER_NODE)


def _prefix_for(nodes: int, role: str) -> int:
    """The longest prefix whose range holds `nodes` nodes in that role."""
    if role == "node":
        return 32 - (nodes + RESERVED_PER_SUBNET - 1).bit_length()
    return 32 - (nodes - 1).bit_length() - (32 - POD_BLOCK_PER_NODE)


def _range_sizes(subnet: Props, c: Props, pools: Sequence[Props]) -> Iterator[Finding]:
    ranges, nodes = subnet_ranges(subnet, c), nodes_at_most(pools, c.get("nodeLocations") or ())
    for role in ("node", "Pod"):
        if role in ranges and nodes_held(ranges[role], role) < nodes:
            yield Finding(f"{ranges[role]} holds {plural(nodes_held(ranges[role], role), 'node')}; "
                          f"the pools reach {plural(nodes, 'node')} at full size with one surge node each: use a "
                          f"/{_prefix_for(nodes, role)} or larger", f".{RANGE_KEYS[role]}")


NETWORK_RULES: tuple[GkeRule, ...] = (
    GkeRule("network-range-overlap", "network", "network",
         "the node range (the subnet's primary range), the Pod and Service secondary ranges and a private "
         "cluster's control-plane range do not overlap", ALIAS_IPS, _range_overlap),
    GkeRule("network-range-size", "network", "network",
         "the node range holds every node (less 4 reserved addresses) and the Pod range a /24 per node (110 "
         "Pods per node), for all pools at full size plus one surge node each", POD_RANGE, _range_sizes),
)

RULES = CLUSTER_RULES + POOL_RULES + STACK_RULES + NETWORK_RULES


def cluster_findings(cluster: Props) -> Iterator[tuple[GkeRule, Finding]]:
    for rule in CLUSTER_RULES:
        for finding in rule.check(cluster):
            yield rule, finding


def pool_findings(pool: Props, cluster: Props) -> Iterator[tuple[GkeRule, Finding]]:
    for rule in POOL_RULES:
        for finding in rule.check(pool, cluster):
            yield rule, finding


def stack_findings(pools: Sequence[Props], cluster: Props) -> Iterator[tuple[GkeRule, Finding]]:
    for rule in STACK_RULES:
        for finding in rule.check(pools, cluster):
            yield rule, finding


def network_findings(subnet: Props, cluster: Props, pools: Sequence[Props]) -> Iterator[tuple[GkeRule, Finding]]:
    for rule in NETWORK_RULES:
        for finding in rule.check(subnet, cluster, pools):
            yield rule, finding
