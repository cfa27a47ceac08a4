"""`make conform` is the project's own (issue 38 part 3): every manifest against the vendored upstream
schemas, strictly, CEL rules included, with no ../shared beside the clone."""
import copy
import shutil

import pytest
import yaml

from gke_ai_batch.conform.documents import Document, judge
from gke_ai_batch.offline.views.render import is_object, manifest_of

from .conftest import ROOT, STACKS, planned
from .forked_cli import run_module


def clusterqueue():
    return yaml.safe_load("""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: research}
spec:
  cohortName: ml
  queueingStrategy: BestEffortFIFO
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: cpu-workers
      resources:
      - {name: cpu, nominalQuota: 8, borrowingLimit: 4}
      - {name: memory, nominalQuota: 32Gi}
""")


def problems(body):
    return judge(Document("test.yaml#0", body)).findings.problems


def test_a_valid_clusterqueue_passes():
    assert problems(clusterqueue()) == []


@pytest.mark.parametrize("change,path,fragment", [
    (lambda q: q["spec"].update(queueingStrategy="FIFO"), "spec.queueingStrategy",
     "'FIFO' is not one of 'StrictFIFO', 'BestEffortFIFO'"),
    (lambda q: q["spec"]["resourceGroups"][0]["flavors"][0].update(nmae="x"),
     "spec.resourceGroups[0].flavors[0].nmae", "unknown field 'nmae' (did you mean 'name'?)"),
    (lambda q: q["spec"].pop("cohortName"), "spec", "borrowingLimit must be nil when cohort is empty"),
    (lambda q: q["spec"]["resourceGroups"][0]["flavors"][0]["resources"].pop(), "spec.resourceGroups[0]",
     "flavors must have the same number of resources as the coveredResources"),
    (lambda q: q["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].update(nominalQuota=8.0),
     "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", "8.0 is not of type integer or string"),
    (lambda q: q.update(apiVersion="kueue.x-k8s.io/v1beta1"), "apiVersion",
     "kueue.x-k8s.io/v1beta1 ClusterQueue is deprecated upstream; use kueue.x-k8s.io/v1beta2"),
    (lambda q: q["metadata"].update(name="Research"), "metadata.name", "not a DNS-1123 subdomain"),
])
def test_a_broken_clusterqueue_is_refused_with_the_path(change, path, fragment):
    """An unknown field, a bad enum, a CRD CEL rule broken, an integer written as a float, a deprecated
    version, a bad name: each refused at its path, as the API server would."""
    queue = clusterqueue()
    change(queue)
    found = problems(queue)
    assert any(p == path and fragment in m for p, m in found), found


@pytest.mark.parametrize("body,path,fragment", [
    ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "research"}, "spec": {"finalizer": ["x"]}},
     "spec", "Additional properties are not allowed ('finalizer' was unexpected)"),
    ({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PriorityClass", "metadata": {"name": "p"}, "value": 1},
     "apiVersion", "is not served by Kubernetes 1.33"),
    ({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "p"}, "value": 10.0},
     "value", "a float"),
    ({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}, "kind", "no schema for"),
    # served from 1.36 only, the newest minor a stack pins (dynamic-slicing): judged by 1.36's schema
    ({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingAdmissionPolicy", "metadata": {"name": "m"},
      "spec": {"failurPolicy": "Fail"}}, "spec",
     "Additional properties are not allowed ('failurPolicy' was unexpected)"),
])
def test_built_in_kinds_and_unknown_kinds(body, path, fragment):
    found = problems(body)
    assert any(p == path and fragment in m for p, m in found), found


def test_every_error_of_a_built_in_kind_is_reported():
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "b", "namespace": "research"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "nmae": "x"},
               "subjects": [{"kind": "Group", "name": "g@example.com", "namespce": "research"}]}
    paths = [p for p, _ in problems(binding)]
    assert paths == ["roleRef", "roleRef", "subjects[0]"], problems(binding)  # nmae unknown, name missing


@pytest.mark.parametrize("stack", STACKS)
def test_every_stacks_manifests_conform(stack):
    bodies = [manifest_of(r) for r in planned(stack) if is_object(r)]  # a fleet manager's workers' too
    assert bodies
    found = {d.label: d.findings.problems for d in (judge(Document(f"{stack}#{i}", copy.deepcopy(b)))
                                                    for i, b in enumerate(bodies))}
    assert {k: v for k, v in found.items() if v} == {}


def test_conform_runs_from_a_clone_without_shared(tmp_path):
    """The target a user runs: the sample workloads and a stack's manifests in a copy of the repository with
    no ../shared beside it; a broken manifest makes it exit 1 naming the file and path."""
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "examples" / "workloads", clone / "examples" / "workloads")
    assert not (tmp_path / "shared").exists()
    run = run_module("gke_ai_batch.conform", "--quiet", "examples/workloads", cwd=clone)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1].startswith("conform: ")
    broken = clusterqueue()
    broken["spec"]["queueingStrategy"] = "FIFO"
    (clone / "bad.yaml").write_text(yaml.safe_dump(broken))
    run = run_module("gke_ai_batch.conform", "--quiet", "bad.yaml", cwd=clone)
    assert run.returncode == 1
    assert "ERROR bad.yaml#0 ClusterQueue/research: spec.queueingStrategy: 'FIFO' is not one of" in run.stdout


def test_make_conform_does_not_need_shared():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\nconform:")[1].split("\n\n")[0]
    assert "../shared" not in recipe and "gke_ai_batch.conform" in recipe


def test_a_missing_path_or_an_empty_folder_is_one_line_exit_2(tmp_path):
    for target in (tmp_path / "nope", tmp_path):
        run = run_module("gke_ai_batch.conform", str(target))
        assert run.returncode == 2 and len(run.stderr.splitlines()) == 1 and "Traceback" not in run.stderr


def test_the_checker_reads_nothing_outside_the_package():
    """Its schemas ship in the package (a wheel has them too); no source names the authors' ../shared."""
    package = ROOT / "gke_ai_batch" / "conform"
    assert not [p.name for p in package.glob("*.py") if "../shared" in p.read_text()]
    assert "schemas/*/*.yaml" in (ROOT / "pyproject.toml").read_text()


def test_vendored_crds_are_the_release_files_unmodified():
    """Byte for byte the files the authors' ../shared/schemas holds, where a clone has it beside it."""
    shared = ROOT.parent / "shared" / "schemas"
    if not shared.is_dir():
        pytest.skip("no ../shared/schemas beside this clone to compare with")
    vendored = ROOT / "gke_ai_batch" / "conform" / "schemas"
    for release in ("kueue-v0.19.2", "jobset-v0.12.0", "gmp-v0.17.2"):
        upstream = sorted(p.name for p in (shared / release).glob("*.yaml"))
        assert sorted(p.name for p in (vendored / release).glob("*.yaml")) == upstream
        for name in upstream:
            assert (vendored / release / name).read_bytes() == (shared / release / name).read_bytes(), name


def test_a_compute_class_is_checked_against_gkes_schema(tmp_path):
    """GKE's ComputeClass schema (vendored extract): a misspelt field of a priority is refused with its path."""
    bad = {"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass", "metadata": {"name": "v6e"},
           "spec": {"priorities": [{"machineFamly": "ct6e"}], "nodePoolAutoCreation": {"enabled": True}}}
    (tmp_path / "cc.yaml").write_text(yaml.safe_dump(bad))
    done = run_module("gke_ai_batch.conform", str(tmp_path))
    assert done.returncode == 1 and "spec.priorities[0].machineFamly" in done.stdout, done.stdout
