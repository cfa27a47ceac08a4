"""Every alert means what its runbook says: `promtool test rules` (Prometheus' own evaluator) runs each
alert's expression and duration over synthetic Kueue series, and it fires when it should and stays silent
when it should not. A wrong threshold makes these tests fail (test_a_wrong_threshold_fails)."""
from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from gke_ai_batch.plan.alerts import RULE_GROUP, AlertPlan
from gke_ai_batch.plan.platform import build_platform

from .conftest import platform_of

PROMTOOL = shutil.which("promtool")
pytestmark = pytest.mark.skipif(PROMTOOL is None and not os.environ.get("CI"),
                                reason="promtool not installed (Debian: apt-get install prometheus); CI installs it")
KUEUE = 'cluster="ml-prod",namespace="kueue-system",job="kueue"'
LEADER = f'{KUEUE},replica_role="leader"'  # the leading replica's series (kueue_build_info has no role)


@pytest.fixture(scope="module")
def alerts() -> dict[tuple[str | None, str], AlertPlan]:
    p = build_platform(platform_of("prod"))
    return {(a.team, a.name): a for a in p.alerts}


def promtool(tmp_path: Path, alert: AlertPlan, series: list[tuple[str, str]], at: str,
             fired: list[dict[str, str]]) -> subprocess.CompletedProcess[str]:
    """Run one alert over `series` (name{labels}, promtool's expanding notation) and expect `fired` at `at`."""
    rules = {"groups": [{"name": RULE_GROUP, "rules": [
        {"alert": alert.name, "expr": alert.query, "for": f"{alert.duration_s}s"}]}]}
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules))
    test = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": [{
        "interval": "1m", "input_series": [{"series": s, "values": v} for s, v in series],
        "alert_rule_test": [{"eval_time": at, "alertname": alert.name,
                             "exp_alerts": [{"exp_labels": labels} for labels in fired]}]}]}
    (tmp_path / "test.yaml").write_text(yaml.safe_dump(test))
    assert PROMTOOL is not None, "CI installs promtool (.ci/run)"
    return subprocess.run([PROMTOOL, "test", "rules", "test.yaml"], cwd=tmp_path, capture_output=True, text=True)


def passes(result: subprocess.CompletedProcess[str]) -> bool:
    assert "FAILED" in result.stdout + result.stderr or result.returncode == 0, result.stderr
    return result.returncode == 0


RESEARCH = 'exported_namespace="research",name="research-queue"'
PENDING = f'kueue_local_queue_pending_workloads{{{LEADER},{RESEARCH},status="inadmissible"}}'
ADMITTED = f'kueue_local_queue_admitted_workloads_total{{{LEADER},{RESEARCH}}}'
STUCK = {"alertname": "TeamWorkloadsStuck", "exported_namespace": "research", "name": "research-queue"}


IDLE_THEN_WAITING = "0x60 3x240"  # an idle queue for an hour, then three workloads that wait


def test_stuck_pending_fires_after_the_teams_own_two_hours_without_an_admission(tmp_path, alerts):
    alert = alerts[("research", "TeamWorkloadsStuck")]  # prod's research: pending_minutes 120
    series = [(PENDING, IDLE_THEN_WAITING), (ADMITTED, "7x300")]
    assert passes(promtool(tmp_path, alert, series, "185m", [STUCK]))


def test_stuck_pending_is_silent_before_the_threshold_and_while_work_is_admitted(tmp_path, alerts):
    alert = alerts[("research", "TeamWorkloadsStuck")]
    assert passes(promtool(tmp_path, alert, [(PENDING, IDLE_THEN_WAITING), (ADMITTED, "7x300")], "170m", []))
    assert passes(promtool(tmp_path, alert, [(PENDING, IDLE_THEN_WAITING), (ADMITTED, "0+1x300")], "240m", []))


