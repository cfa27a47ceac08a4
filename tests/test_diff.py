"""`make diff`: what a change since BASE would do to a stack, each side planned with its own code and stack file.

A throwaway git repository holds a copy of this working tree in two commits. BASE (HEAD~1) has older code
(a shorter Helm timeout in components/, another JobSet chart default in the core) and a stack that its
config rules refuse; HEAD raises one quota in dev, removes dev's `training` team (refused: it was not
draining), removes it from `drained` too, where BASE had it draining (accepted) and Kueue moves to 0.19.5,
adds a stack and deletes the refused one. The four planning diffs run at once (and each plans its two sides
in parallel), so the file takes a few seconds."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from gke_ai_batch.offline.changes.kueue_restart import RESTART
from gke_ai_batch.offline.changes.renames import RenameError, follow_rename
from gke_ai_batch.offline.diff import (
    SIGNS,
    DiffError,
    Side,
    base_commit,
    compare,
    input_changes,
    policy_lines,
    report,
    show,
    update_or_replace,
)

from .conftest import planned

ROOT = Path(__file__).resolve().parent.parent
QUOTA = "v6e-flex: {google.com/tpu: 16}"
TRAINING = "      - name: training\n"
DEV_CLUSTER = "projects/acme-ml-dev/locations/us-east5-b/clusters/ml-dev"
ADOPT_CLUSTER = ("      name: ml-dev\n", f"      name: ml-dev\n      adopt: {DEV_CLUSTER}\n")
ADOPT_SYSTEM_POOL = ("min_nodes: 1, max_nodes: 3}\n",
                     f"min_nodes: 1, max_nodes: 3, adopt: {DEV_CLUSTER}/nodePools/system}}\n")
BASE_CODE = {  # file -> (as now, as at BASE)
    "components/helm_install.py": ("timeout=600", "timeout=300"),
    "gke_ai_batch/model/releases.py": ('JOBSET_CHART = "oci://registry.k8s.io/', 'JOBSET_CHART = "oci://mirror.example/'),
}


@dataclass
class Run:
    code: int
    out: str
    err: str


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com",
                           "-c", "commit.gpgsign=false", *args], check=True, capture_output=True, text=True).stdout


def copy_working_tree(dest: Path) -> None:
    """Tracked and untracked (not ignored) files as they are now, so the copy plans like this tree does."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            check=True, capture_output=True, text=True).stdout
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path} no longer has {old!r}: update this test's setup"
    path.write_text(text.replace(old, new, 1))


