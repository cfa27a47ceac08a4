"""Boot disks and local SSDs as data: which boot disk types and how many local SSDs each machine
type takes, so that a pool asking for what its machine cannot have stops at plan time instead of
at create time (the GKE rules `boot-disk-type` and `local-ssd-count`).

Sources:
- Boot disk types: gcloud `container node-pools create --disk-type` ("DISK_TYPE must be one of:
  pd-standard, pd-ssd, pd-balanced, hyperdisk-balanced, hyperdisk-extreme, hyperdisk-throughput"; GKE
  "Use custom boot disks" lists pd-balanced, pd-standard, pd-ssd and hyperdisk-balanced). Per series,
  Compute Engine "Accelerator-optimized machine family" (A3 Ultra, A4, A4X, G4: "Hyperdisk Balanced
  ... is the only disk type that is supported for the boot disk"; G2: "Standard Persistent Disk
  (pd-standard) isn't supported"; the A3 High, Mega and Edge disk lists have no pd-standard),
  "General-purpose machine family" ("C4 doesn't support Persistent Disk", the same for C4D, C4A and
  N4) and Cloud TPU "Attach durable block storage" (v6e: Hyperdisk Balanced or ML only).
- Local SSD counts: Compute Engine "About Local SSD disks" (docs/disks/local-ssd), its tables of the
  machine types that choose a count and of those that come with a fixed (bundled) number; the series
  without Local SSD (E2, N4, every TPU) are the ones its support table leaves empty. For the series added with
  the full machine catalog (N2D, C2, C2D, C3, C3D, C4, C4D, T2D, H3, M1, M2, M3) the counts are the GKE cluster
  autoscaler's machine-type table (gke-autoscaling `machinetypes`, its allowed ephemeral local SSD counts);
  C3, C3D, C4 and C4D take Local SSD only as their `-lssd` types, which the catalog does not offer, so their
  predefined types have none. Custom machine types are not judged (None).
- Boot disks of C3, C3D and H3: the same table's supported boot disk types (no pd-standard; H3 also no pd-ssd).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from gke_ai_batch.model.words import or_list

BOOT_DISK_TYPES = ("pd-balanced", "pd-standard", "pd-ssd", "hyperdisk-balanced", "hyperdisk-extreme",
                   "hyperdisk-throughput")


@dataclass(frozen=True)
class BootDisks:
    """The boot disk types a machine series takes, by machine type prefix."""

    series: str  # in words, for messages
    prefixes: tuple[str, ...]
    allowed: tuple[str, ...]


BOOT_DISK_SERIES = (
    BootDisks("A3 Ultra, A4, A4X, G4, C4, C4A, C4D, N4 and TPU v6e machines (Hyperdisk only)",
              ("a3-ultragpu-", "a4-highgpu-", "a4x-", "g4-", "c4-", "c4a-", "c4d-", "n4-", "ct6e-"),
              ("hyperdisk-balanced",)),
    BootDisks("G2 and A3 High, Mega and Edge machines (no Standard Persistent Disk)",
              ("g2-", "a3-highgpu-", "a3-megagpu-", "a3-edgegpu-"),
              tuple(t for t in BOOT_DISK_TYPES if t != "pd-standard")),
    BootDisks("C3 and C3D machines", ("c3-", "c3d-"), ("pd-balanced", "pd-ssd", "hyperdisk-balanced")),
    BootDisks("H3 machines (Balanced Persistent Disk or Hyperdisk Balanced)", ("h3-",),
              ("pd-balanced", "hyperdisk-balanced")),
)


def boot_disk_problem(machine_type: str, disk_type: str) -> str | None:
    """What is wrong with booting `machine_type` from `disk_type`, or None."""
    if disk_type not in BOOT_DISK_TYPES:
        return f"boot disk type {disk_type!r}: GKE boots nodes from {or_list(BOOT_DISK_TYPES)}"
    series = next((s for s in BOOT_DISK_SERIES if machine_type.startswith(s.prefixes)), None)
    if series and disk_type not in series.allowed:
        return (f"boot disk type {disk_type!r} on {machine_type}: {series.series} boot from "
                f"{or_list(series.allowed)}")
    return None


_N1 = (*range(1, 9), 16, 24)
_N1_WITH_T4 = (*range(1, 9), 16)
# N2 by vCPUs: (fewest, most, counts).
_N2 = ((2, 10, (1, 2, 4, 8, 16, 24)), (12, 20, (2, 4, 8, 16, 24)), (22, 40, (4, 8, 16, 24)),
       (42, 80, (8, 16, 24)), (82, 128, (16, 24)))
CHOSEN_LOCAL_SSDS: dict[str, tuple[int, ...]] = {  # machine types whose nodes choose a count
    "a2-highgpu-1g": (1, 2, 4, 8), "a2-highgpu-2g": (2, 4, 8), "a2-highgpu-4g": (4, 8), "a2-highgpu-8g": (8,),
    "a2-megagpu-16g": (8,),
    **{f"g2-standard-{n}": (1,) for n in (4, 8, 12, 16, 32)},
    "g2-standard-24": (2,), "g2-standard-48": (4,), "g2-standard-96": (8,),
    "g4-standard-6": (), "g4-standard-12": (1,), "g4-standard-24": (2,), "g4-standard-48": (4,),
    "g4-standard-96": (8,), "g4-standard-192": (16,), "g4-standard-384": (32,),
}
BUNDLED_LOCAL_SSDS: dict[str, int] = {  # machine types that come with their local SSDs
    "a2-ultragpu-1g": 1, "a2-ultragpu-2g": 2, "a2-ultragpu-4g": 4, "a2-ultragpu-8g": 8,
    "a3-highgpu-1g": 2, "a3-highgpu-2g": 4, "a3-highgpu-4g": 8, "a3-highgpu-8g": 16,
    "a3-megagpu-8g": 16, "a3-edgegpu-8g": 16, "a3-ultragpu-8g": 32, "a4-highgpu-8g": 32, "a4x-highgpu-4g": 4,
}
# By vCPUs: (fewest, most, counts), for the predefined types of each series.
_BY_VCPUS: dict[str, tuple[tuple[int, int, tuple[int, ...]], ...]] = {
    "n2": _N2,
    "n2d": ((2, 16, (1, 2, 4, 8, 16, 24)), (32, 48, (2, 4, 8, 16, 24)), (64, 80, (4, 8, 16, 24)),
            (96, 224, (8, 16, 24))),
    "c2": ((4, 8, (1, 2, 4, 8)), (16, 16, (2, 4, 8)), (30, 30, (4, 8)), (60, 60, (8,))),
    "c2d": ((2, 16, (1, 2, 4, 8)), (32, 32, (2, 4, 8)), (56, 56, (4, 8)), (112, 112, (8,))),
}
CHOSEN_LOCAL_SSDS.update({"m1-megamem-96": tuple(range(1, 9)), "m3-ultramem-32": (4, 8), "m3-ultramem-64": (4, 8),
                          "m3-megamem-64": (4, 8), "m3-ultramem-128": (8,), "m3-megamem-128": (8,)})
NO_LOCAL_SSD = ("e2-", "n4-", "t2d-", "c3-", "c3d-", "c4-", "c4d-", "h3-", "m1-ultramem-", "m2-", "ct4p-", "ct5lp-",
                "ct5p-", "ct6e-", "tpu7x-")
_PREDEFINED = re.compile(r"^([a-z0-9]+)-(standard|highmem|highcpu)-(\d+)$")


def local_ssd_counts(machine_type: str, gpu: str | None = None) -> tuple[int, ...] | None:
    """The local SSD counts a node of `machine_type` may have (() for none); None where the machine
    is not known here, which is not judged."""
    if machine_type in BUNDLED_LOCAL_SSDS:
        return (BUNDLED_LOCAL_SSDS[machine_type],)
    if machine_type in CHOSEN_LOCAL_SSDS:
        return CHOSEN_LOCAL_SSDS[machine_type]
    if machine_type.startswith(NO_LOCAL_SSD):
        return ()
    if machine_type.startswith("n1-"):
        return _N1_WITH_T4 if gpu == "nvidia-tesla-t4" else _N1
    predefined = _PREDEFINED.match(machine_type)
    if predefined and predefined.group(1) in _BY_VCPUS:
        vcpus = int(predefined.group(3))
        return next((counts for low, high, counts in _BY_VCPUS[predefined.group(1)] if low <= vcpus <= high), None)
    return None


def local_ssd_problem(machine_type: str, count: int, gpu: str | None = None) -> str | None:
    """What is wrong with `count` local SSDs on `machine_type`, or None (0 asks for none, or for a
    bundled machine's own number)."""
    allowed = local_ssd_counts(machine_type, gpu)
    if allowed is None or count == 0 or count in allowed:
        return None
    if not allowed:
        return f"{count} local SSDs: {machine_type} has no local SSDs"
    if machine_type in BUNDLED_LOCAL_SSDS:
        return f"{count} local SSDs: {machine_type} comes with {allowed[0]} (bundled), give {allowed[0]}"
    with_t4 = " with T4 GPUs" if machine_type.startswith("n1-") and gpu == "nvidia-tesla-t4" else ""
    return f"{count} local SSDs: {machine_type}{with_t4} takes {or_list(allowed)}"


# Local SSDs as the node's ephemeral storage (GKE's ephemeralStorageLocalSsdConfig): what pods may request of it.
# Each disk is 375 GiB (GKE API EphemeralStorageLocalSsdConfig.localSsdCount: "Each local SSD is 375 GB"; the
# cluster autoscaler's localssdsize.localSSDDiskSizeInGiB, 375); the filesystem takes a share GKE's cluster
# autoscaler measured per disk count on COS nodes (cloudprovider/gce/gce_reserved.go,
# ephemeralStorageOnLocalSSDFilesystemOverheadInKiBByOSAndDiskCount, in KiB; counts between 8 and 16 take 16's, as
# EphemeralStorageOnLocalSSDFilesystemOverheadInBytes does); the kubelet's hard eviction threshold
# nodefs.available holds back 10% of the rest (the same file's defaultKubeletEvictionHardEphemeralStorageRatio,
# which the autoscaler's templates.go CalculateAllocatable subtracts). GKE's own kube-reserved share of ephemeral
# storage is not published in these sources and is not subtracted, so the figure is at most what a node offers.
LOCAL_SSD_GIB = 375
_SCRATCH_OVERHEAD_KIB = {1: 7289472, 2: 13725224, 3: 20031312, 4: 26332924, 5: 32634536, 6: 38946604,
                         7: 45254008, 8: 51556096, 16: 52837800, 24: 78686620}
NODEFS_EVICTION_RATIO = Decimal("0.1")


def scratch_bytes(count: int) -> Decimal:
    """Bytes of ephemeral storage pods may request on one node whose `count` local SSDs back it."""
    measured = count if count <= 8 else 16 if count <= 16 else 24
    capacity = Decimal(count * LOCAL_SSD_GIB * 2**30 - _SCRATCH_OVERHEAD_KIB[measured] * 1024)
    return capacity * (1 - NODEFS_EVICTION_RATIO)
