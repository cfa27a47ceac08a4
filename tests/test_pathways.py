"""Pathways per team: the heads' cpu and memory quota on the head pool's flavor beside the TPU quota,
admission of a Pathways JobSet only when its head and its TPU workers both fit, and the bad inputs."""
import copy
from pathlib import Path

import pytest
import yaml

from gke_ai_batch.admission.decision import admit_in
from gke_ai_batch.model import catalog
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.gke_pathways_rules import PATHWAYS_INSTANCE_TYPES
from gke_ai_batch.model.gke_rules import RULES
from gke_ai_batch.model.releases import JOBSET_RELEASES
from gke_ai_batch.offline.admit import cluster_of
from gke_ai_batch.plan.platform import build_platform
from gke_ai_batch.vocabulary import TPU_ACCELERATOR_LABEL

from .conftest import ROOT, by_type, platform_of, run_config
from .forked_cli import run_module

SAMPLE = Path(ROOT) / "examples" / "workloads" / "pathways.yaml"


def sample():
    return yaml.safe_load(SAMPLE.read_text())


def replicated(doc, name):
    return next(rj for rj in doc["spec"]["replicatedJobs"] if rj["name"] == name)


def cq_quotas(regs, name):
    (cq,) = [r.inputs for r in by_type(regs, ":ClusterQueue") if r.inputs["metadata"]["name"] == name]
    (group,) = cq["spec"]["resourceGroups"]
    return {(f["name"], r["name"]): r["nominalQuota"] for f in group["flavors"] for r in f["resources"]}


def test_the_team_queue_holds_its_heads_beside_its_chips(plan):
    quotas = cq_quotas(plan("pathways"), "llm")
    # 2 heads x (pathways-proxy 16 cpu, 100G + pathways-rm 8 cpu, 32G), on the head pool's flavor
    assert quotas[("cpu-np", "cpu")] == 48 and quotas[("cpu-np", "memory")] == "264G"
    assert quotas[("cpu-np", "google.com/tpu")] == 0
    assert quotas[("vlp-16", "google.com/tpu")] == 16


def test_heads_add_to_a_quota_the_team_gives_on_the_head_pool():
    cfg = platform_of("pathways")
    cfg["teams"][0]["queue"]["quotas"]["cpu-np"] = {"cpu": 8, "memory": "64G"}
    regs = run_config(cfg)
    quotas = cq_quotas(regs, "llm")
    assert quotas[("cpu-np", "cpu")] == 56 and quotas[("cpu-np", "memory")] == "328G"


def test_the_sample_is_admitted_with_its_head_on_the_cpu_pool(plan):
    result = admit_in(cluster_of(plan("pathways")), sample())
    assert result.admitted, result.reason
    flavors = {ps.name: {f.flavor for f in ps.flavors} for ps in result.pod_sets}
    assert flavors == {"pathways-head": {"cpu-np"}, "worker": {"vlp-16"}}


def test_workers_beyond_the_tpu_quota_are_not_admitted(plan):
    doc = sample()
    replicated(doc, "worker")["replicas"] = 3
    result = admit_in(cluster_of(plan("pathways")), doc)
    assert not result.admitted and "google.com/tpu" in result.reason and "worker" in result.reason


def with_client_in_head(doc):
    """xpk's non-headless form: the proxy and resource manager become sidecars (init containers that
    restart Always) and the user's JAX client is the head's main container."""
    head = replicated(doc, "pathways-head")["template"]["spec"]["template"]["spec"]
    sidecars = [{**c, "restartPolicy": "Always"} for c in head["containers"]]
    head["initContainers"] = sidecars
    head["containers"] = [{"name": "jax-client", "image": "python:3.11", "command": ["python", "train.py"],
                           "resources": {"limits": {"cpu": "4", "memory": "16G"}}}]
    return doc


