"""The dashboard and alert policies a stack declares: every query is real PromQL over Kueue's own series,
the documents are what the Monitoring API accepts, and a new team gets its section and alerts unasked."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import promql_parser
import pytest
import sqlglot

from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.plan.platform import build_platform
from gke_ai_batch.plan.queries import every_replica, kueue

from .conftest import STACKS, by_type, fleet_outputs, platform_of, run_config
from .kueue_metrics import kueue_metrics, series_metric

ROOT = Path(__file__).resolve().parent.parent
# The Monitoring API's own message types parse each document (unknown fields and wrong types raise). In a
# process of their own: googleapis-common-protos and pulumi's runtime both define google.rpc.Status, and one
# protobuf descriptor pool refuses the second.
PARSE = """
import json, sys
from google.cloud.monitoring_dashboard_v1.types import Dashboard
from google.cloud.monitoring_v3.types import AlertPolicy
kinds = {"Dashboard": Dashboard, "AlertPolicy": AlertPolicy}
out = []
for kind, doc in json.load(sys.stdin):
    try:
        parsed = kinds[kind].from_json(doc, ignore_unknown_fields=False)
        out.append(json.loads(kinds[kind].to_json(parsed)))
    except Exception as e:
        out.append(f"{type(e).__name__}: {e}")
json.dump(out, sys.stdout)
"""


def api_parse(docs: list[tuple[str, dict]]) -> list[dict | str]:
    """Each (kind, document) as the Monitoring API's types read it back, or the error they raise."""
    done = subprocess.run([sys.executable, "-c", PARSE], input=json.dumps([(k, json.dumps(d)) for k, d in docs]),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)
PROMQL_BLOCK = re.compile(r"```promql\n(.*?)```", re.S)


def platform(stack: str):
    return build_platform(platform_of(stack), worker_outputs=fleet_outputs)


def stack_queries(stack: str) -> list[str]:
    p = platform(stack)
    charts = [t["widget"]["xyChart"] for t in (p.dashboard or {}).get("mosaicLayout", {}).get("tiles", [])
              if "xyChart" in t["widget"]]
    return [d["timeSeriesQuery"]["prometheusQuery"] for c in charts for d in c["dataSets"]] + \
        [a.query for a in p.alerts]


def doc_queries() -> list[str]:
    """Each query of a docs page's promql blocks: the lines after each `# what it shows` comment."""
    queries: list[list[str]] = []
    for page in (ROOT / "docs").glob("*.md"):
        for block in PROMQL_BLOCK.findall(page.read_text()):
            for line in block.splitlines():
                if line.startswith("#"):
                    queries.append([])
                elif line.strip():
                    queries[-1].append(line)
    return ["\n".join(q) for q in queries if q]


def selectors(expr: object) -> list[promql_parser.VectorSelector]:
    """Every vector selector of a parsed expression (through matrices, calls, aggregations and operators)."""
    found: list[promql_parser.VectorSelector] = []
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, promql_parser.VectorSelector):
            found.append(e)
        for attr in ("vector_selector", "expr", "lhs", "rhs", "param"):
            child = getattr(e, attr, None)
            if child is not None and not isinstance(child, (str, int, float)):
                stack.append(child)
        stack.extend(getattr(e, "args", None) or [])
    return found


def unreal(query: str) -> list[str]:
    """What in a query is not Kueue's: unknown metrics, labels the series do not carry, a selector that
    does not pin Kueue's namespace and job, or that counts the standby replica too (every metric with
    `replica_role` is reported by both replicas: a sum would double)."""
    problems = []
    for sel in selectors(promql_parser.parse(query)):
        metric = series_metric(sel.name or "")
        if metric is None:
            problems.append(f"{sel.name}: not a metric Kueue v0.19.2 exports")
            continue
        matchers = {m.name: (str(m.op), m.value) for m in sel.matchers.matchers}
        problems += [f"{sel.name}: no label {label}" for label in matchers if label not in metric.scraped_labels]
        if matchers.get("namespace") != ("MatchOp.Equal", "kueue-system") or matchers.get("job") != (
                "MatchOp.Equal", "kueue"):
            problems.append(f"{sel.name}: does not select Kueue's own job in kueue-system")
        if "replica_role" in metric.labels and matchers.get("replica_role") != ("MatchOp.Equal", "leader"):
            problems.append(f'{sel.name}: counts every Kueue replica, not the leader\'s (replica_role="leader")')
    return problems


@pytest.mark.parametrize("stack", STACKS)
def test_every_query_of_every_stack_is_kueue_promql(stack):
    queries = stack_queries(stack)
    assert queries
    assert {q: unreal(q) for q in queries if unreal(q)} == {}


@pytest.mark.parametrize("stack", STACKS)
def test_every_alert_policy_of_every_stack_can_be_created_before_kueue_has_series(plan, stack):
    """Cloud Monitoring refuses a PromQL condition on a metric with no series unless metric validation is
    off, and a fresh cluster has no Kueue series (no eviction counter before the first eviction)."""
    policies = by_type(plan(stack), "monitoring/alertPolicy:AlertPolicy")
    unvalidated = [c["conditionPrometheusQueryLanguage"].get("disableMetricValidation")
                   for p in policies for c in p.inputs["conditions"]]
    assert unvalidated == [True] * len(unvalidated), {p.name for p in policies}


