"""Kueue round four: fair use inside a team (admission fair sharing), finished Workloads deleted after a stated
time, pending reasons visible (UnadmittedWorkloadsObservability)."""

import pytest
import yaml

from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.offline import admit
from gke_ai_batch.offline.views.summary import team_table
from gke_ai_batch.offline.views.view import stack_view
from gke_ai_batch.plan.installs import kueue_manager_config, kueue_values
from gke_ai_batch.plan.platform import build_platform

from .conftest import ROOT, planned, platform_of
from .forked_cli import run_module


def prod_with(change):
    cfg = platform_of("prod")
    change(cfg)
    return cfg


def team(cfg, name):
    return next(t for t in cfg["teams"] if t["name"] == name)


def queues_of(platform):
    cqs = {q.name: q.manifest for q in platform.scheduling.cluster_queues}
    lqs = {(m["metadata"]["namespace"], m["metadata"]["name"]): m["spec"]
           for t in platform.scheduling.teams for m in t.local_queue_manifests}
    return cqs, lqs


def test_prods_training_orders_its_local_queues_by_usage_with_their_weights():
    cqs, lqs = queues_of(build_platform(platform_of("prod")))
    assert cqs["training"]["spec"]["admissionScope"] == {"admissionMode": "UsageBasedAdmissionFairSharing"}
    for ns in ("training", "training-gpudirect"):
        assert lqs[(ns, "training-queue")]["fairSharing"] == {"weight": 2}
        assert lqs[(ns, "sweeps")]["fairSharing"] == {"weight": 1}
    # one LocalQueue in one namespace: nothing to order between, so Kueue's default (first come) stays
    assert "admissionScope" not in cqs["inference-eval"]["spec"]
    assert "fairSharing" not in lqs[("inference-eval", "inference-eval-queue")]


def test_the_summary_shows_the_weights_and_the_usage_ordering():
    rows = {r[0]: r for r in team_table(stack_view(planned("prod"))).rows}
    assert rows["training"][2].startswith("sweeps (weight 1; ") and "training-queue (weight 2; " in rows["training"][2]
    assert rows["research"][2] == "research-queue (weight 1)"
    assert rows["training"][3] == "training (LocalQueues ordered by usage)"
    assert rows["inference-eval"][2] == "inference-eval-queue"


def test_make_admit_says_when_the_order_depends_on_usage(capsys):
    assert admit.main(["prod", str(ROOT / "examples" / "workloads" / "prod.yaml")]) == 0
    out = capsys.readouterr().out.splitlines()
    pretrain = out.index("admitted: training/llm-pretrain -> ClusterQueue training, pod set slice: flavor v5p-res")
    assert out[pretrain + 1].startswith("  ordered by usage: ClusterQueue training")
    assert "training/training-queue has weight 2" in out[pretrain + 1]
    evaluation = next(i for i, line in enumerate(out) if line.startswith("admitted: inference-eval/"))
    assert not out[evaluation + 1].startswith("  ordered by usage")


def test_a_shared_queue_stays_first_come_unless_asked():
    cqs, _ = queues_of(build_platform(platform_of("dev")))
    assert "admissionScope" not in cqs["cpu-batch"]["spec"]  # two teams' LocalQueues, but a shared queue
    assert cqs["training"]["spec"]["admissionScope"]["admissionMode"] == "UsageBasedAdmissionFairSharing"


def test_turning_it_off_for_a_team_changes_its_queues_and_never_restarts_kueue():
    """An operator's next change: the controller's configuration does not depend on the teams."""
    before = build_platform(platform_of("prod"))
    after = build_platform(prod_with(lambda c: (team(c, "training")["queue"].update(admission_fair_sharing=False),
                                                [lq.pop("fair_sharing_weight", None)
                                                 for lq in team(c, "training")["local_queues"]])))
    cqs, lqs = queues_of(after)
    assert "admissionScope" not in cqs["training"]["spec"]
    assert "fairSharing" not in lqs[("training", "training-queue")]
    assert kueue_values(after) == kueue_values(before)


