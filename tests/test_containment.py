"""Containment beyond the first create: what a hostile member of a team tries against the cluster's shared
limits (Kueue's memory, the service range, disks, etcd, the privileged namespace's nodes, metrics, tokens),
judged as `make admit` judges it (apiserver.tenant_path), and the plan objects that hold it. Each attempt got
through before issue 36's controls."""
from __future__ import annotations

import copy
import subprocess

import pytest
import yaml

from gke_ai_batch.apiserver.cel_policies import evaluate
from gke_ai_batch.apiserver.job_defaults import as_validated
from gke_ai_batch.apiserver.tenant_path import TenantPath
from gke_ai_batch.offline.admit import cluster_of, describe
from gke_ai_batch.offline.engine.runtime import PlanError
from gke_ai_batch.offline.views.render import is_manifest, manifest_of
from gke_ai_batch.plan import monitoring, queries

from .conftest import ROOT, STACKS, by_type, planned, platform_of, run_config
from .forked_cli import run_module
from .test_escape import GPU, TPU, V5P, container, job, pod, verdict


def service(name: str, kind: str, ports: int = 1, **extra) -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "research"},
            "spec": {"type": kind, "selector": {"app": "x"},
                     "ports": [{"port": 8000 + i, "targetPort": 8000 + i} for i in range(ports)], **extra}}


# --- objects nothing counted: ports, load balancers, disks --------------------------------------------

QUOTA = "refused: research/{}: ResourceQuota gke-ai-batch-objects: exceeded quota: gke-ai-batch-objects, "


@pytest.mark.parametrize("obj, refusal", [
    (service("node-port", "NodePort"), "requested: services.nodeports=1, used: services.nodeports=0, "
                                       "limited: services.nodeports=0"),
    (service("cloud-lb", "LoadBalancer", allocateLoadBalancerNodePorts=False),
     "requested: services.loadbalancers=1, used: services.loadbalancers=0, limited: services.loadbalancers=0"),
    ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "hoard", "namespace": "research"},
      "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "64Ti"}}}},
     "requested: requests.storage=64Ti, used: requests.storage=0, limited: requests.storage=1Ti"),
])
def test_a_team_cannot_take_node_ports_load_balancers_or_a_64ti_disk(obj, refusal):
    assert verdict("prod", obj) == QUOTA.format(obj["metadata"]["name"]) + refusal


def test_a_cluster_ip_service_is_created_and_counted():
    assert verdict("prod", service("headless", "ClusterIP")) == "created: research/headless (Service)"


def quota_of(stack: str, ns: str, regs=None) -> dict:
    quotas = [r.inputs for r in by_type(regs or planned(stack), ":ResourceQuota")]
    return next(q["spec"]["hard"] for q in quotas if q["metadata"]["namespace"] == ns)


def test_every_team_namespace_counts_what_floods_the_cluster():
    assert quota_of("prod", "research") == {
        "count/jobs.batch": "500", "count/jobsets.jobset.x-k8s.io": "100", "count/workloads.kueue.x-k8s.io": "1000",
        "pods": "2000", "count/deployments.apps": "20", "count/replicasets.apps": "250",
        "count/statefulsets.apps": "20", "count/cronjobs.batch": "20", "count/services": "20",
        "services.nodeports": "0", "services.loadbalancers": "0", "count/configmaps": "100", "count/secrets": "100",
        "count/podmonitorings.monitoring.googleapis.com": "20", "persistentvolumeclaims": "20",
        "requests.storage": "1Ti"}


def cron_job(name: str) -> dict:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": "research"},
            "spec": {"schedule": "0 3 * * *", "jobTemplate": job("research", name, "research-queue")}}


def pod_monitoring(name: str) -> dict:
    return {"apiVersion": "monitoring.googleapis.com/v1", "kind": "PodMonitoring",
            "metadata": {"name": name, "namespace": "research"},
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "limits": {"samples": 1000},
                     "endpoints": [{"port": "metrics", "interval": "30s"}]}}


@pytest.mark.parametrize("make, key, resource", [
    (cron_job, "cronjobs", "count/cronjobs.batch"),
    (pod_monitoring, "pod_monitorings", "count/podmonitorings.monitoring.googleapis.com"),
])
def test_cron_jobs_and_pod_monitorings_are_counted(make, key, resource):
    """Attack (after issue 36): the team role creates CronJobs and PodMonitorings, which no quota counted. 10,000
    CronJobs of 1.5 MiB fill etcd (Kueue never sees them, so no size cap judged them); a few thousand
    PodMonitorings overflow the one ConfigMap (1 MiB) into which Managed Prometheus's operator writes every
    PodMonitoring's scrape jobs (prometheus-engine v0.17.2 pkg/operator/collection.go `ensureCollectorConfig`), so
    its update fails and no new scrape, Kueue's included, is configured for any team."""
    platform = platform_of("prod")
    platform["teams"][1]["object_quotas"] = {key: 0}
    regs = run_config(platform, f"no-{key}")
    assert quota_of("prod", "research", regs)[resource] == "0"
    path = TenantPath((manifest_of(r) for r in regs if is_manifest(r)), cluster_of(regs))
    obj = make("flood")
    assert describe(path.judge(obj)) == QUOTA.format("flood") + f"requested: {resource}=1, used: {resource}=0, " \
        f"limited: {resource}=0"


def test_a_team_block_overrides_its_object_counts():
    platform = platform_of("prod")
    platform["teams"][1]["object_quotas"] = {"services": 50, "load_balancers": 1, "storage": "4Ti"}
    hard = quota_of("prod", "research", run_config(platform, "override"))
    assert (hard["count/services"], hard["services.loadbalancers"], hard["requests.storage"]) == ("50", "1", "4Ti")
    assert hard["services.nodeports"] == "0"


@pytest.mark.parametrize("stack", STACKS)
def test_no_cluster_allows_service_external_ips(stack):
    """CVE-2020-8554: a Service's externalIPs intercept traffic to any address."""
    (cluster,) = [r for r in by_type(planned(stack), "gcp:container/cluster:Cluster")]
    assert cluster.inputs["serviceExternalIpsConfig"] == {"enabled": False}


def test_make_admit_refuses_a_service_with_external_ips_as_gke_does():
    """Issue 36 review (o3.yaml): with serviceExternalIpsConfig off GKE's API server runs DenyServiceExternalIPs,
    which refuses a Service gaining an external IP, on create or update, and lets it keep those it has."""
    from gke_ai_batch.offline.admit import describe

    from .test_escape import tenant_path
    external = service("ext", "ClusterIP", externalIPs=["8.8.8.8"])
    refusal = ('refused: research/ext: API server (DenyServiceExternalIPs): services "ext" is forbidden: Use of '
               "external IPs is denied by admission control")
    assert verdict("prod", external) == refusal
    plain = service("ext", "ClusterIP")
    assert describe(tenant_path("prod").judge(external, plain)) == refusal
    relabelled = service("ext", "ClusterIP", externalIPs=["8.8.8.8"])
    relabelled["metadata"]["labels"] = {"note": "x"}
    assert not describe(tenant_path("prod").judge(relabelled, external)).startswith("refused")


# --- Kueue's memory: bytes, not only counts ----------------------------------------------------------

def test_a_1mib_pod_template_is_refused():
    """500 pending Jobs of ~1 MiB each would put ~1 GiB in each Kueue replica (Jobs, their Workloads)."""
    blob = [{"name": "BLOB", "value": "x" * 2**20}]
    big = job("research", "big", "research-queue", containers=[container(env=blob)])
    assert verdict("prod", big) == (
        "refused: research/big: ValidatingAdmissionPolicy gke-ai-batch-object-size: the object holds 1049344 bytes "
        "of text (every key and string of its spec, labels, annotations, finalizers and owner references, and one "
        "per value); namespace research allows 16384 per object "
        "(teams[].object_quotas.object_size): Kueue keeps every workload in memory; put large data in a bucket or "
        "a ConfigMap volume")


