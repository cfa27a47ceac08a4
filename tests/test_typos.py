"""Issue 49 item 7: a mistyped machine type, accelerator or zone gets the nearest names first and a guess
("did you mean ...?"), the way a mistyped key does (gke_ai_batch.model.words: one suggester for both); a
reservation's own name is the user's, but a mistyped word of its path gets the word it stands for."""
import pytest

from .conftest import config_refusal


@pytest.mark.parametrize("stack, change, line", [
    ("prod", lambda c: c["gpu_pools"][2].update(machine_type="g2-standrd-24"),
     "invalid stack config at platform.gpu_pools[2].machine_type: unknown machine type for nvidia-l4 "
     "'g2-standrd-24'; did you mean 'g2-standard-24'? allowed: g2-standard-24, g2-standard-4, g2-standard-12, "
     "g2-standard-32, g2-standard-48, g2-standard-8, g2-standard-16, g2-standard-96"),
    ("prod", lambda c: c["gpu_pools"][2].update(gpu="nvidia-l5"),
     "invalid stack config at platform.gpu_pools[2].gpu: unknown GPU type 'nvidia-l5'; did you mean 'nvidia-l4'? "
     "allowed: nvidia-l4, nvidia-b200, nvidia-tesla-t4, nvidia-gb200, nvidia-tesla-a100, nvidia-a100-80gb, "
     "nvidia-h100-80gb, nvidia-h200-141gb, nvidia-rtx-pro-6000, nvidia-h100-mega-80gb"),
    ("prod", lambda c: c["tpu_pools"][0].update(generation="v6"),
     "invalid stack config at platform.tpu_pools[0].generation: unknown TPU generation 'v6'; did you mean 'v6e'? "
     "allowed: v6e, v4, v5e, v5p, tpu7x"),
    ("prod", lambda c: c["tpu_pools"][0].update(machine_type="ct5p-hightpu-4"),
     "invalid stack config at platform.tpu_pools[0].machine_type: unknown machine type for TPU v5p "
     "'ct5p-hightpu-4'; did you mean 'ct5p-hightpu-4t'? allowed: ct5p-hightpu-4t"),
    ("prod", lambda c: c["gpu_pools"][2].update(zones=["us-east5-a", "us-eats5-b"]),
     "invalid stack config at platform.gpu_pools[2].zones[1]: zone 'us-eats5-b' is not in the cluster's region "
     "'us-east5'; did you mean 'us-east5-b'?"),
    ("prod", lambda c: c["tpu_pools"][1].update(zones=["us-east5-c"]),
     "invalid stack config at platform.tpu_pools[1].zones[0]: zone 'us-east5-c': GKE runs flex-start TPU v6e in "
     "us-east5-a, us-east5-b or asia-northeast1-b only"),
    ("dev", lambda c: c["compute_classes"][0].update(zones=["us-east5-a", "us-east5-b"]) or
     c["compute_classes"][0]["priorities"][2].update(zones=["us-east5-bb"]),
     "invalid stack config at platform.compute_classes[0].priorities[2].zones[0]: zone 'us-east5-bb' is not one "
     "of the class's: a priority's zones are among them; did you mean 'us-east5-b'? the class's zones: "
     "us-east5-b, us-east5-a"),
    ("prod", lambda c: c["gpu_pools"][1].update(reservation="h200-prod-reservation/reservationBlock/b1"),
     "invalid stack config at platform.gpu_pools[1].reservation: 'h200-prod-reservation/reservationBlock/b1': did "
     "you mean 'reservationBlocks' where it says 'reservationBlock'? name a reservation of this project (NAME), a "
     "shared one (projects/OWNER_PROJECT/reservations/NAME), or a block of one "
     "(NAME/reservationBlocks/BLOCK[/reservationSubBlocks/SUB_BLOCK]); each name is lowercase letters, digits and "
     "'-', starting with a letter"),
    ("prod", lambda c: c["gpu_pools"][1].update(reservation="projets/acme-ml-prod/reservation/h200"),
     "invalid stack config at platform.gpu_pools[1].reservation: 'projets/acme-ml-prod/reservation/h200': did "
     "you mean 'projects' where it says 'projets', 'reservations' where it says 'reservation'? name a reservation "
     "of this project (NAME), a shared one (projects/OWNER_PROJECT/reservations/NAME), or a block of one "
     "(NAME/reservationBlocks/BLOCK[/reservationSubBlocks/SUB_BLOCK]); each name is lowercase letters, digits and "
     "'-', starting with a letter"),
])
def test_a_mistyped_name_gets_a_guess_and_the_nearest_names_first(stack, change, line) -> None:
    assert str(config_refusal(stack, change)) == line


def test_a_name_like_none_allowed_gets_no_guess_and_the_list_in_order_of_likeness() -> None:
    e = config_refusal("prod", lambda c: c["gpu_pools"][2].update(gpu="amd-mi300x"))
    assert "did you mean" not in e.message and e.message.startswith("unknown GPU type 'amd-mi300x'; allowed: ")
