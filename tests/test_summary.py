"""The readable plan: teams and their queues, quota per flavor and ClusterQueue, pools, the queue
diagram and summary.md, as built from the registrations; and what a refused plan leaves behind."""
import re

import yaml

from gke_ai_batch.offline.__main__ import main
from gke_ai_batch.offline.views.render import summary, write_outputs
from gke_ai_batch.offline.views.summary import CONSOLE_TEAMS, plan_summary, pool_table, quota_table, team_table
from gke_ai_batch.offline.views.view import stack_view

from .conftest import planned, platform_of, run_config

TEAM_HEADER = ("team", "namespaces", "LocalQueue", "ClusterQueue", "cohort", "default priority", "may use")


def rows_by_first(table) -> dict:
    return {row[0]: dict(zip(table.header, row, strict=True)) for row in table.rows}


def quota_groups(table) -> dict:
    """(flavor, resource) -> {"head": first row, ClusterQueue name: row}, the blanks of a group filled in."""
    groups: dict = {}
    key = None
    for row in table.rows:
        cells = dict(zip(table.header, row, strict=True))
        if cells["flavor"]:
            key = (cells["flavor"], cells["resource"])
            groups[key] = {"head": cells}
        groups[key][cells["ClusterQueue"].split(" (")[0]] = cells
    return groups


def test_team_table_shows_each_team_as_the_prod_config_declares_it():
    cfg = platform_of("prod")
    default = next(p for p in cfg["priorities"] if p.get("global_default"))
    rows = rows_by_first(team_table(stack_view(planned("prod"))))
    assert team_table(stack_view(planned("prod"))).header == TEAM_HEADER
    assert set(rows) == {t["name"] for t in cfg["teams"]}
    for t in cfg["teams"]:
        row = rows[t["name"]]
        assert row["namespaces"] == ", ".join(sorted(t.get("namespaces") or [t["name"]]))
        names = [q["name"] for q in t.get("local_queues", [])] or [t.get("local_queue", f"{t['name']}-queue")]
        assert re.sub(r" \([^)]*\)", "", row["LocalQueue"]).split(", ") == sorted(names)
        assert row["ClusterQueue"].split(" (")[0] == t.get("cluster_queue", t["name"])
        assert row["cohort"] == t["queue"]["cohort"]
        assert row["default priority"] == f"{default['name']} ({default['value']:,})"
        assert row["may use"] == ", ".join(t.get("priorities") or [default["name"]])
    assert re.search(r"^  research +research, research-sandbox +research-queue \(weight 1\) +research \(LocalQueues "
                     r"ordered by usage\) +ml-prod +low-priority ",
                     summary(planned("prod")), re.M)


def test_teams_sharing_a_cluster_queue_each_show_it_as_shared():
    rows = rows_by_first(team_table(stack_view(planned("batch-teams"))))
    for team, lq in (("team-a", "lq-team-a"), ("team-b", "lq-team-b")):
        assert rows[team]["LocalQueue"] == lq
        assert rows[team]["ClusterQueue"] == "cluster-queue (shared by 2 teams; any namespace)"
        assert rows[team]["default priority"] == "none (0)"  # batch-teams declares no priorities
    group = quota_groups(quota_table(stack_view(planned("batch-teams"))))[("default-flavor", "cpu")]
    assert group["cluster-queue"]["ClusterQueue"] == "cluster-queue (team-a, team-b)"
    assert group["head"]["at full size"] == "-"  # Autopilot: no pools to hold it


def test_quota_table_shows_each_queues_nominal_borrowing_and_lending_against_capacity():
    groups = quota_groups(quota_table(stack_view(planned("prod"))))
    v5p = groups[("v5p-res", "google.com/tpu")]
    assert (v5p["head"]["at full size"], v5p["head"]["guaranteed"], v5p["head"]["promised"]) == ("128", "128", "128")
    research = v5p["research"]
    assert (research["nominal"], research["borrowing limit"], research["lending limit"]) == ("48", "16", "16")
    inference = v5p["inference-eval"]
    assert (inference["nominal"], inference["borrowing limit"], inference["lending limit"]) == ("16", "32", "-")
    assert set(v5p) == {"head", "training", "research", "inference-eval"}
    spot = groups[("v5e-spot", "google.com/tpu")]
    assert (spot["head"]["at full size"], spot["head"]["promised"]) == ("16", "32 !")  # twice what it holds
    # Covered at 0 only so that Kueue refuses GPUs on a TPU flavor: not a quota anyone holds.
    assert ("v5p-res", "nvidia.com/gpu") not in groups and ("h100-dws", "google.com/tpu") not in groups