# Issue 36 review: s3.yaml (a 1 MB readinessProbe command), s4.yaml (CSI volumeAttributes), s2.yaml (a JobSet's Job
# template annotations) got past the cap.
_HANDLERS = {"probe command": ("readinessProbe", {"exec": {"command": ["x" * 20000]}}),
             "probe header": ("livenessProbe", {"httpGet": {"port": 80, "httpHeaders": [{"name": "h",
                                                                                        "value": "x" * 20000}]}}),
             "hook command": ("lifecycle", {"preStop": {"exec": {"command": ["x" * 20000]}}})}


@pytest.mark.parametrize("where", ["annotations", "template annotations", "args", "jobset env", "jobset job template",
                                   *_HANDLERS, "csi attributes"])
def test_the_size_cap_counts_every_free_text_field(where):
    blob = "x" * 20000
    if where.startswith("jobset"):
        obj = next(d for d in yaml.safe_load_all((ROOT / "examples/workloads/prod.yaml").read_text())
                   if d and d["kind"] == "JobSet" and d["metadata"]["namespace"] == "training")
        replicated = obj["spec"]["replicatedJobs"][0]["template"]
        if where == "jobset env":
            replicated["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "BLOB", "value": blob}]
        else:
            replicated["metadata"] = {"annotations": {"blob": blob}}
        expected = "refused: training/"
    else:
        obj = job("research", "big", "research-queue", containers=[container(args=[blob] if where == "args" else [])])
        if where == "annotations":
            obj["metadata"]["annotations"] = {"blob": blob}
        if where == "template annotations":
            obj["spec"]["template"]["metadata"] = {"annotations": {"blob": blob}}
        if where in _HANDLERS:
            field, handler = _HANDLERS[where]
            obj["spec"]["template"]["spec"]["containers"][0][field] = handler
        if where == "csi attributes":
            obj["spec"]["template"]["spec"]["volumes"] = [{"name": "v", "csi": {
                "driver": "gcsfuse.csi.storage.gke.io", "volumeAttributes": {"bucketName": "b", "x": blob}}}]
        expected = "refused: research/big"
    line = verdict("prod", obj)
    assert line.startswith(expected) and "ValidatingAdmissionPolicy gke-ai-batch-object-size: the object holds" in line


def test_a_team_block_sets_its_object_size_and_kueue_memory_follows():
    from gke_ai_batch.plan.installs import recommended_memory
    platform = platform_of("prod")
    platform["teams"][1]["object_quotas"] = {"object_size": 65536}
    regs = run_config(platform, "size")
    (ns,) = [r.inputs for r in by_type(regs, ":Namespace") if r.inputs["metadata"]["name"] == "research"]
    assert ns["metadata"]["annotations"]["gke-ai-batch.io/object-size"] == "65536"
    (release,) = [r.inputs for r in by_type(regs, ":Release") if r.inputs["name"] == "kueue"]
    memory = release["values"]["controllerManager"]["manager"]["resources"]["limits"]["memory"]
    # 5,000 Workloads; 2 namespaces x 3,640 objects x 64 KiB + 3 x 3,640 x 16 KiB + 5 x 2,000 pods x 4 KiB
    # (the pods' headroom) = 665 MiB of text
    text = 2 * 3640 * 65536 + 3 * 3640 * 16384 + 5 * 2000 * 4096
    assert memory == f"{recommended_memory(0, 5000, text)}Mi" == "1536Mi"


# --- the privileged namespace stays on its flavor ---------------------------------------------------

def host_pod(selector: dict) -> dict:
    return pod("training-gpudirect", "root", "training-queue", nodeSelector=selector, hostPID=True,
               tolerations=[{"key": TPU, "operator": "Exists", "effect": "NoSchedule"}],
               volumes=[{"name": "root", "hostPath": {"path": "/"}}],
               containers=[container({TPU: 4}, resources={"requests": {TPU: 4, "cpu": "1", "memory": "1Gi"},
                                                          "limits": {TPU: 4, "cpu": "1", "memory": "1Gi"}},
                                     securityContext={"privileged": True})])


PRIVILEGED = ("ValidatingAdmissionPolicy gke-ai-batch-privileged-flavors: namespace training-gpudirect is privileged "
              "for the flavors h200-res only (teams[].pod_security[].flavors): every pod selects one of them with "
              "nodeSelector gke-ai-batch.io/flavor")
# these pods carry no max-exec-time label either: the API server names either policy, `make admit` both
ALSO_RUNTIME = " (also refused by ValidatingAdmissionPolicy gke-ai-batch-runtime-limits: fix all of them)"


@pytest.mark.parametrize("selector", [V5P, {**V5P, "gke-ai-batch.io/flavor": "v5p-res"}])
def test_a_privileged_pod_cannot_reach_the_shared_tpu_nodes(selector):
    assert verdict("prod", host_pod(selector)) == f"refused: training-gpudirect/root: {PRIVILEGED}{ALSO_RUNTIME}"


def test_a_privileged_job_cannot_reach_them_either():
    squat = job("training-gpudirect", "squat", "training-queue", nodeSelector=V5P,
                tolerations=[{"key": TPU, "operator": "Exists", "effect": "NoSchedule"}],
                containers=[container({TPU: 4}, resources={"requests": {TPU: 4}, "limits": {TPU: 4}})])
    assert verdict("prod", squat) == f"refused: training-gpudirect/squat: {PRIVILEGED}{ALSO_RUNTIME}"


def test_the_other_namespace_of_the_team_is_not_bound():
    line = verdict("prod", host_pod(V5P) | {"metadata": {"name": "root", "namespace": "training",
                                                         "labels": {"kueue.x-k8s.io/queue-name": "training-queue"}}})
    assert line.startswith("refused: training/root: Pod Security baseline:"), line


def test_a_privileged_exception_without_flavors_plans_and_is_a_mandatory_violation():
    """A stack file written before `flavors` keeps planning; the policy pack stops `pulumi up` until it names them."""
    from gke_ai_batch.offline.views.check import violations
    platform = platform_of("prod")
    training = next(t for t in platform["teams"] if t["name"] == "training")
    for e in training["pod_security"]:
        e.pop("flavors", None)
    found = [v for v in violations(run_config(platform, "prod")) if v["policy"] == "privileged-namespace-flavors"]
    assert [(v["level"], v["message"]) for v in found] == [(
        "mandatory", "namespace training-gpudirect of team training is privileged on every flavor: name the flavors "
        "of pools of its own in its exception (teams[].pod_security[].flavors), so its host access stays off other "
        "teams' nodes")]


@pytest.mark.parametrize("exception, path, words", [
    ({"namespace": "training-gpudirect", "level": "privileged", "reason": "x", "flavors": ["h300"]},
     "platform.teams[0].pod_security[0].flavors[0]", "'h300' is not a pool flavor of this platform"),
    ({"namespace": "training-gpudirect", "level": "restricted", "reason": "x", "flavors": ["h200-res"]},
     "platform.teams[0].pod_security[0]", "level 'restricted' needs none"),
])
def test_a_privileged_exception_names_its_flavors(exception, path, words):
    platform = platform_of("prod")
    platform["teams"][0]["pod_security"] = [exception]
    with pytest.raises(PlanError) as e:
        run_config(platform, "bad-exception")
    assert path in str(e.value) and words in str(e.value)


# --- tokens that outlive their owner ------------------------------------------------------------------

def test_a_team_cannot_mint_a_token_that_never_expires():
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
              "metadata": {"name": "forever", "namespace": "research",
                           "annotations": {"kubernetes.io/service-account.name": "research-workload"}}}
    assert verdict("prod", secret) == (
        "refused: research/forever: ValidatingAdmissionPolicy gke-ai-batch-no-service-account-tokens: a "
        "kubernetes.io/service-account-token Secret holds a token of the namespace's service account that never "
        "expires and outlives whoever made it; pods get short-lived projected tokens of their service account")
    opaque = {**secret, "type": "Opaque", "metadata": {"name": "creds", "namespace": "research"}}
    assert verdict("prod", opaque) == "created: research/creds (Secret)"