V5P = 'cluster_queue="training",flavor="v5p-res",resource="google.com/tpu"'
USAGE = f'kueue_cluster_queue_resource_usage{{{LEADER},{V5P}}}'
NOMINAL = f'kueue_cluster_queue_nominal_quota{{{LEADER},{V5P}}}'
AT_QUOTA = {"alertname": "TeamAtQuota", "cluster_queue": "training", "flavor": "v5p-res", "resource": "google.com/tpu"}


def test_at_quota_fires_after_four_hours_at_the_whole_quota(tmp_path, alerts):
    alert = alerts[(None, "TeamAtQuota")]
    series = [(USAGE, "64x300"), (NOMINAL, "64x300")]
    assert passes(promtool(tmp_path, alert, series, "241m", [AT_QUOTA]))
    assert passes(promtool(tmp_path, alert, series, "230m", []))


def test_at_quota_is_silent_below_the_quota(tmp_path, alerts):
    alert = alerts[(None, "TeamAtQuota")]
    assert passes(promtool(tmp_path, alert, [(USAGE, "48x300"), (NOMINAL, "64x300")], "280m", []))


EVICTED = (f'kueue_evicted_workloads_total{{{LEADER},cluster_queue="training",reason="Preempted",'
           'underlying_cause="",priority_class="low"}')


def test_eviction_burst_fires_above_ten_an_hour_and_not_at_five(tmp_path, alerts):
    alert = alerts[(None, "TeamEvictionBurst")]
    burst = {"alertname": "TeamEvictionBurst", "cluster_queue": "training"}
    assert passes(promtool(tmp_path, alert, [(EVICTED, "0+1x90")], "80m", [burst]))  # 60 an hour
    assert passes(promtool(tmp_path, alert, [(EVICTED, "0+0.1x90")], "80m", []))  # 6 an hour


def test_the_alerts_every_team_shares_fire_per_queue_and_leave_a_tuned_team_to_its_own(tmp_path, alerts):
    """prod's training keeps the stack's alert settings and research sets its own (channels, 120 minutes): one
    policy serves training and every team like it, one incident per queue, and research's queues fire only its
    own policy, so its pager alone hears of them."""
    shared, own = alerts[(None, "TeamEvictionBurst")], alerts[("research", "TeamEvictionBurst")]
    research = EVICTED.replace('cluster_queue="training"', 'cluster_queue="research"')
    other = EVICTED.replace('cluster_queue="training"', 'cluster_queue="inference-eval"')
    series = [(EVICTED, "0+1x90"), (other, "0+1x90"), (research, "0+1x90")]
    fired = [{"alertname": "TeamEvictionBurst", "cluster_queue": q} for q in ("training", "inference-eval")]
    assert passes(promtool(tmp_path, shared, series, "80m", fired))
    assert passes(promtool(tmp_path, own, series, "80m", [{"alertname": "TeamEvictionBurst",
                                                            "cluster_queue": "research"}]))
    pending = PENDING.replace(RESEARCH, 'exported_namespace="research-sandbox",name="sandbox-queue"')
    assert passes(promtool(tmp_path, alerts[(None, "TeamWorkloadsStuck")], [(pending, IDLE_THEN_WAITING)], "185m",
                           []))


def build(instance: str) -> str:
    return f'kueue_build_info{{{KUEUE},git_version="v0.19.2",instance="{instance}"}}'


def test_kueue_down_fires_when_no_replica_is_scraped(tmp_path, alerts):
    alert = alerts[(None, "KueueDown")]
    down = {"alertname": "KueueDown", **dict(kv.split("=") for kv in KUEUE.replace('"', "").split(","))}
    series = [(build("a"), "1x10 stale"), (build("b"), "1x10 stale")]
    assert passes(promtool(tmp_path, alert, series, "30m", [down]))
    assert passes(promtool(tmp_path, alert, [(build("a"), "1x60")], "30m", []))


