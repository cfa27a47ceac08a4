"""`make diff` judged from both sides: each case plans a stack's config as BASE and as edited (each side through
the program under the mock runtime, as the diff plans them), then runs the diff's comparison and gate, and
asserts the classification and the refusal the sources give (provider identity and replacement, whole
blocks, Kueue's immutable fields and in-use objects, network objects, NoExecute taints, a pool's starting
size, GKE versions, subnet ranges)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gke_ai_batch.offline.changes.api_refusals import refused as api_refused
from gke_ai_batch.offline.changes.decisions import read_decisions
from gke_ai_batch.offline.diff import compare, judge

from .conftest import platform_of, run_config

PROVIDER = "pulumi:providers:kubernetes"
NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"


class Diffed:
    """The diff of two configs of one stack: its steps by (op, type, name), their lines, and the refusals."""

    def __init__(self, base: dict[str, Any], now: dict[str, Any], tmp: Path) -> None:
        self.old = [r.as_json() for r in run_config(base, "test")]
        self.new = [r.as_json() for r in run_config(now, "test")]
        diff = compare(self.old, self.new)
        self.steps = {(op, r["type"], r["name"]): lines for op, r, lines in diff.steps}
        self.refused = judge([(op, r) for op, r, _ in diff.steps], self.old, self.new, decisions(base, tmp / "b"),
                             decisions(now, tmp / "n"))

    def op(self, type_: str, name: str) -> str | None:
        return next((op for op, t, n in self.steps if (t, n) == (type_, name)), None)

    def lines(self, type_: str, name: str) -> list[str]:
        return next(lines for (_, t, n), lines in self.steps.items() if (t, n) == (type_, name))

    def refusals(self, *words: str) -> list[str]:
        return [r for r in self.refused if all(w in r for w in words)]


def decisions(platform: dict[str, Any], folder: Path):
    folder.mkdir(exist_ok=True)
    path = folder / "Pulumi.test.yaml"
    path.write_text(yaml.safe_dump({"config": {"gke-ai-batch:platform": platform}}))
    return read_decisions(path)


def edited(stack: str, change) -> tuple[dict[str, Any], dict[str, Any]]:
    base = platform_of(stack)
    now = json.loads(json.dumps(base))
    change(now)
    return base, now


def pool(cfg: dict[str, Any], kind: str, name: str) -> dict[str, Any]:
    return next(p for p in cfg[kind] if p["name"] == name)


# --- 1. providers ----------------------------------------------------------------------------------------------

def test_an_endpoint_change_updates_the_provider_and_replaces_nothing_on_it(tmp_path):
    """prod opens the DNS endpoint: the kubeconfig's server moves, the provider's identity stays."""
    open_dns = {"dns_endpoint": True, "dns_endpoint_reason": "CI from anywhere"}
    d = Diffed(*edited("prod", lambda c: c["cluster"].update(open_dns)), tmp_path)
    old = next(r for r in d.old if r["type"] == PROVIDER)
    new = next(r for r in d.new if r["type"] == PROVIDER)
    assert old["inputs"]["clusterIdentifier"] == new["inputs"]["clusterIdentifier"]
    assert d.op(CLUSTER, "gke-cluster") == "update"
    assert d.op(PROVIDER, "gke-k8s") is None
    assert not [k for k in d.steps if k[0] == "replace"]
    assert d.refused == []


def private_nodes_on() -> tuple[dict[str, Any], dict[str, Any]]:
    """dev without private nodes at BASE, with them now: master_ipv4_cidr_block appears inside a new block."""
    now = platform_of("dev")
    base = json.loads(json.dumps(now))
    base["cluster"]["private_nodes"] = False
    return base, now


def test_a_cluster_replaced_under_its_name_keeps_its_provider_and_says_what_follows(tmp_path):
    """Turning on private nodes replaces the cluster (a block appears holding a ForceNew field); its name, and
    so the provider's identity, stays: the provider is updated, and no object is deleted delete-first."""
    d = Diffed(*private_nodes_on(), tmp_path)
    assert d.op(CLUSTER, "gke-cluster") == "replace"
    assert d.op(PROVIDER, "gke-k8s") == "update"
    assert "not in the new cluster until `pulumi up --refresh` after this update" in d.lines(PROVIDER, "gke-k8s")[-1]
    assert d.op("kubernetes:core/v1:Namespace", "team-research-ns-research") is None
    assert [r for r in d.refused if "ml-dev" in r] == [
        "replace cluster ml-dev (gcp:container/cluster:Cluster gke-cluster): add `acknowledge: [{cluster: ml-dev, "
        "reason: ...}]` to the stack file, with why"]


