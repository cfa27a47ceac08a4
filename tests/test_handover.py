"""Attack (operator, day two): handing a network or a dataset over to another owner. The engine must only stop
managing it; `make diff` shows each as a state removal (`< forget`), never as a delete or an update, and offers
`pulumi state delete` or BASE's `retainOnDelete` as the way. Before, a created network handed over to `adopt: true`
showed its NAT as an update stripping its settings and its router, subnet and VPC as deletions, whose only way
out, `acknowledge`, would delete the router the adopted network relies on."""
from __future__ import annotations

from pathlib import Path

from gke_ai_batch.offline.changes.decisions import Decisions
from gke_ai_batch.offline.diff import Side, compare, judge, report

from .conftest import platform_of, run_config

ADOPTED = {"adopt": True, "name": "ml-dev-net", "subnetwork": "ml-dev-us-east5", "pods_range": "pods",
           "services_range": "services", "existing_nat": {"router": "ml-dev-net-router", "name": "ml-dev-net-nat"}}
URN = "urn:pulumi:dev::gke-ai-batch::gke-ai-batch:index:ClusterNetwork$gcp:compute/"


def _diff(before: dict, after: dict, acknowledged: tuple[tuple[str, str], ...] = ()):
    old = [r.as_json() for r in run_config(before, "dev")]
    new = [r.as_json() for r in run_config(after, "dev")]
    diff = compare(old, new)
    return diff, judge([(op, r) for op, r, _ in diff.steps], old, new, Decisions(), Decisions(acknowledged))


def _network(adopted: dict) -> dict:
    cfg = platform_of("dev")
    cfg["network"] = adopted
    return cfg


def _text(diff) -> list[str]:
    here = Path(".")
    return report("dev", Side("BASE", here, here, here), Side("working tree", here, here, here), diff).splitlines()


def test_a_network_handed_over_is_a_state_removal_never_a_delete_or_an_update() -> None:
    diff, refused = _diff(platform_of("dev"), _network(ADOPTED))
    network = {r["name"]: (op, lines) for op, r, lines in diff.steps if r["type"].startswith("gcp:compute/")}
    assert {name: op for name, (op, _) in network.items()} == {
        "gke-network-vpc": "forget", "gke-network-subnet": "forget", "gke-network-router": "forget",
        "gke-network-nat": "forget"}
    assert network["gke-network-nat"][1] == [
        "read as acme-ml-dev/us-east5/ml-dev-net-router/ml-dev-net-nat, the ID the stack created it with: the engine "
        "stops managing it and changes nothing in the cloud, its settings stay as they are (pulumi v3.215.0 "
        "pkg/resource/deploy/step_generator.go GenerateReadSteps, relinquish)"]
    text = _text(diff)
    assert "< forget  gcp:compute/routerNat:RouterNat  gke-network-nat" in text
    assert "< forget  gcp:compute/router:Router  gke-network-router" in text
    assert text[-1].endswith("0 to delete, 4 to forget (left in the cloud), "
                             f"{diff.unchanged} unchanged"), text[-1]
    assert refused == [
        f"hand over network object {name} (gcp:compute/{kind} {pulumi}) to the adopted network: `pulumi up` would "
        f"delete it, and the adopted network loses it{nats}; take it out of the state before this change: "
        f"`pulumi state delete '{URN}{kind}::{pulumi}'` (the engine then only stops managing it), and add "
        f"`acknowledge: [{{network: {name}, reason: ...}}]` to the stack file, with why"
        for name, kind, pulumi, nats in (
            ("ml-dev-net", "network:Network", "gke-network-vpc", ""),
            ("ml-dev-net-router", "router:Router", "gke-network-router",
             " with its NATs (a Cloud Router's deletion deletes the NATs written into it)"),
            ("ml-dev-us-east5", "subnetwork:Subnetwork", "gke-network-subnet", ""))]
    decided = tuple(("network", n) for n in ("ml-dev-net", "ml-dev-net-router", "ml-dev-us-east5"))
    assert _diff(platform_of("dev"), _network(ADOPTED), decided)[1] == []


def test_a_created_nat_read_under_another_id_is_replaced_not_handed_over() -> None:
    """Another NAT read in its place: the engine deletes the one the stack created (a read replacement)."""
    other = {**ADOPTED, "existing_nat": {"router": "ml-dev-net-router", "name": "shared-nat"}}
    diff, refused = _diff(platform_of("dev"), _network(other))
    (op, lines), = [(op, lines) for op, r, lines in diff.steps if r["name"] == "gke-network-nat"]
    assert op == "replace"
    assert lines == [
        "read as acme-ml-dev/us-east5/ml-dev-net-router/shared-nat, not as the ID the stack created it with "
        "(acme-ml-dev/us-east5/ml-dev-net-router/ml-dev-net-nat): the engine reads that one and deletes the one it "
        "created (a read replacement: pulumi v3.215.0 pkg/resource/deploy/step_generator.go GenerateReadSteps)"]
    assert any(r.startswith("replace network object shared-nat (gcp:compute/routerNat:RouterNat gke-network-nat)")
               for r in refused), refused


def _cost(create: bool) -> dict:
    cfg = platform_of("dev")
    cfg["cost"] = {"billing_export_table": f"{cfg['project']}.billing_export.gcp_billing_export_resource_v1_01A2B3",
                   "create_export_dataset": create}
    return cfg


def test_the_billing_export_dataset_is_retained_so_handing_it_over_is_a_state_removal() -> None:
    """The program keeps the export's dataset in BigQuery when the stack stops declaring it (retainOnDelete): with
    BASE's state retaining it, the hand-over is a state removal and needs no decision."""
    (dataset,) = [r for r in run_config(_cost(True), "dev") if r.name == "team-cost-export"]
    assert dataset.options.get("retainOnDelete") is True
    diff, refused = _diff(_cost(True), _cost(False))
    assert [(op, r["name"], lines[0]) for op, r, lines in diff.steps if r["type"].startswith("gcp:bigquery")] == [
        ("forget", "team-cost-export", "retainOnDelete at BASE: the engine removes it from the state and leaves it "
         "in the cloud (pulumi v3.215.0 pkg/resource/deploy/step.go DeleteStep)")]
    assert refused == []
