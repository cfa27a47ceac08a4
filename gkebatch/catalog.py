"""Accelerator catalog as data: the one place that knows GKE's TPU and GPU shapes.

Sources:
- TPU topologies, machine types and chips per VM: GKE "Plan TPUs in GKE" (cloud.google.com/
  kubernetes-engine/docs/concepts/plan-tpus) and the same table as data in xpk
  (AI-Hypercomputer/xpk src/xpk/core/system_characteristics.py). A slice whose chips exceed the
  machine's chips per VM is multi-host: chips / chips-per-VM VMs joined by ICI.
- v5e single-host shapes (1x1 on -1t, 2x2 on -4t, 2x4 on -8t): Cloud TPU "supported versions",
  v5e configurations; v6e mirrors v5e with ct6e-standard-1t/4t/8t.
- GPU labels, machine types and GPUs per VM: GKE "About GPUs in GKE" and xpk's GPU entries.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

TPU_RESOURCE = "google.com/tpu"
GPU_RESOURCE = "nvidia.com/gpu"

# Node labels GKE sets on accelerator nodes (used by nodeSelectors and Kueue ResourceFlavors).
TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TPU_TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
GPU_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"


@dataclass(frozen=True)
class TpuMachine:
    machine_type: str
    chips_per_vm: int
    topologies: tuple[str, ...]


@dataclass(frozen=True)
class TpuGeneration:
    name: str
    accelerator: str  # value of cloud.google.com/gke-tpu-accelerator
    machines: tuple[TpuMachine, ...]

    @property
    def topologies(self) -> list[str]:
        seen: dict[str, None] = {}
        for m in self.machines:
            seen.update(dict.fromkeys(m.topologies))
        return list(seen)


def _topos(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_V5P_TOPOLOGIES = _topos("""
2x2x1 2x2x2 2x2x4 2x4x4 4x4x4 4x4x8 4x4x12 4x8x8 4x4x20 4x8x12 4x4x28 8x8x8 4x12x12 4x8x20
4x4x44 8x8x12 4x4x52 4x8x28 4x12x20 8x8x16 4x4x68 8x12x12 4x4x76 8x8x20 4x12x28 4x8x44 4x4x92
8x12x16 4x20x20 4x8x52 12x12x12 8x8x28 4x4x116 8x12x20 4x4x124 8x16x16 4x12x44 4x8x68 4x20x28
12x12x16 4x4x148 4x8x76 4x12x52 8x16x20 4x4x164 8x12x28 4x4x172 8x8x44 12x12x20 4x8x92 4x4x188
12x16x16 4x28x28 8x20x20 4x12x68 8x8x52 4x4x212 12x12x24 4x20x44 8x16x28 4x12x76 4x8x116
4x4x236 12x16x20 4x4x244 4x8x124 12x12x28 16x16x16 4x20x52 8x12x44 8x8x68 4x12x92 8x20x28
12x16x24 4x8x148 12x20x20 8x8x76 4x28x44 8x12x52 16x16x20 12x12x36 4x8x164 12x16x28 4x20x68
4x8x172 4x12x116 8x16x44 12x20x24 4x28x52 8x8x92 4x12x124 4x8x188 4x20x76 16x16x24 12x24x24
16x20x28
""")

_TPU7X_TOPOLOGIES = _topos("""
2x2x1 2x2x2 2x2x4 2x4x4 4x4x4 4x4x8 4x4x12 4x4x20 4x4x28 4x4x44 4x4x52 4x4x68 4x4x76 4x4x92
4x4x116 4x4x124 4x4x148 4x4x164 4x4x172 4x4x188 4x4x212 4x4x236 4x4x244 4x8x8 4x8x12 4x8x20
4x8x28 4x8x44 4x8x52 4x8x68 4x8x76 4x8x92 4x8x116 4x8x124 4x8x148 4x8x164 4x8x172 4x8x188
4x12x12 4x12x20 4x12x28 4x12x44 4x12x52 4x12x68 4x12x76 4x12x92 4x12x116 4x12x124 4x20x20
4x20x28 4x20x44 4x20x52 4x20x68 4x20x76 4x28x28 4x28x44 4x28x52 8x8x8 8x8x12 8x8x16 8x8x20
8x8x28 8x8x44 8x8x52 8x8x68 8x8x76 8x8x92 8x12x12 8x12x16 8x12x20 8x12x28 8x12x44 8x12x52
8x16x16 8x16x20 8x16x28 8x16x44 8x20x20 8x20x28 12x12x12 12x12x16 12x12x20 12x12x24 12x12x28
12x12x36 12x16x16 12x16x20 12x16x24 12x16x28 12x20x20 12x20x24 12x24x24 16x16x16 16x16x20
16x16x24 16x16x32 16x20x28 16x24x24
""")

_V5E_V6E_MULTI_HOST = _topos("2x4 4x4 4x8 8x8 8x16 16x16")

TPU_GENERATIONS: dict[str, TpuGeneration] = {
    g.name: g
    for g in (
        TpuGeneration("v4", "tpu-v4-podslice", (
            TpuMachine("ct4p-hightpu-4t", 4, _topos(
                "2x2x1 2x2x2 2x2x4 2x4x4 4x4x4 4x4x8 4x8x8 8x8x8 8x8x12 8x8x16 8x16x16")),
        )),
        TpuGeneration("v5e", "tpu-v5-lite-podslice", (
            TpuMachine("ct5lp-hightpu-4t", 4, ("2x2",) + _V5E_V6E_MULTI_HOST),
            TpuMachine("ct5lp-hightpu-1t", 1, ("1x1",)),
            TpuMachine("ct5lp-hightpu-8t", 8, ("2x4",)),
        )),
        TpuGeneration("v5p", "tpu-v5p-slice", (
            TpuMachine("ct5p-hightpu-4t", 4, _V5P_TOPOLOGIES),
        )),
        TpuGeneration("v6e", "tpu-v6e-slice", (
            TpuMachine("ct6e-standard-4t", 4, ("2x2",) + _V5E_V6E_MULTI_HOST),
            TpuMachine("ct6e-standard-1t", 1, ("1x1",)),
            TpuMachine("ct6e-standard-8t", 8, ("2x4",)),
        )),
        TpuGeneration("tpu7x", "tpu7x", (
            TpuMachine("tpu7x-standard-4t", 4, _TPU7X_TOPOLOGIES),
        )),
    )
}


@dataclass(frozen=True)
class TpuShape:
    """What a (generation, topology, machine type) slice is: the numbers GKE and Kueue need."""

    generation: str
    accelerator: str
    topology: str
    machine_type: str
    chips_per_vm: int
    chips: int

    @property
    def vms(self) -> int:
        return self.chips // self.chips_per_vm

    @property
    def multi_host(self) -> bool:
        return self.vms > 1


class CatalogError(ValueError):
    """A value the catalog does not have; `allowed` lists what it does have."""

    def __init__(self, what: str, value: object, allowed: list[str]):
        self.what, self.value, self.allowed = what, value, allowed
        shown = ", ".join(allowed[:40]) + (f", ... ({len(allowed)} in all)" if len(allowed) > 40 else "")
        super().__init__(f"unknown {what} {value!r}; allowed: {shown}")


def tpu_generation(name: str) -> TpuGeneration:
    try:
        return TPU_GENERATIONS[name]
    except KeyError:
        raise CatalogError("TPU generation", name, list(TPU_GENERATIONS)) from None


def tpu_shape(generation: str, topology: str, machine_type: str | None = None) -> TpuShape:
    """Derive a slice's shape. Without a machine type, the 4-chip machine is preferred, which makes
    v5e/v6e 2x4 multi-host (2 VMs) as in GKE's multislice examples; name the -8t machine for one VM."""
    gen = tpu_generation(generation)
    if topology not in gen.topologies:
        raise CatalogError(f"topology for TPU {generation}", topology, gen.topologies)
    if machine_type is None:
        machine = next(m for m in gen.machines if topology in m.topologies)
    else:
        machine = next((m for m in gen.machines if m.machine_type == machine_type), None)
        if machine is None:
            raise CatalogError(f"machine type for TPU {generation}", machine_type,
                               [m.machine_type for m in gen.machines])
        if topology not in machine.topologies:
            raise CatalogError(f"topology for {machine_type}", topology, list(machine.topologies))
    chips = prod(int(x) for x in topology.split("x"))
    return TpuShape(gen.name, gen.accelerator, topology, machine.machine_type, machine.chips_per_vm, chips)