# --- elastic jobs -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("stack", STACKS)
def test_elastic_jobs_are_off_in_every_kueue(stack):
    """With ElasticJobsViaWorkloadSlices (beta, on since 0.18) Kueue leaves an unsuspended elastic Job running
    and lets an admitted one change its parallelism; off, the annotation makes an ordinary Job."""
    (release,) = [r.inputs for r in by_type(planned(stack), ":Release") if r.inputs["name"] == "kueue"]
    conf = yaml.safe_load(release["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert conf["featureGates"]["ElasticJobsViaWorkloadSlices"] is False


def test_an_elastic_job_is_judged_as_an_ordinary_job():
    elastic = job("research", "elastic", "research-queue", pods=2)
    elastic["metadata"]["annotations"] = {"kueue.x-k8s.io/elastic-job": "true"}
    assert verdict("dev", elastic) == verdict("dev", job("research", "elastic", "research-queue", pods=2))


# --- metrics -----------------------------------------------------------------------------------------

def test_every_query_selects_the_series_of_kueues_own_pod_monitoring():
    """A team's PodMonitoring publishes under its own namespace and name (GMP sets both and refuses relabeling
    onto them), so only Kueue's PodMonitoring in kueue-system yields the labels every query selects (each
    query's selectors: tests/test_observability.py)."""
    pm = monitoring.kueue_monitoring(next(iter(monitoring.ClusterMode))).pod_monitoring
    name, namespace = pm["metadata"]["name"], pm["metadata"]["namespace"]
    assert f'namespace="{namespace}",job="{name}"' in queries.kueue("ml-prod")


# --- ordinary jobs: requests without limits, limits without requests (issue 47) -------------------------

PREPROCESSING = [{"key": "workload-class", "value": "preprocessing", "effect": "NoSchedule"}]
V5P_4X4X4 = {"cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice", "cloud.google.com/gke-tpu-topology": "4x4x4"}


def resources(**blocks) -> list[dict]:
    return [{"name": "x", "image": "busybox", "resources": blocks}]


@pytest.mark.parametrize("stack, obj, line", [
    # the most common shape: cpu and memory requests, a limit only for the accelerator (the old LimitRange's
    # default cpu limit, 500m, was below the request, and its ratios wanted a cpu and memory limit on every container)
    ("prod", job("training", "tpu-requests", "training-queue", pods=16, nodeSelector=V5P_4X4X4,
                 labels={"kueue.x-k8s.io/max-exec-time-seconds": "86400"},
                 containers=resources(requests={"cpu": "8", "memory": "32Gi", TPU: 4}, limits={TPU: 4})),
     "admitted: training/tpu-requests -> ClusterQueue training, pod set main: flavor v5p-res"),
    ("prod", job("inference-eval", "gpu-requests", "inference-eval-queue",
                 nodeSelector={"cloud.google.com/gke-accelerator": "nvidia-l4"},
                 containers=resources(requests={"cpu": "4", "memory": "16Gi", GPU: 1}, limits={GPU: 1})),
     "admitted: inference-eval/gpu-requests -> ClusterQueue inference-eval, pod set main: flavor l4-spot-us-east5-a"),
    ("dev", job("training", "cpu-requests", "preprocessing", tolerations=PREPROCESSING,
                containers=resources(requests={"cpu": "4", "memory": "16Gi"})),
     "admitted: training/cpu-requests -> ClusterQueue cpu-batch, pod set main: flavor cpu-workers"),
    # limits only: the API server makes them the requests
    ("dev", job("training", "cpu-limits", "preprocessing", tolerations=PREPROCESSING,
                containers=resources(limits={"cpu": "4", "memory": "16Gi"})),
     "admitted: training/cpu-limits -> ClusterQueue cpu-batch, pod set main: flavor cpu-workers"),
])
def test_ordinary_jobs_are_admitted(stack, obj, line):
    assert verdict(stack, obj) == line


@pytest.mark.parametrize("workload, name", [("multislice", "default/multislice-job"),
                                            ("multislice-autopilot", "default/multislice-job"),
                                            ("hotswap", "default/high-jax-v6e"), ("hotswap", "default/low-jax-v6e")])
def test_the_source_pages_limits_only_jobsets_are_admitted(workload, name):
    """Pages 000 and 001 give each JobSet's container `limits: {google.com/tpu: 4}` and nothing else; the samples
    are those blocks again."""
    objs = [o for o in yaml.safe_load_all((ROOT / "examples" / "workloads" / f"{workload}.yaml").read_text()) if o]
    (obj,) = [o for o in objs if f"{o['metadata']['namespace']}/{o['metadata']['name']}" == name][:1]
    pod_spec = obj["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert [c["resources"] for c in pod_spec["containers"]] == [{"limits": {TPU: 4}}]
    assert verdict(workload, obj).startswith(f"admitted: {name} -> ")


def test_a_request_above_its_limit_is_the_api_servers_refusal():
    over = job("training", "over", "preprocessing", tolerations=PREPROCESSING,
               containers=resources(requests={"cpu": "4", "memory": "16Gi"}, limits={"cpu": "2"}))
    assert verdict("dev", over) == ('refused: training/over: API server: the pod template of over: '
                                    'spec.containers[0].resources.requests: Invalid value: "4": must be less than '
                                    'or equal to cpu limit of 2')


@pytest.mark.parametrize("blocks, words", [
    ({"requests": {TPU: 4}}, "spec.containers[0].resources.limits: Required value: Limit must be set for non "
                             "overcommitable resources"),
    ({"requests": {TPU: 2}, "limits": {TPU: 4}}, 'spec.containers[0].resources.requests: Invalid value: "2": must '
                                                 "be equal to google.com/tpu limit of 4"),
])
def test_an_accelerator_requested_without_its_equal_limit_is_the_api_servers_refusal(blocks, words):
    """Kubernetes validates an extended resource as one a node cannot overcommit: the limit must be named and equal
    the request (`ValidateContainerResourceRequirements`; the sandbox's kube-apiserver refused such a Job)."""
    obj = job("training", "tpu", "training-queue", pods=16, nodeSelector=V5P_4X4X4,
              labels={"kueue.x-k8s.io/max-exec-time-seconds": "86400"}, containers=resources(**blocks))
    assert verdict("prod", obj) == f"refused: training/tpu: API server: the pod template of tpu: {words}"


def test_dev_s_scratch_job_is_admitted_on_the_workers_local_ssds():
    """dev's cpu-workers give their two local SSDs to the pods as ephemeral storage; a ClusterQueue that did not
    cover ephemeral-storage made Kueue refuse every job asking for it ("resource ephemeral-storage unavailable in
    ClusterQueue")."""
    scratch = job("training", "scratch", "preprocessing", tolerations=PREPROCESSING,
                  containers=resources(requests={"cpu": "4", "memory": "16Gi", "ephemeral-storage": "100Gi"}))
    assert verdict("dev", scratch) == ("admitted: training/scratch -> ClusterQueue cpu-batch, pod set main: "
                                       "flavor cpu-workers")


def test_the_scratch_quota_follows_the_cpu_quota_on_the_pool():
    """2 local SSDs: 750 GiB less the filesystem's 13,725,224 KiB, less the kubelet's 10% nodefs eviction threshold,
    663.2 GiB a node; n2-standard-8 has 7.91 allocatable cores, so cpu-batch's 40 cores carry 3,353 GiB."""
    from gke_ai_batch.model.disks import scratch_bytes
    assert int(scratch_bytes(2) / 2**20) == 679136
    (queue,) = [r.inputs for r in by_type(planned("dev"), ":ClusterQueue")
                if r.inputs["metadata"]["name"] == "cpu-batch"]
    (group,) = queue["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "ephemeral-storage"]
    assert group["flavors"][0]["resources"][2] == {"name": "ephemeral-storage", "nominalQuota": "3353Gi"}
    flood = job("training", "scratch-flood", "preprocessing", pods=10, tolerations=PREPROCESSING,
                containers=resources(requests={"cpu": "1", "memory": "1Gi", "ephemeral-storage": "400Gi"}))
    assert "insufficient quota for ephemeral-storage in flavor cpu-workers" in verdict("dev", flood)


def test_a_queue_without_scratch_pools_does_not_cover_it():
    """Only local SSDs given to the pods are scratch a quota can promise: prod's pools have none."""
    for queue in by_type(planned("prod"), ":ClusterQueue"):
        for group in queue.inputs["spec"]["resourceGroups"]:
            assert "ephemeral-storage" not in group["coveredResources"], queue.inputs["metadata"]["name"]


def tenant_limit_ranges(stack: str, regs=None) -> list[dict]:
    return [r.inputs for r in by_type(regs or planned(stack), ":LimitRange")]


def test_the_limit_range_gives_default_requests_only():
    """A container naming nothing is charged the default requests; no default limit, no ratio."""
    (limits,) = [m for m in tenant_limit_ranges("prod") if m["metadata"]["namespace"] == "research"]
    assert limits["spec"]["limits"] == [{"type": "Container", "defaultRequest": {"cpu": "500m", "memory": "512Mi"}}]


def test_a_team_block_sets_its_default_requests():
    platform = platform_of("prod")
    platform["teams"][1]["container_limits"] = {"memory_request": "1Gi"}
    (limits,) = [m for m in tenant_limit_ranges("prod", run_config(platform, "limits"))
                 if m["metadata"]["namespace"] == "research"]
    assert limits["spec"]["limits"] == [{"type": "Container", "defaultRequest": {"cpu": "500m", "memory": "1Gi"}}]


@pytest.mark.parametrize("key", ["cpu_ratio", "memory_ratio"])
def test_a_stack_file_with_a_ratio_is_told_to_drop_it(key):
    """The keys are refused at their path, not ignored: a stack file that says memory_ratio 1 expects limits held to
    requests, which the platform no longer does."""
    platform = platform_of("prod")
    platform["teams"][1]["container_limits"] = {key: 1, "memory_request": "1Gi"}
    with pytest.raises(PlanError) as e:
        run_config(platform, "ratio")
    assert f"platform.teams[1].container_limits.{key}" in str(e.value)
    assert "a limit/request ratio is no longer set, so the key was removed" in str(e.value)
    assert "Drop the key" in str(e.value)


# --- after the first create ---------------------------------------------------------------------------

def prod_policies(ns: str) -> tuple[list, list, dict]:
    from gke_ai_batch.offline.views.render import is_manifest, manifest_of
    manifests = [manifest_of(r) for r in planned("prod") if is_manifest(r)]
    namespace = next(m for m in manifests if m["kind"] == "Namespace" and m["metadata"]["name"] == ns)
    return ([m for m in manifests if m["kind"] == "ValidatingAdmissionPolicy"],
            [m for m in manifests if m["kind"] == "ValidatingAdmissionPolicyBinding"], namespace)


def test_an_update_cannot_grow_a_job_past_the_size_cap_but_may_leave_an_old_one_as_it_is():
    """A suspended Job's template may be edited; growing it past the cap is refused. An object made before the cap
    (or before its team's cap was lowered) still takes an update that does not grow it: a finalizer removed."""
    from gke_ai_batch.apiserver.cel_policies import evaluate
    policies, bindings, namespace = prod_policies("research")
    small = job("research", "j", "research-queue")
    grown = job("research", "j", "research-queue", containers=[container(args=["x" * 20000])])
    [denial] = evaluate(policies, bindings, grown, namespace, "UPDATE", old_object=small)
    assert denial.policy == "gke-ai-batch-object-size" and denial.message.startswith("the object holds 20168 bytes")
    finalized = {**grown, "metadata": {**grown["metadata"], "finalizers": ["example.com/cleanup"]}}
    assert evaluate(policies, bindings, grown, namespace, "UPDATE", old_object=finalized) == []


def test_a_pod_may_carry_what_its_controllers_add_to_a_template_under_the_cap():
    """Job, JobSet and Kueue label and annotate the pods they make: a pod has 4 KiB more than its template."""
    from gke_ai_batch.apiserver.cel_policies import evaluate
    policies, bindings, namespace = prod_policies("research")
    labels = {"kueue.x-k8s.io/queue-name": "research-queue"}
    base = 111  # the pod's other keys and strings (the label's 39, spec, containers, ...), one per value
    fits = pod("research", "p", labels=labels, containers=[container(args=["x" * (16384 + 4096 - base)])])
    assert evaluate(policies, bindings, fits, namespace, "CREATE") == []
    over = pod("research", "p", labels=labels, containers=[container(args=["x" * (16384 + 4096 - base + 1)])])
    [denial] = evaluate(policies, bindings, over, namespace, "CREATE")
    assert denial.message.startswith("the object holds 20481 bytes") and "allows 20480 per object" in denial.message


def test_a_privileged_pod_cannot_be_moved_to_another_flavor_by_update():
    from gke_ai_batch.apiserver.cel_policies import evaluate
    policies, bindings, namespace = prod_policies("training-gpudirect")
    on_h200 = host_pod({"gke-ai-batch.io/flavor": "h200-res"})
    moved = host_pod({"gke-ai-batch.io/flavor": "v5p-res"})
    [denial] = evaluate(policies, bindings, moved, namespace, "UPDATE", old_object=on_h200)
    assert denial.policy == "gke-ai-batch-privileged-flavors"
    older = host_pod({})  # made before the exception named its flavors: Kueue may still remove its finalizer
    assert evaluate(policies, bindings, older, namespace, "UPDATE", old_object=older) == []


KUEUE_SA = {"username": "system:serviceaccount:kueue-system:kueue-controller-manager",
            "groups": ["system:serviceaccounts", "system:serviceaccounts:kueue-system", "system:authenticated"]}
PROVISIONING = {"autoscaling.x-k8s.io/consume-provisioning-request": "nearcap-main-1",
                "autoscaling.x-k8s.io/provisioning-class-name": "queued-provisioning.gke.io"}


def test_kueue_can_start_a_job_near_the_size_cap_but_a_member_cannot_grow_it():
    """Issue 36 review (n_old.yaml -> n_new.yaml): Kueue's start update merges a ProvisioningRequest's annotations
    into the template of a job just under the cap; judged by the cap, Kueue could never start it. Updates by
    another namespace's service account are not judged; a member's, and the namespace's own service accounts',
    still are."""
    from gke_ai_batch.apiserver.cel_policies import evaluate
    policies, bindings, namespace = prod_policies("research")
    # 16348 bytes with what the API server adds (apiserver.job_defaults)
    near = job("research", "nearcap", "research-queue", containers=[container(args=["x" * 15586])])
    near["spec"]["suspend"] = True  # as Kueue's job webhook leaves it; a running Job's template is immutable
    started = yaml.safe_load(yaml.safe_dump(near))
    started["spec"]["template"]["metadata"] = {"annotations": PROVISIONING}
    held, grown = as_validated(near, created=False), as_validated(started, created=False)  # as the server holds them
    assert evaluate(policies, bindings, grown, namespace, "UPDATE", KUEUE_SA, held) == []
    own_sa = {"username": "system:serviceaccount:research:default",
              "groups": ["system:serviceaccounts", "system:serviceaccounts:research", "system:authenticated"]}
    [denial] = evaluate(policies, bindings, grown, namespace, "UPDATE", own_sa, held)
    assert denial.policy == "gke-ai-batch-object-size"
    assert verdict_of_update(started, near) == (
        "refused: research/nearcap: ValidatingAdmissionPolicy gke-ai-batch-object-size: the object holds 16495 bytes "
        "of text (every key and string of its spec, labels, annotations, finalizers and owner references, and one "
        "per value); namespace research allows 16384 per object "
        "(teams[].object_quotas.object_size): Kueue keeps every workload in memory; put large data in a bucket or a "
        "ConfigMap volume")


def verdict_of_update(new: dict, old: dict) -> str:
    from gke_ai_batch.offline.admit import describe

    from .test_escape import tenant_path
    return describe(tenant_path("prod").judge(new, old))


def test_every_kind_the_team_role_creates_is_counted():
    """The attack above, for any kind: what a member may create in numbers must be in the namespace's quota (the
    specialized names `pods`, `persistentvolumeclaims` count those kinds, Kubernetes "Resource Quotas")."""
    from gke_ai_batch.plan.tenancy import TEAM_RULES
    hard = quota_of("prod", "research")
    created = {f"{r}.{rule['apiGroups'][0]}".rstrip(".") for rule in TEAM_RULES if "create" in rule["verbs"]
               for r in rule["resources"] if "/" not in r}
    assert {k for k in created if f"count/{k}" not in hard and k not in hard} == set()


def test_a_stack_with_teams_cannot_stop_kueue_managing_jobs_without_a_queue():
    """Attack (operator, day two): `kueue.manage_jobs_without_queue_name: false` in the next `pulumi up`. Kueue then
    leaves a job without a queue-name label alone ("those jobs are not managed and if they are created
    unsuspended, they will start immediately", kueue v0.19.2 apis/config/v1beta2/configuration_types.go), so a
    member's TPU Job without the label runs on the v5p nodes charged to no quota; `make admit` called it
    refused."""
    platform = platform_of("prod")
    platform["kueue"]["manage_jobs_without_queue_name"] = False
    with pytest.raises(PlanError) as e:
        run_config(platform, "unmanaged")
    assert "platform.kueue.manage_jobs_without_queue_name" in str(e.value)
    assert ("false: Kueue would leave a job or pod that names no queue unmanaged, and it would start at once, "
            "outside every quota, in the namespaces of teams inference-eval, research, training; only true is allowed "
            "where teams are declared") in str(e.value)


# --- deletes that leave pods behind (issue 47, item 2) ----------------------------------------------------------

def tpu_job(name: str = "train", **meta) -> dict:
    obj = job("research", name, "research-queue", 4, nodeSelector=V5P, containers=[container({TPU: "4"})])
    obj["metadata"].update(meta)
    return obj


def tpu_jobset(name: str = "sweep", **meta) -> dict:
    spec = {"restartPolicy": "Never", "nodeSelector": V5P, "containers": [container({TPU: "4"})]}
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": name, "namespace": "research", "labels": {"kueue.x-k8s.io/queue-name":
                                                                           "research-queue"}, **meta},
            "spec": {"replicatedJobs": [{"name": "workers", "replicas": 1, "template": {"spec": {
                "parallelism": 4, "completions": 4, "template": {"spec": spec}}}}]}}


def deletion(obj: dict, options: dict | None = None) -> str:
    from .test_escape import tenant_path
    return describe(tenant_path("prod").judge_delete(obj, options))


NO_ORPHANS = "refused: research/{}: ValidatingAdmissionPolicy gke-ai-batch-no-orphans: deleting a {} {} "
LEFT = ("would leave its pods running after Kueue releases its quota: delete with propagationPolicy Background "
        "(kubectl delete sends it) or Foreground")


@pytest.mark.parametrize("obj, options, how", [
    (tpu_job(), {"propagationPolicy": "Orphan"}, "with propagationPolicy: Orphan"),
    (tpu_job(), {"orphanDependents": True}, "with orphanDependents: true"),
    (tpu_job(), {}, "without a propagationPolicy (batch/v1 Jobs orphan by default)"),
    (tpu_jobset(), {"propagationPolicy": "Orphan"}, "with propagationPolicy: Orphan"),
    (tpu_jobset(), {"orphanDependents": True}, "with orphanDependents: true"),
    (tpu_jobset(finalizers=["orphan"]), {}, "without a propagationPolicy while it carries the orphan finalizer"),
], ids=["job-orphan", "job-orphan-dependents", "job-no-policy", "jobset-orphan", "jobset-orphan-dependents",
        "jobset-orphan-finalizer"])
def test_a_member_cannot_delete_a_job_and_leave_its_pods_running(obj, options, how):
    """Attack (issue 47): the team role deletes Jobs. Orphaned, the pods keep the v5p nodes while Kueue finishes the
    Workload whose owner is gone (FinishOrphanedWorkloads) and frees the quota; a Job's pods carry no `managed`
    label, so nothing meters them again. `make admit` had no delete at all."""
    assert deletion(obj, options) == NO_ORPHANS.format(obj["metadata"]["name"], obj["kind"], how) + LEFT


@pytest.mark.parametrize("obj, options, line", [
    (tpu_job(), None, "deleted: research/train (Job): Background: it is removed, and the garbage collector deletes "
                      "its pods and its Workload; Kueue releases the Workload's quota"),
    (tpu_job(), {"propagationPolicy": "Foreground"},
     "deleted: research/train (Job): Foreground: it is removed once the garbage collector has deleted its pods and "
     "its Workload; Kueue releases the Workload's quota"),
    (tpu_job(), {"orphanDependents": False}, "deleted: research/train (Job): Background: it is removed, and the "
                                             "garbage collector deletes its pods and its Workload; Kueue releases "
                                             "the Workload's quota"),
    (tpu_jobset(), {}, "deleted: research/sweep (JobSet): Background: it is removed, and the garbage collector "
                       "deletes its Jobs and their pods and its Workload; Kueue releases the Workload's quota"),
    (tpu_jobset(), {"propagationPolicy": "Foreground"},
     "deleted: research/sweep (JobSet): Foreground: it is removed once the garbage collector has deleted its Jobs "
     "and their pods and its Workload; Kueue releases the Workload's quota"),
    ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "research"}},
     {"propagationPolicy": "Orphan"}, "deleted: research/settings (ConfigMap)"),
], ids=["job-kubectl", "job-foreground", "job-no-orphans", "jobset-no-policy", "jobset-foreground", "configmap"])
def test_a_delete_that_takes_the_pods_along_passes(obj, options, line):
    """kubectl delete sends Background (k8s.io/kubectl v0.33.13 delete_flags.go); a JobSet, a custom resource, has
    no default policy of its own and is deleted in the background (apiserver store.go `shouldOrphanDependents`)."""
    assert deletion(obj, options) == line


