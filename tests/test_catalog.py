import pytest

from gke_ai_batch.model import catalog, disks, machines
from gke_ai_batch.model.catalog import CatalogError
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.plan.platform import build_platform

from .conftest import platform_of, run_config


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


# Issue 38 part 7: the catalog knew three general-purpose machine types, so these realistic pools were
# refused as "a machine type not in the catalog".
@pytest.mark.parametrize("where,machine", [
    ("system_pool", "n2-standard-16"), ("system_pool", "e2-standard-2"), ("system_pool", "n2-standard-4"),
    ("system_pool", "n2-standard-32"), ("cpu_pools", "n2d-standard-32"), ("cpu_pools", "n2-custom-8-32768"),
])
def test_general_purpose_and_custom_machine_types_plan(where, machine):
    cfg = platform_of("dev")
    if where == "system_pool":
        cfg.setdefault("system_pool", {})["machine_type"] = machine
    else:
        cfg["cpu_pools"][0]["machine_type"] = machine
    pools = [r.inputs for r in run_config(cfg, "dev") if r.type == "gcp:container/nodePool:NodePool"]
    assert machine in [p["nodeConfig"]["machineType"] for p in pools]


def test_a_custom_machine_counts_its_own_cpu_and_memory():
    """n2-custom-8-32768: 8 vCPUs and 32 GiB, less GKE's reservations, as n2-standard-8 has."""
    assert machines.allocatable("n2-custom-8-32768") == machines.allocatable("n2-standard-8")
    assert machines.shape("n2-custom-8-65536-ext") == (8, 64)
    assert machines.shape("custom-4-15360") == (4, 15)  # N1's custom types have no series prefix


@pytest.mark.parametrize("machine,vcpus,gib", [
    ("e2-standard-2", 2, 8), ("e2-highcpu-32", 32, 32), ("e2-medium", 1, 4), ("n1-standard-1", 1, "3.75"),
    ("n1-highcpu-96", 96, "86.4"), ("n2-highmem-128", 128, 864), ("n2d-standard-224", 224, 896),
    ("n4-highcpu-80", 80, 160), ("c2-standard-60", 60, 240), ("c2d-highmem-112", 112, 896),
    ("c3-standard-176", 176, 704), ("c3d-highcpu-360", 360, 708), ("c4-standard-2", 2, 7),
    ("c4-highmem-288", 288, 2232), ("c4d-standard-384", 384, 1488), ("c4d-highcpu-4", 4, 7),
    ("t2d-standard-60", 60, 240), ("h3-standard-88", 88, 352), ("m1-megamem-96", 96, "1433.6"),
    ("m3-ultramem-128", 128, 3904), ("g2-standard-96", 96, 384),
])
def test_predefined_shapes_follow_each_series_rule_and_table(machine, vcpus, gib):
    """Spot checks against the GKE cluster autoscaler's machine-type table, exceptions included."""
    from decimal import Decimal
    assert machines.shape(machine) == (vcpus, Decimal(str(gib)))


def test_a_typo_is_refused_with_the_nearest_names():
    problem = machines.unknown_machine("n2-standrd-16")
    assert problem is not None and problem.startswith("a machine type not in the catalog")
    assert "nearest: n2-standard-16" in problem


@pytest.mark.parametrize("machine,rule", [
    ("n2-custom-7-32768", "n2-custom-7-32768: n2-custom types have 2 to 32 in steps of 2, 36 to 128 in steps of 4 "
                          "vCPUs"),
    ("n2-custom-8-2048", "n2-custom takes at least 512 MB per vCPU (4096 MB for 8)"),
    ("n2-custom-8-32800", "custom memory is a multiple of 256 MB"),
    ("n2-custom-8-66560", "n2-custom takes at most 8192 MB per vCPU (65536 MB for 8); more needs extended memory, "
                          "n2-custom-8-66560-ext, up to 638976 MB in all"),
    ("e2-custom-4-40960-ext", "e2-custom has no extended memory (-ext): at most 8192 MB per vCPU"),
    ("n2d-custom-6-12288", "n2d-custom types have 2 to 4 in steps of 2, 8 to 16 in steps of 8, 32 to 96 in steps "
                           "of 16 vCPUs"),
])
def test_a_custom_type_breaking_its_series_rule_is_refused_with_the_rule(machine, rule):
    assert rule in (machines.unknown_machine(machine) or "")
    assert machines.allocatable(machine) is None


def test_a_custom_type_breaking_the_rule_is_one_config_error():
    cfg = platform_of("dev")
    cfg["cpu_pools"][0]["machine_type"] = "n2-custom-8-1024"
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == "platform.cpu_pools[0].machine_type"
    assert "n2-custom takes at least 512 MB per vCPU" in str(e.value)


@pytest.mark.parametrize("machine", machines.predefined_types())
def test_every_predefined_machine_has_its_local_ssd_facts(machine):
    """A pool of any catalog machine has its local SSD count judged (no silent pass for a new series)."""
    assert machines.allocatable(machine) is not None
    assert disks.local_ssd_counts(machine) is not None, f"{machine}: local SSD counts (model/disks.py)"
