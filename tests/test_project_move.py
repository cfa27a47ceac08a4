"""A stack moved to another project: every resource whose `project` the provider cannot change is shown as the
replacement it is, the monitoring and BigQuery ones included (issue 48: the alert policies, the dashboard and the
cost view were shown as in-place updates)."""
from __future__ import annotations

import pytest

from gke_ai_batch import vocabulary as v
from gke_ai_batch.offline.diff import compare

from .conftest import platform_of, run_config


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_project_move_replaces_every_resource_that_names_the_project(stack):
    moved = platform_of(stack)
    moved["project"] = "acme-ml-elsewhere"
    old = [r.as_json() for r in run_config(platform_of(stack), stack)]
    new = [r.as_json() for r in run_config(moved, stack)]
    steps = compare(old, new).steps
    naming = {r["type"]: op for op, r, lines in steps if any(line.startswith("project: ") for line in lines)}
    assert naming and set(naming.values()) == {"replace"}, naming
    expected = {v.ALERT_POLICY, v.DASHBOARD} | ({v.BQ_DATASET, v.BQ_TABLE} if stack == "prod" else set())
    assert expected <= naming.keys()
    for _, r, lines in steps:
        if r["type"] in expected:
            [line] = [line for line in lines if line.startswith("project: ")]
            assert "[forces replacement: ForceNew in terraform-provider-google-beta" in line