def test_kueue_degraded_fires_with_one_replica_of_two(tmp_path, alerts):
    alert = alerts[(None, "KueueDegraded")]
    one = [(build("a"), "1x60"), (build("b"), "1x5 stale")]
    assert passes(promtool(tmp_path, alert, one, "40m", [{"alertname": "KueueDegraded"}]))
    both = [(build("a"), "1x60"), (build("b"), "1x60")]
    assert passes(promtool(tmp_path, alert, both, "40m", []))


def test_a_failed_provisioning_request_fires_for_a_queue_with_the_check(tmp_path, alerts):
    alert = alerts[(None, "ProvisioningRequestFailing")]
    def evicted(queue: str, reason: str, cause: str = "") -> str:
        labels = f'cluster_queue="{queue}",reason="{reason}",underlying_cause="{cause}"'
        return f"kueue_evicted_workloads_total{{{LEADER},{labels}}}"
    fired = {"alertname": "ProvisioningRequestFailing", "cluster_queue": "training"}
    assert passes(promtool(tmp_path, alert, [(evicted("training", "AdmissionCheck"), "0x10 1x20")], "15m", [fired]))
    rejected = evicted("training", "Deactivated", "AdmissionCheck")
    assert passes(promtool(tmp_path, alert, [(rejected, "0x10 1x20")], "15m", [fired]))
    # preempted work, a user's own deactivation, and research (no ProvisioningRequest check) are not failures
    quiet = [(evicted("training", "Preempted"), "0x10 1x20"), (evicted("training", "Deactivated"), "0x10 1x20"),
             (evicted("research", "AdmissionCheck"), "0x10 1x20")]
    assert passes(promtool(tmp_path, alert, quiet, "15m", []))


def test_a_wrong_threshold_fails(tmp_path, alerts):
    """The fires-case above, against an alert whose threshold was written wrong: promtool reports it."""
    right = alerts[(None, "TeamEvictionBurst")]
    wrong = dataclasses.replace(right, query=right.query.replace("> 10", "> 100"))
    burst = {"alertname": "TeamEvictionBurst", "cluster_queue": "training"}
    assert not passes(promtool(tmp_path, wrong, [(EVICTED, "0+1x90")], "80m", [burst]))


def evaluate(tmp_path: Path, expr: str, series: list[tuple[str, str]], at: str,
             samples: list[tuple[str, float]]) -> subprocess.CompletedProcess[str]:
    """Evaluate one query over `series` with promtool and expect `samples` (labels as PromQL writes them, value)."""
    test = {"rule_files": [], "evaluation_interval": "1m", "tests": [{
        "interval": "1m", "input_series": [{"series": s, "values": v} for s, v in series],
        "promql_expr_test": [{"expr": expr, "eval_time": at,
                              "exp_samples": [{"labels": labels, "value": value} for labels, value in samples]}]}]}
    (tmp_path / "test.yaml").write_text(yaml.safe_dump(test))
    assert PROMTOOL is not None, "CI installs promtool (.ci/run)"
    return subprocess.run([PROMTOOL, "test", "rules", "test.yaml"], cwd=tmp_path, capture_output=True, text=True)


def chart_query(title: str) -> str:
    p = build_platform(platform_of("prod"))
    tiles = p.dashboard["mosaicLayout"]["tiles"]
    return next(t["widget"]["xyChart"]["dataSets"][0]["timeSeriesQuery"]["prometheusQuery"]
                for t in tiles if t["widget"]["title"] == title)


def test_the_dashboard_counts_pending_work_once_though_both_kueue_replicas_report_it(tmp_path):
    """Kueue's standby replica reports the same pending gauge as the leader: the chart shows 3 pending
    workloads, not 6."""
    query = chart_query("Pending workloads per ClusterQueue")
    pending = 'kueue_pending_workloads{{{},cluster_queue="training",status="active",replica_role="{}"}}'
    series = [(pending.format(KUEUE, "leader"), "3x10"), (pending.format(KUEUE, "follower"), "3x10")]
    expected = [('{cluster_queue="training", status="active"}', 3)]
    assert passes(evaluate(tmp_path, query, series, "5m", expected))