def renamed() -> tuple[dict[str, Any], dict[str, Any]]:
    return edited("dev", lambda c: c["cluster"].update(name="ml-dev2"))


def test_a_renamed_cluster_replaces_the_provider_and_every_object_on_it_and_is_refused(tmp_path):
    """A new identity replaces the provider; the engine then replaces every object on it, named ones
    delete-first: one refusal, like the cluster's own."""
    d = Diffed(*renamed(), tmp_path)
    assert d.op(PROVIDER, "gke-k8s") == "replace"
    assert any(ln.startswith("clusterIdentifier:") and "forces replacement: pulumi-kubernetes provider.go" in ln
               for ln in d.lines(PROVIDER, "gke-k8s"))
    on_provider = [r for r in d.new if r.get("provider", "").endswith("::gke-k8s")]
    assert len(on_provider) > 30 and all(d.op(r["type"], r["name"]) == "replace" for r in on_provider)
    assert d.lines("kubernetes:core/v1:Namespace", "team-research-ns-research")[:2] == [
        "order: delete first, then create (pulumi-kubernetes: a named object keeps its name)",
        "provider: pulumi:providers:kubernetes gke-k8s is replaced, and with it every object on it"]
    assert d.lines("kubernetes:helm.sh/v3:Release", "kueue-release")[0] == (
        "order: delete first, then create (pulumi-kubernetes: a named object keeps its name)")
    [line] = d.refusals("Kubernetes provider gke-k8s")
    assert f"every object on it ({len(on_provider)})" in line
    assert "add `acknowledge: [{cluster: ml-dev2, reason: ...}]` if the cluster is replaced on purpose" in line
    assert not [r for r in d.refused if r.startswith(("replace team namespace", "replace ResourceFlavor"))]


def test_the_clusters_acknowledgement_covers_its_providers_replacement(tmp_path):
    base, now = renamed()
    now["acknowledge"] = [{"cluster": "ml-dev2", "reason": "a new cluster"}]
    assert not Diffed(base, now, tmp_path).refusals("Kubernetes provider")


def test_a_provider_without_identifier_at_base_is_replaced_with_its_cluster():
    """BASE from before clusterIdentifier: pulumi-kubernetes' own heuristic replaces on a new kubeconfig."""
    cluster = {"urn": "c", "type": CLUSTER, "name": "gke-cluster", "inputs": {"name": "x", "datapathProvider": "A"}}
    provider = {"urn": "p", "type": PROVIDER, "name": "gke-k8s", "inputs": {"kubeconfig": "[secret]"},
                "dependencies": ["c"]}
    ns = {"urn": "n", "type": "kubernetes:core/v1:Namespace", "name": "ns", "provider": "p",
          "inputs": {"metadata": {"name": "ns"}}}
    moved = {**cluster, "inputs": {"name": "x", "datapathProvider": "B"}}
    steps = {r["name"]: (op, lines) for op, r, lines in compare([cluster, provider, ns], [moved, provider, ns]).steps}
    assert steps["gke-k8s"][0] == "replace" and "no clusterIdentifier" in steps["gke-k8s"][1][-1]
    assert steps["ns"][0] == "replace" and steps["ns"][1][0] == (
        "order: delete first, then create (pulumi-kubernetes: a named object keeps its name)")
    with_id = {**provider, "inputs": {"kubeconfig": "[secret]", "clusterIdentifier": "i"}}
    kept = {r["name"]: op for op, r, _ in compare([cluster, with_id, ns], [moved, with_id, ns]).steps}
    assert kept == {"gke-cluster": "replace", "gke-k8s": "update"}  # kept: its objects stay
    assert compare([cluster, provider, ns], [cluster, with_id, ns]).steps[0][0] == "update"  # adding one: no cascade