def test_a_head_beyond_the_head_quota_is_not_admitted_though_the_chips_fit():
    """One head of quota holds a headless head; a head that also runs the user's client asks 4 cpu more,
    so Kueue refuses the JobSet although its slices fit, until the team gives that cpu and memory too."""
    cfg = platform_of("pathways")
    cfg["teams"][0]["pathways"]["heads"] = 1
    assert admit_in(cluster_of(run_config(cfg)), sample()).admitted
    result = admit_in(cluster_of(run_config(cfg)), with_client_in_head(sample()))
    assert not result.admitted
    assert "pathways-head" in result.reason and "cpu" in result.reason and "cpu-np" in result.reason
    cfg["teams"][0]["queue"]["quotas"]["cpu-np"] = {"cpu": 4, "memory": "16G"}
    assert admit_in(cluster_of(run_config(cfg)), with_client_in_head(sample())).admitted


def with_team(change):
    cfg = platform_of("pathways")
    change(cfg)
    return cfg


def team(cfg):
    return cfg["teams"][0]


BAD = [
    ("no head pool", lambda c: team(c).update(pathways={"heads": 1}),
     "platform.teams[0].pathways.head_pool", "Pathways needs a head pool: the cpu_pools entry its heads run on "
                                             "(cpu-np; a node of at least 49 vCPUs and 233 GiB per head)"),
    ("head pool is a TPU pool", lambda c: team(c)["pathways"].update(head_pool="vlp"),
     "platform.teams[0].pathways.head_pool", "'vlp' is a TPU pool (tpu_pools): the Pathways head"),
    ("head pool unknown", lambda c: team(c)["pathways"].update(head_pool="cpu-x"),
     "platform.teams[0].pathways.head_pool", "no cpu pool named 'cpu-x'; cpu_pools: cpu-np"),
    ("head pool too small", lambda c: c["cpu_pools"][0].update(machine_type="n2-standard-8"),
     "platform.teams[0].pathways.head_pool", "runs n2-standard-8 (8 vCPUs, 32 GiB); a Pathways head needs a machine "
                                             "of at least 49 vCPUs and 233 GiB"),
    ("more heads than nodes", lambda c: team(c)["pathways"].update(heads=3),
     "platform.teams[0].pathways.heads", "3 head(s) need as many nodes of 'cpu-np' (one head per node)"),
    ("two teams' heads beyond the nodes", lambda c: c["teams"].append(
        {**copy.deepcopy(team(c)), "name": "vision", "groups": [], "pod_security": []}),
     "platform.teams[1].pathways.heads", "beside 2 for other teams; it has at most 2"),
    ("team on a shared queue", lambda c: (team(c).pop("queue"), team(c).update(cluster_queue="shared"),
                                          c.update(shared_queues=[{"name": "shared", "quotas": {
                                              "vlp-16": {"google.com/tpu": 16}}}])),
     "platform.teams[0].pathways", "Pathways quota goes on the team's own ClusterQueue"),
    ("team without TPU quota", lambda c: team(c)["queue"].update(quotas={"cpu-np": {"cpu": 8}}),
     "platform.teams[0].pathways", "has no google.com/tpu quota in queue.quotas: Pathways drives TPU workers only"),
    # an operator removes the TPU pool and keeps the quota: the missing flavor is named, not "no TPU quota"
    ("TPU pool removed, its quota kept", lambda c: c.update(tpu_pools=[]),
     "platform.teams[0].queue.quotas.vlp-16", "flavor 'vlp-16' does not exist in this environment; flavors: cpu-np"),
    ("Pathways without JobSet", lambda c: c.update(jobset={"install": "never"}),
     "platform.teams[0].pathways", "a Pathways job is a JobSet (a pathways-head and TPU workers) and jobset.install is "
                                   "'never'"),
    ("zero heads", lambda c: team(c)["pathways"].update(heads=0),
     "platform.teams[0].pathways.heads", "greater than or equal to 1"),
]


