"""GKE's rules over a ComputeClass the platform declares (its manifest, camelCase as the cluster takes it) with its
cluster's props, and over the cluster's node auto-provisioning: the GKE versions a class's fields need, the ways
GKE offers each accelerator in, and the limits of auto-created node pools."""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gke_ai_batch.model import catalog
from gke_ai_batch.model.gke_pool_rules import (
    FLEX_START_TPU_GENERATIONS,
    FLEX_START_TPU_MIN_VERSION,
    FLEX_START_TPU_ZONES,
    flex_start_zone_refused,
    version_below,
)
from gke_ai_batch.model.gke_rule_sources import (
    AUTO_CREATION,
    CLASS_UNSUPPORTED,
    COMPUTE_CLASSES,
    FLEX_START_ZONES,
    GPU_CAPACITY,
    NAP_LIMITS,
    Finding,
    GkeRule,
    Props,
)
from gke_ai_batch.model.words import or_list
from gke_ai_batch.vocabulary import MAX_NODES_ANNOTATION, Capacity

COMPUTE_CLASS_MIN_VERSION = "1.30.3-gke.1451000"
AUTO_CREATION_ALONE_MIN_VERSION = "1.33.3-gke.1136000"
MAX_AUTO_CREATED_POOL_NODES = 1000


def _priorities(cc: Props) -> list[Mapping[str, Any]]:
    return list((cc.get("spec") or {}).get("priorities") or [])


def priority_capacity(rule: Mapping[str, Any]) -> Capacity:
    """The way a priority rule gets nodes: a named reservation, flex-start, spot, or on-demand."""
    if ((rule.get("reservations") or {}).get("affinity")) == "Specific":
        return Capacity.RESERVATION
    if (rule.get("flexStart") or {}).get("enabled"):
        return Capacity.FLEX_START
    return Capacity.SPOT if rule.get("spot") else Capacity.ON_DEMAND


def _tpu_generation(rule: Mapping[str, Any]) -> catalog.TpuGeneration | None:
    kind = (rule.get("tpu") or {}).get("type")
    return next((g for g in catalog.TPU_GENERATIONS.values() if g.accelerator == kind), None)


def _zones(cc: Props, rule: Mapping[str, Any]) -> list[str]:
    own = (rule.get("location") or {}).get("zones")
    return list(own or (((cc.get("spec") or {}).get("priorityDefaults") or {}).get("location") or {}).get("zones")
                or [])


def _class_version(cc: Props, c: Props) -> Iterator[Finding]:
    version = c.get("minMasterVersion")
    if version_below(version, COMPUTE_CLASS_MIN_VERSION):
        yield Finding(f"custom compute classes need GKE {COMPUTE_CLASS_MIN_VERSION} or later; the cluster pins "
                      f"{version}")


def _auto_creation(cc: Props, c: Props) -> Iterator[Finding]:
    creates = ((cc.get("spec") or {}).get("nodePoolAutoCreation") or {}).get("enabled")
    nap = (c.get("clusterAutoscaling") or {}).get("enabled")
    version = c.get("minMasterVersion")
    if c.get("enableAutopilot"):
        return  # Autopilot creates every node itself
    if creates and not nap and (version is None or version_below(version, AUTO_CREATION_ALONE_MIN_VERSION)):
        pinned = f"the cluster pins {version}" if version else "the cluster pins no version"
        yield Finding(f"a class creates its node pools without cluster-level auto-provisioning only on GKE "
                      f"{AUTO_CREATION_ALONE_MIN_VERSION} or later; {pinned}: pin one, or turn auto-provisioning on")


def _flex_start_tpus(cc: Props, c: Props) -> Iterator[Finding]:
    version = c.get("minMasterVersion")
    for i, rule in enumerate(_priorities(cc)):
        gen = _tpu_generation(rule)
        if gen is None or priority_capacity(rule) != Capacity.FLEX_START:
            continue
        tpu = rule.get("tpu") or {}
        if gen.name not in FLEX_START_TPU_GENERATIONS:
            yield Finding(f"flex-start TPUs are {or_list(FLEX_START_TPU_GENERATIONS)}; {gen.name} is not one", f"[{i}]")
        elif catalog.slice_vms(tpu.get("topology"), int(tpu.get("count") or 1)) > 1:
            yield Finding(f"topology {tpu.get('topology')} spans several hosts; a compute class gets flex-start TPUs "
                          "for single-host slices only: use a single-host shape, or a flex-start TPU pool", f"[{i}]")
        elif stray := [z for z in _zones(cc, rule) if z not in FLEX_START_TPU_ZONES[gen.name]]:
            yield Finding(flex_start_zone_refused(stray[0], gen.name), f"[{i}]")
        elif version_below(version, FLEX_START_TPU_MIN_VERSION):
            yield Finding(f"flex-start TPUs need GKE {FLEX_START_TPU_MIN_VERSION} or later; the cluster pins "
                          f"{version}", f"[{i}]")


