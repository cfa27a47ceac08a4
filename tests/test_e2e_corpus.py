"""`make e2e` plays the objects the tests judge on a stack's own plan, recognised by the plan's fingerprint: the
same plan in another process must be recognised, and a test's variant of it (a policy left out, Kueue configured
otherwise) must not be played as the stack's."""
from __future__ import annotations

import copy
import dataclasses

from gke_ai_batch.apiserver.tenant_path import TenantPath
from gke_ai_batch.offline.admit import cluster_of
from gke_ai_batch.offline.views.render import is_manifest, manifest_of
from gke_ai_batch.sandbox.e2e_corpus import Case, corpus
from gke_ai_batch.sandbox.e2e_harvest import _canonical, fingerprint

from .conftest import ROOT, planned
from .test_escape import job, tenant_path


def test_the_order_of_a_list_does_not_change_a_fingerprint():
    assert _canonical({"b": [2, {"x": [3, 1]}], "a": 1}) == _canonical({"a": 1, "b": [{"x": [1, 3]}, 2]})


def test_a_stack_is_recognised_and_a_variant_is_not():
    regs = planned("dev")
    again = TenantPath([manifest_of(r) for r in regs if is_manifest(r)], cluster_of(regs))
    assert fingerprint(again) == fingerprint(tenant_path("dev"))
    fewer = copy.copy(again)
    fewer.policies = again.policies[1:]
    elastic = copy.copy(again)
    elastic.cluster = dataclasses.replace(again.cluster, config={**again.cluster.config, "featureGates": {}})
    assert fingerprint(fewer) != fingerprint(again) != fingerprint(elastic)


def test_the_corpus_is_the_samples_then_each_distinct_request_once():
    sample = corpus(ROOT, "dev", [])
    assert [c.source for c in sample] == ["examples/workloads/dev.yaml"] * len(sample) and sample
    twice = [Case("t1", job("research", "j", "research-queue")), Case("t2", job("research", "j", "research-queue"))]
    assert [c.source for c in corpus(ROOT, "dev", twice)][len(sample):] == ["t1"]