def test_spot_flex_and_queued_flavors_are_marked_not_guaranteed():
    table = quota_table(stack_view(planned("prod")))
    groups = quota_groups(table)
    for flavor, resource in (("v5e-spot", "google.com/tpu"), ("v6e-flex", "google.com/tpu"),
                             ("h100-dws", "nvidia.com/gpu")):
        assert groups[(flavor, resource)]["head"]["guaranteed"] == "0 *", flavor
    assert groups[("v5p-res", "google.com/tpu")]["head"]["guaranteed"] == "128"
    note = next(n for n in table.notes if "not guaranteed" in n)
    for named in ("h100-dws (queued-provisioning)", "v5e-spot (spot)", "v6e-flex (flex-start)"):
        assert named in note
    assert "v5p-res" not in note


def test_a_promise_above_the_full_size_is_marked_whatever_the_capacity_mode():
    """Issue 49: prod's spot v5e flavor holds 16 chips and is promised 32; the reserved v5p one holds what it is
    promised."""
    table = quota_table(stack_view(planned("prod")))
    groups = quota_groups(table)
    assert groups[("v5e-spot", "google.com/tpu")]["head"]["promised"] == "32 !"
    assert groups[("v5p-res", "google.com/tpu")]["head"]["promised"] == "128"
    assert "! promised above what the pools hold at full size (whatever capacity comes): v5e-spot" in table.notes


def test_the_report_marks_capacity_as_the_console_does():
    """Issue 49: the console marked what is not guaranteed with `*` and the report did not; a promise above the
    full size is `!` in both."""
    from gke_ai_batch.offline.views.report_data import flavor_rows
    rows = {(r["flavor"], r["resource"]): r for r in flavor_rows(stack_view(planned("prod")))}
    v5e, v5p = rows[("v5e-spot", "google.com/tpu")], rows[("v5p-res", "google.com/tpu")]
    assert (v5e["guaranteedText"], v5e["promisedText"], v5e["over"]) == ("0 *", "32 !", True)
    assert (v5p["guaranteedText"], v5p["promisedText"], v5p["over"]) == ("128", "128", False)


def test_pool_rows_show_the_config_generation_beside_gkes_label_zones_and_reservation():
    table = pool_table(stack_view(planned("prod")))
    rows = rows_by_first(table)
    assert rows["v5e-spot-0"]["accelerator"] == "v5e (tpu-v5-lite-podslice)"
    assert rows["v5e-spot-0"]["zones"] == "us-east5-c"
    assert rows["v5p-res-0"]["capacity"] == "reservation (v5p-prod-reservation)"
    assert rows["h100-dws"]["zones"] == "us-east5-a, us-east5-b"
    assert rows["h100-dws"]["accelerator"] == "nvidia-h100-80gb"  # GPUs: the config names GKE's label
    short = {row[0]: row for row in table.console_rows}
    assert short["system"][table.header.index("zones")] == "us-east5-{a,b,c}"
    dev = rows_by_first(pool_table(stack_view(planned("dev"))))
    assert dev["system"]["zones"] == "us-east5-b"  # a zonal cluster's pool runs in the cluster's zone


def node_ids(mmd: str) -> dict:
    """label -> node id, from the node lines of a flowchart."""
    return {m.group(2): m.group(1) for m in re.finditer(r'^  (\w+)\W{1,2}"([^"]*)"', mmd, re.M)}


