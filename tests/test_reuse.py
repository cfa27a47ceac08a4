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


def test_a_misspelt_argument_in_a_program_is_one_error_line(tmp_path):
    """`capacty: spot` once planned an on-demand pool in silence; a bad argument ended in a 46-line traceback."""
    program = _copy_of_reuse(tmp_path)
    source = program / "__main__.py"
    source.write_text(source.read_text().replace('"capacity": "spot"', '"capacty": "spot"'))
    r = subprocess.run([sys.executable, "-m", "gke_ai_batch.offline", "plan", "dev", "--out", str(tmp_path / "out")],
                       cwd=program, capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert ": invalid TpuSlicePool 'v6e-spot' arguments at capacty: unknown key `capacty`; did you mean `capacity`? " \
        "keys here: adopt, autoscaling, capacity," in r.stderr


def test_a_program_whose_pools_run_as_the_default_compute_account_is_refused(tmp_path):
    """Pools without `service_account` run as the Compute Engine default account (usually a project
    Editor); the example once did so and `make check` said nothing."""
    program = _copy_of_reuse(tmp_path)
    source = program / "__main__.py"
    text = source.read_text()
    assert '"service_account": gke.node_service_account' in text
    source.write_text(text.replace(',\n          "service_account": gke.node_service_account}', "}"))
    r = subprocess.run([sys.executable, "-m", "gke_ai_batch.offline", "check", "dev", "--out", str(tmp_path / "out")],
                       cwd=program, capture_output=True, text=True)
    assert r.returncode == 1, r.stdout + r.stderr
    refused = [line for line in r.stdout.splitlines() if line.startswith("node-service-account  mandatory")]
    assert len(refused) == 3, r.stdout  # the system pool and the two slices
    assert "node pool system: runs as the Compute Engine default service account (serviceAccount unset)" in r.stdout


def _copy_of_reuse(tmp_path):
    program = tmp_path / "reuse"
    program.mkdir()
    for f in (f for f in REUSE.iterdir() if f.is_file()):
        (program / f.name).write_text(f.read_text())
    return program


def test_a_program_that_reads_no_config_plans_without_a_stack_file(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: slices\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(
        "from gke_ai_batch.components.tpu_slice_pool import TpuSlicePool\n"
        "TpuSlicePool('v5e', {'project': 'acme-ml-dev', 'region': 'us-east5', 'cluster': 'ml', 'location': 'us-east5',"
        " 'zones': ['us-east5-b'], 'generation': 'v5e', 'topology': '2x4', 'labels': {'owner': 'ml'}})\n")
    r = subprocess.run([sys.executable, "-m", "gke_ai_batch.offline", "plan", "dev"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    resources = json.loads((tmp_path / "out" / "dev" / "resources.json").read_text())
    assert [p["inputs"]["nodeCount"] for p in resources if p["type"] == "gcp:container/nodePool:NodePool"] == [2]


def test_a_misspelt_stack_of_a_project_with_stack_files_is_still_named():
    r = subprocess.run([sys.executable, "-m", "gke_ai_batch.offline", "plan", "prd"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "no stack 'prd': give a name from" in r.stderr
