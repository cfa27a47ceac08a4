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
  without Local SSD (E2, N4, every TPU) are the ones its support table leaves empty.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

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
NO_LOCAL_SSD = ("e2-", "n4-", "ct4p-", "ct5lp-", "ct5p-", "ct6e-", "tpu7x-")
_N2_PREDEFINED = re.compile(r"^n2-(standard|highmem|highcpu)-(\d+)$")


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
    n2 = _N2_PREDEFINED.match(machine_type)
    if n2:
        vcpus = int(n2.group(2))
        return next((counts for low, high, counts in _N2 if low <= vcpus <= high), None)
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