@pytest.mark.parametrize("label,change,path,fragment", BAD, ids=[c[0] for c in BAD])
def test_bad_pathways_input_is_one_clear_error(label, change, path, fragment):
    with pytest.raises(ConfigError) as e:
        build_platform(with_team(change))
    assert e.value.path == path
    assert fragment in str(e.value)


def test_a_tpu_head_pool_exits_2_without_traceback(tmp_path):
    bad = tmp_path / "Pulumi.bad.yaml"
    text = (Path(ROOT) / "stacks" / "Pulumi.pathways.yaml").read_text()
    bad.write_text(text.replace("head_pool: cpu-np", "head_pool: vlp"))
    r = run_module("gke_ai_batch.offline", "plan", str(bad), "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert "platform.teams[0].pathways.head_pool" in r.stderr and "is a TPU pool" in r.stderr
    assert "Traceback" not in r.stderr + r.stdout and not (tmp_path / "o").exists()


def test_pathways_installs_jobset_where_no_slice_is_multi_host():
    """jobset.install: auto installed JobSet only for multi-host slices; a Pathways job is a JobSet."""
    cfg = platform_of("pathways")
    cfg["tpu_pools"][0].update(topology="2x2", slices=1)  # one 4-chip VM: single-host
    cfg["teams"][0]["queue"]["quotas"]["vlp-16"]["google.com/tpu"] = 4
    assert build_platform(cfg).install_jobset
    cfg["teams"][0].pop("pathways")
    assert not build_platform(cfg).install_jobset


def test_a_kueue_layer_gives_a_pathways_team_its_heads():
    """The component door (KueueLayer's TeamSpec) reaches the same plan as the stack file."""
    from gke_ai_batch.plan import component_plans
    platform = component_plans.scheduling("layer", {
        "region": "us-west4", "zones": ["us-west4-a"],
        "tpu_pools": [{"name": "vlp", "generation": "v5e", "topology": "2x4", "machine_type": "ct5lp-hightpu-4t",
                       "slices": 2, "flavor": "vlp-16"}],
        "cpu_pools": [{"name": "cpu-np", "machine_type": "n2-standard-64", "nodes": 1}],
        "teams": [{"name": "llm", "queue": {"quotas": {"vlp-16": {"google.com/tpu": {"nominal": "16"}}}},
                   "pathways": {"head_pool": "cpu-np"}}]}).platform
    (cq,) = platform.scheduling.cluster_queues
    assert cq.spec.quotas["cpu-np"]["cpu"].nominal == 24 and cq.spec.quotas["cpu-np"]["memory"].nominal == "132G"


# What Pathways needs of the platform: the rules table's Pathways rules (model.gke_pathways_rules).

def pathways_rule(rule_id):
    (rule,) = [r for r in RULES if r.id == rule_id]
    return rule


def on_autopilot(cfg):
    """The pathways stack on Autopilot: its TPU slices as an Autopilot flavor, no node pools."""
    cfg["cluster"].update(mode="autopilot")
    cfg.pop("tpu_pools"), cfg.pop("cpu_pools")
    cfg["autopilot_flavors"] = [{"name": "vlp-16", "tpu": {"generation": "v5e", "topology": "2x4"}}]
    return cfg


def test_pathways_on_autopilot_is_refused_for_what_it_is_not_for_a_missing_pool():
    """Before the rule, Autopilot got 'no cpu pool named cpu-np ... add one', which Autopilot cannot have."""
    with pytest.raises(ConfigError) as e:
        build_platform(on_autopilot(platform_of("pathways")))
    assert e.value.path == "platform.teams[0].pathways"
    assert e.value.message.startswith("Pathways runs on a Standard cluster: its heads take a CPU node pool of "
                                      "their own (cpu_pools) and its head and workers use the host network")
    assert e.value.message.endswith("Set cluster.mode: standard, or drop pathways")


def test_pathways_on_autopilot_exits_2_without_traceback(tmp_path):
    doc = yaml.safe_load((Path(ROOT) / "stacks" / "Pulumi.pathways.yaml").read_text())
    on_autopilot(doc["config"]["gke-ai-batch:platform"])
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text(yaml.safe_dump(doc))
    r = run_module("gke_ai_batch.offline", "plan", str(bad), "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert "platform.teams[0].pathways" in r.stderr and "Pathways runs on a Standard cluster" in r.stderr
    assert "Traceback" not in r.stderr + r.stdout and not (tmp_path / "o").exists()


def test_every_catalog_generation_is_one_pathways_drives():
    """A generation added to the catalog must be given its Pathways instance type (or be refused) on purpose."""
    assert set(catalog.TPU_GENERATIONS) == set(PATHWAYS_INSTANCE_TYPES)
    (finding,) = pathways_rule("pathways-tpu-generations").check({"tpuGenerations": ["v5e", "v3"]})
    assert finding.message == ("the team's TPU quota is on TPU v3, which Pathways does not drive; it drives "
                               "v4, v5e, v5p, v6e or tpu7x")
    assert not list(pathways_rule("pathways-tpu-generations").check({"tpuGenerations": ["v5e", "tpu7x"]}))


def test_the_samples_resource_manager_names_its_slices_instance_type():
    """The head's `--instance_type` is the Pathways type of the slices the workers run on."""
    doc = sample()
    rm = next(c for c in replicated(doc, "pathways-head")["template"]["spec"]["template"]["spec"]["containers"]
              if c["name"] == "pathways-rm")
    worker = replicated(doc, "worker")["template"]["spec"]["template"]["spec"]["nodeSelector"]
    (gen,) = [g for g in catalog.TPU_GENERATIONS.values() if g.accelerator == worker[TPU_ACCELERATOR_LABEL]]
    topology = worker["cloud.google.com/gke-tpu-topology"]
    assert f"--instance_type={PATHWAYS_INSTANCE_TYPES[gen.name]}:{topology}" in rm["args"]


def test_pathways_needs_a_jobset_with_the_fields_its_jobset_sets():
    rule = pathways_rule("pathways-jobset-version")
    assert rule.field == "platform.jobset.version"
    (finding,) = rule.check({"jobsetVersion": "0.6.0"})
    assert finding.message == ("JobSet 0.6.0: a Pathways JobSet sets spec.failurePolicy.restartStrategy, which JobSet "
                               "has from v0.7.0; choose that release or a later one")
    assert not [v for v in JOBSET_RELEASES if list(rule.check({"jobsetVersion": v}))]


def test_the_sample_sets_the_jobset_fields_the_version_rule_is_about():
    spec = sample()["spec"]
    assert spec["failurePolicy"]["restartStrategy"] == "Recreate" and spec["coordinator"]
    assert spec["network"]["publishNotReadyAddresses"] is True


def test_a_head_that_finds_its_quota_full_is_not_admitted_on_the_tpu_flavor():
    """A head that names no flavor (xpk selects the node pool, which Kueue does not match against flavors)
    falls through to the TPU flavor's cpu when the head quota is full: `make admit` refuses it, since the
    TPU nodes' taint keeps it Pending while it holds the quota."""
    cfg = platform_of("pathways")
    cfg["teams"][0]["pathways"]["heads"] = 1
    doc = sample()
    head = replicated(doc, "pathways-head")["template"]["spec"]["template"]["spec"]
    head["nodeSelector"] = {"cloud.google.com/gke-nodepool": "cpu-np"}
    assert admit_in(cluster_of(run_config(cfg)), doc).admitted
    for c in head["containers"]:
        c["resources"]["limits"]["cpu"] = "20"  # 40 cpu: more than the one head's 24 on cpu-np
    result = admit_in(cluster_of(run_config(cfg)), doc)
    flavors = {ps.name: {f.flavor for f in ps.flavors} for ps in result.pod_sets}
    assert flavors["pathways-head"] == {"vlp-16"} and not result.admitted
    assert "pod set pathways-head requests no google.com/tpu but got flavor vlp-16" in result.warnings[0]
