"""The order of a stack file's mappings: `pulumi up` hands the program each structured config value as the
CLI's encoding/json writes its Go map (sdk/go/common/resource/config/object.go `MarshalString`), keys sorted,
so the offline plan does too; and where order matters to Kueue, a queue's flavors, it comes from lists."""
from pathlib import Path

import pytest
import yaml

from gke_ai_batch.offline.__main__ import main
from gke_ai_batch.offline.engine.stackfile import StackFile
from gke_ai_batch.plan.platform import build_platform
from gke_ai_batch.plan.scheduling import overruled_quota_orders

from .conftest import ROOT, STACKS, platform_of, run_config
from .test_golden import snapshot


def sorted_keys(value):
    """What the engine's JSON gives the program: every mapping's keys in order."""
    if isinstance(value, dict):
        return {k: sorted_keys(value[k]) for k in sorted(value)}
    return [sorted_keys(v) for v in value] if isinstance(value, list) else value


def flavor_order(platform, queue: str) -> list[str]:
    cq = next(q for q in platform.scheduling.cluster_queues if q.name == queue)
    return [f["name"] for g in cq.manifest["spec"]["resourceGroups"] for f in g["flavors"]]


def test_the_program_gets_structured_config_as_the_engine_writes_it():
    stack = StackFile("t", Path("t"), {"gke-ai-batch:platform": {"b": {"z": 1, "a": [{"y": "é", "x": 2}]},
                                                                 "a": {2: "two", True: "yes"}},
                                       "gke-ai-batch:plain": "text"})
    assert stack.pulumi_config() == {
        "gke-ai-batch:platform": '{"a":{"2":"two","true":"yes"},"b":{"a":[{"x":2,"y":"é"}],"z":1}}',
        "gke-ai-batch:plain": "text"}


def test_an_unsorted_quotas_mapping_plans_as_pulumi_up_deploys_it():
    """prod's training queue lists v5p-res before h200-res, dev's research queue v6e-queued before h100-dws:
    the offline plan followed that order while `pulumi up`, given the keys sorted, put h200-res and h100-dws
    first. The plan of the file must be the plan of what the engine hands the program."""
    for stack in ("prod", "dev"):
        written = platform_of(stack)
        assert list(written["teams"][0]["queue"]["quotas"]) != sorted(written["teams"][0]["queue"]["quotas"])
        assert snapshot(run_config(written, stack)) == snapshot(run_config(sorted_keys(written), stack)), stack


def reordered(stack: str, change) -> object:
    cfg = platform_of(stack)
    change(cfg)
    return build_platform(cfg)


def test_flavors_of_one_capacity_are_tried_in_the_order_their_pools_are_declared():
    def quotas_reversed(cfg):
        cfg["teams"][0]["queue"]["quotas"] = dict(reversed(cfg["teams"][0]["queue"]["quotas"].items()))

    def pools_reversed(cfg):
        cfg["tpu_pools"].reverse()

    assert flavor_order(build_platform(platform_of("flex-start")), "batch") == ["v6e-single", "v6e-multi"]
    assert flavor_order(reordered("flex-start", quotas_reversed), "batch") == ["v6e-single", "v6e-multi"]
    assert flavor_order(reordered("flex-start", pools_reversed), "batch") == ["v6e-multi", "v6e-single"]


def test_per_zone_flavors_follow_their_pools_zones_and_capacity_still_comes_first():
    def zones_reversed(cfg):
        next(p for p in cfg["gpu_pools"] if p["name"] == "l4-spot")["zones"].reverse()
        cfg["teams"][2]["queue"]["quotas"] = sorted_keys(cfg["teams"][2]["queue"]["quotas"])

    assert flavor_order(build_platform(platform_of("prod")), "inference-eval") == [
        "v5p-res", "h100-dws", "v5e-spot", "l4-spot-us-east5-a", "l4-spot-us-east5-b"]
    assert flavor_order(reordered("prod", zones_reversed), "inference-eval") == [
        "v5p-res", "h100-dws", "v5e-spot", "l4-spot-us-east5-b", "l4-spot-us-east5-a"]


# fleet-manager's flavors are its workers', read from their outputs: its notes are looked for through the CLI below.
@pytest.mark.parametrize("stack", [s for s in STACKS if s != "fleet-manager"])
def test_every_example_stack_writes_its_quotas_in_the_order_kueue_tries_them(stack):
    assert overruled_quota_orders(build_platform(platform_of(stack)).scheduling) == []


def test_a_stack_whose_written_order_is_not_followed_is_told(tmp_path, capsys):
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.flex-start.yaml").read_text())
    platform = doc["config"]["gke-ai-batch:platform"]
    platform["teams"][0]["queue"]["quotas"] = dict(reversed(platform["teams"][0]["queue"]["quotas"].items()))
    path = tmp_path / "Pulumi.swapped.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert main(["plan", str(path), "--out", str(tmp_path / "out")]) == 0
    notes = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("note: ")]
    assert notes == [
        "note: platform.teams[0].queue.quotas lists 'v6e-multi' before 'v6e-single', but Kueue tries 'v6e-single' "
        "first: flavors of one capacity are tried in the order they are declared (tpu_pools, gpu_pools, cpu_pools, "
        "compute_classes, each as listed), not in the order of `quotas`, whose keys `pulumi up` hands the program "
        "sorted; reorder the pools to change it, or the quotas to match it (docs/queues.md)"]
    assert main(["plan", "fleet-manager", "--out", str(tmp_path / "manager")]) == 0
    assert not [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("note: ")]
