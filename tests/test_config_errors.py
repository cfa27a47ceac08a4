"""Bad input: one ConfigError naming the path, the value and what is allowed, before any resource."""

import pytest

from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.plan.platform import build_platform

from .conftest import ROOT, platform_of, run_config
from .forked_cli import run_module


def dev():
    return platform_of("dev")


def mutate(fn):
    cfg = dev()
    fn(cfg)
    return cfg


CASES = [
    # Issue 23 item 8: each was once accepted, and an unknown machine type counted as 0 cpu and 0 memory.
    ("unknown cpu machine type", lambda c: c["cpu_pools"][0].update(machine_type="n2-standard-7"),
     "platform.cpu_pools[0].machine_type", "not in the catalog, whose cpu and memory the platform cannot judge; "
     "nearest: n2-standard-2, n2-standard-4, n2-standard-8, n2-standard-16"),
    ("unknown system machine type", lambda c: c.setdefault("system_pool", {}).update(machine_type="e9-standard-4"),
     "platform.system_pool.machine_type", "nearest: e2-standard-4"),
    ("bad taint key", lambda c: c["tpu_pools"][0].update(taints=[{"key": "dedicated to", "value": "a"}]),
     "platform.tpu_pools[0].taints[0].key", "not a taint key"),
    ("bad taint value", lambda c: c["tpu_pools"][0].update(taints=[{"key": "acme.com/team", "value": "a b"}]),
     "platform.tpu_pools[0].taints[0].value", "not a taint value"),
    ("unknown key", lambda c: c["cluster"].update(nmae="x"), "platform.cluster.nmae", "unknown key"),
    ("unknown TPU generation", lambda c: c["tpu_pools"][0].update(generation="v9"),
     "platform.tpu_pools[0].generation", "allowed: v4, v5e, v5p, v6e, tpu7x"),
    ("unknown GPU", lambda c: c["gpu_pools"][0].update(gpu="nvidia-k80"), "platform.gpu_pools[0].gpu",
     "nvidia-h100-80gb"),
    ("bad topology", lambda c: c["tpu_pools"][0].update(topology="2x3"), "platform.tpu_pools[0].topology",
     "'2x3'; allowed: 2x2, 2x4, 4x4"),
    ("no slices", lambda c: c["tpu_pools"][0].update(slices=0), "platform.tpu_pools[0].slices",
     "at least 1 slice"),
    ("duplicate pool", lambda c: c["tpu_pools"].append(dict(c["tpu_pools"][0])), "platform.tpu_pools[3].name",
     "already used by platform.tpu_pools[0]"),
    ("zone outside region", lambda c: c["tpu_pools"][0].update(zones=["europe-west4-a"]),
     "platform.tpu_pools[0].zones[0]", "not in the cluster's region 'us-east5'"),
    ("flex-start with reservation", lambda c: c["tpu_pools"][1].update(reservation="r1"),
     "platform.tpu_pools[1].capacity", "only consumed with capacity 'reservation'"),
    ("flex-start with spot", lambda c: c["tpu_pools"][1].update(capacity=["flex-start", "spot"]),
     "platform.tpu_pools[1].capacity",
     "allowed: 'on-demand', 'spot', 'reservation', 'flex-start' or 'queued-provisioning'"),
    ("multi-host over two zones", lambda c: c["tpu_pools"][0].update(zones=["us-east5-a", "us-east5-b"]),
     "platform.tpu_pools[0].zones", "give exactly one zone"),
    ("accelerators on Autopilot", lambda c: c["cluster"].update(mode="autopilot"), "platform.tpu_pools",
     "an Autopilot cluster has no node pools"),
    ("quota on unknown flavor", lambda c: c["teams"][0]["queue"]["quotas"].update({"a100": {"cpu": 1}}),
     "platform.teams[0].queue.quotas.a100",
     "flavors: cpu-workers, h100-dws, h200-8, l4-flex, t4-notebooks, v5e-train, v6e-2x4, v6e-flex, v6e-queued"),
    ("quota on unknown resource", lambda c: c["teams"][0]["queue"]["quotas"]["v6e-flex"].update(
        {"nvidia.com/gpu": 1}), "platform.teams[0].queue.quotas.v6e-flex.nvidia.com/gpu",
     "it provides: cpu, memory, ephemeral-storage, google.com/tpu"),
    ("malformed quantity", lambda c: c["teams"][0]["queue"]["quotas"]["v6e-flex"].update(memory="10Gx"),
     "platform.teams[0].queue.quotas.v6e-flex.memory", "'10Gx': a non-negative Kubernetes quantity"),
    ("negative quantity", lambda c: c["teams"][0]["queue"]["quotas"]["v6e-flex"].update(cpu=-1),
     "platform.teams[0].queue.quotas.v6e-flex.cpu", "non-negative"),
    ("namespace of two teams", lambda c: c["teams"][1].update(namespaces=["research"]),
     "platform.teams[1].namespaces", "already belongs to team 'research'"),
    ("unknown cohort", lambda c: c["teams"][0]["queue"].update(cohort="nope"), "platform.teams[0].queue.cohort",
     "declared cohorts: ml"),
    ("borrowing without cohort", lambda c: c["teams"][1]["queue"].pop("cohort"),
     "platform.teams[1].queue.quotas.v5e-train.google.com/tpu.borrowing_limit", "needs a cohort"),
    ("priority out of range", lambda c: c["priorities"][0].update(value=1_000_000_000),
     "platform.priorities[0].value", "to 999,999,999"),
    ("two global defaults", lambda c: c["priorities"][0].update(global_default=True),
     "platform.priorities[1].global_default", "at most one priority class"),
    ("cpu alone on accelerator nodes", lambda c: c["teams"][0]["queue"]["quotas"].update({"v6e-flex": {"cpu": 4}}),
     "platform.teams[0].queue.quotas.v6e-flex", "its quota needs google.com/tpu"),
    ("unmetered resources", lambda c: c.update(kueue={"quota_check": "IgnoreUndeclared"}),
     "platform.kueue.quota_check", "a team with TPU quota could take GPUs"),
    ("a group that is everyone", lambda c: c["teams"][0].update(groups=["system:authenticated"]),
     "platform.teams[0].groups", "'system:authenticated' is a Kubernetes system group"),
    ("a group that is not an email address", lambda c: c["teams"][0].update(groups=["ml-research"]),
     "platform.teams[0].groups", "is not a Google group's email address"),
    ("a group outside the platform's domains", lambda c: c.update(group_domains=["corp.example"]),
     "platform.teams[0].groups[0]", "outside the platform's group domains: corp.example"),
    ("a priority that does not exist", lambda c: c["teams"][0].update(priorities=["urgent"]),
     "platform.teams[0].priorities[0]", "priority 'urgent' is not declared; priorities: high-priority, low-priority"),
    ("a Pod Security level that does not exist", lambda c: c["teams"][0].update(
        pod_security=[{"namespace": "research", "level": "unrestricted", "reason": "x"}]),
     "platform.teams[0].pod_security[0].level", "'privileged', 'baseline' or 'restricted'"),
    ("a Pod Security exception for another team's namespace", lambda c: c["teams"][0].update(
        pod_security=[{"namespace": "training", "level": "restricted", "reason": "x"}]),
     "platform.teams[0].pod_security[0].namespace", "'training' is not a namespace of team 'research'"),
    ("a Pod Security exception without a reason", lambda c: c["teams"][0].update(
        pod_security=[{"namespace": "research", "level": "privileged"}]),
     "platform.teams[0].pod_security[0].reason", "required"),
    ("an object quota of zero", lambda c: c["teams"][0].update(object_quotas={"jobs": 0}),
     "platform.teams[0].object_quotas.jobs", "greater than or equal to 1"),
    ("an object quota that is not a whole number", lambda c: c["teams"][0].update(object_quotas={"pods": "many"}),
     "platform.teams[0].object_quotas.pods", "should be a whole number, not 'many'"),
    ("a scrape sample cap of zero", lambda c: c["teams"][0].update(object_quotas={"scrape_samples": 0}),
     "platform.teams[0].object_quotas.scrape_samples", "greater than or equal to 1"),
    ("a shortest scrape interval that is not a duration",
     lambda c: c["teams"][0].update(object_quotas={"scrape_interval": "1m30s"}),
     "platform.teams[0].object_quotas.scrape_interval", "a whole number followed by s, m or h"),
    ("a shortest scrape interval of zero", lambda c: c["teams"][0].update(object_quotas={"scrape_interval": "0s"}),
     "platform.teams[0].object_quotas.scrape_interval", "'0s': allowed from 1s to 1h"),
    ("a shortest scrape interval over an hour",
     lambda c: c["teams"][0].update(object_quotas={"scrape_interval": "2h"}),
     "platform.teams[0].object_quotas.scrape_interval", "'2h': allowed from 1s to 1h"),
    ("default priority has no effect", lambda c: c["teams"][0].update(default_priority="low-priority"),
     "platform.teams[0].default_priority", "a per-team default priority cannot take effect"),
    ("system namespace", lambda c: c["teams"][0].update(namespaces=["research", "kube-system"]),
     "platform.teams[0].namespaces", "'kube-system' belongs to the cluster or its controllers"),
    ("kueue's namespace", lambda c: c["teams"][1].update(namespaces=["kueue-system"]),
     "platform.teams[1].namespaces", "'kueue-system' belongs to the cluster"),
    ("wait for pods ready off", lambda c: c.update(kueue={"wait_for_pods_ready": False}),
     "platform.kueue.wait_for_pods_ready", "Kueue 0.19 always waits for pods"),
    ("fair sharing with borrowWithinCohort", lambda c: (c.update(kueue={"fair_sharing": True}), c["teams"][0][
        "queue"].update(preemption={"borrow_within_cohort": {"policy": "LowerPriority"}})),
     "platform.teams[0].queue.preemption.borrow_within_cohort", "Kueue ignores borrowWithinCohort when fair sharing"),
    ("one flavor over two machine types", lambda c: c["tpu_pools"].append(
        {"name": "v5e-big", "generation": "v5e", "topology": "2x4", "machine_type": "ct5lp-hightpu-8t",
         "flavor": "v5e-train"}), "platform.tpu_pools[3].flavor", "selects one machine type, shape and capacity"),
    ("groups without Google Groups for RBAC", lambda c: c["cluster"].pop("security_group"),
     "platform.teams[0].groups", "cluster.security_group"),
    # Issue 37: an adopted cluster or pool is imported by the ID given; another one would be read instead.
    ("adopt: not a GKE name", lambda c: c["cluster"].update(adopt="ml-dev"), "platform.cluster.adopt",
     "'ml-dev' is not a GKE cluster name; allowed: projects/PROJECT/locations/LOCATION/clusters/NAME, for this "
     "stack projects/acme-ml-dev/locations/us-east5-b/clusters/ml-dev"),
    ("adopt: another project's cluster", lambda c: c["cluster"].update(
        adopt="projects/other/locations/us-east5-b/clusters/ml-dev"), "platform.cluster.adopt",
     "'projects/other/locations/us-east5-b/clusters/ml-dev' is not this stack's cluster; allowed: "
     "projects/acme-ml-dev/locations/us-east5-b/clusters/ml-dev"),
    ("adopt: a regional cluster for a zonal one", lambda c: c["cluster"].update(
        adopt="projects/acme-ml-dev/locations/us-east5/clusters/ml-dev"), "platform.cluster.adopt",
     "not this stack's cluster"),
    ("adopt: another pool", lambda c: c["cpu_pools"][0].update(
        adopt="projects/acme-ml-dev/locations/us-east5-b/clusters/ml-dev/nodePools/other"),
     "platform.cpu_pools[0].adopt", "is not this node pool; allowed: projects/acme-ml-dev/locations/us-east5-b/"
     "clusters/ml-dev/nodePools/"),
    ("adopt: a pool of another cluster", lambda c: c["system_pool"].update(
        adopt="projects/acme-ml-dev/locations/us-east5-b/clusters/other/nodePools/system"),
     "platform.system_pool.adopt", "is not a node pool of this stack's cluster; allowed: "
     "projects/acme-ml-dev/locations/us-east5-b/clusters/ml-dev/nodePools/system"),
    ("adopt: a malformed pool name", lambda c: c["system_pool"].update(adopt="system"),
     "platform.system_pool.adopt", "'system' is not a GKE node pool name"),
    ("adopt: a multislice pool", lambda c: c["tpu_pools"][0].update(
        adopt="projects/acme-ml-dev/locations/us-east5-b/clusters/ml-dev/nodePools/v5e-train-0"),
     "platform.tpu_pools[0].adopt", "a pool of 2 slices is 2 node pools; adopt names one"),
]


