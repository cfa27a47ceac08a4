"""GKE custom compute classes: the ComputeClass objects (checked against GKE's schema), the cluster's node
auto-provisioning, one Kueue flavor per class, and every bad input refused at its config path."""
import json
from pathlib import Path

import jsonschema
import pytest

from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.gke_rules import RULES
from gke_ai_batch.plan.gke_inputs import cluster_inputs
from gke_ai_batch.plan.platform import build_platform
from gke_ai_batch.vocabulary import COMPUTE_CLASS

from .conftest import ROOT, STACKS, by_type, platform_of
from .forked_cli import run_module

SCHEMA = json.loads((Path(__file__).parent.parent / "gke_ai_batch" / "conform" / "schemas" / "gke-computeclass"
                     / "cloud.google.com_computeclass_v1.json").read_text())


def dev(change=None):
    cfg = platform_of("dev")
    if change:
        change(cfg)
    return cfg


def classes(cfg):
    return cfg["compute_classes"]


def refused(change) -> ConfigError:
    with pytest.raises(ConfigError) as e:
        build_platform(dev(change))
    return e.value


@pytest.mark.parametrize("stack", STACKS)
def test_every_declared_compute_class_follows_gkes_schema(plan, stack):
    for r in by_type(plan(stack), ":ComputeClass"):
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
                  for e in jsonschema.Draft7Validator(SCHEMA).iter_errors(r.inputs)]
        assert errors == [], (r.name, errors)


def test_the_schema_refuses_a_field_gke_does_not_have(plan):
    (cc, *_) = by_type(plan("dev"), ":ComputeClass")
    bad = json.loads(json.dumps(cc.inputs))
    bad["spec"]["priorities"][0]["tpu"]["chips"] = 8
    assert not jsonschema.Draft7Validator(SCHEMA).is_valid(bad)


def test_dev_declares_a_tpu_and_a_gpu_class_with_their_chains(plan):
    ccs = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in by_type(plan("dev"), ":ComputeClass")}
    assert sorted(ccs) == ["h200-8", "v6e-2x4"]
    v6e = ccs["v6e-2x4"]["priorities"]
    assert [p["tpu"] for p in v6e] == [{"type": "tpu-v6e-slice", "count": 8, "topology": "2x4"}] * 4
    assert v6e[0]["reservations"] == {"affinity": "Specific", "specific": [{"name": "v6e-res"}]}
    assert (v6e[1]["flexStart"], v6e[1]["maxRunDurationSeconds"]) == ({"enabled": True}, 604800)
    assert (v6e[2]["spot"], v6e[3]["spot"], v6e[3]["reservations"]) == (True, False, {"affinity": "None"})
    assert ccs["h200-8"]["priorities"][0]["gpu"] == {"type": "nvidia-h200-141gb", "count": 8, "driverVersion": "latest"}
    assert ccs["v6e-2x4"]["nodePoolAutoCreation"] == {"enabled": True}
    assert ccs["v6e-2x4"]["activeMigration"] == {"optimizeRulePriority": True}