def test_every_query_in_the_docs_is_kueue_promql():
    queries = doc_queries()
    assert len(queries) >= 8
    assert {q: unreal(q) for q in queries if unreal(q)} == {}


def test_the_checker_catches_a_forged_or_misspelt_query():
    assert unreal('sum(kueue_pending_workloads{cluster="c",replica_role="leader"})') == [
        "kueue_pending_workloads: does not select Kueue's own job in kueue-system"]
    both = 'sum(kueue_pending_workloads{cluster="c",namespace="kueue-system",job="kueue"})'
    assert unreal(both) == ['kueue_pending_workloads: counts every Kueue replica, not the leader\'s '
                            '(replica_role="leader")']
    assert unreal(f"count(kueue_build_info{every_replica('c')})") == []  # no role: it counts the replicas
    assert unreal(f"kueue_pending_workload{kueue('c')}") == [
        "kueue_pending_workload: not a metric Kueue v0.19.2 exports"]
    assert unreal(f"kueue_local_queue_pending_workloads{kueue('c', localqueue='a')}") == [
        "kueue_local_queue_pending_workloads: no label localqueue"]
    with pytest.raises(ValueError):
        promql_parser.parse("sum by (cluster_queue (kueue_pending_workloads)")


def test_the_metrics_reference_is_read_whole():
    metrics = kueue_metrics()
    assert len(metrics) >= 60
    assert metrics["kueue_local_queue_resource_usage"].labels == {"name", "namespace", "flavor", "resource",
                                                                  "replica_role"}
    assert "exported_namespace" in metrics["kueue_local_queue_pending_workloads"].scraped_labels


def test_every_dashboard_is_a_monitoring_api_dashboard():
    plans = [platform(stack) for stack in STACKS]
    for p, parsed in zip(plans, api_parse([("Dashboard", p.dashboard) for p in plans]), strict=True):
        assert isinstance(parsed, dict), parsed
        layout = parsed["mosaicLayout"]
        assert all(t.get("xPos", 0) + t["width"] <= layout["columns"] for t in layout["tiles"])
        groups = [t["widget"]["title"] for t in layout["tiles"] if "collapsibleGroup" in t["widget"]]
        assert groups == ["Platform: Kueue and capacity"] + [
            f"Team {t.name} ({', '.join(t.namespaces)})" for t in p.scheduling.teams]


def test_the_api_types_refuse_an_unknown_field():
    (error,) = api_parse([("Dashboard", {"displayName": "x", "mosaicLayout": {"colums": 48}})])
    assert "colums" in error


def test_prod_declares_the_dashboard_and_the_alert_policies(plan):
    regs = plan("prod")
    (dashboard,) = by_type(regs, "monitoring/dashboard:Dashboard")
    assert "Team research (research, research-sandbox)" in dashboard.inputs["dashboardJson"]
    policies = {r.name: r.inputs for r in by_type(regs, "monitoring/alertPolicy:AlertPolicy")}
    teams = ("team-workloads-stuck", "team-at-quota", "team-eviction-burst")
    # training and inference-eval keep the stack's alert settings and share one policy of each alert; research
    # routes its own (issue 51: a team costs no policy unless it tunes its alerts)
    assert set(policies) == {"observability-platform-kueue-down", "observability-platform-kueue-degraded",
                             "observability-platform-provisioning-request-failing"} | {
        f"observability-{alert}" for alert in teams} | {f"observability-research-{alert}" for alert in teams}
    parsed = api_parse([("AlertPolicy", camel_to_api(inputs)) for inputs in policies.values()])
    assert all(isinstance(p, dict) and p["conditions"][0]["conditionPrometheusQueryLanguage"] for p in parsed), parsed


def camel_to_api(inputs: dict) -> dict:
    """A registered AlertPolicy's inputs as the Monitoring API's document (the provider's fields by the API's names)."""
    keep = {"displayName", "combiner", "conditions", "notificationChannels", "severity", "documentation",
            "userLabels"}
    out = {k: v for k, v in inputs.items() if k in keep}
    out["documentation"] = {"content": inputs["documentation"]["content"],
                            "mimeType": inputs["documentation"]["mimeType"]}
    return out


def test_a_new_team_gets_its_dashboard_section_and_alerts_with_no_other_edit():
    """The shared team alerts cover a new team that keeps the stack's settings, with no policy of its own; one
    that routes its alerts gets its own three and leaves the shared ones."""
    cfg = platform_of("dev")
    before = build_platform(cfg)
    cfg["teams"].append({"name": "speech", "queue": {"quotas": {}}})
    after = build_platform(cfg)
    assert "Team speech (speech)" in json.dumps(after.dashboard) and "speech" not in json.dumps(before.dashboard)
    assert after.alerts == before.alerts
    cfg["monitoring"] = {"channels": {"speech": "projects/acme-ml-dev/notificationChannels/3"}}
    cfg["teams"][-1]["alerts"] = {"channels": ["speech"]}
    tuned = build_platform(cfg)
    assert {a.name for a in tuned.alerts if a.team == "speech"} == {
        "TeamWorkloadsStuck", "TeamAtQuota", "TeamEvictionBurst"}
    stuck = next(a for a in tuned.alerts if a.every_team and a.name == "TeamWorkloadsStuck")
    assert 'exported_namespace!~"speech"' in stuck.query