def test_a_member_cannot_add_the_orphan_finalizer():
    """Attack (issue 47): the `orphan` finalizer, added by update, makes a later DELETE without a policy orphan the
    pods; `make admit` called that update "left running"."""
    line = ("refused: research/{}: ValidatingAdmissionPolicy gke-ai-batch-no-orphans: the orphan finalizer "
            "makes a delete without a propagationPolicy leave the job's pods running after Kueue releases its quota: "
            "the API server sets it itself, on a delete that asks to orphan")
    for make in (tpu_job, tpu_jobset):
        old = make()
        assert verdict_of_update(make(finalizers=["orphan"]), old) == line.format(old["metadata"]["name"])
    assert verdict("prod", tpu_job(finalizers=["orphan"])) == line.format("train")


def test_the_controllers_still_delete_as_they_ask():
    """The policy names the team's groups: Kueue, the garbage collector and the workload controllers are in none."""
    from .test_escape import tenant_path
    path = tenant_path("prod")
    kueue = {"username": "system:serviceaccount:kueue-system:kueue-controller-manager",
             "groups": ["system:serviceaccounts", "system:serviceaccounts:kueue-system", "system:authenticated"]}
    assert evaluate(path.policies, path.bindings, None, path.namespaces["research"], "DELETE", kueue, tpu_job(),
                    options={"propagationPolicy": "Orphan"}) == []


