"""GKE's create-time rules over a node pool, alone and with its cluster (capacity modes, zones, versions,
labels, disks, GPU sharing, networks, slices), and over all node pools together (the cluster's node limit)."""
from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import timedelta

from gke_ai_batch.model import catalog, disks, gpudirect, labels
from gke_ai_batch.model.gke_cluster_rules import cluster_region, release_channel, zone_findings
from gke_ai_batch.model.gke_rule_sources import (
    AUTO_NETWORKS,
    AUTO_UPGRADE,
    AUTOSCALER,
    BOOT_DISKS,
    FLEX_START,
    FLEX_START_ZONES,
    GCP_LABELS,
    GPU_CAPACITY,
    GPU_VERSIONS,
    K8S_LABELS,
    LARGE,
    LOCAL_SSDS,
    LOCATION_POLICY,
    LOCATIONS,
    MAX_RUN,
    MULTI_NETWORK,
    NAMES,
    QUEUED,
    QUEUED_TPUS,
    RESERVATIONS,
    RESERVED_LABELS,
    SLICE_SCALING,
    TIME_SHARING,
    TPU7X,
    Finding,
    GkeRule,
    Props,
)
from gke_ai_batch.model.pool_facts import capacity_of, pool_facts
from gke_ai_batch.model.words import nearest, or_list
from gke_ai_batch.vocabulary import Capacity

MAX_RUN_DURATION = timedelta(days=7)


def _auto_upgrade(p: Props, c: Props) -> Iterator[Finding]:
    channel = release_channel(c)
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
    yield from zone_findings(list(p.get("nodeLocations") or []), cluster_region(c), _cluster_zones(c))


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
# asks for: they stay refused (GKE sets them itself, and the flavors select by them). An open conflict: GKE's
# "About custom ComputeClasses" tells users to put cloud.google.com/compute-class on a manually created pool
# (--node-labels) to bind it to a class, while the API refused that very key from pulumi/Terraform labels
# (terraform-provider-google#19677, 2024). The platform binds no manual pool to a class, so the key stays refused.
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


def flex_start_zone_refused(zone: str, generation: str) -> str:
    """Why a pool's or a compute class's zone has no flex-start TPUs of that generation, the nearest zones
    first. No guess: a zone of another region is no typo of these, however alike the names."""
    return (f"zone {zone!r}: GKE runs flex-start TPU {generation} in "
            f"{or_list(nearest(zone, FLEX_START_TPU_ZONES[generation]))} only")


# Queued provisioning for TPUs: no GKE page documents it. Google's Cluster Toolkit added it for v6e and
# TPU7x only (PR #5218, whose blueprint pins version_prefix "1.35."); for other TPUs the API answered
# "Flex start node pools don't support TPUs with queued provisioning" (AI-Hypercomputer/xpk#900).
QUEUED_TPU_GENERATIONS = ("v6e", "tpu7x")
QUEUED_TPU_MIN_VERSION = "1.35"  # a prefix: any 1.35 patch
# "The maximum number of containers that can use time-sharing in a single physical GPU is 48" (GKE's time-sharing
# page, as secondary copies quote it: not confirmed on the page itself, so more stays refused; gke_rule_sources
# TIME_SHARING); fewer than 2 clients is no sharing.
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
    for i, zone in enumerate(own or _cluster_zones(c)):
        if zone not in FLEX_START_TPU_ZONES[gen.name]:
            yield Finding(flex_start_zone_refused(zone, gen.name), f"[{i}]" if own else "")


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
            f"queued provisioning takes TPU {or_list(QUEUED_TPU_GENERATIONS)}, on GKE {QUEUED_TPU_MIN_VERSION} or "
            "later",
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
            "boot from hyperdisk-balanced only; G2, C3, C3D and A3 High, Mega and Edge not from pd-standard; H3 from "
            "pd-balanced or hyperdisk-balanced", BOOT_DISKS,
            _boot_disk),
    GkeRule("local-ssd-count", "node pool", "local_ssd.count",
            "a node's local SSD count is one its machine type takes (bundled machines: exactly theirs; E2, N4, T2D, "
            "H3, M2, the C3, C3D, C4 and C4D types without -lssd, and TPU machines: none)", LOCAL_SSDS, _local_ssds),
    GkeRule("tpu7x-workload-policy", "node pool", "topology",
            "a multi-host TPU7x slice names a HIGH_THROUGHPUT workload policy instead of a COMPACT placement",
            TPU7X, _placement),
)

STACK_RULES: tuple[GkeRule, ...] = (
    GkeRule("cluster-node-limit", "node pools", "",
            f"all node pools together hold at most {MAX_CLUSTER_NODES:,} nodes at full size", LARGE, _cluster_nodes),
)