def test_each_class_is_a_flavor_selecting_and_tolerating_its_nodes():
    flavor = build_platform(dev()).scheduling.flavors["v6e-2x4"].manifest()
    assert flavor["spec"] == {
        "nodeLabels": {"cloud.google.com/compute-class": "v6e-2x4", "cloud.google.com/gke-tpu-accelerator":
                       "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "2x4"},
        "tolerations": [{"key": "cloud.google.com/compute-class", "operator": "Equal", "value": "v6e-2x4",
                         "effect": "NoSchedule"}]}


def test_the_cluster_auto_provisions_under_limits_that_cover_every_pool_and_class():
    nap = cluster_inputs(build_platform(dev()).config, {})["cluster_autoscaling"]
    limits = {r["resource_type"]: r["maximum"] for r in nap["resource_limits"]}
    assert limits["tpu-v6e-slice"] == 4 * 8 + 16 + 16  # the class at full size, and the two v6e pools
    assert limits["nvidia-h200-141gb"] == 2 * 8
    assert nap["auto_provisioning_defaults"]["service_account"] == "ml-dev-nodes@acme-ml-dev.iam.gserviceaccount.com"
    assert nap["auto_provisioning_defaults"]["management"] == {"auto_repair": True, "auto_upgrade": True}
    assert nap["auto_provisioning_locations"] == ["us-east5-b"]


def test_a_stack_without_classes_sends_no_auto_provisioning():
    assert "cluster_autoscaling" not in cluster_inputs(build_platform(platform_of("multislice")).config, {})


def test_a_given_limit_above_the_reach_is_kept():
    cfg = dev(lambda c: c["cluster"].update(auto_provisioning={"limits": {"tpu-v6e-slice": 256}}))
    nap = cluster_inputs(build_platform(cfg).config, {})["cluster_autoscaling"]
    assert {r["resource_type"]: r["maximum"] for r in nap["resource_limits"]}["tpu-v6e-slice"] == 256


# (the issue's bad input, or a rule) -> (change to dev, config path, message fragment)
BAD = {
    "empty priority list": (lambda c: classes(c)[0].update(priorities=[]), "platform.compute_classes[0].priorities",
                            "at least 1"),
    "two ways in a priority": (lambda c: classes(c)[0]["priorities"][2].update(on_demand=True),
                               "platform.compute_classes[0].priorities[2]", "spot and on_demand: two ways"),
    "no way in a priority": (lambda c: classes(c)[0]["priorities"].append({"zones": ["us-east5-b"]}),
                             "platform.compute_classes[0].priorities[4]", "no way; a priority is exactly one of"),
    "unknown key": (lambda c: classes(c)[0]["priorities"][0].update(reserved=2),
                    "platform.compute_classes[0].priorities[0].reserved", "unknown key"),
    "no accelerator": (lambda c: classes(c)[0].pop("tpu"), "platform.compute_classes[0]",
                       "no accelerator: a compute class is one accelerator shape"),
    "two accelerators": (lambda c: classes(c)[0].update(gpu={"type": "nvidia-l4"}), "platform.compute_classes[0]",
                         "both tpu and gpu"),
    "limit below a class's node": (
        lambda c: c["cluster"].update(auto_provisioning={"limits": {"nvidia-h200-141gb": 4}}),
        "platform.cluster.auto_provisioning.limits.nvidia-h200-141gb",
        "4 is below one node of compute class 'h200-8' (8 nvidia-h200-141gb)"),
    "limit below the reach": (lambda c: c["cluster"].update(auto_provisioning={"limits": {"cpu": 3000}}),
                              "platform.cluster.auto_provisioning.limits.cpu",
                              "below what the pools and compute classes reach at full size (4"),
    "unknown limit": (lambda c: c["cluster"].update(auto_provisioning={"limits": {"tpus": 8}}),
                      "platform.cluster.auto_provisioning.limits.tpus", "not a resource GKE limits"),
    "quota on a class the stack lacks": (
        lambda c: c["teams"][0]["queue"]["quotas"].update({"v5p-2x2x1": {"google.com/tpu": 4}}),
        "platform.teams[0].queue.quotas.v5p-2x2x1", "flavor 'v5p-2x2x1' does not exist in this environment"),
    "reservation without its size": (lambda c: classes(c)[0]["priorities"][0].pop("reserved_nodes"),
                                     "platform.compute_classes[0].priorities[0]",
                                     "reservation and reserved_nodes go together"),
    "bad reservation": (lambda c: classes(c)[0]["priorities"][0].update(reservation="Res_1"),
                        "platform.compute_classes[0].priorities[0].reservation", "name a reservation"),
    "class named like a pool's flavor": (lambda c: classes(c)[0].update(name="v6e-flex"),
                                         "platform.compute_classes[0].name", "already a flavor of this stack"),
    "topology the generation lacks": (lambda c: classes(c)[0]["tpu"].update(topology="3x3"),
                                      "platform.compute_classes[0].tpu.topology", "'3x3'"),
    "GPU count the machine lacks": (lambda c: classes(c)[1]["gpu"].update(count=4),
                                    "platform.compute_classes[1].gpu.count",
                                    "unknown GPU count for a3-ultragpu-8g 4; allowed: 8 (a3-ultragpu-8g has 8 "
                                    "GPUs, which the machine type fixes: give 8 or leave the count unset)"),
    "zone outside the region": (lambda c: classes(c)[0].update(zones=["europe-west4-a"]),
                                "platform.compute_classes[0].zones", "in the cluster's region us-east5"),
    "reservation of another shape": (
        lambda c: classes(c)[1]["priorities"][0].update(reservation="v6e-res"),
        "platform.compute_classes[1].priorities[0].reservation", "'v6e-res' holds ct6e-standard-8t VMs"),
    "flex-start past seven days": (
        lambda c: classes(c)[0]["priorities"][1].update(flex_start={"max_run_duration": "700000s"}),
        "platform.compute_classes[0].priorities[1].flex_start.max_run_duration", "at most 604800s"),
    "limits with auto-provisioning off": (
        lambda c: c["cluster"].update(auto_provisioning={"enabled": False, "limits": {"cpu": 9000}}),
        "platform.cluster.auto_provisioning.limits", "GKE applies no cluster-wide limits"),
}


def test_a_gpu_count_the_machine_fixes_may_be_stated():
    """docs/compute-classes.md's `gpu: {type: nvidia-h200-141gb, count: 8}` was refused although it is
    a3-ultragpu-8g's own count."""
    plan = build_platform(dev(lambda c: classes(c)[1]["gpu"].update(count=8)))
    assert [c.per_node for c in plan.scheduling.compute_classes if c.name == "h200-8"] == [8]


@pytest.mark.parametrize("case", BAD)
def test_bad_input_is_refused_at_its_path(case):
    change, path, fragment = BAD[case]
    e = refused(change)
    assert (e.path, fragment in e.message) == (path, True), str(e)


ISSUE_BAD_INPUT = ("empty priority list", "two ways in a priority", "unknown key", "no accelerator",
                   "limit below a class's node", "quota on a class the stack lacks")


@pytest.mark.parametrize("case", ISSUE_BAD_INPUT)
def test_the_planner_refuses_the_issues_bad_input_with_exit_2(tmp_path, case):
    change, path, fragment = BAD[case]
    stack = tmp_path / "Pulumi.bad.yaml"
    stack.write_text(json.dumps({"config": {"gke-ai-batch:platform": dev(change)}}))
    out = run_module("gke_ai_batch.offline", "plan", str(stack))
    assert out.returncode == 2, out.stderr
    assert path in out.stderr + out.stdout and fragment in out.stderr + out.stdout
    assert "Traceback" not in out.stderr


def test_compute_class_type_token():
    assert COMPUTE_CLASS == "kubernetes:cloud.google.com/v1:ComputeClass"


def test_auto_provisioning_without_cpu_and_memory_limits_is_a_gke_rule_finding():
    (rule,) = [r for r in RULES if r.id == "nap-cpu-memory-limits"]
    bad = {"clusterAutoscaling": {"enabled": True, "resourceLimits": [{"resourceType": "cpu", "maximum": 10}]}}
    assert [f.message for f in rule.check(bad)] == ["node auto-provisioning needs cpu and memory limits; give both"]
    good = {"clusterAutoscaling": {"enabled": True, "resourceLimits": [
        {"resourceType": "cpu", "maximum": 10}, {"resourceType": "memory", "maximum": 40}]}}
    assert list(rule.check(good)) == []


def test_the_policy_pack_runs_the_class_rules_over_any_programs_compute_classes(plan):
    from gke_ai_batch.model.promises import Res
    from gke_ai_batch.policies.stack_rules import gke_rules
    resources = [Res(r.type, r.urn, r.inputs) for r in plan("dev")]
    assert gke_rules(resources) == []
    big = [Res(r.type, r.urn, {**r.inputs, "metadata": {**r.inputs["metadata"], "annotations": {
        "gke-ai-batch.io/max-nodes": "5000"}}}) if r.type == COMPUTE_CLASS else Res(r.type, r.urn, r.inputs)
        for r in plan("dev")]
    assert any("which holds at most 1,000 (class-pool-size)" in message for _, message in gke_rules(big))


def quota_findings(v6e_quota):
    from gke_ai_batch.offline.views.check import violations

    from .conftest import run_config
    cfg = dev(lambda c: c["teams"][0]["queue"]["quotas"].update({"v6e-2x4": {"google.com/tpu": v6e_quota}}))
    return {(v["policy"], v["message"]) for v in violations(run_config(cfg, "dev"))
            if v["policy"] in ("quota-within-capacity", "quota-not-guaranteed") and "v6e-2x4" in v["message"]}


def test_a_classs_guaranteed_capacity_is_its_reserved_priority_only():
    """The reservation holds 2 of the class's 4 nodes (16 of 32 chips): a quota of 16 is guaranteed, 24 rests on
    flex-start, spot and on-demand, 40 is more than the class can ever have."""
    assert quota_findings(16) == set()
    assert quota_findings(24) == {("quota-not-guaranteed", (
        "flavor v6e-2x4: teams are promised 24 google.com/tpu (research); compute class v6e-2x4 (reservation -> "
        "flex-start -> spot -> on-demand) reaches 32, of which 16 guaranteed (its reserved priority only; the rest "
        "depend on whether GKE can get them)"))}
    assert ("quota-within-capacity", "flavor v6e-2x4: teams are promised 40 google.com/tpu (research) but compute "
            "class v6e-2x4 has at most 32 (4 nodes); lower the nominal quotas or raise the class's max_nodes") \
        in quota_findings(40)


def test_the_summary_shows_each_chain_and_counts_only_the_reservation_as_guaranteed(plan):
    from gke_ai_batch.offline.views.summary import compute_class_table, quota_table
    from gke_ai_batch.offline.views.view import stack_view
    table = quota_table(stack_view(plan("dev")))
    row = next(r for r in table.rows if r[:2] == ("v6e-2x4", "google.com/tpu"))
    assert row[2:5] == ("32", "16 *", "16")
    assert "v6e-2x4 (flex-start, spot, on-demand)" in " ".join(table.notes)  # the ways that are not guaranteed
    classes = compute_class_table(plan("dev"))
    assert classes is not None
    assert classes.rows == [
        ("v6e-2x4", "ct6e-standard-8t, 8 google.com/tpu", "reservation -> flex-start -> spot -> on-demand", "4",
         "2 (16 google.com/tpu)"),
        ("h200-8", "a3-ultragpu-8g, 8 nvidia.com/gpu", "reservation -> flex-start -> spot", "2",
         "1 (8 nvidia.com/gpu)")]


def test_make_admit_admits_a_jobset_on_a_class_and_says_which_way_serves_it():
    out = run_module("gke_ai_batch.offline.admit", "dev", str(ROOT / "examples" / "workloads" / "dev.yaml"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert ("admitted: research/v6e-class-train -> ClusterQueue research, pod set slice: flavor v6e-2x4\n"
            "  compute class v6e-2x4: pod set slice needs 2 node(s) of ct6e-standard-8t; the reserved priority "
            "serves them (it holds 2); past it GKE walks flex-start -> spot -> on-demand, which come only if it "
            "can get them\n") in out.stdout


def test_nodes_past_the_reservation_depend_on_obtainability():
    from gke_ai_batch.model.promises import ClassFacts
    from gke_ai_batch.offline.placement.class_admission import served_by
    from gke_ai_batch.vocabulary import Capacity
    cc = ClassFacts("c", "google.com/tpu", 8, "ct6e-standard-8t",
                    (Capacity.RESERVATION, Capacity.SPOT, Capacity.ON_DEMAND), 4, 2)
    assert served_by(cc, 3) == ("the reserved priority holds 2; the other 1 come from spot -> on-demand in order, "
                                "only if GKE can get them (not guaranteed)")
    unreserved = ClassFacts("c", "google.com/tpu", 8, "ct6e-standard-8t", (Capacity.SPOT,), 4, 0)
    assert served_by(unreserved, 1) == "no priority is reserved: GKE tries spot in order, and none is guaranteed"


def test_a_class_flavor_comes_after_the_pools_so_existing_jobs_keep_their_flavors():
    """A notebook asking for one GPU in training's queue still gets the T4 pool's flavor, not the H200 class."""
    cq = next(q for q in build_platform(dev()).scheduling.cluster_queues if q.name == "training")
    flavors = [f["name"] for f in cq.manifest["spec"]["resourceGroups"][0]["flavors"]]
    assert flavors[-1] == "h200-8" and flavors.index("t4-notebooks") < flavors.index("h200-8")


AUTOPILOT_CLASS = {"name": "l4-class", "gpu": {"type": "nvidia-l4"}, "max_nodes": 2,
                   "priorities": [{"spot": True}, {"on_demand": True}]}


def autopilot(change=None):
    cfg = platform_of("batch-teams")
    cfg["compute_classes"] = [json.loads(json.dumps(AUTOPILOT_CLASS))]
    cfg["shared_queues"][0]["quotas"]["l4-class"] = {"nvidia.com/gpu": 2}
    if change:
        change(cfg)
    return cfg


def test_autopilot_takes_the_same_classes_without_cluster_auto_provisioning():
    p = build_platform(autopilot())
    (c,) = p.scheduling.compute_classes
    manifest = c.manifest()
    assert jsonschema.Draft7Validator(SCHEMA).is_valid(manifest)
    assert "priorityDefaults" not in manifest["spec"]  # Autopilot places the nodes; no zones given
    assert p.scheduling.flavors["l4-class"].manifest()["spec"]["nodeLabels"]["cloud.google.com/compute-class"] \
        == "l4-class"
    inputs = cluster_inputs(p.config, {})
    assert inputs["enable_autopilot"] and set(inputs["cluster_autoscaling"]) == {"auto_provisioning_defaults"}


def test_an_autopilot_flavor_may_name_a_class_of_its_own_shape_only():
    flavor = {"name": "l4-ap", "gpu": "nvidia-l4", "compute_class": "l4-class"}
    build_platform(autopilot(lambda c: c.update(autopilot_flavors=[flavor])))
    with pytest.raises(ConfigError) as e:
        build_platform(autopilot(lambda c: c.update(autopilot_flavors=[{**flavor, "gpu": "nvidia-tesla-t4"}])))
    assert e.value.path == "platform.autopilot_flavors[0].compute_class"
    assert "compute class 'l4-class' makes nvidia-l4 nodes" in e.value.message


def test_auto_provisioning_on_autopilot_is_refused():
    with pytest.raises(ConfigError) as e:
        build_platform(autopilot(lambda c: c["cluster"].update(auto_provisioning={"limits": {"cpu": 10}})))
    assert (e.value.path, e.value.message) == ("platform.cluster.auto_provisioning",
                                               "Autopilot provisions every node itself; drop the key")


def test_auto_provisioning_defaults_compute_classes_ignore_are_a_gke_rule_finding(plan):
    (rule,) = [r for r in RULES if r.id == "class-unsupported-defaults"]
    (cc, *_) = by_type(plan("dev"), ":ComputeClass")
    bad = {"clusterAutoscaling": {"enabled": True, "autoProvisioningDefaults": {
        "upgradeSettings": {"strategy": "BLUE_GREEN"}, "shieldedInstanceConfig": {"enableSecureBoot": True}}}}
    assert [f.message for f in rule.check(cc.inputs, bad)] == [
        "the auto-provisioning defaults set surge or blue-green upgrade settings and secure boot, which GKE does not "
        "support for compute classes: drop them, or manage those pools yourself"]
    (cluster,) = by_type(plan("dev"), ":Cluster")
    assert list(rule.check(cc.inputs, cluster.inputs)) == []


def test_integrity_monitoring_in_the_auto_provisioning_defaults_is_a_gke_rule_finding_too(plan):
    """GKE: Configure node pool auto-creation, Limitations: "Node integrity and secure boot" are not supported by
    ComputeClasses; integrity monitoring alone used to pass."""
    (rule,) = [r for r in RULES if r.id == "class-unsupported-defaults"]
    (cc, *_) = by_type(plan("dev"), ":ComputeClass")
    integrity = {"clusterAutoscaling": {"enabled": True, "autoProvisioningDefaults": {
        "shieldedInstanceConfig": {"enableSecureBoot": False, "enableIntegrityMonitoring": True}}}}
    assert [f.message for f in rule.check(cc.inputs, integrity)] == [
        "the auto-provisioning defaults set integrity monitoring, which GKE does not support for compute classes: "
        "drop them, or manage those pools yourself"]


def cel_violations(schema, value, path="spec"):
    """The CRD's x-kubernetes-validations rules (GKE's CEL) over a value, where it is present; transition rules
    (oldSelf) have nothing to compare on create."""
    import celpy
    from celpy import celtypes

    from gke_ai_batch.apiserver.cel_runtime import FUNCTIONS, Runner, to_cel
    env = celpy.Environment(runner_class=Runner)
    found = []
    for rule in schema.get("x-kubernetes-validations") or []:
        if "oldSelf" in rule["rule"]:
            continue
        result = env.program(env.compile(rule["rule"]), functions=FUNCTIONS).evaluate({"self": to_cel(value)})
        if not (isinstance(result, celtypes.BoolType) and bool(result)):
            found.append(f"{path}: {rule['message']}")
    if isinstance(value, dict):
        for key, child in value.items():
            sub = (schema.get("properties") or {}).get(key)
            if sub:
                found += cel_violations(sub, child, f"{path}.{key}")
    if isinstance(value, list) and schema.get("items"):
        for i, child in enumerate(value):
            found += cel_violations(schema["items"], child, f"{path}[{i}]")
    return found


def test_every_declared_compute_class_passes_gkes_cel_rules(plan):
    spec_schema = SCHEMA["properties"]["spec"]
    for r in by_type(plan("dev"), ":ComputeClass"):
        assert cel_violations(spec_schema, r.inputs["spec"]) == [], r.name


def test_gkes_cel_rules_refuse_flex_start_with_spot(plan):
    (cc, *_) = by_type(plan("dev"), ":ComputeClass")
    bad = json.loads(json.dumps(cc.inputs["spec"]))
    bad["priorities"][1]["spot"] = True  # the flex-start priority
    assert cel_violations(SCHEMA["properties"]["spec"], bad) == [
        "spec.priorities[1]: Flex Start provisioning model is incompatible with Spot"]


V6E_2X4 = {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology": "2x4"}


def _class_job(**selector: str) -> dict:
    from .test_escape import container, job
    return job("research", "mixed", "research-queue", containers=[container({"google.com/tpu": "8"})],
               nodeSelector={"cloud.google.com/compute-class": "v6e-2x4", **V6E_2X4, **selector},
               tolerations=[{"key": "cloud.google.com/compute-class", "operator": "Equal", "value": "v6e-2x4",
                             "effect": "NoSchedule"}, {"key": "google.com/tpu", "operator": "Exists",
                                                       "effect": "NoSchedule"}])


def test_a_job_selecting_a_class_and_a_pools_flavor_is_refused_where_kueue_would_admit_it():
    """Issue 47: Kueue matches the class's flavor on its own keys and admits; the pods then need the class's nodes
    and the pool's label at once, which no node has. `make admit` admitted it."""
    from .test_escape import verdict
    assert verdict("dev", _class_job()).startswith("admitted: research/mixed -> ClusterQueue research, pod set main: "
                                                   "flavor v6e-2x4")
    said = verdict("dev", _class_job(**{"gke-ai-batch.io/flavor": "v6e-flex"}))
    assert said.startswith("refused: research/mixed: Kueue: pod set main got flavor v6e-2x4, and its pods then select "
                           "cloud.google.com/compute-class=v6e-2x4, gke-ai-batch.io/flavor=v6e-flex, which no node "
                           "carries together (GKE only schedules Pods that request a specific ComputeClass on nodes "
                           "in node pools that you associate with that ComputeClass")
    assert said.endswith("select the compute class alone to run on its nodes, or the pool's flavor alone to run on "
                         "that pool")


def test_a_job_selecting_only_the_class_name_gets_another_flavor_and_is_told_to_select_the_class_labels():
    """Kueue v0.19.2 matches each flavor on its own label keys (flavorassigner.go: `flavorLabelKeys :=
    sets.KeySet(flavor.Spec.NodeLabels)`): v5e-train names no compute class, so a selector of the class's name
    alone matches it first, and the pods then need v5e-train's labels and the class's nodes."""
    from .test_escape import verdict
    j = _class_job()
    for key in V6E_2X4:
        j["spec"]["template"]["spec"]["nodeSelector"].pop(key)
    said = verdict("dev", j)
    assert said.startswith("refused: research/mixed: Kueue: pod set main got flavor v5e-train")
    assert ("evicts the workload; Kueue matched flavor v5e-train on its own labels, which do not name "
            "cloud.google.com/compute-class: select the class's other labels too "
            "(cloud.google.com/gke-tpu-topology=2x4, cloud.google.com/gke-tpu-accelerator=tpu-v6e-slice), so that only "
            "its flavor matches;") in said