# --- 2. replacement rules that see whole blocks -------------------------------------------------------------------

def test_gpudirect_networks_added_to_a_live_pool_replace_it_and_need_its_acknowledgement(tmp_path):
    """additional_node_network_configs is ForceNew: the block networkConfig appears holding it."""
    now = platform_of("prod")
    base = json.loads(json.dumps(now))
    pool(base, "gpu_pools", "h200-res").pop("gpudirect")
    d = Diffed(base, now, tmp_path)
    assert d.op(NODE_POOL, "h200-res-pool") == "replace"
    lines = d.lines(NODE_POOL, "h200-res-pool")
    assert any(ln.startswith("networkConfig") and "forces replacement" in ln for ln in lines)
    assert d.refusals("replace node pool h200-res", "acknowledge: [{node_pool: h200-res")


# --- 3. decisions from both sides --------------------------------------------------------------------------------

def test_turning_topology_aware_scheduling_off_a_live_flavor_is_refused_as_the_api_server_would(tmp_path):
    d = Diffed(*edited("prod", lambda c: pool(c, "gpu_pools", "h200-res").update(topology_aware=False)), tmp_path)
    assert d.op(FLAVOR, "queues-flavor-h200-res") == "update"
    [line] = d.refusals("update ResourceFlavor h200-res")
    assert '"topologyName is immutable when topologyName is set"' in line
    assert "kueue.x-k8s.io_resourceflavors.yaml" in line
    assert line.endswith("add a new ResourceFlavor under another name and move the queues to it in one change, "
                         "then remove h200-res in the next")


def test_turning_topology_aware_scheduling_on_is_an_update(tmp_path):
    now = platform_of("prod")
    base = json.loads(json.dumps(now))
    pool(base, "gpu_pools", "h200-res")["topology_aware"] = False
    d = Diffed(base, now, tmp_path)
    assert d.op(FLAVOR, "queues-flavor-h200-res") == "update"
    assert d.op("kubernetes:kueue.x-k8s.io/v1beta2:Topology", "queues-topology-gke-block-subblock-host-hostname") \
        == "create"
    assert not d.refusals("ResourceFlavor") and not d.refusals("Topology")


def test_new_topology_levels_on_a_live_flavor_are_refused_with_the_two_step_way(tmp_path):
    """Other levels make another Topology, which the live flavor cannot switch to."""
    levels = ["cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock",
              "kubernetes.io/hostname"]
    d = Diffed(*edited("prod", lambda c: pool(c, "gpu_pools", "h200-res").update(topology_levels=levels)), tmp_path)
    [line] = d.refused
    assert line.startswith("update ResourceFlavor h200-res: the API server refuses spec.topologyName "
                           "(gke-block-subblock-host-hostname -> gke-block-subblock-hostname)")


def test_a_topologys_levels_are_immutable():
    topology = {"urn": "t", "type": "kubernetes:kueue.x-k8s.io/v1beta2:Topology", "name": "t",
                "inputs": {"metadata": {"name": "gke"}, "spec": {"levels": [{"nodeLabel": "a"}]}}}
    changed = {**topology, "inputs": {"metadata": {"name": "gke"}, "spec": {"levels": [{"nodeLabel": "b"}]}}}
    [line] = api_refused([("update", changed)], [topology], [changed], ())
    assert '"field is immutable"' in line and line.endswith("move the flavors to it in one change, then remove gke "
                                                             "in the next")


def test_a_flavor_in_use_is_never_replaced_delete_first():
    flavor = {"urn": "f", "type": FLAVOR, "name": "flv", "inputs": {"metadata": {"name": "h200"}, "spec": {}}}
    cq = {"urn": "q", "type": "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "name": "cq",
          "inputs": {"metadata": {"name": "training"}, "spec": {"resourceGroups": [{"flavors": [{"name": "h200"}]}]}}}
    [line] = api_refused([("replace", flavor)], [flavor, cq], [flavor, cq], ())
    assert line == ("replace ResourceFlavor h200: it is in use (ClusterQueue training), and Kueue keeps its "
                    "kueue.x-k8s.io/resource-in-use finalizer while a queue names it, so a delete-first replacement "
                    "hangs; add a new ResourceFlavor under another name and move the queues to it in one change, "
                    "then remove h200 in the next")
    assert api_refused([("replace", flavor)], [flavor], [flavor], ()) == []


