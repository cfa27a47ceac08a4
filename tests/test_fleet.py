"""The MultiKueue fleet: a manager stack and its worker stacks, planned together offline; each bad input
refused with its path; the policies catching what a hand-built fleet gets wrong; and `make admit` saying
which worker takes a workload, and why not the ones before it."""
from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.offline import admit
from gke_ai_batch.offline.engine.runtime import PlanError
from gke_ai_batch.offline.views.render import worker_manifests
from gke_ai_batch.plan.platform import build_platform
from policies import fleet_rules
from policies.pack import STACK_POLICIES

from .conftest import fleet_outputs, platform_of, run_config

MANAGER = "fleet-manager"
ROOT = Path(__file__).resolve().parent.parent


def manager() -> dict[str, Any]:
    return platform_of(MANAGER)


def refused(raw: dict[str, Any], outputs: Callable[..., dict[str, Any]] = fleet_outputs) -> ConfigError:
    with pytest.raises(ConfigError) as e:
        build_platform(raw, worker_outputs=outputs)
    return e.value


def changed_outputs(change: Callable[[dict[str, Any]], None]) -> Callable[..., dict[str, Any]]:
    """The shipped workers' outputs with `change` applied (another stack's word, as the manager reads it)."""
    def outputs(fleet: Any) -> dict[str, Any]:
        out = copy.deepcopy(fleet_outputs(fleet))
        change(out)
        return out
    return outputs


def findings(rule: Callable[..., Any], plan: list[Any]) -> list[str]:
    from gke_ai_batch.model.promises import Res
    return [m for _, m in rule([Res(r.type, r.urn, r.inputs, tuple(r.dependencies)) for r in plan if r.custom])]


# What the fleet plans to.