def start(repo: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "gke_ai_batch.offline.diff", *args], cwd=repo,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen[str]) -> Run:
    out, err = proc.communicate()
    return Run(proc.returncode, out, err)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("diff-repo")
    copy_working_tree(repo)
    dev = (repo / "stacks/Pulumi.dev.yaml").read_text()
    for name, (now, then) in BASE_CODE.items():
        edit(repo / name, now, then)
    (repo / "stacks/Pulumi.broken.yaml").write_text(dev.replace(QUOTA, "no-such-pool: {google.com/tpu: 16}"))
    (repo / "stacks/Pulumi.drained.yaml").write_text(dev.replace(TRAINING, TRAINING + "        state: draining\n"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    for name, (now, then) in BASE_CODE.items():
        edit(repo / name, then, now)
    edit(repo / "stacks/Pulumi.dev.yaml", QUOTA, QUOTA.replace("16", "32"))
    edit(repo / "stacks/Pulumi.dev.yaml", dev[dev.index("      - name: training"):], "")
    (repo / "stacks/Pulumi.broken.yaml").unlink()  # gone now: only BASE plans it, and refuses it
    (repo / "stacks/Pulumi.fresh.yaml").write_text(dev.replace(*ADOPT_CLUSTER).replace(*ADOPT_SYSTEM_POOL))
    upgraded = "    kueue: {version: 0.19.5}\n    teams:\n"
    (repo / "stacks/Pulumi.drained.yaml").write_text((repo / "stacks/Pulumi.dev.yaml").read_text().replace(
        "    teams:\n", upgraded, 1))
    edit(repo / "stacks/Pulumi.fleet-manager.yaml", "generation: 1", "generation: 2")
    git(repo, "mv", "stacks/Pulumi.multislice.yaml", "stacks/Pulumi.multislice-v2.yaml")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    return repo


@pytest.fixture(scope="module")
def runs(repo: Path) -> dict[str, Run]:
    procs = {stack: start(repo, stack, "HEAD~1") for stack in ("dev", "fresh", "drained", "fleet-manager",
                                                                "stacks/Pulumi.broken.yaml")}
    procs["renamed"] = start(repo, "multislice-v2", "HEAD~1", "--renamed-from", "multislice")
    return {stack: finish(p) for stack, p in procs.items()}


def block(out: str, op: str, type_: str, name: str) -> list[str]:
    """A step's changed-path lines, from its `~ update  type  name` line to the next step."""
    lines = out.splitlines()
    at = lines.index(f"{SIGNS[op]} {op}  {type_}  {name}")
    rest = lines[at + 1:]
    return [ln.strip() for ln in rest[:next((i for i, ln in enumerate(rest) if not ln.startswith(" ")), len(rest))]]


def steps(out: str, sign: str) -> list[str]:
    return [ln for ln in out.splitlines() if ln.startswith(f"{sign} ")]


def test_a_quota_change_shows_its_path_with_old_and_new_value(runs: dict[str, Run]) -> None:
    dev = runs["dev"]
    assert dev.code == 1, dev.err  # the removed team's refusal (below)
    # the cpu and memory that come with the chips follow them
    assert block(dev.out, "update", "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "queues-cq-research") == [
        'spec.resourceGroups[0].flavors[name="v6e-flex"].resources[name="cpu"].nominalQuota: "717920m" -> "1435840m"',
        'spec.resourceGroups[0].flavors[name="v6e-flex"].resources[name="memory"].nominalQuota: "2862048Mi" -> '
        '"5724097Mi"',
        'spec.resourceGroups[0].flavors[name="v6e-flex"].resources[name="google.com/tpu"].nominalQuota: 16 -> 32']


def test_base_is_planned_with_its_own_code(runs: dict[str, Run]) -> None:
    """BASE's components/ (mapped into the package) and core are the ones imported, not the installed tree's."""
    out = runs["dev"].out
    assert block(out, "update", "kubernetes:helm.sh/v3:Release", "jobset-release") == [
        'chart: "oci://mirror.example/jobset/charts/jobset" -> "oci://registry.k8s.io/jobset/charts/jobset"',
        "timeout: 300 -> 600"]
    assert block(out, "update", "kubernetes:helm.sh/v3:Release", "kueue-release") == ["timeout: 300 -> 600"]


def test_a_removed_team_shows_as_deletes_and_the_counts_add_up(runs: dict[str, Run]) -> None:
    dev, fresh = runs["dev"].out, runs["fresh"].out
    everything = [ln[len("+ create  "):] for ln in steps(fresh, "+")]
    training = [r for r in everything if "training" in r.split("  ")[1]]
    assert {ln[len("- delete  "):] for ln in steps(dev, "-")} == set(training)
    # per namespace (training, training-eval): its object quota, container limits and network policy besides the
    # rest; no alert policy (the shared team alerts covered it); the dashboard loses its section, the
    # ProvisioningRequest alert its queue and the queue viewers' binding its groups
    assert "gke-ai-batch:index:Team  team-training" in training and len(training) == 18
    assert not [r for r in training if r.startswith("gcp:monitoring/alertPolicy:AlertPolicy")]
    assert not steps(dev, "+")
    assert {ln.split()[-1] for ln in steps(dev, "~")} >= {"observability-dashboard",
                                                          "observability-platform-provisioning-request-failing",
                                                          "tenancy-queue-viewer-clusterrolebinding"}
    total = len(everything) + len(steps(fresh, "="))  # fresh imports what it adopts
    assert f"0 to add, 6 to change, 0 to replace, 18 to delete, {total - 24} unchanged" in dev.splitlines()


def test_created_and_deleted_resources_show_what_a_reviewer_approves_or_loses(runs: dict[str, Run]) -> None:
    fresh, dev = runs["fresh"].out, runs["dev"].out
    quotas = block(fresh, "create", "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "queues-cq-training")
    assert quotas[0] == "cohort: ml" and "quota v5e-train: cpu 223300m (borrow 223300m), memory 371307Mi " \
        "(borrow 371307Mi), google.com/tpu 8 (borrow 8)" in quotas
    assert block(fresh, "create", "gcp:container/nodePool:NodePool", "v5e-train-slice-0") == [
        "shape: ct5lp-hightpu-4t, topology 2x4; 2 nodes; on-demand; zones us-east5-b"]
    assert block(dev, "delete", "kubernetes:core/v1:Namespace", "team-training-ns-training") == [
        "team training; Pod Security baseline"]


def test_the_review_shows_both_sides_policy_results_and_each_teams_quotas_before_and_after(runs) -> None:
    dev = runs["dev"].out
    assert "policy check: BASE 0 mandatory, " in dev and "-> working tree 0 mandatory, " in dev
    quotas = dev[dev.index("accelerator quotas per team (nominal):"):].splitlines()
    assert quotas[1].split() == ["team", "ClusterQueue", "flavor", "resource", "BASE", "->", "working", "tree"]
    assert ["research", "research", "v6e-flex", "google.com/tpu", "16", "->", "32"] in [q.split() for q in quotas]
    assert ["training", "training", "v5e-train", "google.com/tpu", "8", "->", "-"] in [q.split() for q in quotas]
    # the pools did not change, and the table prices none of them yet: only the cluster fee on both sides
    assert "monthly list price (744 h, us-east5), BASE -> working tree: at full size $74.40 -> $74.40 (+$0.00), " \
        "guaranteed $74.40 -> $74.40 (+$0.00)" in dev.splitlines()


def test_removing_a_team_that_was_not_draining_is_refused_once_for_the_team(runs: dict[str, Run]) -> None:
    dev = runs["dev"]
    assert dev.code == 1
    refused = [ln for ln in dev.out.splitlines() if ln.startswith("refused: ")]
    assert refused == ["refused: remove team training: drain it first (`state: draining` in its block, landed in "
                       "a change before this one), so that its queues stop admitting before they, its namespaces "
                       "and its buckets go"]
    assert "1 change(s) refused" in dev.out


def test_removing_a_team_that_was_draining_at_base_passes(runs: dict[str, Run]) -> None:
    drained = runs["drained"]
    assert drained.code == 0, drained.out
    assert "- delete  kubernetes:core/v1:Namespace  team-training-ns-training" in drained.out
    assert "refused" not in drained.out


def test_a_kueue_version_bump_plans_its_upgrade(runs: dict[str, Run]) -> None:
    out = runs["drained"].out
    assert block(out, "update", "kubernetes:helm.sh/v3:Release", "kueue-release")[0] == 'version: "0.19.2" -> "0.19.5"'
    steps_ = out[out.index("upgrade Kueue 0.19.2 -> 0.19.5:"):].splitlines()[1:4]
    assert [s.split(":")[0].strip() for s in steps_] == [f"read the release notes of 0.19.{n}" for n in (3, 4, 5)]


def test_a_stack_missing_at_base_is_all_adds_and_imports(runs: dict[str, Run]) -> None:
    fresh = runs["fresh"]
    assert fresh.code == 0, fresh.err
    assert "stack fresh does not exist at the BASE HEAD~1" in fresh.out
    adds = len(steps(fresh.out, "+"))
    assert adds > 30
    assert f"{adds} to add, 2 to import, 0 to change, 0 to replace, 0 to delete, 0 unchanged" in fresh.out.splitlines()


def test_an_adopted_cluster_and_pool_are_imported_with_what_they_must_already_have(runs: dict[str, Run]) -> None:
    """`adopt:` gives Pulumi's import option the existing resource's ID (pulumi-gcp: a cluster by its GKE name,
    a node pool as project/location/cluster/pool); Pulumi imports only when the inputs match, so the diff lists
    them, and those that force replacement (the datapath, the network) as blockers."""
    out = runs["fresh"].out
    assert "= import  gcp:container/cluster:Cluster  gke-cluster" in out
    assert "+ create  gcp:container/cluster:Cluster" not in out
    cluster = block(out, "import", "gcp:container/cluster:Cluster", "gke-cluster")
    assert cluster[0] == f"id: {DEV_CLUSTER}"
    blocker = next(ln for ln in cluster if ln.startswith("datapathProvider = "))
    assert blocker.startswith('datapathProvider = "ADVANCED_DATAPATH"  [blocker: ForceNew in terraform-provider')
    assert any(ln.startswith('releaseChannel.channel = "RAPID"') and "blocker" not in ln for ln in cluster)
    pool = block(out, "import", "gcp:container/nodePool:NodePool", "system-pool")
    assert pool[0] == "id: acme-ml-dev/us-east5-b/ml-dev/system"
    assert any(ln.startswith('nodeConfig.machineType = "e2-standard-8"') for ln in pool)


def test_a_refused_plan_says_which_side(runs: dict[str, Run], repo: Path) -> None:
    broken = runs["stacks/Pulumi.broken.yaml"]
    base = git(repo, "rev-parse", "--short=7", "HEAD~1").strip()
    assert broken.code == 2 and broken.out == ""
    assert broken.err.startswith(f"error: the BASE HEAD~1 ({base}) refuses the stack: stack broken "
                                 "(stacks/Pulumi.broken.yaml): ")
    assert "no-such-pool" in broken.err and len(broken.err.splitlines()) == 1


@pytest.mark.parametrize("base, says", [
    ("no-such-branch", "error: BASE 'no-such-branch' is not a commit, branch or tag of "),
    ("OLD", "predates the gke_ai_batch package"),
])
def test_an_unusable_base_is_one_clear_line(repo: Path, base: str, says: str) -> None:
    if base == "OLD":  # a commit from before the package: an empty tree
        empty = git(repo, "hash-object", "-w", "-t", "tree", "/dev/null").strip()
        base = git(repo, "commit-tree", "-m", "old", empty).strip()
    run = finish(start(repo, "dev", base))
    assert run.code == 2 and run.out == ""
    assert says in run.err and len(run.err.splitlines()) == 1 and "Traceback" not in run.err


def test_a_base_only_the_remote_has_names_the_remote_branch(tmp_path: Path) -> None:
    """`make diff STACK=dev BASE=main`, as the README says, in a clone on another branch (or CI's checkout) said
    only that `main` was no branch: the clone has it as origin/main."""
    git(tmp_path, "init", "-q", "-b", "topic")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "x")
    git(tmp_path, "update-ref", "refs/remotes/origin/main", "HEAD")
    with pytest.raises(DiffError) as e:
        base_commit(tmp_path, "main")
    assert str(e.value) == "BASE 'main' is no branch of this clone, but its remote's is: BASE=origin/main"


def test_secrets_stay_hidden() -> None:
    """An input that is secret on either side never prints a value, not even the other side's plain one."""
    old = {"urn": "u", "type": "t", "inputs": {"kubeconfig": "token: hunter2", "auth": {"a": ["[secret]"]}}}
    new = {"urn": "u", "type": "t", "inputs": {"kubeconfig": "[secret]", "auth": {"a": ["hunter3"]}}}
    _, _, lines = update_or_replace(old, new)
    changed = "[secret] -> [secret] (changed; secret values are compared by digest, never shown)"
    assert lines == [f"kubeconfig: {changed}", f"auth.a: {changed}"]


def test_paths_index_lists_of_objects_and_show_absent_keys() -> None:
    old = {"urn": "u", "parent": "urn:p::a::pulumi:pulumi:Stack$t:index:Team::x", "dependencies": ["urn:p::d::k::y"],
           "inputs": {"spec": {"groups": [{"n": 1}], "ns": ["a", "b"]},
                      "metadata": {"labels": {"x.io/q": "a"}, "annotations": {"k": 1}}}}
    new = {"urn": "u", "type": "t", "parent": "urn:p::a::pulumi:pulumi:Stack$t:index:Team::z", "dependencies": [],
           "inputs": {"spec": {"groups": [{"n": 2}, {"n": 3}], "ns": ["a"]},
                      "metadata": {"labels": {"x.io/q": "b"}}}}
    assert update_or_replace(old, new)[2] == [
        "spec.groups[0].n: 1 -> 2", 'spec.groups[1]: (absent) -> {"n": 3}', 'spec.ns: ["a", "b"] -> ["a"]',
        'metadata.labels["x.io/q"]: "a" -> "b"', 'metadata.annotations: {"k": 1} -> (absent)',
        "parent: t:index:Team x -> t:index:Team z", "dependencies: - k y"]


def _research_queue() -> dict:
    queue = next(r for r in planned("dev") if r.type.endswith(":ClusterQueue") and r.name == "queues-cq-research")
    return {"urn": queue.urn, "type": queue.type, "name": queue.name, "inputs": json.loads(json.dumps(queue.inputs))}


def test_removing_the_first_named_item_of_a_list_is_one_removal_by_name() -> None:
    """A ClusterQueue losing the first of its flavors: compared by position, every later flavor would show as
    changed into the next one; compared by name, only the removed one is listed."""
    old = _research_queue()
    flavors = old["inputs"]["spec"]["resourceGroups"][0]["flavors"]
    first, later = flavors[0]["name"], [f["name"] for f in flavors[1:]]
    assert len(later) >= 2
    new = json.loads(json.dumps(old))
    del new["inputs"]["spec"]["resourceGroups"][0]["flavors"][0]
    [line] = update_or_replace(old, new)[2]
    assert line.startswith(f'spec.resourceGroups[0].flavors[name="{first}"]: {{"resources": ') \
        and line.endswith(" -> (absent)")


def test_a_list_of_named_items_shows_an_added_item_and_a_new_order_by_name() -> None:
    old = _research_queue()
    new = json.loads(json.dumps(old))
    flavors = new["inputs"]["spec"]["resourceGroups"][0]["flavors"]
    names = [f["name"] for f in flavors]
    flavors.reverse()
    flavors.append({"name": "extra", "resources": [{"name": "cpu", "nominalQuota": 1}]})
    assert update_or_replace(old, new)[2] == [
        'spec.resourceGroups[0].flavors[name="extra"]: (absent) -> {"name": "extra", "resources": [{"name": "cpu", '
        '"nominalQuota": 1}]}',
        f"spec.resourceGroups[0].flavors[*].name (order): {json.dumps(names)} -> {json.dumps(names[::-1])}"]


def test_items_with_a_repeated_name_are_compared_by_index() -> None:
    old = {"urn": "u", "type": "t", "inputs": {"l": [{"name": "a", "v": 1}, {"name": "a", "v": 2}]}}
    new = {"urn": "u", "type": "t", "inputs": {"l": [{"name": "a", "v": 1}, {"name": "a", "v": 3}]}}
    assert update_or_replace(old, new)[2] == ["l[1].v: 2 -> 3"]


def test_long_values_are_cut_between_tokens_never_inside_one() -> None:
    """A cut inside a number would show another number: 12345678 cut to 1234… reads as a value."""
    numbers = show(list(range(10_000_000, 10_000_020)))
    shown_part, rest = numbers.split("… (+")
    assert shown_part.endswith(",") and len(shown_part) < 80 and rest.endswith(" characters)")
    assert all(n.strip().isdigit() and 10_000_000 <= int(n) < 10_000_020 for n in shown_part.strip("[,").split(","))
    words = show("quota " * 30)
    assert words.split("…")[0].endswith("quota") and "quot…" not in words
    assert show("x" * 200) == f'"{"x" * 200}"'  # one token: whole
    assert show("short") == '"short"'


def test_a_dependency_only_change_is_listed_but_not_counted_as_an_update() -> None:
    old = {"urn": "u", "type": "t", "name": "n", "inputs": {"a": 1}, "dependencies": ["urn:p::d::k::y"]}
    new = {**old, "dependencies": ["urn:p::d::k::z"]}
    diff = compare([old], [new])
    assert diff.steps == [] and diff.unchanged == 1
    s = Side("working tree", Path("."), Path("."), Path("s"))
    out = report("dev", s, s, diff)
    assert "~ update" not in out and out.splitlines()[-1].startswith("0 to add, 0 to change,")
    assert "dependencies: + k z" in out and "dependencies: - k y" in out


def test_kueues_embedded_configuration_is_diffed_key_by_key() -> None:
    release = next(r for r in planned("dev") if r.type == "kubernetes:helm.sh/v3:Release" and "kueue" in r.name)
    old = {"urn": release.urn, "type": release.type, "name": release.name, "inputs": release.inputs}
    config = old["inputs"]["values"]["managerConfig"]["controllerManagerConfigYaml"]
    new = _with(old, "values.managerConfig.controllerManagerConfigYaml",
                config.replace("waitForPodsReady:\n  timeout: 30m\n", "waitForPodsReady:\n  timeout: 45m\n"))
    [(op, _, lines)] = compare([old], [new]).steps
    assert op == "update"
    assert lines == ['values.managerConfig.controllerManagerConfigYaml.waitForPodsReady.timeout: "30m" -> "45m"',
                     RESTART]


def test_a_kueue_configuration_change_says_the_controller_restarts_and_what_running_work_sees() -> None:
    """A feature gate flipped in Kueue's configuration: the release changes one key, and applying it rolls Kueue's
    controller (it reads the file only at startup); a release change outside the configuration does not say so."""
    release = next(r for r in planned("dev") if r.type == "kubernetes:helm.sh/v3:Release" and "kueue" in r.name)
    old = {"urn": release.urn, "type": release.type, "name": release.name, "inputs": release.inputs}
    config = old["inputs"]["values"]["managerConfig"]["controllerManagerConfigYaml"]
    flipped = config.replace("ElasticJobsViaWorkloadSlices: false", "ElasticJobsViaWorkloadSlices: true")
    assert flipped != config
    _, _, lines = update_or_replace(old, _with(old, "values.managerConfig.controllerManagerConfigYaml", flipped))
    assert lines[-1] == RESTART == (
        "Kueue's controller restarts to read this: Kueue reads its configuration only at startup (kueue v0.19.2 "
        "cmd/kueue/main.go), and the chart's config-checksum annotation rolls the controller-manager Deployment one "
        "replica at a time. Running workloads keep running; admission pauses while the leader hands over and the "
        "new one rebuilds its queues; then the new settings apply to every workload, admitted ones too (a shorter "
        "waitForPodsReady timeout can evict those not ready in time, new preemption or fair-sharing settings can "
        "preempt running ones)")
    assert lines[0].endswith('featureGates.ElasticJobsViaWorkloadSlices: false -> true')
    _, _, timeout = update_or_replace(old, {**old, "inputs": {**old["inputs"], "timeout": 1200}})
    assert timeout[0].startswith("timeout: ") and RESTART not in timeout


def test_a_secret_value_change_shows_without_its_value(runs: dict[str, Run]) -> None:
    """Raising the fleet's credential generation makes a new worker token, so each kubeconfig Secret's data
    changes: pulumi-kubernetes replaces a Secret whose data changes (provider/pkg/provider/diff.go@v4.30.0:
    type, stringData and data force a new one unless enableSecretMutable), delete-first as it is named."""
    run = runs["fleet-manager"]
    assert run.code == 0, run.out + run.err
    lines = block(run.out, "replace", "kubernetes:core/v1:Secret", "fleet-east-kubeconfig")
    assert lines[0] == "order: delete first, then create (pulumi-kubernetes: a named object keeps its name)"
    assert any(ln.startswith("stringData.kubeconfig: [secret] -> [secret] (changed; secret values are compared by "
                             "digest, never shown)  [forces replacement: pulumi-kubernetes forceNew table")
               for ln in lines), lines
    assert 'token-generation"]: "1" -> "2"' in "".join(lines)
    assert "offline-plan-token" not in run.out and "b2ZmbGluZS1wbGFu" not in run.out


def test_no_change_says_so() -> None:
    r = {"urn": "u", "type": "t", "name": "n", "inputs": {"a": 1}}
    s = Side("working tree", Path("."), Path("."), Path("s"))
    assert report("dev", s, s, compare([r], [r])).splitlines()[-3:] == [
        "no changes", "", "0 to add, 0 to change, 0 to replace, 0 to delete, 1 unchanged"]


# --- replacements and disruptive updates (gke_ai_batch.model.replacement) ---------------------------------

def _pool(**node_config) -> dict:
    """A TPU node pool as resources.json records it, with the options the program gives TPU pools."""
    return {"urn": "u", "type": "gcp:container/nodePool:NodePool", "name": "v5e-spot-slice-0",
            "inputs": {"name": "v5e-spot-0", "placementPolicy": {"type": "COMPACT", "tpuTopology": "2x4"},
                       "nodeConfig": {"machineType": "ct5lp-hightpu-4t", "spot": True, "diskSizeGb": 100,
                                      **node_config}},
            "options": {"deleteBeforeReplace": True, "replaceOnChanges": ["placementPolicy.tpuTopology"]}}


def _with(r: dict, path: str, value) -> dict:
    out = json.loads(json.dumps(r))
    *keys, last = path.split(".")
    node = out["inputs"]
    for k in keys:
        node = node[k]
    node[last] = value
    return out


@pytest.mark.parametrize("path, value, why", [
    ("placementPolicy.tpuTopology", "4x4", "the program's replaceOnChanges"),
    ("nodeConfig.spot", False, "ForceNew in terraform-provider-google"),
    ("nodeConfig.reservationAffinity", {"consumeReservationType": "SPECIFIC_RESERVATION"},
     "ForceNew in terraform-provider-google"),
])
def test_a_pool_whose_shape_or_capacity_changes_is_replaced_delete_first(path, value, why) -> None:
    old = _pool()
    diff = compare([old], [_with(old, path, value)])
    [(op, _, lines)] = diff.steps
    assert op == "replace"
    assert lines[0] == "order: delete first, then create (deleteBeforeReplace)"
    assert lines[1].startswith(f"{path}: ") and f"[forces replacement: {why}" in lines[1]
    s = Side("working tree", Path("."), Path("."), Path("s"))
    out = report("prod", s, s, diff)
    assert "+- replace  gcp:container/nodePool:NodePool  v5e-spot-slice-0" in out
    assert out.splitlines()[-1] == "0 to add, 0 to change, 1 to replace, 0 to delete, 0 unchanged"


def test_a_disk_size_change_is_an_update_that_recreates_the_nodes() -> None:
    old = _pool()
    [(op, _, lines)] = compare([old], [_with(old, "nodeConfig.diskSizeGb", 200)]).steps
    assert op == "update"
    assert lines == ["nodeConfig.diskSizeGb: 100 -> 200  [GKE recreates every node of the pool to apply it]"]


def test_without_delete_before_replace_the_new_resource_comes_first() -> None:
    old = {"urn": "u", "type": "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "name": "rb",
           "inputs": {"roleRef": {"name": "edit"}}}
    [(op, _, lines)] = compare([old], [_with(old, "roleRef.name", "gke-ai-batch-team")]).steps
    assert op == "replace" and lines[0] == "order: create the new one first, then delete the old one"


def test_a_local_queue_moved_to_another_cluster_queue_is_replaced() -> None:
    """Kueue's CRD makes spec.clusterQueue immutable: the program declares the replacement itself."""
    regs = planned("prod")
    lq = next(r for r in regs if r.type.endswith(":LocalQueue"))
    assert lq.options == {"deleteBeforeReplace": True, "replaceOnChanges": ["spec.clusterQueue"]}
    old = {"urn": lq.urn, "type": lq.type, "name": lq.name, "inputs": lq.inputs, "options": lq.options}
    [(op, _, lines)] = compare([old], [_with(old, "spec.clusterQueue", "other")]).steps
    assert op == "replace" and "forces replacement: Kueue v0.19.2 CRD kueue.x-k8s.io_localqueues.yaml" in lines[1]


def test_a_mandatory_violation_the_change_brings_is_listed_as_new() -> None:
    urn = "urn:pulumi:prod::p::gcp:container/cluster:Cluster::gke-cluster"
    old = [{"policy": "a", "level": "advisory", "urn": urn, "message": "m"}]
    new = [{"policy": "b", "level": "mandatory", "urn": urn, "message": "public endpoint"}]
    assert policy_lines(old, new) == [
        "policy check: BASE 0 mandatory, 1 advisory -> working tree 1 mandatory, 0 advisory",
        "  mandatory b: gcp:container/cluster:Cluster gke-cluster: public endpoint (new)",
        "  advisory a: gcp:container/cluster:Cluster gke-cluster: m (gone)"]


# --- renames (gke_ai_batch.offline.changes.renames) ------------------------------------------------------------

def test_a_renamed_stack_is_a_pulumi_stack_rename_not_deletes_and_creates(runs: dict[str, Run]) -> None:
    run = runs["renamed"]
    assert run.code == 0, run.out + run.err
    assert not steps(run.out, "-") and not steps(run.out, "+")
    note = next(ln for ln in run.out.splitlines() if ln.startswith("renamed: "))
    assert note.startswith("renamed: stack multislice -> multislice-v2: every one of its ")
    assert "`pulumi stack rename multislice-v2` (on stack multislice, before the next `pulumi up`)" in note
    counts = next(ln for ln in run.out.splitlines() if ln.startswith("0 to add, "))
    assert " 0 to replace, 0 to delete, " in counts  # BASE's older Helm timeout is this repository's one change


def _urn(stack: str, project: str, type_: str, name: str) -> str:
    return f"urn:pulumi:{stack}::{project}::{type_}::{name}"


def test_a_renamed_project_pairs_every_urn_and_keeps_what_really_changes() -> None:
    """The cluster's URN changes with the project's name; compared by URN, it would be deleted and created."""
    cluster = "gcp:container/cluster:Cluster"
    old = [{"urn": _urn("prod", "gke-ai-batch", "pulumi:pulumi:Stack", "gke-ai-batch-prod"), "type":
            "pulumi:pulumi:Stack", "name": "gke-ai-batch-prod", "inputs": {}},
           {"urn": _urn("prod", "gke-ai-batch", cluster, "gke-cluster"), "type": cluster, "name": "gke-cluster",
            "inputs": {"name": "ml-prod", "resourceLabels": {"owner": "a"}},
            "parent": _urn("prod", "gke-ai-batch", "pulumi:pulumi:Stack", "gke-ai-batch-prod")}]
    new = [{**r, "urn": r["urn"].replace("::gke-ai-batch::", "::ml-platform::").replace("gke-ai-batch-prod",
                                                                                        "ml-platform-prod")}
           for r in old]
    new[0]["name"] = "ml-platform-prod"
    new[1] = {**new[1], "parent": new[0]["urn"], "inputs": {"name": "ml-prod", "resourceLabels": {"owner": "b"}}}
    moved, renamed = follow_rename(old, new)
    assert renamed is not None and renamed.advice()[0].startswith(
        "renamed: project gke-ai-batch -> ml-platform: every one of its 2 resources keeps its cloud resource; "
        "move the state with `pulumi stack rename ORG/ml-platform/prod`")
    diff = compare(moved, new)
    assert [(op, r["name"]) for op, r, _ in diff.steps] == [("update", "gke-cluster")]  # the label, nothing else


def test_part_of_a_stack_moved_gets_aliases() -> None:
    t = "kubernetes:core/v1:Namespace"
    old = [{"urn": _urn("dev", "a", t, "ns-1"), "type": t, "name": "ns-1", "inputs": {}},
           {"urn": _urn("dev", "a", t, "ns-2"), "type": t, "name": "ns-2", "inputs": {}}]
    new = [{**old[0], "urn": _urn("dev", "b", t, "ns-1")}]
    _, renamed = follow_rename(old, new)
    assert renamed is not None
    assert renamed.advice()[0].startswith('renamed: project a -> b for 1 of 2 resources: give each '
                                          '`aliases=[pulumi.Alias(project="a")]`')


def test_rename_advice_for_urns_that_differ_in_type_is_refused() -> None:
    old = [{"urn": _urn("dev", "p", "kubernetes:core/v1:Secret", "creds"), "type": "t", "name": "creds"}]
    new = [{"urn": _urn("dev2", "p", "kubernetes:core/v1:ConfigMap", "creds"), "type": "t", "name": "creds"}]
    assert follow_rename(old, new) == (old, None)  # not asked: no advice, plain deletes and creates
    with pytest.raises(RenameError, match="URNs that differ in type or name are not a rename"):
        follow_rename(old, new, asked=True)


def test_a_rename_from_a_stack_base_lacks_is_one_clear_line(repo: Path) -> None:
    run = finish(start(repo, "multislice-v2", "HEAD~1", "--renamed-from", "no-such-stack"))
    assert run.code == 2 and run.out == "" and len(run.err.splitlines()) == 1
    assert run.err == "error: --renamed-from no-such-stack: BASE HEAD~1 has no such stack to rename\n"


def test_secrets_are_compared_by_digest_and_a_base_without_digests_reads_as_unchanged() -> None:
    old = {"urn": "u", "type": "t", "inputs": {"stringData": {"kubeconfig": "[secret]"}, "a": 1},
           "secretDigests": {"stringData.kubeconfig": "1111"}}
    assert update_or_replace(old, {**old, "secretDigests": {"stringData.kubeconfig": "1111"}}) is None
    [(path, line)] = input_changes(old, {**old, "secretDigests": {"stringData.kubeconfig": "2222"}})
    assert path == "stringData.kubeconfig" and "1111" not in line and "2222" not in line
    older = {k: v for k, v in old.items() if k != "secretDigests"}  # planned by code before the digests
    assert update_or_replace(older, {**old, "secretDigests": {"stringData.kubeconfig": "2222"}}) is None


def test_a_plain_plan_records_no_secret_digests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only `make diff` sets a key (one per run): resources.json from `make plan` holds no digest of a secret."""
    from gke_ai_batch.offline.changes.inputs import DIGEST_KEY
    from gke_ai_batch.offline.engine.runtime import secret_digests
    wire = {"kubeconfig": {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "tok"}}
    monkeypatch.delenv(DIGEST_KEY, raising=False)
    assert secret_digests(wire) == {}
    monkeypatch.setenv(DIGEST_KEY, "k1")
    first = secret_digests(wire)
    monkeypatch.setenv(DIGEST_KEY, "k2")
    assert set(first) == {"kubeconfig"} and secret_digests(wire) != first and "tok" not in first["kubeconfig"]


# --- a team's limits tightened under running work (offline.changes.limit_changes) ------------------------------------

def _planned_object(stack: str, type_: str, namespace: str) -> dict:
    r = next(r for r in planned(stack) if r.type == type_ and
             (r.inputs["metadata"].get("namespace") or r.inputs["metadata"].get("name")) == namespace)
    return {"urn": r.urn, "type": r.type, "name": r.name, "inputs": r.inputs}


def _lines(old: dict, new: dict) -> list[str]:
    [(op, _, lines)] = compare([old], [new]).steps
    assert op == "update"
    return lines


def test_a_tighter_team_limit_says_what_it_does_to_running_work() -> None:
    """Attack (operator, day two): lower a team's object-size cap or pod count under jobs that are
    running. The API server never re-judges what a namespace holds, but the Job controller's next pods are
    created through the new limits, so a running job whose template they refuse stalls; `make diff` showed a bare
    value change."""
    ns = _planned_object("dev", "kubernetes:core/v1:Namespace", "research")
    key = 'metadata.annotations["gke-ai-batch.io/object-size"]'
    smaller = json.loads(json.dumps(ns))
    smaller["inputs"]["metadata"]["annotations"]["gke-ai-batch.io/object-size"] = "8192"
    assert _lines(ns, smaller) == [
        f'{key}: "16384" -> "8192"  [a tighter object size cap: objects already made keep their size; every pod is '
        "judged when created, so a running job whose pods it refuses can create no more of them and stalls]"]
    limits = _planned_object("dev", "kubernetes:core/v1:LimitRange", "research")  # default requests refuse nothing
    assert _lines(limits, _with(limits, "spec.limits", [{"type": "Container", "defaultRequest": {
        "cpu": "250m", "memory": "512Mi"}}])) == ['spec.limits[type="Container"].defaultRequest.cpu: "500m" -> "250m"']
    quota = _planned_object("dev", "kubernetes:core/v1:ResourceQuota", "research")
    hard = quota["inputs"]["spec"]["hard"]
    fewer = _with(quota, "spec.hard", {**hard, "pods": "100", "count/configmaps": "500"})
    note = ("  [a tighter quota: what the namespace holds stays, but it creates no more until it is below (a running "
            "job's new pods, Kueue's Workloads for new jobs)]")
    assert sorted(_lines(quota, fewer)) == ['spec.hard.pods: "2000" -> "100"' + note,
                                            'spec.hard["count/configmaps"]: "100" -> "500"']
    unset = _with(quota, "spec.hard", {k: v for k, v in hard.items() if k != "count/cronjobs.batch"})
    assert _lines(unset, quota) == ['spec.hard["count/cronjobs.batch"]: (absent) -> "20"' + note]
