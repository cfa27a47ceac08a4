"""Issue 49 item 5: `make diff` lines name things. A list item by its key (`resourceLimits[4]` said nothing),
a dashboard by its panels (not two JSON strings cut to `(+10045 characters)`), and the policy counts with the
advisories and violations that come or go."""
from __future__ import annotations

import json

from gke_ai_batch.offline.diff import compare, policy_lines, update_or_replace

from .conftest import planned


def _resource(stack: str, type_: str) -> dict:
    r = next(r for r in planned(stack) if r.type == type_)
    return {"urn": r.urn, "type": r.type, "name": r.name, "inputs": json.loads(json.dumps(r.inputs))}


def test_a_resource_limit_is_named_by_its_resource_type() -> None:
    old = _resource("dev", "gcp:container/cluster:Cluster")
    new = json.loads(json.dumps(old))
    limits = new["inputs"]["clusterAutoscaling"]["resourceLimits"]
    assert limits[4] == {"minimum": 0, "maximum": 4, "resourceType": "nvidia-l4"}
    limits[4]["maximum"] = 12
    assert update_or_replace(old, new)[2] == [
        'clusterAutoscaling.resourceLimits[resourceType="nvidia-l4"].maximum: 4 -> 12']


def test_a_resource_limit_added_is_one_line_by_its_key_not_every_later_one_shifted() -> None:
    old = _resource("dev", "gcp:container/cluster:Cluster")
    new = json.loads(json.dumps(old))
    new["inputs"]["clusterAutoscaling"]["resourceLimits"].insert(2, {"minimum": 0, "maximum": 8,
                                                                    "resourceType": "nvidia-a100-80gb"})
    assert update_or_replace(old, new)[2] == [
        'clusterAutoscaling.resourceLimits[resourceType="nvidia-a100-80gb"]: (absent) -> {"minimum": 0, '
        '"maximum": 8, "resourceType": "nvidia-a100-80gb"}']


def test_a_list_without_a_key_is_still_compared_by_index() -> None:
    old = {"urn": "u", "type": "t", "inputs": {"resourceLimits": [{"maximum": 1}]}}
    new = {"urn": "u", "type": "t", "inputs": {"resourceLimits": [{"maximum": 2}]}}
    assert update_or_replace(old, new)[2] == ["resourceLimits[0].maximum: 1 -> 2"]


def _dashboard(stack: str) -> tuple[dict, dict]:
    r = _resource(stack, "gcp:monitoring/dashboard:Dashboard")
    return r, json.loads(r["inputs"]["dashboardJson"])


def _with_document(r: dict, doc: dict) -> dict:
    return {**r, "inputs": {**r["inputs"], "dashboardJson": json.dumps(doc)}}


def test_a_team_added_shows_its_panels_by_title_and_the_moved_ones_counted() -> None:
    """Prod with one team fewer at BASE: the working tree's dashboard gains that team's section."""
    new, doc = _dashboard("prod")
    tiles = doc["mosaicLayout"]["tiles"]
    groups = [i for i, t in enumerate(tiles) if "collapsibleGroup" in t["widget"]]
    first_team, second_team = groups[1], groups[2]
    gone = tiles[first_team:second_team]
    height = sum(t["height"] for t in gone if "collapsibleGroup" in t["widget"])
    kept = [t if i < first_team else {**t, "yPos": t["yPos"] - height}
            for i, t in enumerate(tiles) if not first_team <= i < second_team]
    old = _with_document(new, {**doc, "mosaicLayout": {**doc["mosaicLayout"], "tiles": kept}})
    [(op, _, lines)] = compare([old], [new]).steps
    team = gone[0]["widget"]["title"]
    assert op == "update" and team == "Team training (training, training-gpudirect)"
    assert lines == [
        f'dashboardJson: panel added: "{team}"',
        f'dashboardJson: panel added: "{team} / Pending workloads per LocalQueue"',
        f'dashboardJson: panel added: "{team} / Admitted workloads per LocalQueue"',
        f'dashboardJson: panel added: "{team} / Usage of nominal quota (training), per flavor and resource"',
        f'dashboardJson: panel added: "{team} / Wait for admission, p50"',
        f'dashboardJson: panel added: "{team} / Wait for admission, p90"',
        f'dashboardJson: panel added: "{team} / Evictions in the last hour, by reason"',
        f'dashboardJson: panel added: "{team} / Preemptions its queue made in the last hour, by reason"',
        f"dashboardJson: {len(kept) - groups[1]} panels moved (the same widget in a new place)"]


def test_a_changed_panel_and_title_show_what_changed_and_a_removed_panel_its_name() -> None:
    old, doc = _dashboard("dev")
    tiles = doc["mosaicLayout"]["tiles"]
    assert tiles[1]["widget"]["title"] == "Kueue replicas scraped"
    query = tiles[1]["widget"]["xyChart"]["dataSets"][0]["timeSeriesQuery"]
    changed = json.loads(json.dumps(doc))
    changed["displayName"] = "renamed"
    changed["mosaicLayout"]["tiles"][1]["widget"]["xyChart"]["dataSets"][0]["timeSeriesQuery"]["unitOverride"] = "s"
    del changed["mosaicLayout"]["tiles"][2]
    assert update_or_replace(old, _with_document(old, changed))[2] == [
        'dashboardJson: panel removed: "Platform: Kueue and capacity / Admission attempts per second, by result"',
        'dashboardJson: panel changed: "Platform: Kueue and capacity / Kueue replicas scraped": '
        f'xyChart.dataSets[0].timeSeriesQuery.unitOverride: "{query["unitOverride"]}" -> "s"',
        f'dashboardJson.displayName: "{doc["displayName"]}" -> "renamed"']


def test_new_and_gone_advisories_are_named() -> None:
    urn = "urn:pulumi:prod::p::kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue::{}"
    kept = {"policy": "not-guaranteed", "level": "advisory", "urn": urn.format("a"), "message": "spot"}
    old = [kept, {"policy": "quota-over-capacity", "level": "advisory", "urn": urn.format("b"), "message": "40 > 4"}]
    new = [kept, *({"policy": "not-guaranteed", "level": "advisory", "urn": urn.format(q), "message": "spot"}
                   for q in ("c", "d"))]
    assert policy_lines(old, new) == [
        "policy check: BASE 0 mandatory, 2 advisory -> working tree 0 mandatory, 3 advisory",
        "  advisory not-guaranteed: kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue c: spot (new)",
        "  advisory not-guaranteed: kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue d: spot (new)",
        "  advisory quota-over-capacity: kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue b: 40 > 4 (gone)"]


def test_a_renamed_stack_keeps_its_findings() -> None:
    """Findings are matched by resource type and name, not URN: a stack rename brings and removes none."""
    v = {"policy": "p", "level": "advisory", "message": "m"}
    old = [{**v, "urn": "urn:pulumi:dev::proj::gcp:container/cluster:Cluster::c"}]
    new = [{**v, "urn": "urn:pulumi:dev-v2::proj::gcp:container/cluster:Cluster::c"}]
    assert policy_lines(old, new) == ["policy check: BASE 0 mandatory, 1 advisory -> working tree 0 mandatory, "
                                      "1 advisory"]
