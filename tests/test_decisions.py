"""`make diff` refuses deleting or replacing what holds running work or data unless the stack file decides on
it (gke_ai_batch.offline.changes.decisions), judged here on resources as resources.json records them."""
from __future__ import annotations

from pathlib import Path

from gke_ai_batch.offline.changes.decisions import Decisions, read_decisions, refusals

POOL_PARENT = "urn:pulumi:prod::gke-ai-batch::pulumi:pulumi:Stack$gke-ai-batch:index:TpuSlicePool::v5e-spot"


def pool(protect: bool = False, **inputs: object) -> dict:
    return {"type": "gcp:container/nodePool:NodePool", "name": "v5e-spot-slice-0", "parent": POOL_PARENT,
            "urn": f"{POOL_PARENT}$gcp:container/nodePool:NodePool::v5e-spot-slice-0",
            "inputs": {"name": "v5e-spot-0", **inputs}, "options": {"protect": True} if protect else {}}


def namespace(name: str, team: str) -> dict:
    return {"type": "kubernetes:core/v1:Namespace", "name": f"team-{team}-ns-{name}", "urn": f"ns::{team}/{name}",
            "inputs": {"metadata": {"name": name, "labels": {"gke-ai-batch.io/team": team}}}}


def local_queue(team: str) -> dict:
    return {"type": "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "name": f"team-{team}-lq-{team}",
            "urn": f"lq::{team}", "inputs": {"metadata": {"name": team, "namespace": "default",
                                                          "labels": {"gke-ai-batch.io/team": team}}}}


ACK = Decisions(acknowledged=(("node_pool", "v5e-spot"),))


def test_a_replaced_pool_needs_an_acknowledgement_in_this_change():
    [line] = refusals([("replace", pool())], [pool()], [pool()], Decisions(), Decisions())
    assert line.startswith("replace node pool v5e-spot (gcp:container/nodePool:NodePool v5e-spot-slice-0): add "
                           "`acknowledge: [{node_pool: v5e-spot, reason: ...}]`")
    assert refusals([("replace", pool(True))], [pool(True)], [pool()], Decisions(), ACK) == []


def test_a_protected_pool_is_deleted_only_after_a_change_that_unprotected_it():
    [line] = refusals([("delete", pool(True))], [pool(True)], [], Decisions(), ACK)
    assert "BASE protects it: land `acknowledge: [{node_pool: v5e-spot, reason: ...}]` first" in line
    assert refusals([("delete", pool())], [pool()], [], ACK, Decisions()) == []
    assert refusals([("delete", pool())], [pool()], [], Decisions(), ACK) == []  # unprotected: one change will do


def test_an_acknowledgement_covers_one_change_of_its_stack():
    ns = namespace("a", "a")
    [line] = refusals([("create", ns)], [pool()], [pool(), ns], ACK, ACK)
    assert line == ("acknowledge[0].node_pool: 'v5e-spot' was already at BASE: an acknowledgement covers one "
                    "change, so the change after it removes it")
    assert refusals([], [pool()], [pool()], ACK, ACK) == []  # a change to another stack is not held up


def test_an_acknowledgement_naming_nothing_is_refused_with_what_exists():
    [line] = refusals([], [pool()], [pool()], Decisions(), Decisions(acknowledged=(("node_pool", "v5e-spto"),)))
    assert line == ("acknowledge[0].node_pool: 'v5e-spto' names no node pool the stack had at BASE or has now "
                    "(node pools: v5e-spot)")


def test_a_team_namespace_goes_once_the_team_drained():
    ns = namespace("research", "research")
    [line] = refusals([("delete", ns)], [ns], [], Decisions(), Decisions())
    assert "drain team research first (`state: draining` in its block)" in line
    assert refusals([("delete", ns)], [ns], [], Decisions(draining=frozenset({"research"})), Decisions()) == []


