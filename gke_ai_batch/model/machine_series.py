"""Compute Engine machine types as data: the predefined types of each series GKE nodes use, derived from the
series' documented memory-per-vCPU rule, the shapes no rule gives (listed as exceptions), and the custom
machine type rules.

Sources, by series:
- E2, N1, N2, N2D, N4, C3, C3D, C4, C4D, T2D: Compute Engine "General-purpose machine family"
  (https://cloud.google.com/compute/docs/general-purpose-machines): standard, highmem and highcpu types of
  the vCPU counts its tables list, with a fixed memory per vCPU per class.
- C2, H3: "Compute-optimized machine family" (https://cloud.google.com/compute/docs/compute-optimized-machines).
- M1, M2, M3: "Memory-optimized machine family" (https://cloud.google.com/compute/docs/memory-optimized-machines),
  whose types follow no single ratio: each is listed.
- A2, A3, A4, A4X, G2, G4: "Accelerator-optimized machine family"
  (https://cloud.google.com/compute/docs/accelerator-optimized-machines) and GKE's "GPU machine types" tables.
- TPU hosts: the Cloud TPU pages' VM tables ("TPU v5e", "TPU v6e", "TPU7x (Ironwood)", which also gives v5p);
  ct4p and tpu7x-standard-1t from the machine-types list only.
Every derived shape was checked against the GKE cluster autoscaler's machine-type table
(gke-autoscaling `machinetypes`), which lists each predefined type's vCPUs and GiB; where the table and a
ratio disagree the table's figure is listed in EXCEPTIONS (N2 highmem at 128 vCPUs, C3D highcpu above 16,
C4 and C4D types at 2 and 4 vCPUs). Its n2d-highmem-96 (786) is taken as a typo of the 8 GB per vCPU rule
(768).
Custom machine types: the "custom_machine_types" section of the general-purpose page and Google's custom
machine type sample (https://cloud.google.com/compute/docs/samples/compute-custom-machine-type-helper-class):
allowed vCPU counts, memory per vCPU, a multiple of 256 MB, and the extended-memory ceiling per series.
Compute Engine's "GB" is GiB (memoryMb / 1024 in `gcloud compute machine-types list`).
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal


def _d(text: str) -> Decimal:
    return Decimal(text)


@dataclass(frozen=True)
class MachineClass:
    """One class of a series' predefined types (standard, highmem, highcpu): `<series>-<class>-<vCPUs>`."""

    gib_per_vcpu: Decimal
    vcpus: tuple[int, ...]


@dataclass(frozen=True)
class CustomRule:
    """What a custom machine type of a series may be: `<prefix>-<vCPUs>-<MiB>`, `-ext` for extended memory."""

    prefix: str
    vcpu_runs: tuple[tuple[int, int, int], ...]  # (first, last, step): the allowed vCPU counts
    min_mib_per_vcpu: int
    max_mib_per_vcpu: int
    extended_max_mib: int | None  # None: the series has no extended memory

    @property
    def vcpus(self) -> frozenset[int]:
        return frozenset(n for first, last, step in self.vcpu_runs for n in range(first, last + 1, step))

    def vcpus_in_words(self) -> str:
        return ", ".join(str(first) if first == last else f"{first} to {last} in steps of {step}"
                         for first, last, step in self.vcpu_runs)


_N2_VCPUS = (2, 4, 8, 16, 32, 48, 64, 80, 96, 128)
_N2D_VCPUS = (2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224)
_N4_VCPUS = (2, 4, 8, 16, 32, 48, 64, 80)
_C2D_VCPUS = (2, 4, 8, 16, 32, 56, 112)
_C3_VCPUS = (4, 8, 22, 44, 88, 176)
_C3D_VCPUS = (4, 8, 16, 30, 60, 90, 180, 360)
_C4_VCPUS = (2, 4, 8, 16, 24, 32, 48, 64, 96, 144, 192, 288)
_C4D_VCPUS = (2, 4, 8, 16, 32, 48, 64, 96, 192, 384)
_N1_VCPUS = (2, 4, 8, 16, 32, 64, 96)

