"""What a node of each machine type offers pods: vCPUs and memory, less what GKE reserves.

Machine shapes (vCPU, GiB) come from the Cloud TPU pages' VM tables ("TPU v5e", "TPU v6e", "TPU7x
(Ironwood)", whose table also gives v5p), Compute Engine's "Accelerator-optimized machine family"
(A3: 208 vCPUs, 1,872 GB) and, where no page could be read, Google's cluster-autoscaler machine table,
checked against `gcloud compute machine-types list`. GKE's reservations are the documented brackets of
"Plan GKE Standard node sizes" (memory and CPU reservations, plus 100 MiB for kubelet eviction).
"""
from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

MACHINES: dict[str, tuple[int, int]] = {  # machine type -> (vCPUs, memory GiB)
    "e2-standard-4": (4, 16), "e2-standard-8": (8, 32), "n2-standard-8": (8, 32),
    "ct4p-hightpu-4t": (240, 407),  # cluster-autoscaler's table only: no page found
    "ct5lp-hightpu-1t": (24, 48), "ct5lp-hightpu-4t": (112, 192), "ct5lp-hightpu-8t": (224, 384),
    "ct5p-hightpu-4t": (208, 448),
    "ct6e-standard-1t": (44, 176), "ct6e-standard-4t": (180, 720), "ct6e-standard-8t": (180, 1440),
    "tpu7x-standard-4t": (224, 960), "tpu7x-standard-1t": (56, 240),  # -1t: the machine-types list only
    "n1-standard-4": (4, 15), "n1-standard-8": (8, 30), "n1-standard-16": (16, 60), "n1-standard-32": (32, 120),
    "n1-standard-64": (64, 240),
    "n2-standard-64": (64, 256),  # the Pathways head pool of GKE's "Create a GKE cluster with Pathways" page
    "g2-standard-4": (4, 16), "g2-standard-8": (8, 32), "g2-standard-12": (12, 48), "g2-standard-16": (16, 64),
    "g2-standard-24": (24, 96), "g2-standard-32": (32, 128), "g2-standard-48": (48, 192),
    "g2-standard-96": (96, 384),
    "a2-highgpu-1g": (12, 85), "a2-highgpu-2g": (24, 170), "a2-highgpu-4g": (48, 340), "a2-highgpu-8g": (96, 680),
    "a2-megagpu-16g": (96, 1360), "a2-ultragpu-1g": (12, 170), "a2-ultragpu-2g": (24, 340),
    "a2-ultragpu-4g": (48, 680), "a2-ultragpu-8g": (96, 1360),
    "a3-highgpu-1g": (26, 234), "a3-highgpu-2g": (52, 468), "a3-highgpu-4g": (104, 936),
    "a3-highgpu-8g": (208, 1872), "a3-megagpu-8g": (208, 1872), "a3-ultragpu-8g": (224, 2952),
    "a4-highgpu-8g": (224, 3968), "a4x-highgpu-4g": (140, 884),  # "GPU machine types" tables
    "g4-standard-48": (48, 180), "g4-standard-96": (96, 360), "g4-standard-192": (192, 720),
    "g4-standard-384": (384, 1440),
}

_CPU_RESERVED = ((1, Decimal("0.06")), (1, Decimal("0.01")), (2, Decimal("0.005")), (None, Decimal("0.0025")))
_MEMORY_RESERVED = ((4, Decimal("0.25")), (4, Decimal("0.20")), (8, Decimal("0.10")), (112, Decimal("0.06")),
                    (None, Decimal("0.02")))
EVICTION_MIB = 100


def _bracketed(amount: Decimal, brackets: Iterable[tuple[int | None, Decimal]]) -> Decimal:
    reserved, left = Decimal(0), amount
    for width, rate in brackets:
        take = left if width is None else min(left, Decimal(width))
        reserved, left = reserved + take * rate, left - take
        if left <= 0:
            break
    return reserved


def unknown_machine(machine_type: str) -> str | None:
    """Why a machine type is refused: the platform cannot judge the cpu and memory of one it does not know,
    and would otherwise count it as none, silently skipping every capacity check on its pools."""
    if machine_type in MACHINES:
        return None
    family = machine_type.split("-")[0]
    same = sorted(m for m in MACHINES if m.startswith(f"{family}-")) or sorted(m for m in MACHINES if "tpu" not in m)
    return ("a machine type not in the catalog, whose cpu and memory the platform cannot judge; known: "
            f"{', '.join(same)} (add one to gke_ai_batch/model/machines.py with its vCPUs, memory and source)")


def allocatable(machine_type: str) -> dict[str, Decimal] | None:
    """{"cpu": cores, "memory": bytes} a pod can ask for on one node; None for an unknown machine."""
    shape = MACHINES.get(machine_type)
    if shape is None:
        return None
    cpus, gib = (Decimal(x) for x in shape)
    memory_mib = gib * 1024 - _bracketed(gib, _MEMORY_RESERVED) * 1024 - EVICTION_MIB
    return {"cpu": cpus - _bracketed(cpus, _CPU_RESERVED), "memory": memory_mib * 2**20}