@pytest.mark.parametrize("obj, line", [
    ({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
      "metadata": {"name": "research-queue", "namespace": "research"}},
     "refused: research/research-queue: RBAC: team research may not delete localqueues.kueue.x-k8s.io in namespace "
     "research"),
    ({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
      "metadata": {"name": "gke-ai-batch-isolation", "namespace": "research"}},
     "refused: research/gke-ai-batch-isolation: RBAC: team research may not delete "
     "networkpolicies.networking.k8s.io in namespace research"),
    ({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
      "metadata": {"name": "job-train-1a2b3", "namespace": "research"}},
     "refused: research/job-train-1a2b3: RBAC: team research may not delete workloads.kueue.x-k8s.io in namespace "
     "research"),
], ids=["local-queue", "network-policy", "workload"])
def test_rbac_refuses_a_delete_the_team_may_not_do(obj, line):
    assert deletion(obj) == line


DELETE_GRACE = ("refused: research/{}: ValidatingAdmissionPolicy gke-ai-batch-delete-grace: namespace "
                "research gives a pod at most 600 s to stop (teams[].max_termination_grace): a pod deleted with a "
                "longer grace period keeps its node all that time, while its Job counts it gone and makes another, "
                "which Kueue's quota holds instead; delete with --grace-period=600 or less, not {}")