def test_queue_diagram_links_local_queues_to_cluster_queues_and_flavors_to_pools(tmp_path):
    write_outputs(planned("prod"), tmp_path, stack="prod")
    mmd = (tmp_path / "queues.mmd").read_text()
    assert mmd.startswith("flowchart LR\n")
    ids = node_ids(mmd)
    lq, cq = ids["LocalQueue research-queue in research-sandbox"], ids["ClusterQueue research"]
    assert f"  {lq} --> {cq}\n" in mmd
    assert f"  {ids['flavor v5e-spot']} --> {ids['pool v5e-spot-1 (spot)']}\n" in mmd
    assert f"  {cq} -->|\"cohort\"| {ids['cohort ml-prod']}\n" in mmd
    assert f"  {ids['team research']} --> {lq}\n" in mmd
    for line in mmd.splitlines()[2:]:  # after the header and its comment: nodes, edges, classes
        assert re.match(r'^  (\w+\W{1,2}"[^"]*"\W{1,2}|\w+ -->(\|"[^"]*"\|)? \w+|classDef .*|class [\w,]+ \w+)$',
                        line), line


def test_diagram_node_ids_are_safe_for_any_team_name():
    cfg = platform_of("dev")
    cfg["teams"].append({"name": "end", "queue": {"quotas": {"v6e-flex": {"google.com/tpu": 4}}}})
    mmd = plan_summary(run_config(cfg)).diagram.text()
    ids = node_ids(mmd)
    assert ids["team end"] == "team_end" and ids["ClusterQueue end"] == "cq_end"  # never the keyword `end`
    assert "  lq_end_end_queue --> cq_end\n" in mmd


def test_summary_md_has_the_tables_and_the_diagram(tmp_path):
    write_outputs(planned("prod"), tmp_path, stack="prod")
    md = (tmp_path / "summary.md").read_text()
    assert md.startswith("# Offline plan of stack prod\n")
    assert "| team | namespaces | LocalQueue | ClusterQueue | cohort | default priority | may use |\n" \
           "|---|---|---|---|---|---|---|" in md
    assert "| research | research, research-sandbox | research-queue (weight 1) | research (LocalQueues ordered by " \
           "usage) | ml-prod | " \
           "low-priority (1,000,000) | low-priority |" in md
    assert "| v5p-res | google.com/tpu | 128 | 128 | 128 | inference-eval | 16 | 32 | - |" in md
    assert "| v5e-spot | google.com/tpu | 16 | 0 \\* | 32 ! | inference-eval | 16 | - | 8 |" in md
    assert "| v5e-spot-0 | v5e (tpu-v5-lite-podslice) | 2x4 |" in md
    block = re.search(r"```mermaid\n(.*?)```", md, re.S).group(1)
    assert block == (tmp_path / "queues.mmd").read_text()


def test_counts_are_singular_for_one_and_plural_otherwise():
    dev = summary(planned("dev"))
    assert ("kueue: 9 flavors, 1 cohort, 3 ClusterQueues (cpu-batch, research, training), 7 LocalQueues, "
            "2 admission checks\n") in dev
    assert "2 teams:" in dev and "134 resources registered" in dev
    flex = summary(planned("flex-start"))
    assert "0 cohorts, 1 ClusterQueue (batch), 1 LocalQueue, 0 admission checks" in flex and "1 team:" in flex
    assert "(s)" not in dev + flex and "1 nodes" not in dev + flex
    cfg = platform_of("dev")
    cfg["cohorts"].append({"name": "other"})
    assert ", 2 cohorts, " in summary(run_config(cfg))


def test_console_cuts_long_team_tables_and_says_where_the_rest_is():
    cfg = platform_of("dev")
    cfg["teams"] += [{"name": f"team-{i:02d}", "queue": {"cohort": "ml", "quotas": {"v6e-flex": {"google.com/tpu": 1}}}}
                     for i in range(CONSOLE_TEAMS)]
    report = plan_summary(run_config(cfg))
    text = report.console("out/big/summary.md")
    assert f"{CONSOLE_TEAMS + 2} teams:" in text
    assert "  ... and 2 more teams; the full table is in out/big/summary.md" in text
    assert "team-29" not in text.split("teams:")[1].split("...")[0]  # sorted: research, team-00.., training last
    md = report.markdown("big")
    assert all(f"| team-{i:02d} | team-{i:02d} |" in md for i in range(CONSOLE_TEAMS))


