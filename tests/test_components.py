"""Components used directly from Python, with no stack config to validate them: the policies still
judge what they declare, and the component contract (type tokens, child names) holds."""
import dataclasses

from gke_ai_batch.components.gpu_pool import GpuPool, GpuPoolArgs
from gke_ai_batch.components.tpu_slice_pool import TpuSlicePool, TpuSlicePoolArgs

from gke_ai_batch.offline.check import violations
from gke_ai_batch.offline.runtime import record
from gke_ai_batch.plan.platform import build_platform

from .conftest import platform_of

LABELS = {"environment": "dev", "owner": "ml-platform"}
WHERE = dict(project="acme-ml-dev", cluster="ml-dev", location="us-east5-b", labels=LABELS)


def dev_pools():
    return {p.name: p for p in build_platform(platform_of("dev")).pools}


def test_component_tokens_and_stable_child_names():
    plans = dev_pools()
    regs = record(lambda: TpuSlicePool("train", TpuSlicePoolArgs(
        slices=[plans["v5e-train-0"], plans["v5e-train-1"]], **WHERE)), "direct")
    types = {r.name: r.type for r in regs}
    assert types["train"] == "gke-ai-batch:index:TpuSlicePool"
    assert types["train-slice-0"] == types["train-slice-1"] == "gcp:container/nodePool:NodePool"
    # The pools are sound; alone in a stack they lack the JobSet install multi-host slices need.
    assert [v["policy"] for v in violations(regs) if v["level"] == "mandatory"] == ["jobset-installed"]


def test_policies_guard_hand_built_pools():
    plans = dev_pools()
    wrong_slice = dataclasses.replace(plans["v5e-train-0"], node_count=3, zones=("us-east5-a", "us-east5-b"))
    wrong_gpu = dataclasses.replace(plans["h100-dws"], per_node=4, capacity="on-demand", node_count=1,
                                    total_max_nodes=None, min_nodes=None)

    def program():
        TpuSlicePool("bad-tpu", TpuSlicePoolArgs(slices=[wrong_slice], **WHERE))
        GpuPool("bad-gpu", GpuPoolArgs(plan=wrong_gpu, **{**WHERE, "labels": {"environment": "dev"}}))

    found = {(v["policy"], v["message"]) for v in violations(record(program, "direct")) if v["level"] == "mandatory"}
    assert ("tpu-pool-shape", "node pool v5e-train-0: a 2x4 slice on ct5lp-hightpu-4t is 2 VMs; set nodeCount "
            "(or autoscaling max) to 2, not 3") in found
    assert any(p == "tpu-pool-shape" and "lives in one zone" in m for p, m in found)
    assert ("gpu-pool-shape", "node pool h100-dws: a3-highgpu-8g carries 8 x nvidia-h100-80gb; set "
            "guestAccelerators count to 8, not 4") in found
    assert ("required-labels", "h100-dws: add the label(s) owner") in found