# --- 4. more of the table -----------------------------------------------------------------------------------------

def test_private_nodes_off_deletes_the_nat_and_router_only_with_an_acknowledgement(tmp_path):
    base, now = edited("dev", lambda c: c["cluster"].update(private_nodes=False))
    d = Diffed(base, now, tmp_path)
    assert d.op("gcp:compute/routerNat:RouterNat", "gke-network-nat") == "delete"
    assert d.op(CLUSTER, "gke-cluster") == "update"  # the provider keeps privateClusterConfig: still private
    [nat] = d.refusals("delete network object ml-dev-net-nat")
    assert "add `acknowledge: [{network: ml-dev-net-nat, reason: ...}]`" in nat
    now["acknowledge"] = [{"network": "ml-dev-net-nat", "reason": "public nodes"},
                          {"network": "ml-dev-net-router", "reason": "public nodes"}]
    assert Diffed(base, now, tmp_path).refused == []


def test_handing_a_created_network_to_adopt_is_a_state_removal_and_is_refused(tmp_path):
    def adopt(c):
        c["network"] = {"adopt": True, "name": "ml-dev-net", "subnetwork": "ml-dev-us-east5", "pods_range": "pods",
                        "services_range": "services"}
        c["cluster"]["private_nodes"] = False
    d = Diffed(*edited("dev", adopt), tmp_path)
    assert d.op("gcp:compute/network:Network", "gke-network-vpc") == "forget"
    assert d.refusals("hand over network object ml-dev-net ", "pulumi state delete")
    assert d.refusals("hand over network object ml-dev-us-east5 ", "pulumi state delete")


def test_a_noexecute_taint_added_to_a_live_pool_evicts_and_is_refused(tmp_path):
    taint = {"key": "maintenance", "value": "now", "effect": "NoExecute"}
    d = Diffed(*edited("dev", lambda c: pool(c, "cpu_pools", "cpu-workers")["taints"].append(taint)), tmp_path)
    assert d.op(NODE_POOL, "cpu-workers-pool") == "update"
    assert any("NoExecute taint added" in ln for ln in d.lines(NODE_POOL, "cpu-workers-pool"))
    [line] = d.refusals("update node pool cpu-workers")
    assert "a NoExecute taint added (maintenance=now) evicts every running pod on the pool" in line
    no_schedule = {**taint, "effect": "NoSchedule"}
    quiet = Diffed(*edited("dev", lambda c: pool(c, "cpu_pools", "cpu-workers")["taints"].append(no_schedule)),
                   tmp_path)
    assert quiet.refused == []


def test_raising_a_pools_minimum_resizes_it_in_place(tmp_path):
    """initial_node_count is ForceNew and sent at creation only (ignoreChanges): the system pool, the only
    nodes Kueue's webhook runs on, is not replaced when its minimum rises."""
    d = Diffed(*edited("dev", lambda c: c["system_pool"].update(min_nodes=2)), tmp_path)
    assert d.op(NODE_POOL, "system-pool") == "update"
    assert d.lines(NODE_POOL, "system-pool") == ["autoscaling.minNodeCount: 1 -> 2"]
    assert d.refused == []