def running_pod(name: str = "worker-0", **spec) -> dict:
    """A pod of a research Job, as it is on the cluster: on a node."""
    return pod("research", name, nodeName="gke-prod-v5p-node-1", containers=[container({TPU: "4"})], **spec)


def test_a_member_cannot_delete_a_pod_with_a_30_day_grace_period():
    """Attack (issue 47): `kubectl delete pod --grace-period=2592000` overrides the pod spec's bounded grace (the
    pod strategy's CheckGracefulDelete); the Job counts the terminating pod gone and makes another, which Kueue's
    quota holds, while the first keeps its v5p node for 30 days."""
    assert deletion(running_pod(), {"propagationPolicy": "Background", "gracePeriodSeconds": 2592000}) == (
        DELETE_GRACE.format("worker-0", 2592000))


@pytest.mark.parametrize("obj, options, line", [
    (running_pod(), None, "deleted: research/worker-0 (Pod): it has 30 s to stop, then is removed"),
    (running_pod(), {"gracePeriodSeconds": 600}, "deleted: research/worker-0 (Pod): it has 600 s to stop, then is "
                                                 "removed"),
    (running_pod(terminationGracePeriodSeconds=3600), {"gracePeriodSeconds": 3600},
     "deleted: research/worker-0 (Pod): it has 3600 s to stop, then is removed"),
    (running_pod(terminationGracePeriodSeconds=3600), {}, "deleted: research/worker-0 (Pod): it has 3600 s to stop, "
                                                          "then is removed"),
    (pod("research", "pending"), {"gracePeriodSeconds": 2592000}, "deleted: research/pending (Pod): it is on no node "
                                                                  "or has finished: the API server removes it at "
                                                                  "once (grace period 0)"),
    (tpu_job(), {"propagationPolicy": "Background", "gracePeriodSeconds": 2592000},
     "deleted: research/train (Job): Background: it is removed, and the garbage collector deletes its pods and its "
     "Workload; Kueue releases the Workload's quota"),
], ids=["kubectl", "at-the-bound", "made-before-the-bound", "own-grace-before-the-bound", "unscheduled", "job"])
def test_a_delete_within_the_bound_or_the_pods_own_grace_passes(obj, options, line):
    """A pod made before the bound was lowered keeps what it was given (the API server fills a DELETE's grace period
    from the pod spec before admission); an unscheduled pod is removed at once whatever is asked; a Job is not
    deleted gracefully, and the garbage collector deletes its pods with no grace period of the Job's."""
    assert deletion(obj, options) == line


def test_the_controllers_still_delete_pods_with_any_grace():
    from .test_escape import tenant_path
    path = tenant_path("prod")
    kubelet = {"username": "system:node:gke-prod-v5p-node-1", "groups": ["system:nodes", "system:authenticated"]}
    assert evaluate(path.policies, path.bindings, None, path.namespaces["research"], "DELETE", kubelet,
                    running_pod(), options={"gracePeriodSeconds": 2592000}) == []


# --- make admit DELETE= [PROPAGATION=] ------------------------------------------------------------------------------