SERIES: dict[str, dict[str, MachineClass]] = {
    "e2": {"standard": MachineClass(_d("4"), (2, 4, 8, 16, 32)), "highmem": MachineClass(_d("8"), (2, 4, 8, 16)),
           "highcpu": MachineClass(_d("1"), (2, 4, 8, 16, 32))},
    "n1": {"standard": MachineClass(_d("3.75"), (1, *_N1_VCPUS)), "highmem": MachineClass(_d("6.5"), _N1_VCPUS),
           "highcpu": MachineClass(_d("0.9"), _N1_VCPUS)},
    "n2": {"standard": MachineClass(_d("4"), _N2_VCPUS), "highmem": MachineClass(_d("8"), _N2_VCPUS),
           "highcpu": MachineClass(_d("1"), _N2_VCPUS)},
    "n2d": {"standard": MachineClass(_d("4"), _N2D_VCPUS), "highmem": MachineClass(_d("8"), _N2D_VCPUS[:-2]),
            "highcpu": MachineClass(_d("1"), _N2D_VCPUS)},
    "n4": {"standard": MachineClass(_d("4"), _N4_VCPUS), "highmem": MachineClass(_d("8"), _N4_VCPUS),
           "highcpu": MachineClass(_d("2"), _N4_VCPUS)},
    "c2": {"standard": MachineClass(_d("4"), (4, 8, 16, 30, 60))},
    "c2d": {"standard": MachineClass(_d("4"), _C2D_VCPUS), "highmem": MachineClass(_d("8"), _C2D_VCPUS),
            "highcpu": MachineClass(_d("2"), _C2D_VCPUS)},
    "c3": {"standard": MachineClass(_d("4"), _C3_VCPUS), "highmem": MachineClass(_d("8"), _C3_VCPUS),
           "highcpu": MachineClass(_d("2"), _C3_VCPUS)},
    "c3d": {"standard": MachineClass(_d("4"), _C3D_VCPUS), "highmem": MachineClass(_d("8"), _C3D_VCPUS),
            "highcpu": MachineClass(_d("2"), _C3D_VCPUS)},
    "c4": {"standard": MachineClass(_d("3.75"), _C4_VCPUS), "highmem": MachineClass(_d("7.75"), _C4_VCPUS),
           "highcpu": MachineClass(_d("2"), _C4_VCPUS)},
    "c4d": {"standard": MachineClass(_d("3.875"), _C4D_VCPUS), "highmem": MachineClass(_d("7.875"), _C4D_VCPUS),
            "highcpu": MachineClass(_d("1.875"), _C4D_VCPUS)},
    "t2d": {"standard": MachineClass(_d("4"), (1, 2, 4, 8, 16, 32, 48, 60))},
    "g2": {"standard": MachineClass(_d("4"), (4, 8, 12, 16, 24, 32, 48, 96))},
}

