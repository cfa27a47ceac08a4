import pytest

from gke_ai_batch.model import catalog, disks, machines
from gke_ai_batch.model.catalog import CatalogError


@pytest.mark.parametrize("gen,topology,machine,vms,chips,multi", [
    ("v5e", "2x4", "ct5lp-hightpu-4t", 2, 8, True),
    ("v6e", "4x4", "ct6e-standard-4t", 4, 16, True),
    ("v5p", "4x4x4", "ct5p-hightpu-4t", 16, 64, True),
    ("v4", "2x2x4", "ct4p-hightpu-4t", 4, 16, True),
    ("tpu7x", "2x2x2", "tpu7x-standard-4t", 2, 8, True),
    ("v5e", "2x2", "ct5lp-hightpu-4t", 1, 4, False),
    ("v6e", "1x1", "ct6e-standard-1t", 1, 1, False),
    ("v5p", "2x2x1", "ct5p-hightpu-4t", 1, 4, False),
])
def test_slice_shapes(gen, topology, machine, vms, chips, multi):
    s = catalog.tpu_shape(gen, topology)
    assert (s.machine_type, s.vms, s.chips, s.multi_host) == (machine, vms, chips, multi)


def test_v5e_2x4_is_one_vm_on_the_8_chip_machine():
    s = catalog.tpu_shape("v5e", "2x4", "ct5lp-hightpu-8t")
    assert (s.vms, s.chips, s.multi_host) == (1, 8, False)


def test_unknown_topology_lists_the_valid_ones():
    with pytest.raises(CatalogError) as e:
        catalog.tpu_shape("v5e", "2x3")
    assert "2x3" in str(e.value) and "2x4, 4x4, 4x8, 8x8, 8x16, 16x16" in str(e.value)


def test_topology_the_named_machine_cannot_hold():
    with pytest.raises(CatalogError, match="topology for ct5lp-hightpu-8t '4x4'; allowed: 2x4"):
        catalog.tpu_shape("v5e", "4x4", "ct5lp-hightpu-8t")


def test_gpu_machines():
    assert catalog.gpu_machine("nvidia-h100-80gb") == ("a3-highgpu-8g", 8)
    assert catalog.gpu_machine("nvidia-h100-mega-80gb") == ("a3-megagpu-8g", 8)
    assert catalog.gpu_machine("nvidia-h200-141gb") == ("a3-ultragpu-8g", 8)
    assert catalog.gpu_machine("nvidia-b200") == ("a4-highgpu-8g", 8)
    assert catalog.gpu_machine("nvidia-l4", "g2-standard-48") == ("g2-standard-48", 4)
    with pytest.raises(CatalogError, match="unknown GPU type 'nvidia-k80'"):
        catalog.gpu_machine("nvidia-k80")


def test_single_host_topology_labels():
    assert catalog.single_host_topology("ct5lp-hightpu-8t") == "2x4"
    assert catalog.single_host_topology("ct6e-standard-4t") == "2x2"
    assert catalog.single_host_topology("ct5p-hightpu-4t") == "2x2x1"


# Shapes the Cloud TPU docs name: the v5p table ("TPU v5p": up to 16x16x24, 96 cubes) and the v4
# twisted-torus examples ("TPU v4": 4x4x8, 4x8x8, 12x12x24); 4x4x16 follows the cube rule.
@pytest.mark.parametrize("gen,topology,vms", [
    ("v5p", "2x2x1", 1), ("v5p", "2x2x2", 2), ("v5p", "2x4x4", 8), ("v5p", "4x4x4", 16), ("v5p", "4x4x8", 32),
    ("v5p", "4x8x8", 64), ("v5p", "8x8x8", 128), ("v5p", "8x8x16", 256), ("v5p", "8x16x16", 512),
    ("v5p", "16x16x16", 1024), ("v5p", "16x16x24", 1536), ("v5p", "4x4x16", 64),
    ("v4", "4x4x8", 32), ("v4", "4x8x8", 64), ("v4", "12x12x24", 864), ("tpu7x", "4x4x4", 16),
])
def test_documented_3d_shapes_plan(gen, topology, vms):
    assert catalog.tpu_shape(gen, topology).vms == vms


@pytest.mark.parametrize("gen,topology,fragment", [
    ("v5p", "16x20x28", "at most 96 cubes of 4x4x4 (6,144 chips); 16x20x28 is 8,960 chips"),  # xpk lists it
    ("v5p", "16x16x28", "at most 96 cubes"),
    ("v4", "16x16x32", "at most 64 cubes of 4x4x4 (4,096 chips)"),
    ("v4", "4x8x4", "write it as 4x4x8"),
    ("v5p", "6x6x6", "nearest shapes"),
])
def test_shapes_beyond_the_documented_rules_are_refused(gen, topology, fragment):
    with pytest.raises(CatalogError) as e:
        catalog.tpu_shape(gen, topology)
    assert fragment in str(e.value)


@pytest.mark.parametrize("topology, chips_per_vm, vms", [
    ("4x4", 4, 4),  # v6e 4x4: 16 chips on 4 ct6e-standard-4t VMs
    ("2x2x4", 4, 4),  # v5p 2x2x4
    ("2x2", 4, 1),  # a single-host slice
    ("4x4", 8, 2),
    (None, 4, 0), ("4-by-4", 4, 0), ("4x4", 0, 0),  # pools read back from other programs
])
def test_vms_per_slice_come_from_one_function(topology, chips_per_vm, vms):
    assert catalog.slice_vms(topology, chips_per_vm) == vms


def catalog_machines() -> list[str]:
    tpus = [m.machine_type for g in catalog.TPU_GENERATIONS.values() for m in g.machines]
    return tpus + sorted({m for g in catalog.GPU_TYPES.values() for m in g.machines})


@pytest.mark.parametrize("machine", catalog_machines())
def test_every_machine_the_catalog_names_has_every_fact_the_checks_read(machine):
    """A machine the catalog offers but machines.py or disks.py does not know would pass every cpu and
    memory quota check and every local SSD check unjudged: adding a generation must add its facts."""
    assert machines.allocatable(machine) is not None, f"{machine}: vCPUs and memory (model/machines.py)"
    assert disks.local_ssd_counts(machine) is not None, f"{machine}: local SSD counts (model/disks.py)"