def _gpu_ways(cc: Props, c: Props) -> Iterator[Finding]:
    for i, rule in enumerate(_priorities(cc)):
        gpu = catalog.GPU_TYPES.get((rule.get("gpu") or {}).get("type") or "")
        way = priority_capacity(rule)
        if gpu and gpu.capacities and way not in gpu.capacities:
            yield Finding(f"{way}: GKE offers {gpu.name} as {or_list([str(w) for w in gpu.capacities])} only",
                          f"[{i}]")


def _pool_size(cc: Props, c: Props) -> Iterator[Finding]:
    stated = ((cc.get("metadata") or {}).get("annotations") or {}).get(MAX_NODES_ANNOTATION)
    if stated and str(stated).isdigit() and int(stated) > MAX_AUTO_CREATED_POOL_NODES:
        yield Finding(f"{stated} nodes: GKE may put every node of one priority in one auto-created node pool, "
                      f"which holds at most {MAX_AUTO_CREATED_POOL_NODES:,}")


def _defaults_classes_ignore(cc: Props, c: Props) -> Iterator[Finding]:
    """GKE lists the settings ComputeClasses do not support: "Surge upgrades or blue-green upgrades" and "Node
    integrity and secure boot" (CLASS_UNSUPPORTED). What GKE does with such a default on a class's auto-created
    pool (ignores it, or refuses the pool) no page says, so a stack that sets one is refused rather than trusted."""
    defaults = (c.get("clusterAutoscaling") or {}).get("autoProvisioningDefaults") or {}
    shielded = defaults.get("shieldedInstanceConfig") or {}
    unsupported = [name for name, on in (
        ("surge or blue-green upgrade settings", bool(defaults.get("upgradeSettings"))),
        ("secure boot", bool(shielded.get("enableSecureBoot"))),
        ("integrity monitoring", bool(shielded.get("enableIntegrityMonitoring"))),
    ) if on]
    if unsupported:
        listed = unsupported[0] if len(unsupported) == 1 else f"{', '.join(unsupported[:-1])} and {unsupported[-1]}"
        yield Finding(f"the auto-provisioning defaults set {listed}, which GKE does not support for compute classes: "
                      "drop them, or manage those pools yourself")


def _nap_cpu_memory(c: Props) -> Iterator[Finding]:
    nap = c.get("clusterAutoscaling") or {}
    limited = {r.get("resourceType") for r in nap.get("resourceLimits") or []}
    if nap.get("enabled") and not {"cpu", "memory"} <= limited:
        yield Finding("node auto-provisioning needs cpu and memory limits; give both")


CLASS_RULES: tuple[GkeRule, ...] = (
    GkeRule("compute-class-version", "compute class", "platform.cluster.version",
            f"custom compute classes need GKE {COMPUTE_CLASS_MIN_VERSION} or later", COMPUTE_CLASSES, _class_version),
    GkeRule("class-auto-creation", "compute class", "platform.cluster.auto_provisioning",
            "a class creates node pools without cluster-level node auto-provisioning only on GKE "
            f"{AUTO_CREATION_ALONE_MIN_VERSION} or later", AUTO_CREATION, _auto_creation),
    GkeRule("class-flex-start-tpus", "compute class", "priorities",
            "a flex-start priority takes TPUs GKE runs on flex-start, single-host slices, in their flex-start "
            f"zones, on GKE {FLEX_START_TPU_MIN_VERSION} or later", FLEX_START_ZONES, _flex_start_tpus),
    GkeRule("class-gpu-ways", "compute class", "priorities",
            "a priority asks for a GPU in a way GKE offers it (H200 and B200: no on-demand; GB200: reserved only)",
            GPU_CAPACITY, _gpu_ways),
    GkeRule("class-unsupported-defaults", "compute class", "platform.cluster.auto_provisioning",
            "the auto-provisioning defaults set no surge or blue-green upgrade settings, no secure boot and no "
            "integrity monitoring, which compute classes do not support", CLASS_UNSUPPORTED, _defaults_classes_ignore),
    GkeRule("class-pool-size", "compute class", "max_nodes",
            f"an auto-created node pool holds at most {MAX_AUTO_CREATED_POOL_NODES:,} nodes", NAP_LIMITS, _pool_size),
)

NAP_RULES: tuple[GkeRule, ...] = (
    GkeRule("nap-cpu-memory-limits", "cluster", "cluster.auto_provisioning.limits",
            "node auto-provisioning on a Standard cluster has cpu and memory resource limits", NAP_LIMITS,
            _nap_cpu_memory),
)
