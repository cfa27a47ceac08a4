import pytest

from gkebatch import catalog
from gkebatch.catalog import CatalogError


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