def admit_cli(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_module("gke_ai_batch.offline.admit", "prod", *args)


def test_make_admit_judges_the_deletes_first_then_the_creates_in_file_order(tmp_path):
    """DELETE= with WORKLOAD=: the deletes first, in file order; exit 1 as something is refused."""
    (tmp_path / "deletes.yaml").write_text(yaml.safe_dump_all([tpu_jobset(), tpu_job()]))
    (tmp_path / "creates.yaml").write_text(yaml.safe_dump_all([service("web", "ClusterIP")]))
    r = admit_cli(tmp_path, str(tmp_path / "creates.yaml"), "--delete", str(tmp_path / "deletes.yaml"),
                  "--propagation", "none")
    assert (r.returncode, r.stderr) == (1, "")
    assert r.stdout.splitlines() == [
        "deleted: research/sweep (JobSet): Background: it is removed, and the garbage collector deletes its Jobs and "
        "their pods and its Workload; Kueue releases the Workload's quota",
        NO_ORPHANS.format("train", "Job", "without a propagationPolicy (batch/v1 Jobs orphan by default)") + LEFT,
        "created: research/web (Service)"]


def test_make_admit_grace_is_the_deletes_grace_period(tmp_path):
    """GRACE= is kubectl delete's --grace-period, sent with every delete of the file."""
    (tmp_path / "deletes.yaml").write_text(yaml.safe_dump_all([running_pod(), tpu_job()]))
    r = admit_cli(tmp_path, "--delete", str(tmp_path / "deletes.yaml"), "--grace-period", "2592000")
    assert (r.returncode, r.stderr) == (1, "")
    assert r.stdout.splitlines() == [
        DELETE_GRACE.format("worker-0", 2592000),
        "deleted: research/train (Job): Background: it is removed, and the garbage collector deletes its pods and its "
        "Workload; Kueue releases the Workload's quota"]


@pytest.mark.parametrize("args, error", [
    (["--delete", "{dir}/missing.yaml"], "error: DELETE={dir}/missing.yaml: No such file or directory"),
    (["--delete", "{dir}/deletes.yaml", "--propagation", "orphan"],
     "error: PROPAGATION=orphan: not a way to delete; give Orphan, Background or Foreground (propagationPolicy; "
     "Background is what kubectl delete sends, and the default here), none (no policy: the kind's default, as a "
     "DELETE without options), or orphanDependents (the deprecated orphanDependents: true)"),
    (["{dir}/deletes.yaml", "--propagation", "Orphan"],
     "error: PROPAGATION=Orphan says how deletes propagate, and no DELETE file is given: add DELETE=<file>"),
    (["--delete", "{dir}/deletes.yaml", "--grace-period", "30d"],
     "error: GRACE=30d: not a grace period; give whole seconds, 0 or more (gracePeriodSeconds, as kubectl delete "
     "--grace-period sends it)"),
    (["{dir}/deletes.yaml", "--grace-period", "60"],
     "error: GRACE=60 says how long a deleted pod has to stop, and no DELETE file is given: add DELETE=<file>"),
], ids=["missing-file", "unknown-propagation", "propagation-without-delete", "grace-not-seconds",
        "grace-without-delete"])
def test_bad_delete_arguments_are_one_error_and_nothing_judged(tmp_path, args, error):
    (tmp_path / "deletes.yaml").write_text(yaml.safe_dump(tpu_job()))
    r = admit_cli(tmp_path, *(a.format(dir=tmp_path) for a in args))
    assert (r.returncode, r.stdout, r.stderr.strip()) == (2, "", error.format(dir=tmp_path))


def test_make_admit_with_delete_alone_judges_no_sample_workload():
    """WORKLOAD defaults to every sample: with DELETE= and no WORKLOAD=, only the deletes are judged."""
    made = subprocess.run(["make", "-n", "admit", "STACK=prod", "DELETE=d.yaml", "PROPAGATION=Orphan", "GRACE=60"],
                          cwd=ROOT, capture_output=True, text=True, check=True).stdout
    (command,) = [line for line in made.replace("\\\n", " ").splitlines() if "offline.admit" in line]
    assert command.split()[1:] == ["-m", "gke_ai_batch.offline.admit", "prod", "--delete", "d.yaml", "--propagation",
                                   "Orphan", "--grace-period", "60"]


# --- issue 47: grace that outlives the stop, affinity across namespaces, scrapes and volumes ------------------

def training_slice_job(name: str, **pod_spec) -> dict:
    """prod's ordinary training job (a v5p 4x4x4 slice), admitted as it stands."""
    return job("training", name, "training-queue", pods=16, nodeSelector=V5P_4X4X4,
               labels={"kueue.x-k8s.io/max-exec-time-seconds": "86400"},
               containers=resources(requests={"cpu": "8", "memory": "32Gi", TPU: 4}, limits={TPU: 4}), **pod_spec)


def slice_jobset(name: str, **pod_spec) -> dict:
    j = training_slice_job(name, **pod_spec)
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": j["metadata"],
            "spec": {"replicatedJobs": [{"name": "slice", "replicas": 1, "template": {"spec": j["spec"]}}]}}


def of_kind(kind: str, name: str, **pod_spec) -> dict:
    """A Pod, or a template that makes pods, in research (prod; no time limit there)."""
    if kind == "Pod":
        return pod("research", name, "research-queue", **pod_spec)
    template = job("research", name, "research-queue", **pod_spec)
    if kind == "Job":
        return template
    if kind == "CronJob":
        job_template = {"metadata": {"labels": template["metadata"]["labels"]}, "spec": template["spec"]}
        return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": "research"},
                "spec": {"schedule": "0 3 * * *", "jobTemplate": job_template}}
    if kind == "JobSet":
        return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": template["metadata"],
                "spec": {"replicatedJobs": [{"name": "r", "replicas": 1, "template": {"spec": template["spec"]}}]}}
    labels = {"app": name}
    spec = {**template["spec"]["template"], "metadata": {"labels": labels}}
    spec["spec"] = {k: v for k, v in spec["spec"].items() if k != "restartPolicy"}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": template["metadata"],
            "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": spec}}


POD_MAKERS = ["Pod", "Job", "JobSet", "CronJob", "Deployment", "StatefulSet"]
GRACE = ("ValidatingAdmissionPolicy gke-ai-batch-termination-grace: namespace research gives a pod at most {} s to "
         "stop (teams[].max_termination_grace): Kueue frees a stopped job's quota as soon as its pods are "
         "terminating, so the grace period is time on the nodes charged to no queue; set "
         "terminationGracePeriodSeconds to {} or less, not {}")


@pytest.mark.parametrize("kind", POD_MAKERS)
def test_a_pod_cannot_keep_its_nodes_for_30_days_after_kueue_stops_it(kind):
    """Issue 47: Kueue releases a stopped job's quota once `status.active` is 0, and the Job controller leaves
    terminating pods out of it; a pod that ignores SIGTERM with a 30-day grace period kept the chips for 30 days
    after a reclaim, a preemption or a max_runtime stop."""
    obj = of_kind(kind, "sigterm", terminationGracePeriodSeconds=2592000)
    assert verdict("prod", obj) == "refused: research/sigterm: " + GRACE.format(600, 600, 2592000)


def test_a_600s_checkpoint_jobset_is_admitted():
    assert verdict("prod", slice_jobset("checkpoint", terminationGracePeriodSeconds=600)) == (
        "admitted: training/checkpoint -> ClusterQueue training, pod set slice: flavor v5p-res")


def test_a_team_block_sets_its_grace_bound():
    platform = platform_of("prod")
    assert platform["teams"][0]["name"] == "training"
    platform["teams"][0]["max_termination_grace"] = "1h"
    regs = run_config(platform, "grace")
    (ns,) = [r.inputs for r in by_type(regs, ":Namespace") if r.inputs["metadata"]["name"] == "training"]
    assert ns["metadata"]["annotations"]["gke-ai-batch.io/termination-grace"] == "3600"
    path = TenantPath((manifest_of(r) for r in regs if is_manifest(r)), cluster_of(regs))
    assert describe(path.judge(slice_jobset("hour", terminationGracePeriodSeconds=3600))) == (
        "admitted: training/hour -> ClusterQueue training, pod set slice: flavor v5p-res")
    assert describe(path.judge(slice_jobset("two", terminationGracePeriodSeconds=7200))) == (
        "refused: training/two: " + GRACE.format(3600, 3600, 7200).replace("namespace research", "namespace training"))


def test_a_grace_bound_below_the_api_servers_default_is_refused():
    platform = platform_of("prod")
    platform["teams"][1]["max_termination_grace"] = "10s"
    with pytest.raises(PlanError) as e:
        run_config(platform, "grace")
    assert "platform.teams[1].max_termination_grace" in str(e.value)
    assert ("'10s': at least 30s: the API server gives every pod that names no terminationGracePeriodSeconds 30 s, "
            "so a shorter bound would refuse them all") in str(e.value)


def test_a_deployment_made_before_the_bound_may_be_relabelled_but_not_given_more_grace():
    old = of_kind("Deployment", "serve", terminationGracePeriodSeconds=3600)
    relabelled = copy.deepcopy(old)
    relabelled["metadata"]["labels"]["note"] = "x"
    assert not verdict_of_update(relabelled, old).startswith("refused")
    longer = copy.deepcopy(old)
    longer["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 7200
    assert verdict_of_update(longer, old) == "refused: research/serve: " + GRACE.format(600, 600, 7200)


AFFINITY = ("refused: research/{}: ValidatingAdmissionPolicy gke-ai-batch-affinity-namespaces: pod affinity and "
            "anti-affinity terms select pods of their own namespace only: the scheduler keeps an incoming pod off "
            "every node of a topology domain (a host, a zone, a region) where an existing pod has a required "
            "anti-affinity term selecting it, so a term reaching other namespaces would keep other teams' pods out; "
            "drop {}")
ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"


def term(key: str, **reach) -> dict:
    return {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}, "topologyKey": key,
            **reach}


