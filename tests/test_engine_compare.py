"""How the real engine's preview is held to `make diff` (gke_ai_batch.sandbox.engine_compare), and how its events
become one row per resource (gke_ai_batch.sandbox.deploy), without a CLI."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import yaml

from gke_ai_batch.sandbox import deploy, engine_compare

CQ = ("urn:pulumi:dev::gke-ai-batch::gke-ai-batch:index:KueueQueues$kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
      "::queues-cq-a")


def test_paths_are_compared_without_positions_and_keys():
    ours = engine_compare.offline_paths([
        'spec.resourceGroups[0].flavors[name="v5e"].resources[name="cpu"].nominalQuota: 8 -> 4',
        "order: delete first", "dependencies: + Release kueue"])
    assert ours == {engine_compare.shape("spec.resourceGroups[0].flavors[1].resources[0].nominalQuota")}
    assert engine_compare.shape('spec.nodeLabels["cloud.google.com/gke-tpu-topology"]') == "spec.nodeLabels"


def test_an_operation_or_a_path_apart_is_a_disagreement():
    offline = [("update", {"urn": CQ}, ["spec.cohort: \"a\" -> \"b\""])]
    agree = [deploy.Change(CQ, "t", "update", ("spec",), ("spec.cohort",))]
    assert engine_compare.disagreements("s", offline, agree) == (1, [])
    replaced = [deploy.Change(CQ, "t", "replace", ("spec",), ("spec.cohort",))]
    assert engine_compare.disagreements("s", offline, replaced)[1] == [
        "s: queues-cq-a: make diff says update, pulumi preview says replace"]
    other = [deploy.Change(CQ, "t", "update", ("spec",), ("spec.queueingStrategy",))]
    assert "make diff changes spec.cohort that pulumi preview does not" in engine_compare.disagreements(
        "s", offline, other)[1][0]


def _step(op: str, urn: str = CQ) -> SimpleNamespace:
    meta = SimpleNamespace(op=SimpleNamespace(value=op), urn=urn, type="t", diffs=["spec"],
                           detailed_diff={"spec.cohort": None})
    return SimpleNamespace(resource_pre_event=SimpleNamespace(metadata=meta), res_op_failed_event=None,
                           diagnostic_event=None, policy_event=None)


def test_a_replacements_steps_are_one_replace():
    events = deploy.Events()
    for op in ("create-replacement", "replace", "delete-replaced"):
        events(_step(op))
    assert [(c.op, c.paths) for c in events.changes()] == [("replace", ("spec.cohort",))]


def test_the_endpoint_change_moves_the_server_only(tmp_path):
    kubeconfig = tmp_path / "k"
    kubeconfig.write_text(yaml.safe_dump({"clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443"}}]}))
    key = "gke-ai-batch:kubernetesOnly"
    moved = engine_compare.endpoint_changed({key: {"kubeconfig": str(kubeconfig)}}, tmp_path)
    doc = yaml.safe_load(Path(moved[key]["kubeconfig"]).read_text())
    assert doc["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:6444"


def test_the_policy_launcher_serves_the_pack_with_the_sdks_policy_runner(tmp_path):
    """CLI v3.274.1 launches an executable given as a pack with the engine's address as its one argument."""
    launcher = deploy.policy_launcher(tmp_path, Path("/project/policies"))
    assert launcher.read_text().startswith("#!/bin/sh\n")
    assert '-u -m pulumi.policy "$1" "/project/policies"' in launcher.read_text()
    assert launcher.stat().st_mode & 0o111