def test_what_holds_no_work_goes_without_a_decision():
    lq = {"type": "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "name": "lq", "urn": "lq", "inputs": {}}
    default = {"type": "kubernetes:core/v1:NamespacePatch", "name": "team-a-ns-default", "urn": "p", "inputs": {}}
    assert refusals([("delete", lq), ("delete", default), ("create", pool())], [lq, default], [pool()],
                    Decisions(), Decisions()) == []


def test_the_decisions_are_read_from_the_stack_file_as_written(tmp_path: Path):
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text("config:\n  my-project:platform:\n    teams:\n      - {name: a, state: draining}\n"
                     "      - {name: b}\n    acknowledge:\n      - {cluster: ml, reason: move}\n")
    assert read_decisions(stack) == Decisions(acknowledged=(("cluster", "ml"),), draining=frozenset({"a"}))
    assert read_decisions(None) == Decisions()


def test_a_retained_bucket_is_never_replaced_even_when_acknowledged():
    bucket = {"type": "gcp:storage/bucket:Bucket", "name": "team-a-buckets-ckpt", "urn": "b",
              "inputs": {"name": "ckpt"},
              "options": {"protect": True, "retainOnDelete": True}}
    [line] = refusals([("replace", bucket)], [bucket], [bucket], Decisions(),
                      Decisions(acknowledged=(("bucket", "ckpt"),)))
    assert "kept on replacement (retainOnDelete)" in line and "give the new bucket another name" in line


def test_removing_a_team_that_lives_in_default_is_refused_until_it_drained():
    lq = local_queue("a")
    assert refusals([("delete", lq)], [lq], [], Decisions(), Decisions()) == [
        "remove team a: drain it first (`state: draining` in its block, landed in a change before this one), so "
        "that its queues stop admitting before they, its namespaces and its buckets go"]
    assert refusals([("delete", lq)], [lq], [], Decisions(draining=frozenset({"a"})), Decisions()) == []


def test_a_namespace_moved_to_another_team_is_refused_as_its_name_is_still_taken():
    before, after = namespace("shared", "a"), namespace("shared", "b")
    drained = Decisions(draining=frozenset({"a"}))
    [line] = refusals([("delete", before), ("create", after)], [before], [after], drained, Decisions())
    assert line.startswith("team namespace shared is deleted (team-a-ns-shared) and created again under another "
                           "Pulumi name (team-b-ns-shared) in one change")
    assert line.endswith("remove it in one change and add it back in the next")


def test_an_update_that_recreates_or_shrinks_a_pool_needs_an_acknowledgement():
    old = pool(nodeConfig={"diskSizeGb": 100}, autoscaling={"maxNodeCount": 4})
    bigger_disk = pool(nodeConfig={"diskSizeGb": 200}, autoscaling={"maxNodeCount": 4})
    [line] = refusals([("update", bigger_disk)], [old], [bigger_disk], Decisions(), Decisions())
    assert "GKE recreates every node to apply nodeConfig.diskSizeGb, evicting the pods on them" in line
    smaller = pool(nodeConfig={"diskSizeGb": 100}, autoscaling={"maxNodeCount": 2})
    [line] = refusals([("update", smaller)], [old], [smaller], Decisions(), Decisions())
    assert "it shrinks (autoscaling.maxNodeCount: 4 -> 2)" in line
    assert refusals([("update", smaller)], [old], [smaller], Decisions(), ACK) == []
    larger = pool(nodeConfig={"diskSizeGb": 100}, autoscaling={"maxNodeCount": 8})
    assert refusals([("update", larger)], [old], [larger], Decisions(), Decisions()) == []


def test_a_namespace_on_a_fleet_worker_goes_once_the_worker_drained():
    """Removing a worker deletes the team namespaces its manager made there; the advice was to drain the team,
    which stops it on every cluster."""
    on_east = namespace("training", "training")
    on_east["inputs"]["metadata"]["annotations"] = {"gke-ai-batch.io/fleet-worker": "east"}
    [line] = refusals([("delete", on_east)], [on_east], [], Decisions(), Decisions())
    assert "drain worker east first (`state: draining` in its fleet.workers entry)" in line
    assert refusals([("delete", on_east)], [on_east], [], Decisions(draining_workers=frozenset({"east"})),
                    Decisions()) == []


def test_a_team_namespace_moved_between_fleet_workers_is_not_a_taken_name():
    """The same namespace on two clusters is two objects: moving a flavor from one worker to another was refused."""
    west, east = namespace("research", "research"), namespace("research", "research")
    west["inputs"]["metadata"]["annotations"] = {"gke-ai-batch.io/fleet-worker": "west"}
    east["inputs"]["metadata"]["annotations"] = {"gke-ai-batch.io/fleet-worker": "east"}
    east["name"], east["urn"] = "fleet-east-namespace-research", "ns::east/research"
    steps = [("delete", west), ("create", east)]
    assert not [line for line in refusals(steps, [west], [east], Decisions(draining_workers=frozenset({"west"})),
                                          Decisions()) if "still taken" in line]