def required(kind: str, *terms: dict) -> dict:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def preferred(kind: str, *terms: dict) -> dict:
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": t}
                                                                       for t in terms]}}


@pytest.mark.parametrize("kind", POD_MAKERS)
def test_anti_affinity_zone_block_is_refused(kind):
    """The first review's `anti-affinity-zone-block`: one pod with a required anti-affinity on the zone key and
    `namespaceSelector: {}` keeps every other team's pod with an `app` label out of its zone (the scheduler's
    InterPodAffinity filter checks incoming pods against existing pods' required anti-affinity terms)."""
    block = of_kind(kind, "anti-affinity-zone-block",
                    affinity=required("podAntiAffinity", term(ZONE, namespaceSelector={})))
    assert verdict("prod", block) == AFFINITY.format("anti-affinity-zone-block", "namespaceSelector")


@pytest.mark.parametrize("affinity, reach", [
    (required("podAntiAffinity", term(ZONE, namespaces=["research", "training"])), "namespaces research, training"),
    (preferred("podAntiAffinity", term(HOST, namespaceSelector={"matchLabels": {"team": "training"}})),
     "namespaceSelector"),
    (required("podAffinity", term(HOST, namespaces=["training"])), "namespaces training"),
    (preferred("podAffinity", term(ZONE, namespaceSelector={})), "namespaceSelector"),
])
def test_no_affinity_term_reaches_another_namespace(affinity, reach):
    assert verdict("prod", of_kind("Job", "reach", affinity=affinity)) == AFFINITY.format("reach", reach)


@pytest.mark.parametrize("affinity", [
    preferred("podAntiAffinity", term(HOST)),  # spread a team's own pods over hosts
    required("podAntiAffinity", term(ZONE)),  # wider than the host, own namespace: allowed (below)
    required("podAffinity", term(ZONE, namespaces=["training"])),  # its own namespace by name
])
def test_affinity_within_the_namespace_is_admitted(affinity):
    """A required anti-affinity on a key wider than the host (zone, region) within the team's own namespace is not
    refused: a term with neither `namespaces` nor `namespaceSelector` gets its own pod's namespace (kubernetes
    v1.33.13 pkg/scheduler/framework/types.go `getNamespacesFromPodAffinityTerm`), and matches an incoming pod only
    in that namespace (`AffinityTerm.Matches`), so it keeps out only the team's own pods: its choice about its own
    work."""
    assert verdict("prod", training_slice_job("spread", affinity=affinity)) == (
        "admitted: training/spread -> ClusterQueue training, pod set main: flavor v5p-res")


VOLUMES = ("refused: research/{}: ValidatingAdmissionPolicy gke-ai-batch-volume-types: team pods mount configMap, "
           "downwardAPI, emptyDir, ephemeral, image, persistentVolumeClaim, projected, secret volumes (Pod Security "
           "restricted's types), csi only of the gcsfuse.csi.storage.gke.io driver (Cloud Storage FUSE): the kubelet "
           "mounts nfs, iscsi, cephfs, glusterfs, rbd and the other network volumes from the node's own network, "
           "outside the namespace's NetworkPolicy; not volume {}")


@pytest.mark.parametrize("kind", POD_MAKERS)
@pytest.mark.parametrize("source", [
    {"nfs": {"server": "10.0.0.2", "path": "/exports"}},
    {"iscsi": {"targetPortal": "10.0.0.3:3260", "iqn": "iqn.2001-04.com.example:disk", "lun": 0}},
    {"cephfs": {"monitors": ["10.0.0.4:6789"]}},
    {"glusterfs": {"endpoints": "gluster", "path": "vol"}},
    {"rbd": {"monitors": ["10.0.0.5:6789"], "image": "disk"}},
    {"csi": {"driver": "nfs.csi.k8s.io", "volumeAttributes": {"server": "10.0.0.2", "share": "/"}}},
], ids=["nfs", "iscsi", "cephfs", "glusterfs", "rbd", "other-csi"])
def test_network_volumes_are_refused(kind, source):
    """Issue 47: Pod Security baseline forbids only hostPath; the kubelet mounts these from the node's network."""
    obj = of_kind(kind, "mount", volumes=[{"name": "share", **source}])
    assert verdict("prod", obj) == VOLUMES.format("mount", "share")


def test_gcs_fuse_and_the_restricted_volume_types_are_admitted():
    volumes = [{"name": "data", "csi": {"driver": "gcsfuse.csi.storage.gke.io", "readOnly": True,
                                        "volumeAttributes": {"bucketName": "datasets"}}},
               {"name": "scratch", "emptyDir": {}}, {"name": "conf", "configMap": {"name": "c"}},
               {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}]
    assert verdict("prod", slice_jobset("fuse", volumes=volumes)) == (
        "admitted: training/fuse -> ClusterQueue training, pod set slice: flavor v5p-res")


ROUTES = ("refused: research/{}: ValidatingAdmissionPolicy gke-ai-batch-scrape-routes: a PodMonitoring has the "
          "managed collector scrape its namespace's pods directly: an endpoint's proxyUrl would send the collector's "
          "requests through any address, and oauth2 would have it post to any token URL; drop {}")


@pytest.mark.parametrize("endpoint, routed", [
    ({"proxyUrl": "http://10.20.0.7:3128"}, "proxyUrl http://10.20.0.7:3128"),
    ({"oauth2": {"clientID": "c", "tokenURL": "https://collector-tokens.example/token"}},
     "oauth2 (tokenURL https://collector-tokens.example/token)"),
])
def test_a_pod_monitoring_cannot_route_the_collector_elsewhere(endpoint, routed):
    monitoring = pod_monitoring("proxy")
    monitoring["spec"]["endpoints"][0].update(endpoint)
    assert verdict("prod", monitoring) == ROUTES.format("proxy", routed)


def test_a_pod_monitoring_may_authenticate_to_its_own_pods():
    """authorization, basicAuth and tls read Secrets of the PodMonitoring's own namespace (prometheus-engine v0.17.2
    refuses any other) and go to the pods it selects, which are its namespace's."""
    monitoring = pod_monitoring("tls")
    monitoring["spec"]["endpoints"][0].update(scheme="https", tls={"serverName": "metrics", "ca": {
        "secret": {"name": "ca", "key": "ca.crt"}}}, authorization={"credentials": {
            "secret": {"name": "token", "key": "token"}}})
    assert verdict("prod", monitoring) == "created: research/tls (PodMonitoring)"


def test_only_the_collector_pods_reach_team_pods():
    """The collector scrapes what its namespace's PodMonitorings name, after the plan, so no port list is known;
    the allowance is the collector's pods (prometheus-engine v0.17.2 manifests/operator.yaml: the DaemonSet's
    selector label), not every pod of the GMP namespace."""
    policies = [r.inputs for r in by_type(planned("prod"), ":NetworkPolicy")
                if r.inputs["metadata"]["namespace"] == "research"]
    (policy,) = policies
    assert policy["spec"]["ingress"][1] == {"from": [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
         "podSelector": {"matchLabels": {"app.kubernetes.io/name": "collector"}}}
        for ns in ("gke-gmp-system", "gmp-system")]}