def test_refused_plan_removes_the_earlier_plans_files_and_nothing_else(tmp_path, capsys):
    out = tmp_path / "out"
    main(["check", "dev", "--out", str(out)])
    assert {"resources.json", "summary.md", "queues.mmd", "violations.json"} <= {p.name for p in out.iterdir()}
    assert list((out / "manifests").glob("*.yaml"))
    (out / "notes.txt").write_text("mine")
    (out / "manifests" / "README.txt").write_text("mine too")
    cfg = platform_of("dev")
    cfg["tpu_pools"][0]["topology"] = "2x3"
    bad = tmp_path / "Pulumi.dev.yaml"
    bad.write_text(yaml.safe_dump({"config": {"gke-ai-batch:platform": cfg}}))
    capsys.readouterr()
    assert main(["plan", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "topology" in err
    assert f"removed the earlier plan's resources.json, summary.md, queues.mmd, report.html, violations.json, " \
           f"manifests/, helm/ from {out}" in err
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == ["manifests", "manifests/README.txt",
                                                                       "notes.txt"]


def test_the_summary_says_where_the_nodes_live_and_what_teams_store():
    prod = summary(planned("prod"))
    assert ("network ml-prod, subnet ml-prod-us-east5 (created: nodes 10.40.0.0/20, Pods 10.44.0.0/14, "
            "Services 10.48.0.0/20; Cloud NAT)\n") in prod
    assert "gpudirect: h200-res 9 extra networks in 2 VPCs\n" in prod
    assert "storage: 2 buckets created, 8 bucket grants to team service accounts\n" in prod
    shared = summary(planned("dws-gpu"))
    assert "subnet projects/acme-net-host/regions/us-central1/subnetworks/gke-us-central1 (adopted: Pods gke-pods, " \
           "Services gke-services)" in shared and "storage:" not in shared


def _kubectl_line(regs) -> str:
    (line,) = [b for b in plan_summary(regs).blocks if isinstance(b, str) and b.startswith("kubectl")]
    return line


def test_the_plan_prints_the_stacks_own_get_credentials_line():
    """getting-started's `get-credentials ml-dev --location us-east5 --dns-endpoint` failed: dev is zonal,
    its cluster lives in us-east5-b; prod's DNS endpoint takes no user traffic."""
    dev = _kubectl_line(planned("dev"))
    assert dev.endswith(": gcloud container clusters get-credentials ml-dev --location us-east5-b "
                        "--project acme-ml-dev --dns-endpoint")
    prod = _kubectl_line(planned("prod"))
    assert prod.endswith(": gcloud container clusters get-credentials ml-prod --location us-east5 "
                         "--project acme-ml-prod --internal-ip")
    assert "from inside the VPC or a network connected to it, in an authorized network: 10.20.0.0/16 (corp-vpn), " \
           "10.30.0.0/24 (ci-runners)" in prod
    # prod's first deploy creates the VPC its control plane answers in: the cloud resources first, from outside.
    (first,) = [b for b in plan_summary(planned("prod")).blocks if isinstance(b, str) and b.startswith("first")]
    assert "pulumi up --stack prod --policy-pack policies --exclude 'urn:pulumi:prod::gke-ai-batch::gke-ai-batch:" \
           "index:GkeCluster$pulumi:providers:kubernetes::gke-k8s' --exclude-dependents (cloud resources only), then " \
           "pulumi up --stack prod --policy-pack policies from a runner in them" in first
    assert not [b for b in plan_summary(planned("dev")).blocks if isinstance(b, str) and b.startswith("first")]
    cfg = platform_of("dev")  # no DNS endpoint, no private nodes: gcloud's default, the external IP endpoint
    cfg["cluster"].update(dns_endpoint=False, private_nodes=False, ip_endpoint="authorized")
    public = _kubectl_line(run_config(cfg, "dev"))
    assert public.endswith("--project acme-ml-dev") and "from an authorized network: 10.0.0.0/8 (corp)" in public