def test_a_team_routes_its_alerts_to_its_own_channel_with_its_own_threshold():
    cfg = platform_of("prod")
    cfg["monitoring"] = {"channels": {"oncall": "projects/acme-ml-prod/notificationChannels/111",
                                      "research": "projects/acme-ml-prod/notificationChannels/222"},
                         "notify": ["oncall"]}
    research = next(t for t in cfg["teams"] if t["name"] == "research")
    research["alerts"] = {"channels": ["research"], "pending_minutes": 30}
    alerts = {(a.team, a.name): a for a in build_platform(cfg).alerts}
    assert alerts[("research", "TeamWorkloadsStuck")].channels == ("projects/acme-ml-prod/notificationChannels/222",)
    assert "[30m:1m]" in alerts[("research", "TeamWorkloadsStuck")].query
    assert "[60m:1m]" in alerts[(None, "TeamWorkloadsStuck")].query  # training's, shared with inference-eval
    assert alerts[(None, "TeamWorkloadsStuck")].channels == ("projects/acme-ml-prod/notificationChannels/111",)
    assert alerts[(None, "KueueDown")].channels == ("projects/acme-ml-prod/notificationChannels/111",)


def test_monitoring_off_declares_neither():
    cfg = platform_of("dev")
    cfg["monitoring"] = {"dashboard": False, "alerts": False}
    regs = run_config(cfg)
    assert not by_type(regs, "monitoring/dashboard:Dashboard") and not by_type(regs, "alertPolicy:AlertPolicy")


@pytest.mark.parametrize("monitoring,team_alerts,path,words", [
    ({"channels": {"oncall": "oncall@acme.example"}}, None, "platform.monitoring.channels.oncall",
     "a notification channel's name, projects/PROJECT_ID/notificationChannels/NUMBER"),
    ({"notify": ["oncall"]}, None, "platform.monitoring.notify[0]",
     "no notification channel 'oncall' in monitoring.channels (none declared yet)"),
    ({"channels": {"oncall": "projects/acme-ml-dev/notificationChannels/1"}}, {"channels": ["pager"]},
     "platform.teams[0].alerts.channels[0]", "no notification channel 'pager' in monitoring.channels (one of oncall)"),
    ({"thresholds": {"pending_minutes": 0}}, None, "platform.monitoring.thresholds.pending_minutes",
     "greater than 0"),
    ({}, {"at_quota_minutes": -5}, "platform.teams[0].alerts.at_quota_minutes", "greater than 0"),
])
def test_bad_monitoring_input_is_one_error_at_its_path(monitoring, team_alerts, path, words):
    cfg = platform_of("dev")
    cfg["monitoring"] = monitoring
    if team_alerts is not None:
        cfg["teams"][0]["alerts"] = team_alerts
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == path and words in e.value.message


def test_prod_declares_the_per_team_cost_view(plan):
    regs = plan("prod")
    (dataset,) = by_type(regs, "bigquery/dataset:Dataset")
    (view,) = by_type(regs, "bigquery/table:Table")
    assert (dataset.inputs["datasetId"], view.inputs["tableId"]) == ("gke_ai_batch_cost", "team_cost_prod")
    query = sqlglot.parse_one(view.inputs["view"]["query"], read="bigquery")  # BigQuery SQL, or it raises
    (table,) = [t for t in query.find_all(sqlglot.exp.Table) if t.name.startswith("gcp_billing_export")]
    assert (table.catalog, table.db) == ("acme-billing", "billing_export")
    fields = [{f.name: f.expression.name for f in s.expressions} for s in query.find_all(sqlglot.exp.Struct)]
    teams = {(f["namespace"], f["team"]) for f in fields}
    assert teams == {("training", "training"), ("training-gpudirect", "training"), ("research", "research"),
                     ("research-sandbox", "research"), ("inference-eval", "inference-eval")}
    assert '= "ml-prod"' in view.inputs["view"]["query"] and view.inputs["view"]["useLegacySql"] is False


@pytest.mark.parametrize("cost,path,words", [
    ({"billing_export_table": "billing_export.gcp_billing_export_v1_X"}, "platform.cost.billing_export_table",
     "PROJECT_ID.DATASET.gcp_billing_export_resource_v1_ACCOUNT"),
    ({"billing_export_table": "acme-billing.exp.gcp_billing_export_resource_v1_A", "create_export_dataset": True},
     "platform.cost.create_export_dataset", "the export's dataset is in project 'acme-billing'"),
])
def test_bad_cost_input_is_one_error_at_its_path(cost, path, words):
    cfg = platform_of("dev")
    cfg["cost"] = cost
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == path and words in e.value.message
