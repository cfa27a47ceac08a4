"""GKE's rules for a cluster with the slice controller, which TPU7x dynamic slicing needs (model.dynamic_slicing):
Standard, Rapid channel, a version floor, and Container-Optimized OS on its TPU7x nodes; and the later floor of
sub-slicing.

The sub-slicing rule takes the planner's facts (plan.gke_check): the cluster's pinned version (`minMasterVersion`)
and the pools that allow sub-slicing (`subSlicingPools`, their config paths). Whether a pool allows it lives in the
stack's pool entries, not in a GKE resource (the same node pools, cluster and policy either way), so the planner
checks this rule and the policy pack does not."""
from __future__ import annotations

from collections.abc import Iterator

from gke_ai_batch.model import catalog, dynamic_slicing
from gke_ai_batch.model.gke_cluster_rules import release_channel
from gke_ai_batch.model.gke_pool_rules import version_below
from gke_ai_batch.model.gke_rule_sources import DYNAMIC_SLICING, SUB_SLICING, Finding, GkeRule, Props


def slice_controller(c: Props) -> bool:
    return bool(((c.get("addonsConfig") or {}).get("sliceControllerConfig") or {}).get("enabled"))


def _standard(c: Props) -> Iterator[Finding]:
    if slice_controller(c) and c.get("enableAutopilot"):
        yield Finding("the slice controller runs on Standard clusters only; an Autopilot cluster has no node pools "
                      "for its sub-blocks")


def _rapid(c: Props) -> Iterator[Finding]:
    channel = release_channel(c)
    if slice_controller(c) and channel != "RAPID":
        yield Finding(f"{channel or 'no release channel'}: dynamic slicing needs the Rapid channel; set "
                      "release_channel: RAPID")


def _version(c: Props) -> Iterator[Finding]:
    """An unpinned cluster is refused too: GKE creates it at the Rapid channel's default version, which nothing
    here says is at the floor (plan.runtime_limits does not assume 1.36 either), and GKE's how-to supports
    dynamic slicing only "in one of the following versions"."""
    version, floor = c.get("minMasterVersion"), dynamic_slicing.SUPER_SLICING_MIN_VERSION
    if slice_controller(c) and (version is None or version_below(version, floor)):
        pinned = f"the cluster pins {version}" if version else "the cluster pins no version: pin one"
        yield Finding(f"dynamic slicing needs GKE {floor} or later (sub-slicing, slices smaller than 4x4x4, "
                      f"{dynamic_slicing.SUB_SLICING_MIN_VERSION}); {pinned}")


def _os_image(p: Props, c: Props) -> Iterator[Finding]:
    config = p.get("nodeConfig") or {}
    generation = catalog.tpu_machine_generation(config.get("machineType") or "")
    image = config.get("imageType")
    if slice_controller(c) and generation is not None and generation.name == dynamic_slicing.GENERATION and image \
            and image.upper() != dynamic_slicing.OS_IMAGE:
        yield Finding(f"image type {image}: TPU7x nodes of a cluster with the slice controller run "
                      f"Container-Optimized OS ({dynamic_slicing.OS_IMAGE})")


def _sub_slicing_version(facts: Props) -> Iterator[Finding]:
    version, floor, pools = facts.get("minMasterVersion"), dynamic_slicing.SUB_SLICING_MIN_VERSION, \
        facts.get("subSlicingPools") or []
    if pools and version_below(version, floor):
        yield Finding(f"{version}: sub-slicing (slices smaller than 4x4x4, on {', '.join(pools)}) needs GKE {floor} "
                      "or later; pin a later version, or drop sub_slicing")


SLICING_CLUSTER_RULES: tuple[GkeRule, ...] = (
    GkeRule("slice-controller-standard", "cluster", "cluster.mode",
            "the slice controller (TPU7x dynamic slicing) is turned on in Standard clusters only", DYNAMIC_SLICING,
            _standard),
    GkeRule("slice-controller-rapid-channel", "cluster", "cluster.release_channel",
            "a cluster with the slice controller is enrolled in the Rapid channel", DYNAMIC_SLICING, _rapid),
    GkeRule("slice-controller-version", "cluster", "cluster.version",
            f"a cluster with the slice controller pins a version of at least "
            f"{dynamic_slicing.SUPER_SLICING_MIN_VERSION} ({dynamic_slicing.SUB_SLICING_MIN_VERSION} for "
            "sub-slicing)", DYNAMIC_SLICING, _version),
)

SLICING_POOL_RULES: tuple[GkeRule, ...] = (
    GkeRule("slice-controller-os-image", "node pool", "generation",
            "TPU7x nodes of a cluster with the slice controller run Container-Optimized OS", DYNAMIC_SLICING,
            _os_image),
)

SUB_SLICING_RULES: tuple[GkeRule, ...] = (
    GkeRule("sub-slicing-version", "sub-slicing", "cluster.version",
            f"a pinned version of a cluster where a pool sets sub_slicing is at least "
            f"{dynamic_slicing.SUB_SLICING_MIN_VERSION}", SUB_SLICING, _sub_slicing_version),
)