@pytest.mark.parametrize("was, version, says", [
    ("1.33.2-gke.1240000", "1.35.1-gke.1000", "1.33 -> 1.35 skips 1.34: GKE upgrades a control plane one minor "
                                              "version at a time; set 1.34 first"),
    ("1.34.1-gke.1000", "1.33.2-gke.1240000", "1.34.1-gke.1000 -> 1.33.2-gke.1240000 goes down: GKE does not "
                                              "downgrade a control plane, and the provider leaves a min_master_version "
                                              "below the running one unapplied (a no-op)"),
    ("1.33.2-gke.1240000", "1.33.1-gke.1000", "1.33.2-gke.1240000 -> 1.33.1-gke.1000 goes down"),  # a patch too
])
def test_a_gke_minor_skip_or_downgrade_is_refused(tmp_path, was, version, says):
    base, now = edited("prod", lambda c: c["cluster"].update(version=version))
    base["cluster"]["version"] = was
    d = Diffed(base, now, tmp_path)
    assert d.op(CLUSTER, "gke-cluster") == "update"
    [line] = d.refusals("cluster.version")
    assert says in line


def test_the_next_minor_version_passes(tmp_path):
    d = Diffed(*edited("prod", lambda c: c["cluster"].update(version="1.34.1-gke.1000")), tmp_path)
    assert not d.refusals("cluster.version")


@pytest.mark.parametrize("cidr, op", [("10.40.0.0/19", "update"), ("10.40.0.0/21", "replace"),
                                      ("10.60.0.0/20", "replace")])
def test_a_subnet_range_moved_or_shrunk_replaces_the_subnet(tmp_path, cidr, op):
    d = Diffed(*edited("prod", lambda c: c["network"].update(nodes_cidr=cidr)), tmp_path)
    assert d.op("gcp:compute/subnetwork:Subnetwork", "gke-network-subnet") == op
    if op == "replace":
        assert any("ForceNewIfChange(ip_cidr_range, IsShrinkageIpCidr)" in ln
                   for ln in d.lines("gcp:compute/subnetwork:Subnetwork", "gke-network-subnet"))
        assert d.refusals("replace network object ml-prod-us-east5")


def test_a_secondary_range_in_use_is_refused_with_additional_pod_ranges_as_the_way(tmp_path):
    d = Diffed(*edited("prod", lambda c: c["network"].update(pods_cidr="10.44.0.0/15")), tmp_path)
    [line] = d.refusals("secondary range pods")
    assert "(10.44.0.0/14 -> 10.44.0.0/15) is in use by the cluster" in line
    assert "additional Pod ranges" in line


# --- through `make diff`: a git BASE and an edit ---------------------------------------------------------------

