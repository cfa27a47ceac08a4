"""A team's PodMonitorings are bounded per scrape: spec.limits.samples set and at most the team's cap, every
endpoint's interval at least the team's shortest (teams[].object_quotas.scrape_samples, scrape_interval), on
create and on every update that changes them."""
from __future__ import annotations

import pytest

from gke_ai_batch.apiserver.cel_policies import evaluate
from gke_ai_batch.plan.namespace_policies import SCRAPE_LIMITS

from .conftest import by_type, platform_of, run_config
from .test_containment import prod_policies
from .test_escape import verdict

REFUSED = f"refused: research/trainer: ValidatingAdmissionPolicy {SCRAPE_LIMITS}: namespace research "
SAMPLES = REFUSED + ("holds every PodMonitoring to at most 10000 samples per scrape "
                     "(teams[].object_quotas.scrape_samples): set spec.limits.samples from 1 to 10000")
INTERVAL = REFUSED + ("scrapes a PodMonitoring endpoint at most every 30s (teams[].object_quotas.scrape_interval): "
                      "set spec.endpoints[].interval to 30s or longer, not ")


def monitoring(limits: dict | None = None, *intervals: str, version: str = "v1") -> dict:
    endpoints = [{"port": f"p{i}", "interval": v} for i, v in enumerate(intervals or ("30s",))]
    return {"apiVersion": f"monitoring.googleapis.com/{version}", "kind": "PodMonitoring",
            "metadata": {"name": "trainer", "namespace": "research"},
            "spec": {"selector": {"matchLabels": {"app": "trainer"}}, "endpoints": endpoints,
                     **({"limits": limits} if limits is not None else {})}}


@pytest.mark.parametrize("limits, tail", [
    (None, " (unset or 0 is no limit)"),
    ({}, " (unset or 0 is no limit)"),
    ({"labels": 30}, " (unset or 0 is no limit)"),
    ({"samples": 0}, " (unset or 0 is no limit)"),
    ({"samples": 10001}, ", not 10001"),
])
def test_a_podmonitoring_without_a_sample_limit_or_over_the_cap_is_refused(limits, tail):
    assert verdict("prod", monitoring(limits)) == SAMPLES + tail


@pytest.mark.parametrize("intervals, fast", [(("1s",), "1s"), (("30s", "500ms"), "500ms"), (("1m", "29s"), "29s")])
def test_an_endpoint_scraped_more_often_than_the_team_allows_is_refused(intervals, fast):
    assert verdict("prod", monitoring({"samples": 5000}, *intervals)) == INTERVAL + fast


@pytest.mark.parametrize("intervals", [("30s",), ("1m", "1m30s"), ("1h",), ("1d",), ("2w",)])
def test_a_podmonitoring_within_the_bounds_is_created(intervals):
    assert verdict("prod", monitoring({"samples": 10000, "labels": 30}, *intervals)) == \
        "created: research/trainer (PodMonitoring)"


def test_the_v1alpha1_version_is_held_too():
    """GMP v0.17.2 still serves v1alpha1 of the CRD: the policy matches every version."""
    assert verdict("prod", monitoring(None, version="v1alpha1")) == SAMPLES + " (unset or 0 is no limit)"


def test_a_member_cannot_loosen_an_admitted_podmonitoring_by_update():
    """Created within the bounds, then patched: dropping the limit, raising it or scraping every second is judged as
    at create; an update that keeps both (a label added) passes even when the object predates the bounds."""
    policies, bindings, namespace = prod_policies("research")
    admitted = monitoring({"samples": 5000})
    for changed, policy_message in ((monitoring(None), "samples per scrape"),
                                    (monitoring({"samples": 50000}), "samples per scrape"),
                                    (monitoring({"samples": 5000}, "1s"), "endpoint at most every 30s")):
        [denial] = evaluate(policies, bindings, changed, namespace, "UPDATE", old_object=admitted)
        assert denial.policy == SCRAPE_LIMITS and policy_message in denial.message
    old = monitoring(None, "1s")
    relabelled = {**old, "metadata": {**old["metadata"], "labels": {"owner": "research"}}}
    assert evaluate(policies, bindings, relabelled, namespace, "UPDATE", old_object=old) == []


def test_a_team_block_sets_its_own_scrape_bounds():
    platform = platform_of("prod")
    platform["teams"][1]["object_quotas"] = {"scrape_samples": 50000, "scrape_interval": "5s"}
    regs = run_config(platform, "scrape")
    annotations = {r.inputs["metadata"]["name"]: r.inputs["metadata"].get("annotations", {})
                   for r in by_type(regs, ":Namespace")}
    assert annotations["research"]["gke-ai-batch.io/scrape-samples"] == "50000"
    assert annotations["research"]["gke-ai-batch.io/scrape-interval"] == "5"
    assert annotations["training"]["gke-ai-batch.io/scrape-samples"] == "10000"
    assert annotations["training"]["gke-ai-batch.io/scrape-interval"] == "30"