@pytest.mark.parametrize("label,change,path,fragment", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_clear_error(label, change, path, fragment):
    with pytest.raises(ConfigError) as e:
        build_platform(mutate(change))
    assert e.value.path == path
    assert fragment in str(e.value)


def test_bad_stack_registers_nothing(plan):
    """The error comes before any resource: the program stops at validation."""
    from gke_ai_batch.offline.engine.runtime import PlanError
    with pytest.raises(PlanError, match=r"platform.tpu_pools\[0\].topology"):
        run_config(mutate(lambda c: c["tpu_pools"][0].update(topology="2x3")))


def test_make_plan_exits_nonzero_without_traceback(tmp_path):
    bad = tmp_path / "Pulumi.bad.yaml"
    text = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text().replace("topology: 2x4", "topology: 2x3")
    bad.write_text(text)
    r = run_module("gke_ai_batch.offline", "plan", str(bad), "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    assert "platform.tpu_pools[0].topology" in r.stderr and "allowed: 2x2, 2x4" in r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert not (tmp_path / "out").exists()


def test_an_autopilot_flavors_gpu_outside_the_catalog_is_refused():
    """The schema's enum listed the GPU types, but the program took any name."""
    cfg = platform_of("multislice-autopilot")
    cfg["autopilot_flavors"] = [{"name": "g", "gpu": "nvidia-k80"}]
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == "platform.autopilot_flavors[0].gpu" and "unknown GPU type 'nvidia-k80'" in e.value.message