def test_manager_quota_is_the_workers_and_each_team_dispatches_to_the_workers_holding_its_flavors():
    p = build_platform(manager(), worker_outputs=fleet_outputs)
    assert p.fleet is not None
    assert p.fleet.dispatch == {"training": ("east", "west"), "research": ("west",)}
    flavors = p.scheduling.flavors
    assert (flavors["v5p-res"].worker, flavors["v6e-spot"].worker) == ("east", "west")
    cq = {q.name: q.manifest for q in p.scheduling.cluster_queues}["training"]
    assert cq["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "multikueue-east-west-52c973fc"}]}


def test_each_worker_gets_only_the_teams_and_flavors_dispatched_to_it(plan):
    on = worker_manifests(plan(MANAGER))
    def kinds(worker: str, kind: str) -> list[str]:
        return sorted(f"{m['metadata'].get('namespace', '')}/{m['metadata']['name']}" for m in on[worker]
                      if m["kind"] == kind)
    assert kinds("east", "LocalQueue") == ["training/training-queue"]
    assert kinds("west", "LocalQueue") == ["research/research-queue", "training/training-queue"]
    east_cq = next(m for m in on["east"] if m["kind"] == "ClusterQueue")
    assert [f["name"] for g in east_cq["spec"]["resourceGroups"] for f in g["flavors"]] == ["v5p-res"]
    assert "admissionChecksStrategy" not in east_cq["spec"]  # MultiKueue's check is the manager's only


def test_the_manager_dispatches_all_at_once_or_incrementally_in_the_stack_order():
    from gke_ai_batch.plan.installs import kueue_manager_config
    raw = manager()
    assert kueue_manager_config(build_platform(raw, worker_outputs=fleet_outputs))["multiKueue"] == {
        "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"}
    raw["fleet"]["dispatcher"] = "incremental"
    assert kueue_manager_config(build_platform(raw, worker_outputs=fleet_outputs))["multiKueue"] == {
        "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-incremental",
        "incrementalDispatcherConfig": {"stepSize": 1}}


def test_dispatch_sets_whose_worker_names_join_alike_get_different_names():
    """Workers east, west and east-west once gave (east, west) and (east-west,) the same MultiKueueConfig."""
    from gke_ai_batch.plan.fleet import _config_name
    assert _config_name(("east", "west")) != _config_name(("east-west",))
    assert len(_config_name(tuple(f"worker-{i:02d}" for i in range(20)))) <= 63


def test_the_manager_identity_writes_only_in_the_team_namespaces_of_its_worker(plan):
    on = worker_manifests(plan(MANAGER))["east"]
    role = next(m for m in on if m["kind"] == "ClusterRole" and m["metadata"]["name"] == "multikueue-sa-role")
    assert {v for r in role["rules"] for v in r["verbs"]} == {"get", "list", "watch"}
    writers = sorted(m["metadata"]["namespace"] for m in on if m["kind"] == "RoleBinding")
    assert writers == ["training"]


def test_two_teams_promising_more_reserved_chips_than_the_worker_holds_is_a_violation():
    """Each team's quota fit east's 32 chips; together they promised 64."""
    from policies import stack_rules
    raw = manager()
    raw["teams"][1]["queue"]["quotas"]["v5p-res"] = {"google.com/tpu": 32}
    found = findings(stack_rules.quota_over_capacity, run_config(raw, MANAGER))
    assert any("v5p-res" in m and "64" in m for m in found), found


def test_workers_get_an_inline_token_kubeconfig_and_a_new_generation_replaces_the_token():
    raw = manager()
    raw["fleet"]["credentials"]["generation"] = 2
    p = build_platform(raw, worker_outputs=fleet_outputs)
    assert p.fleet is not None
    assert p.fleet.workers[0].token["metadata"]["name"] == "multikueue-sa-token-2"
    secret = p.fleet.secrets[0]["metadata"]["annotations"]
    assert secret["gke-ai-batch.io/token-generation"] == "2"


def test_the_kubeconfig_kueue_reads_has_an_inline_token_and_no_exec_plugin():
    from gke_ai_batch.components.fleet import _kubeconfig
    doc = yaml.safe_load(_kubeconfig("east", "203.0.113.10", "Q0E=", "tok"))
    user = doc["users"][0]["user"]
    assert user == {"token": "tok"} and doc["clusters"][0]["cluster"]["server"] == "https://203.0.113.10"


# Bad input: one error each, with its path.

def test_a_stack_that_is_not_a_fleet_worker_is_refused_at_its_reference():
    e = refused(manager(), changed_outputs(lambda out: out.pop("west")))
    assert e.path == "platform.fleet.workers[1].stack" and "has no `fleetWorker` output" in e.message


def test_a_stack_reference_to_a_stack_that_does_not_exist_is_refused_at_its_path():
    raw = manager()
    raw["fleet"]["workers"][1]["stack"] = "fleet-nowhere"
    with pytest.raises(PlanError) as e:
        run_config(raw, MANAGER)
    assert "platform.fleet.workers[1].stack" in str(e.value) and "no stack 'fleet-nowhere'" in str(e.value)


def test_a_non_worker_stack_is_refused_offline_too():
    raw = manager()
    raw["fleet"]["workers"][1]["stack"] = "dev"
    with pytest.raises(PlanError) as e:
        run_config(raw, MANAGER)
    assert "platform.fleet.workers[1].stack" in str(e.value) and "not a fleet worker" in str(e.value)


@pytest.mark.parametrize("key", ["name", "stack"])
def test_two_workers_with_the_same_name_or_stack_are_refused(key):
    raw = manager()
    raw["fleet"]["workers"][1][key] = raw["fleet"]["workers"][0][key]
    e = refused(raw)
    assert e.path == f"platform.fleet.workers[1].{key}" and "named once" in e.message


def test_a_team_whose_manager_quota_exceeds_what_its_worker_holds_is_refused():
    raw = manager()
    raw["teams"][0]["queue"]["quotas"]["v5p-res"]["google.com/tpu"] = 64
    e = refused(raw)
    assert e.path == "platform.teams[0].queue.quotas.v5p-res.google.com/tpu"
    assert "64 is more than worker 'east' holds in flavor 'v5p-res' (32" in e.message


def test_a_manager_with_a_queued_provisioning_pool_is_refused_as_kueue_would_deactivate_its_queue():
    raw = manager()
    raw["gpu_pools"] = [{"name": "h100", "gpu": "nvidia-h100-80gb", "capacity": "queued-provisioning", "max_nodes": 2}]
    e = refused(raw)
    assert e.path == "platform.gpu_pools" and "ProvisioningRequest" in e.message and "kueue#8347" in e.message


def test_a_queue_that_dispatches_to_no_worker_is_refused():
    raw = manager()
    raw["teams"][1]["queue"]["quotas"] = {}
    e = refused(raw)
    assert e.path == "platform.teams[1].queue.quotas" and "dispatches to no worker" in e.message


def test_a_queue_that_would_dispatch_to_more_than_20_workers_is_refused():
    raw = manager()
    raw["fleet"]["workers"] = [{"name": f"w{i}", "stack": f"fleet-w{i}"} for i in range(21)]
    raw["teams"] = [{"name": "training", "queue": {"quotas": {f"v6e-w{i}": {"google.com/tpu": 16}
                                                               for i in range(21)}}}]
    west = fleet_outputs(build_platform(manager(), worker_outputs=fleet_outputs).config.fleet)["west"]

    def flavor(i: int) -> dict[str, Any]:
        spot = west["flavors"]["v6e-spot"]
        return {**spot, "node_labels": {**spot["node_labels"], "gke-ai-batch.io/flavor": f"v6e-w{i}"}}

    def outputs(fleet: Any) -> dict[str, Any]:
        return {f"w{i}": {**west, "flavors": {f"v6e-w{i}": flavor(i)}} for i in range(21)}
    e = refused(raw, outputs)
    assert e.path == "platform.teams[0].queue.quotas" and "at most 20 clusters" in e.message


@pytest.mark.parametrize("version", ["0.19.1", "0.18.2", "0.20.0"])
def test_a_worker_on_an_older_patch_or_another_minor_kueue_release_is_refused(version):
    e = refused(manager(), changed_outputs(lambda out: out["east"].update(kueue_version=version)))
    assert e.path == "platform.fleet.workers[0]" and f"runs Kueue {version}, the manager 0.19.2" in e.message


def test_a_worker_upgraded_first_to_a_later_patch_still_plans():
    build_platform(manager(), worker_outputs=changed_outputs(lambda out: out["east"].update(kueue_version="0.19.5")))


def test_a_worker_without_a_framework_the_manager_enables_is_refused():
    def no_jobset(out: dict[str, Any]) -> None:
        out["west"]["frameworks"].remove("jobset.x-k8s.io/jobset")
    e = refused(manager(), changed_outputs(no_jobset))
    assert e.path == "platform.fleet.workers[1]" and "kueue#12400" in e.message


def test_a_flavor_on_two_workers_is_refused():
    def twice(out: dict[str, Any]) -> None:
        out["east"]["flavors"]["v6e-spot"] = out["west"]["flavors"]["v6e-spot"]
    e = refused(manager(), changed_outputs(twice))
    assert e.path == "platform.fleet.workers[1]" and "flavor 'v6e-spot' is on worker 'east' and on 'west'" in e.message


def test_a_worker_stack_with_teams_of_its_own_is_refused():
    raw = platform_of("fleet-east")
    raw["teams"] = [{"name": "rogue"}]
    with pytest.raises(ConfigError) as e:
        build_platform(raw)
    assert e.value.path == "platform.teams" and "manager" in e.value.message


# The policies, over a fleet a program could get wrong.

def test_the_shipped_manager_breaks_no_fleet_policy(plan):
    for rule in (fleet_rules.multikueue_queues, fleet_rules.multikueue_dispatch, fleet_rules.teams_on_workers,
                 fleet_rules.worker_versions, fleet_rules.worker_credentials):
        assert findings(rule, plan(MANAGER)) == []
    assert {"multikueue-queues", "fleet-teams-on-workers", "fleet-credentials"} <= {p.name for p in STACK_POLICIES}


def _edited(plan: list[Any], edit: Callable[[Any], bool]) -> list[Any]:
    """A copy of the plan where `edit` changes registrations in place; those for which it returns False go."""
    out = []
    for r in copy.deepcopy(list(plan)):
        if edit(r) is not False:
            out.append(r)
    return out


def test_a_manager_queue_with_a_provisioning_request_check_is_a_violation(plan):
    def add_provisioning(r: Any) -> bool:
        if r.inputs.get("kind") == "ClusterQueue" and r.inputs["metadata"]["name"] == "training" \
                and "annotations" not in r.inputs["metadata"]:
            r.inputs["spec"]["admissionChecksStrategy"]["admissionChecks"].append({"name": "dws-prov"})
        if r.inputs.get("kind") == "AdmissionCheck" and r.inputs["metadata"]["name"].startswith("multikueue-west"):
            r.inputs["metadata"]["name"] = "dws-prov"
            r.inputs["spec"] = {"controllerName": "kueue.x-k8s.io/provisioning-request"}
        return True
    found = findings(fleet_rules.multikueue_queues, _edited(plan(MANAGER), add_provisioning))
    assert any("Cannot use both MultiKueue and ProvisioningRequest" in m for m in found), found


def test_a_worker_missing_a_teams_local_queue_is_a_violation(plan):
    def drop(r: Any) -> bool:
        meta = r.inputs.get("metadata") or {}
        return not (r.inputs.get("kind") == "LocalQueue" and meta.get("namespace") == "research"
                    and (meta.get("annotations") or {}).get("gke-ai-batch.io/fleet-worker") == "west")
    found = findings(fleet_rules.teams_on_workers, _edited(plan(MANAGER), drop))
    assert found == ["ClusterQueue research dispatches to worker west, which has no LocalQueue "
                     "research/research-queue: a workload dispatched there is never admitted"]


def test_a_config_of_more_than_20_clusters_and_unstated_credentials_are_violations(plan):
    def widen(r: Any) -> bool:
        if r.inputs.get("kind") == "MultiKueueConfig":
            r.inputs["spec"]["clusters"] = [f"w{i}" for i in range(21)]
        if r.inputs.get("kind") == "Secret" and r.inputs["metadata"]["name"] == "east-kubeconfig":
            r.inputs["metadata"]["annotations"].pop("gke-ai-batch.io/rotate-every-days")
        return True
    edited = _edited(plan(MANAGER), widen)
    assert any("21 clusters; Kueue takes 1 to 20" in m for m in findings(fleet_rules.multikueue_dispatch, edited))
    assert any("east-kubeconfig" in m for m in findings(fleet_rules.worker_credentials, edited))


# make admit on the manager.

def test_admit_dispatches_each_sample_workload_to_the_expected_worker_and_says_why(capsys):
    code = admit.main([MANAGER, str(ROOT / "examples" / "workloads" / "fleet-manager.yaml")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert ("admitted: training/llm-pretrain -> ClusterQueue training, pod set slice: flavor v5p-res "
            "[checks: multikueue-east-west-52c973fc]\n  worker west: not admitted: couldn't assign flavors to pod set "
            "slice: flavor v6e-spot doesn't match node affinity\n  dispatched (all-at-once: east, west): worker "
            "east") in out
    assert ("worker east: not admitted: couldn't assign flavors to pod set slice: flavor v5p-res doesn't match "
            "node affinity\n  dispatched (all-at-once: east, west): worker west") in out


def test_incremental_dispatch_says_how_long_a_workload_waits_on_the_workers_before(tmp_path, capsys):
    from gke_ai_batch.admission.results import AdmissionResult
    from gke_ai_batch.offline.placement.dispatch import Dispatch
    no, yes = AdmissionResult("JobSet", "t", "j", reason="no room"), AdmissionResult("JobSet", "t", "j", "cq")
    lines = admit.dispatched(Dispatch("incremental", ("east", "west"), (("east", no), ("west", yes))))
    assert lines[-1].startswith("  dispatched (incremental: east, west, after 1 round of 5 minutes): worker west")


def test_a_job_that_names_no_flavor_is_refused_on_the_manager(tmp_path, capsys):
    """It was admitted in east's v5p-res and, offered to west first, could run there in v6e-spot."""
    doc = next(yaml.safe_load_all((ROOT / "examples" / "workloads" / "fleet-manager.yaml").read_text()))
    for spec in (r["template"]["spec"]["template"]["spec"] for r in doc["spec"]["replicatedJobs"]):
        spec["nodeSelector"].pop("gke-ai-batch.io/flavor")
    (tmp_path / "w.yaml").write_text(yaml.safe_dump(doc))
    assert admit.main([MANAGER, str(tmp_path / "w.yaml")]) == 1
    assert "ValidatingAdmissionPolicy gke-ai-batch-fleet-flavor: on a fleet manager a job names the flavor" in \
        capsys.readouterr().out


@pytest.mark.parametrize("key,value", [("workers", [{"name": "x", "stack": "fleet-west"}]),
                                       ("dispatcher", "all-at-once"), ("credentials", {"generation": 2})])
def test_a_worker_stack_refuses_the_managers_keys(key, value):
    raw = platform_of("fleet-east")
    raw["fleet"][key] = value
    with pytest.raises(ConfigError) as e:
        build_platform(raw)
    assert e.value.path == f"platform.fleet.{key}" and "manager" in e.value.message


def test_a_production_managers_team_namespaces_are_protected_on_its_workers_too():
    """Removing a worker or a team from the manager deletes its namespaces there, and the work running in them."""
    raw = manager()
    raw["production"] = True
    namespaces = [r for r in run_config(raw, MANAGER) if r.type == "kubernetes:core/v1:Namespace"]
    on_east = {r.inputs["metadata"]["name"]: r.options.get("protect") for r in namespaces
               if (r.inputs["metadata"].get("annotations") or {}).get("gke-ai-batch.io/fleet-worker") == "east"}
    assert on_east == {"training": True}


def test_a_manager_queue_on_a_workers_flavor_without_a_multikueue_check_is_a_violation(plan):
    """A plan once lost its queues' checks: its jobs would have been admitted to run on the manager."""
    def drop_check(r: Any) -> bool:
        if r.inputs.get("kind") == "ClusterQueue" and "annotations" not in r.inputs["metadata"]:
            r.inputs["spec"].pop("admissionChecksStrategy")
        return True
    found = findings(fleet_rules.multikueue_queues, _edited(plan(MANAGER), drop_check))
    assert "ClusterQueue research has quota in v6e-spot, whose nodes are a worker's, but no MultiKueue check" in \
        " ".join(found)


def test_a_manager_on_a_kubernetes_version_without_job_managed_by_is_refused():
    raw = manager()
    raw["cluster"]["version"] = "1.31.6-gke.1000000"
    e = refused(raw)
    assert e.path == "platform.cluster.version" and "JobManagedBy" in e.message


def test_a_worker_in_another_project_is_refused_offline_at_its_path():
    raw = manager()
    raw["fleet"]["workers"][0]["stack"] = "acme/other-project/fleet-east"
    with pytest.raises(PlanError) as e:
        run_config(raw, MANAGER)
    assert "platform.fleet.workers[0].stack" in str(e.value) and "another project's stack" in str(e.value)


def test_a_bare_stack_name_is_referenced_in_this_organization_and_project(plan):
    names = sorted(r.inputs["name"] for r in plan(MANAGER) if r.type == "pulumi:pulumi:StackReference")
    assert names == ["organization/gke-ai-batch/fleet-east", "organization/gke-ai-batch/fleet-west"]


def test_a_worker_whose_control_plane_only_its_own_vpc_reaches_is_refused():
    """Production's default for private nodes is a private endpoint: the manager's Kueue could not connect."""
    raw = platform_of("fleet-east")
    raw["production"] = True
    with pytest.raises(ConfigError) as e:
        build_platform(raw)
    assert e.value.path == "platform.cluster.ip_endpoint" and "ip_endpoint: authorized" in e.value.message


def test_a_worker_stack_named_twice_in_two_spellings_is_refused():
    raw = manager()
    raw["fleet"]["workers"][1]["stack"] = "acme/gke-ai-batch/fleet-east"
    e = refused(raw)
    assert e.path == "platform.fleet.workers[1].stack" and "already worker fleet.workers[0]'s" in e.message


def test_the_summary_counts_every_registered_resource_and_lists_the_workers(plan):
    from gke_ai_batch.offline.views.render import summary
    shown = summary(plan(MANAGER))
    assert f"{len(plan(MANAGER))} resources registered" in shown
    assert "east    fleet-east  0.19.2  training (v5p-res)" in shown


def test_a_draining_workers_flavors_take_no_new_jobs(tmp_path, capsys):
    raw = manager()
    raw["fleet"]["workers"][0]["state"] = "draining"
    stack = tmp_path / "Pulumi.fleet-manager.yaml"
    stack.write_text(yaml.safe_dump({"config": {"gke-ai-batch:platform": raw}}))
    assert admit.main([str(stack), str(ROOT / "examples" / "workloads" / "fleet-manager.yaml")]) == 1
    out = capsys.readouterr().out
    assert "refused: training/llm-pretrain: ValidatingAdmissionPolicy gke-ai-batch-fleet-flavor" in out
    assert "one of v6e-spot" in out and "admitted: training/eval-v6e" in out


def test_a_per_zone_flavor_of_a_total_autoscaling_pool_holds_what_all_its_nodes_could():
    """The worker's facts split such a pool evenly over its zones, where the worker's own policies count every
    node in each zone (a total limit may put them all there), so the manager refused what the worker accepted."""
    from gke_ai_batch.plan.fleet_worker import worker_facts
    raw = platform_of("fleet-west")
    raw["gpu_pools"] = [{"name": "l4-spot", "gpu": "nvidia-l4", "machine_type": "g2-standard-24", "capacity": "spot",
                         "zones": ["us-east1-b", "us-east1-c"], "zone_flavors": True,
                         "autoscaling": {"max_nodes": 8, "total": True, "location_policy": "ANY"}}]
    p = build_platform(raw)
    flavors = worker_facts(p.config, p.scheduling.flavors, p.frameworks)["flavors"]
    assert flavors["l4-spot-us-east1-b"]["resources"]["nvidia.com/gpu"] == "16"  # 8 VMs x 2 L4s


def test_the_platform_component_reads_its_workers_as_the_program_does(plan):
    """The component builds its plan from the same StackReferences, in its program's project."""
    from gke_ai_batch.components.platform import Platform, PlatformArgs
    from gke_ai_batch.offline.engine.runtime import record
    references = {w: plan(w) for w in ("fleet-east", "fleet-west")}
    regs = record(lambda: Platform("ml", PlatformArgs(manager())), MANAGER, references=references)
    assert {r.inputs["metadata"]["name"] for r in regs if r.type.endswith(":MultiKueueCluster")} == {"east", "west"}


def test_the_platform_component_refuses_to_be_a_worker_it_cannot_export():
    from gke_ai_batch.components.platform import Platform, PlatformArgs
    from gke_ai_batch.offline.engine.runtime import record
    with pytest.raises(Exception, match=r"platform.fleet.role: a fleet worker's stack exports"):
        record(lambda: Platform("ml", PlatformArgs(platform_of("fleet-east"))), "fleet-east")


# The second review's attempts, kept.

def test_a_flavor_label_on_two_workers_is_refused():
    """Per-zone flavors of a pool named alike on two workers had distinct names but one gke-ai-batch.io/flavor label:
    a job naming it could be charged to one worker and run on the other."""
    def shared(out: dict[str, Any]) -> None:
        spot = out["west"]["flavors"]["v6e-spot"]
        out["east"]["flavors"]["v6e-spot-east"] = {**spot}
    e = refused(manager(), changed_outputs(shared))
    assert e.path == "platform.fleet.workers[1]"
    assert "gke-ai-batch.io/flavor=v6e-spot nodes, as worker 'east'" in e.message


def _manager_policies(raw: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    from gke_ai_batch.offline.views.render import is_manifest, manifest_of
    manifests = [manifest_of(r) for r in run_config(raw, MANAGER)
                 if is_manifest(r) and r.inputs["metadata"]["name"] == "gke-ai-batch-fleet-flavor"]
    return ([m for m in manifests if m["kind"] == "ValidatingAdmissionPolicy"],
            [m for m in manifests if m["kind"] == "ValidatingAdmissionPolicyBinding"])


def _jobset(flavors: list[str]) -> dict[str, Any]:
    doc = next(yaml.safe_load_all((ROOT / "examples" / "workloads" / "fleet-manager.yaml").read_text()))
    template = doc["spec"]["replicatedJobs"][0]
    doc["spec"]["replicatedJobs"] = [copy.deepcopy(template) for _ in flavors]
    for i, (r, f) in enumerate(zip(doc["spec"]["replicatedJobs"], flavors, strict=True)):
        r["name"] = f"slice-{i}"
        r["template"]["spec"]["template"]["spec"]["nodeSelector"] = {"gke-ai-batch.io/flavor": f}
    return doc


def test_kueue_may_still_update_a_draining_workers_jobs_but_nobody_may_name_its_flavor_anew():
    """The policy matched updates too, so Kueue could not unsuspend a job it had admitted for a draining worker."""
    from gke_ai_batch.apiserver.cel_policies import evaluate
    raw = manager()
    raw["fleet"]["workers"][0]["state"] = "draining"
    policies, bindings = _manager_policies(raw)
    namespace = {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": "training", "labels": {"gke-ai-batch.io/team": "training"}}}
    job = _jobset(["v5p-res"])
    unsuspended = copy.deepcopy(job)
    unsuspended["spec"]["suspend"] = False
    assert evaluate(policies, bindings, unsuspended, namespace, "UPDATE", old_object=job) == []
    assert evaluate(policies, bindings, job, namespace, "CREATE")
    moved = _jobset(["v6e-spot"])
    assert evaluate(policies, bindings, job, namespace, "UPDATE", old_object=moved)


def test_one_job_naming_two_workers_flavors_is_refused(tmp_path, capsys):
    """It held quota on the manager in both flavors, and no worker could admit it whole."""
    (tmp_path / "w.yaml").write_text(yaml.safe_dump(_jobset(["v5p-res", "v6e-spot"])))
    assert admit.main([MANAGER, str(tmp_path / "w.yaml")]) == 1
    assert "a job's pod templates name the flavors of one worker" in capsys.readouterr().out


def test_a_pod_group_is_refused_on_the_manager(tmp_path, capsys):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "p0", "namespace": "training", "labels": {"kueue.x-k8s.io/queue-name": "training-queue",
                                                           "kueue.x-k8s.io/pod-group-name": "g"},
        "annotations": {"kueue.x-k8s.io/pod-group-total-count": "2"}},
        "spec": {"nodeSelector": {"gke-ai-batch.io/flavor": "v5p-res"},
                 "containers": [{"name": "c", "image": "python:3.11"}]}}
    (tmp_path / "w.yaml").write_text(yaml.safe_dump(pod))
    assert admit.main([MANAGER, str(tmp_path / "w.yaml")]) == 1
    assert "a pod group's pods are separate objects" in capsys.readouterr().out


def test_a_hand_built_fleet_without_the_flavor_policy_or_with_a_stronger_identity_is_a_violation(plan):
    def weaken(r: Any) -> bool:
        if r.inputs.get("kind", "").startswith("ValidatingAdmissionPolicy") and \
                r.inputs["metadata"]["name"] == "gke-ai-batch-fleet-flavor":
            return False
        meta = r.inputs.get("metadata") or {}
        if r.inputs.get("kind") == "ClusterRoleBinding" and meta.get("name") == "multikueue-sa-crb":
            r.inputs["roleRef"]["name"] = "cluster-admin"
        if r.inputs.get("kind") == "ResourceFlavor" and meta.get("name") == "v5p-res":
            meta["annotations"].pop("gke-ai-batch.io/worker-holds")
        return True
    edited = _edited(plan(MANAGER), weaken)
    assert any("without the admission policy gke-ai-batch-fleet-flavor" in m
               for m in findings(fleet_rules.multikueue_dispatch, edited))
    assert any("may write cluster-wide through ClusterRoleBinding multikueue-sa-crb (cluster-admin)" in m
               for m in findings(fleet_rules.worker_credentials, edited))
    assert any("flavor v5p-res names a worker's nodes but does not state what they hold" in m
               for m in findings(fleet_rules.multikueue_queues, edited))


def test_a_workers_queue_holding_more_than_the_managers_is_a_violation(plan):
    def raise_quota(r: Any) -> bool:
        meta = r.inputs.get("metadata") or {}
        if r.inputs.get("kind") == "ClusterQueue" and (meta.get("annotations") or {}).get(
                "gke-ai-batch.io/fleet-worker") == "east":
            r.inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["nominalQuota"] = 1000
        return True
    found = findings(fleet_rules.teams_on_workers, _edited(plan(MANAGER), raise_quota))
    assert found == ["worker east's ClusterQueue training holds other quota than the manager's ClusterQueue "
                     "training in v5p-res"]


def test_a_worker_that_would_take_a_workload_whose_pods_find_no_nodes_is_refused_after_dispatch():
    """Kueue dispatches on quota; the pods then wait on the worker, which `make admit` says, as in one cluster."""
    from gke_ai_batch.admission.results import AdmissionResult
    from gke_ai_batch.offline.placement.dispatch import Dispatch
    stuck = AdmissionResult("JobSet", "t", "j", "cq", warnings=("no node pool fits",))
    d = Dispatch("all-at-once", ("east", "west"), (("east", stuck), ("west", stuck)))
    lines = admit.dispatched(d)
    assert d.worker == "east" and not d.admitted
    assert "workers east, west would all admit it: the first to reserve quota takes it" in lines[0]
    assert lines[-1] == "  refused: worker east: no node pool fits"


def test_a_workers_summary_says_its_queues_are_its_managers(plan):
    """A worker's plan showed 0 ClusterQueues and nothing more, as if it had no teams at all."""
    from gke_ai_batch.offline.views.render import summary
    assert "fleet: a worker (stack output fleetWorker); its teams' namespaces, LocalQueues and ClusterQueues are " \
           "declared by its manager's stack" in summary(plan("fleet-west"))


def test_a_worker_stack_without_a_kubeconfig_output_is_refused_at_its_reference(plan):
    """A provider without a kubeconfig would have declared the worker's objects on the deployer's current context."""
    from gke_ai_batch.components.fleet import WorkerStacks
    from gke_ai_batch.model.fleet_config import FleetConfig
    from gke_ai_batch.offline.engine.runtime import Planned, record
    east = plan("fleet-east")
    without = Planned(list(east), {k: v for k, v in east.outputs.items() if k != "kubeconfig"})
    fleet = FleetConfig.model_validate({"role": "manager", "workers": [{"name": "east", "stack": "fleet-east"}]})
    with pytest.raises(ConfigError) as e:
        record(lambda: WorkerStacks()(fleet), MANAGER, references={"fleet-east": without})
    assert e.value.path == "platform.fleet.workers[0].stack" and "has no `kubeconfig` output" in e.value.message