BAD = [
    ("a weight of zero", lambda c: team(c, "training")["local_queues"][0].update(fair_sharing_weight=0),
     "platform.teams[0].local_queues[0].fair_sharing_weight", "must be above 0"),
    ("a negative weight", lambda c: team(c, "training")["local_queues"][0].update(fair_sharing_weight=-1),
     "platform.teams[0].local_queues[0].fair_sharing_weight", "quantity"),
    ("fair sharing on a team with one LocalQueue",
     lambda c: team(c, "inference-eval")["queue"].update(admission_fair_sharing=True),
     "platform.teams[2].queue.admission_fair_sharing", "1 LocalQueue submit to ClusterQueue 'inference-eval'"),
    ("a weight where fair sharing is off",
     lambda c: team(c, "training")["queue"].update(admission_fair_sharing=False),
     "platform.teams[0].local_queues[0].fair_sharing_weight", "ClusterQueue 'training' does not use admission"),
    ("a sampling interval of zero",
     lambda c: c.setdefault("kueue", {}).update(admission_fair_sharing={"usage_sampling_interval": "0s"}),
     "platform.kueue.admission_fair_sharing.usage_sampling_interval", "must be above 0"),
    ("a negative resource weight",
     lambda c: c.setdefault("kueue", {}).update(admission_fair_sharing={"resource_weights": {"cpu": -1}}),
     "platform.kueue.admission_fair_sharing.resource_weights", "the weight of cpu is -1.0"),
    ("a retention shorter than the floor",
     lambda c: c.setdefault("kueue", {}).update(retention={"after_finished": "30m"}),
     "platform.kueue.retention.after_finished", "'30m' is shorter than 1h"),
    ("an unparseable retention",
     lambda c: c.setdefault("kueue", {}).update(retention={"after_deactivated_by_kueue": "1 day"}),
     "platform.kueue.retention.after_deactivated_by_kueue", "a whole number followed by s, m or h"),
]


@pytest.mark.parametrize("label,change,path,fragment", BAD, ids=[b[0] for b in BAD])
def test_bad_fair_use_and_retention_input_is_one_error_at_its_path(label, change, path, fragment):
    with pytest.raises(ConfigError) as e:
        build_platform(prod_with(change))
    assert e.value.path == path
    assert fragment in str(e.value)


def test_make_plan_refuses_a_zero_weight_with_exit_2(tmp_path):
    bad = tmp_path / "Pulumi.bad.yaml"
    text = (ROOT / "stacks" / "Pulumi.prod.yaml").read_text()
    bad.write_text(text.replace("{name: training-queue, fair_sharing_weight: 2}",
                                "{name: training-queue, fair_sharing_weight: 0}"))
    r = run_module("gke_ai_batch.offline", "plan", str(bad), "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert "platform.teams[0].local_queues[0].fair_sharing_weight" in r.stderr and "above 0" in r.stderr
    assert "Traceback" not in r.stderr + r.stdout


def test_the_controller_measures_usage_by_accelerators_and_deletes_old_workloads():
    conf = kueue_manager_config(build_platform(platform_of("prod")))
    assert conf["admissionFairSharing"] == {
        "usageHalfLifeTime": "168h", "usageSamplingInterval": "5m",
        "resourceWeights": {"google.com/tpu": 1.0, "nvidia.com/gpu": 1.0, "cpu": 0.0, "memory": 0.0,
                            "ephemeral-storage": 0.0}}
    assert conf["objectRetentionPolicies"] == {"workloads": {"afterFinished": "168h",
                                                             "afterDeactivatedByKueue": "168h"}}
    assert conf["featureGates"]["UnadmittedWorkloadsObservability"] is True


def test_the_stack_sets_retention_and_weights_and_the_release_carries_them():
    cfg = prod_with(lambda c: c.setdefault("kueue", {}).update(
        retention={"after_finished": "24h"}, admission_fair_sharing={"resource_weights": {"cpu": 0.01}},
        unadmitted_workloads_observability=False))
    values = kueue_values(build_platform(cfg))
    conf = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert conf["objectRetentionPolicies"]["workloads"] == {"afterFinished": "24h", "afterDeactivatedByKueue": "168h"}
    assert conf["admissionFairSharing"]["resourceWeights"]["cpu"] == 0.01
    assert "UnadmittedWorkloadsObservability" not in conf["featureGates"]