# Shapes no series rule gives, looked up before the rules: (vCPUs, GiB).
EXCEPTIONS: dict[str, tuple[int, Decimal]] = {
    "n2-highmem-128": (128, _d("864")),  # N2 highmem: 8 GB per vCPU up to 96 vCPUs, then 864 GB
    # E2 shared-core: 2 vCPUs bursting on a fraction of one; GKE counts them as 1 core for allocatable
    # (GKE release notes, 2020-06-02, as the cluster autoscaler's table has them).
    "e2-micro": (1, _d("1")), "e2-small": (1, _d("2")), "e2-medium": (1, _d("4")),
    # C3D highcpu above 16 vCPUs: 59, 118, 177, 354 and 708 GB, not 2 GB per vCPU.
    "c3d-highcpu-30": (30, _d("59")), "c3d-highcpu-60": (60, _d("118")), "c3d-highcpu-90": (90, _d("177")),
    "c3d-highcpu-180": (180, _d("354")), "c3d-highcpu-360": (360, _d("708")),
    # C4 and C4D: the smallest types, whose ratio gives a fraction, have whole GB (rounded down).
    "c4-standard-2": (2, _d("7")), "c4-highmem-2": (2, _d("15")),
    "c4d-standard-2": (2, _d("7")), "c4d-standard-4": (4, _d("15")), "c4d-highmem-2": (2, _d("15")),
    "c4d-highmem-4": (4, _d("31")), "c4d-highcpu-2": (2, _d("3")), "c4d-highcpu-4": (4, _d("7")),
    # Memory-optimized: each type its own shape.
    "m1-ultramem-40": (40, _d("961")), "m1-ultramem-80": (80, _d("1922")), "m1-ultramem-160": (160, _d("3844")),
    "m1-megamem-96": (96, _d("1433.6")),
    "m2-ultramem-208": (208, _d("5888")), "m2-ultramem-416": (416, _d("11776")),
    "m2-megamem-416": (416, _d("5888")), "m2-hypermem-416": (416, _d("8832")),
    "m3-ultramem-32": (32, _d("976")), "m3-ultramem-64": (64, _d("1952")), "m3-ultramem-128": (128, _d("3904")),
    "m3-megamem-64": (64, _d("976")), "m3-megamem-128": (128, _d("1952")),
    "h3-standard-88": (88, _d("352")),
    # Accelerator-optimized.
    "a2-highgpu-1g": (12, _d("85")), "a2-highgpu-2g": (24, _d("170")), "a2-highgpu-4g": (48, _d("340")),
    "a2-highgpu-8g": (96, _d("680")), "a2-megagpu-16g": (96, _d("1360")), "a2-ultragpu-1g": (12, _d("170")),
    "a2-ultragpu-2g": (24, _d("340")), "a2-ultragpu-4g": (48, _d("680")), "a2-ultragpu-8g": (96, _d("1360")),
    "a3-highgpu-1g": (26, _d("234")), "a3-highgpu-2g": (52, _d("468")), "a3-highgpu-4g": (104, _d("936")),
    "a3-highgpu-8g": (208, _d("1872")), "a3-megagpu-8g": (208, _d("1872")), "a3-edgegpu-8g": (208, _d("1872")),
    "a3-ultragpu-8g": (224, _d("2952")),
    "a4-highgpu-8g": (224, _d("3968")), "a4x-highgpu-4g": (140, _d("884")),
    "g4-standard-48": (48, _d("180")), "g4-standard-96": (96, _d("360")), "g4-standard-192": (192, _d("720")),
    "g4-standard-384": (384, _d("1440")),
    # TPU hosts.
    "ct4p-hightpu-4t": (240, _d("407")),
    "ct5lp-hightpu-1t": (24, _d("48")), "ct5lp-hightpu-4t": (112, _d("192")), "ct5lp-hightpu-8t": (224, _d("384")),
    "ct5p-hightpu-4t": (208, _d("448")),
    "ct6e-standard-1t": (44, _d("176")), "ct6e-standard-4t": (180, _d("720")), "ct6e-standard-8t": (180, _d("1440")),
    "tpu7x-standard-4t": (224, _d("960")), "tpu7x-standard-1t": (56, _d("240")),
}

_GIB = 1024
CUSTOM: dict[str, CustomRule] = {  # series -> its custom machine type rule
    "e2": CustomRule("e2-custom", ((2, 32, 2),), 512, 8 * _GIB, None),
    "n1": CustomRule("custom", ((1, 1, 1), (2, 96, 2)), 922, 6656, 624 * _GIB),
    "n2": CustomRule("n2-custom", ((2, 32, 2), (36, 128, 4)), 512, 8 * _GIB, 624 * _GIB),
    "n2d": CustomRule("n2d-custom", ((2, 4, 2), (8, 16, 8), (32, 96, 16)), 512, 8 * _GIB, 768 * _GIB),
}
MEMORY_STEP_MIB = 256