def tpu_machine_generation(machine_type: str) -> TpuGeneration | None:
    return next((g for g in TPU_GENERATIONS.values()
                 if any(m.machine_type == machine_type for m in g.machines)), None)


@dataclass(frozen=True)
class GpuType:
    name: str  # value of cloud.google.com/gke-accelerator and of guestAccelerator.type
    machines: dict[str, int]  # machine type -> GPUs per VM; the first is the default


GPU_TYPES: dict[str, GpuType] = {
    g.name: g
    for g in (
        GpuType("nvidia-tesla-t4", {"n1-standard-4": 1, "n1-standard-8": 1, "n1-standard-16": 2,
                                    "n1-standard-32": 4}),
        GpuType("nvidia-l4", {"g2-standard-12": 1, "g2-standard-4": 1, "g2-standard-8": 1,
                              "g2-standard-16": 1, "g2-standard-24": 2, "g2-standard-32": 1,
                              "g2-standard-48": 4, "g2-standard-96": 8}),
        GpuType("nvidia-tesla-a100", {"a2-highgpu-1g": 1, "a2-highgpu-2g": 2, "a2-highgpu-4g": 4,
                                      "a2-highgpu-8g": 8, "a2-megagpu-16g": 16}),
        GpuType("nvidia-a100-80gb", {"a2-ultragpu-1g": 1, "a2-ultragpu-2g": 2, "a2-ultragpu-4g": 4,
                                     "a2-ultragpu-8g": 8}),
        GpuType("nvidia-h100-80gb", {"a3-highgpu-8g": 8, "a3-highgpu-1g": 1, "a3-highgpu-2g": 2,
                                     "a3-highgpu-4g": 4}),
        GpuType("nvidia-h100-mega-80gb", {"a3-megagpu-8g": 8}),
        GpuType("nvidia-h200-141gb", {"a3-ultragpu-8g": 8}),
        GpuType("nvidia-b200", {"a4-highgpu-8g": 8}),
    )
}


def gpu_type(name: str) -> GpuType:
    try:
        return GPU_TYPES[name]
    except KeyError:
        raise CatalogError("GPU type", name, list(GPU_TYPES)) from None


def gpu_machine(gpu: str, machine_type: str | None = None) -> tuple[str, int]:
    """(machine type, GPUs per VM) for a GPU type; the catalog's default machine when none is named."""
    g = gpu_type(gpu)
    if machine_type is None:
        machine_type = next(iter(g.machines))
    if machine_type not in g.machines:
        raise CatalogError(f"machine type for {gpu}", machine_type, list(g.machines))
    return machine_type, g.machines[machine_type]


def tpu_machine(machine_type: str) -> TpuMachine | None:
    return next((m for g in TPU_GENERATIONS.values() for m in g.machines if m.machine_type == machine_type), None)


def single_host_topology(machine_type: str) -> str | None:
    """The topology GKE labels a single-host TPU node with: the one that fills exactly one VM."""
    m = tpu_machine(machine_type)
    if m is None:
        return None
    return next((t for t in m.topologies if prod(int(x) for x in t.split("x")) == m.chips_per_vm), None)


def topology_chips(topology: str) -> int:
    return prod(int(x) for x in topology.split("x"))
