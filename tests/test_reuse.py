"""examples/reuse: a separate Pulumi program that reuses the components with plain arguments plans
under the mock runtime and passes the policy pack (`make reuse` does the same from a fresh
virtualenv with the built wheel)."""
import json
import subprocess
import sys

from .conftest import ROOT

REUSE = ROOT / "examples" / "reuse"


def test_reuse_example_plans_and_passes_the_policies(tmp_path):
    r = subprocess.run([sys.executable, "-m", "gke_ai_batch.offline", "check", "dev", "--out", str(tmp_path)],
                       cwd=REUSE, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "policy check of dev: 0 mandatory" in r.stdout
    resources = json.loads((tmp_path / "resources.json").read_text())
    types = {r["type"] for r in resources}
    assert {"gke-ai-batch:index:GkeCluster", "gke-ai-batch:index:TpuSlicePool", "gke-ai-batch:index:KueueLayer",
            "gcp:container/cluster:Cluster"} <= types
    slices = [r for r in resources if r["type"] == "gcp:container/nodePool:NodePool" and "slice" in r["name"]]
    assert [s["inputs"]["nodeCount"] for s in slices] == [4, 4]  # a v6e 4x4 slice is 4 VMs of 4 chips