EDITS = (("gpudirect: create,\n         topology_aware: true}", "gpudirect: create}"),
         ("version: 1.33.2-gke.1240000", "version: 1.35.1-gke.1000"),
         ("nodes_cidr: 10.40.0.0/20", "nodes_cidr: 10.40.0.0/21"))


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A copy of this tree whose BASE commit has a stack as prod is, and whose HEAD turns topology-aware scheduling
    off the H200 flavor, skips a GKE minor version, and shrinks the node range: three refusals of their own, each
    named in one `make diff` (one run: each run plans both sides in a process of their own)."""
    from .test_diff import copy_working_tree, finish, git, start
    repo = tmp_path_factory.mktemp("diff-both-sides")
    copy_working_tree(repo)
    prod = (repo / "stacks/Pulumi.prod.yaml").read_text()
    edited = prod
    for old, new in EDITS:
        assert old in prod, f"prod no longer has {old!r}: update this test's setup"
        edited = edited.replace(old, new)
    (repo / "stacks/Pulumi.edited.yaml").write_text(prod)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    (repo / "stacks/Pulumi.edited.yaml").write_text(edited)
    git(repo, "commit", "-qam", "edit")
    return finish(start(repo, "edited", "HEAD~1"))


@pytest.mark.parametrize("step, refusal", [
    (f"~ update  {FLAVOR}  queues-flavor-h200-res",
     'refused: update ResourceFlavor h200-res: the API server refuses spec.topologyName '
     '(gke-block-subblock-host-hostname -> (absent)): "topologyName is immutable when topologyName is set"'),
    (f"~ update  {CLUSTER}  gke-cluster", "refused: cluster.version: 1.33 -> 1.35 skips 1.34"),
    ("+- replace  gcp:compute/subnetwork:Subnetwork  gke-network-subnet",
     "refused: replace network object ml-prod-us-east5 (gcp:compute/subnetwork:Subnetwork gke-network-subnet)"),
    # and, acknowledged or not, no order of steps can replace the subnet under the cluster
    ("+- replace  gcp:compute/subnetwork:Subnetwork  gke-network-subnet",
     "refused: subnet ml-prod-us-east5: its range 10.40.0.0/20 -> 10.40.0.0/21 leaves addresses out, and the "
     "cluster's nodes run in it"),
])
def test_make_diff_classifies_and_refuses_as_the_sources_say(cli_run, step, refusal):
    assert cli_run.code == 1, cli_run.err
    assert step in cli_run.out.splitlines()
    assert any(ln.startswith(refusal) for ln in cli_run.out.splitlines()), cli_run.out[-2000:]


def test_every_provider_has_the_identity_of_its_cluster():
    """A fleet manager's provider for a worker takes the worker's, from its fleetWorker output."""
    from .conftest import planned
    providers = {r.name: r.inputs.get("clusterIdentifier") for r in planned("fleet-manager") if r.type == PROVIDER}
    assert providers == {
        "gke-k8s": "projects/acme-ml-fleet/locations/us-central1/clusters/ml-fleet-manager",
        "fleet-east-k8s": "projects/acme-ml-fleet-east/locations/us-east5/clusters/ml-fleet-east",
        "fleet-west-k8s": "projects/acme-ml-fleet-west/locations/us-east1/clusters/ml-fleet-west"}


def test_a_protected_network_object_needs_the_clusters_acknowledgement_landed_first():
    from gke_ai_batch.offline.changes.decisions import Decisions, refusals
    nat = {"urn": "n", "type": "gcp:compute/routerNat:RouterNat", "name": "gke-network-nat",
           "inputs": {"name": "ml-prod-nat"}, "options": {"protect": True}}
    [line] = refusals([("delete", nat)], [nat], [], Decisions(), Decisions((("network", "ml-prod-nat"),)))
    assert line == ("delete network object ml-prod-nat (gcp:compute/routerNat:RouterNat gke-network-nat): BASE "
                    "protects it with the cluster: land `acknowledge: [{cluster: ..., reason: ...}]` first (it lifts "
                    "the protection), then remove it with `acknowledge: [{network: ml-prod-nat, reason: ...}]`")
    [stale] = refusals([], [nat], [nat], Decisions(), Decisions((("network", "ml-prod-nta"),)))
    assert stale == ("acknowledge[0].network: 'ml-prod-nta' names no network object the stack had at BASE or has "
                     "now (network objects: ml-prod-nat)")


def test_a_fixed_pool_made_autoscaled_is_resized_in_place(tmp_path):
    """BASE sent no initialNodeCount (a fixed pool sends nodeCount); the engine deletes an ignored path from the
    new inputs where BASE has none (PropertyPath.Reset), so the starting size forces no replacement."""
    def fixed(c):
        del pool(c, "cpu_pools", "cpu-workers")["autoscaling"]
        pool(c, "cpu_pools", "cpu-workers")["nodes"] = 2
    autoscaled, was_fixed = edited("dev", fixed)
    d = Diffed(was_fixed, autoscaled, tmp_path)
    assert d.op(NODE_POOL, "cpu-workers-pool") == "update"
    assert not any("initialNodeCount" in ln for ln in d.lines(NODE_POOL, "cpu-workers-pool"))
    assert not [r for r in d.refused if "cpu-workers" in r]


def test_private_nodes_turned_off_says_the_cluster_stays_private(tmp_path):
    """The provider keeps privateClusterConfig when the config drops it: the update changes nothing there, and
    the diff says so instead of showing a cluster that goes public."""
    d = Diffed(*edited("prod", lambda c: c["cluster"].update(private_nodes=False, ip_endpoint="authorized")), tmp_path)
    kept = [ln for ln in d.lines(CLUSTER, "gke-cluster") if ln.startswith("privateClusterConfig")]
    assert kept and all(ln.endswith("[no effect: the provider keeps this block when the config drops it (Optional "
                                    "and Computed in terraform-provider-google), so it stays as it is; only a "
                                    "replacement undoes it]") for ln in kept)
