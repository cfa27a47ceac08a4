"""`make admit` agrees with Kueue v0.19.2's webhooks where it used not to (issue 36): elastic jobs with a
topology and elastic JobSets are refused in the webhooks' words, a plain Pod's own TAS annotation is read, a
pod's owner chain is followed as the pod webhook follows it, and a Deployment or StatefulSet is reported as
created, with its pods' verdict."""
from __future__ import annotations

import copy
import dataclasses

import pytest
import yaml

from gke_ai_batch.admission.owners import managed_ancestor
from gke_ai_batch.apiserver.tenant_path import TenantPath
from gke_ai_batch.offline.admit import describe

from .conftest import ROOT
from .test_escape import container, job, tenant_path

ELASTIC = {"kueue.x-k8s.io/elastic-job": "true"}
FRAMEWORKS = ["batch/job", "jobset.x-k8s.io/jobset", "pod", "deployment", "statefulset"]


def judged(stack: str, obj: dict) -> str:
    return describe(tenant_path(stack).judge(obj))


def with_elastic_jobs(stack: str) -> TenantPath:
    """The stack as Kueue would run it with ElasticJobsViaWorkloadSlices at its default (on): every stack turns it
    off (plan.kueue_configuration), so Kueue's elastic rules are tried on a copy whose Configuration has no gate."""
    path = copy.copy(tenant_path(stack))
    config = dict(path.cluster.config)
    config.pop("featureGates", None)
    path.cluster = dataclasses.replace(path.cluster, config=config)
    return path


def judged_elastic(stack: str, obj: dict, old: dict | None = None) -> str:
    return describe(with_elastic_jobs(stack).judge(obj, old))


def kueue_alone(path: TenantPath) -> TenantPath:
    """The path without the kueue-holds policy, which refuse a member growing a running Job before Kueue
    sees it: what Kueue itself does with such a change (as it would with one that policy does not judge)."""
    alone = copy.copy(path)
    alone.policies = [p for p in path.policies if p["metadata"]["name"] != "gke-ai-batch-kueue-holds"]
    return alone


# pkg/controller/jobs/job/job_webhook.go `validateTopologyRequest`, v0.19.2:
#   field.Forbidden(replicaMetaPath.Child("annotations", kueue.PodSetRequiredTopologyAnnotation),
#       "required topology is not supported with elastic jobs")
@pytest.mark.parametrize("mode", ["required", "preferred"])
def test_an_elastic_job_with_a_topology_is_refused_by_kueues_job_webhook(mode):
    elastic = job("training", "shards", "preprocessing", containers=[container()])
    elastic["metadata"]["annotations"] = dict(ELASTIC)
    key = f"kueue.x-k8s.io/podset-{mode}-topology"
    elastic["spec"]["template"]["metadata"] = {"annotations": {key: "kubernetes.io/hostname"}}
    assert judged_elastic("dev", elastic) == (
        f"refused: training/shards: Kueue webhook: spec.template.metadata.annotations[{key}]: Forbidden: {mode} "
        "topology is not supported with elastic jobs")


# pkg/controller/jobframework/validation.go `ValidateElasticJobAnnotation`, v0.19.2:
#   field.Forbidden(elasticJobAnnotationPath, fmt.Sprintf("elastic job is not supported for %q", gvk))
def elastic_jobset() -> dict:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "js", "namespace": "training", "annotations": dict(ELASTIC),
                         "labels": {"kueue.x-k8s.io/queue-name": "preprocessing"}},
            "spec": {"replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": {
                "parallelism": 1, "completions": 1, "template": {"spec": {
                    "restartPolicy": "Never", "containers": [container()]}}}}}]}}


def test_an_elastic_jobset_is_refused_by_kueues_webhook():
    assert judged_elastic("dev", elastic_jobset()) == ('refused: training/js: Kueue webhook: metadata.annotations['
                                                       'kueue.x-k8s.io/elastic-job]: Forbidden: elastic job is not '
                                                       'supported for '
                                     '"jobset.x-k8s.io/v1alpha2, Kind=JobSet"')


# pkg/workloadslicing/workloadslicing.go `Enabled`, v0.19.2: features.Enabled(ElasticJobsViaWorkloadSlices) && the
# annotation; every webhook rule and the reconciler's elastic branches go through it.
def test_with_the_gate_off_kueue_ignores_the_elastic_annotation():
    """Issue 36 review (e3.yaml; e_new.yaml --old e_old.yaml): every stack turns the gate off, so an annotated
    JobSet or topology-requesting Job is an ordinary one, and a running annotated Job that changes its counts is
    suspended by Kueue as any other, not given a new workload slice."""
    assert judged("dev", elastic_jobset()).startswith("admitted: training/js -> ClusterQueue cpu-batch")
    with_topology = job("training", "shards", "preprocessing", containers=[container()])
    with_topology["metadata"]["annotations"] = dict(ELASTIC)
    with_topology["spec"]["template"]["metadata"] = {"annotations": {
        "kueue.x-k8s.io/podset-preferred-topology": "kubernetes.io/hostname"}}
    assert not judged("dev", with_topology).startswith("refused: training/shards: Kueue webhook")
    running = job("training", "shards", "preprocessing", containers=[container()])
    running["metadata"]["annotations"] = dict(ELASTIC)
    running["spec"]["completionMode"] = "Indexed"  # completions change with parallelism on Indexed Jobs only
    grown = copy.deepcopy(running)
    grown["spec"]["parallelism"] = grown["spec"]["completions"] = 8
    assert describe(kueue_alone(tenant_path("dev")).judge(grown, running)) == (
        "updated: training/shards (Job): Kueue suspends it: job with no matching workload (its pods no longer match "
        "the admitted workload)")
    assert describe(kueue_alone(with_elastic_jobs("dev")).judge(grown, running)).startswith(
        "admitted: training/shards -> ClusterQueue cpu-batch")
    assert describe(tenant_path("dev").judge(grown, running)).startswith(
        "refused: training/shards: ValidatingAdmissionPolicy gke-ai-batch-kueue-holds: a running job's "
        "parallelism grows only while it is suspended")


def test_a_plain_pods_own_topology_annotation_is_read():
    """pod_controller.go `constructPodSet` takes the topology request from the pod's own metadata: prod's
    training queue mixes flavors, so a pod without it could not take the TAS flavor h200-res."""
    docs = yaml.safe_load_all((ROOT / "examples" / "workloads" / "prod.yaml").read_text())
    nccl = next(d for d in docs if d["metadata"].get("name") == "h200-nccl")
    template = nccl["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": copy.deepcopy(template["spec"]),
           "metadata": {"name": "p", "namespace": nccl["metadata"]["namespace"], "labels": nccl["metadata"]["labels"],
                        "annotations": dict(template["metadata"]["annotations"])}}
    assert judged("prod", pod) == "admitted: training-gpudirect/p -> ClusterQueue training, pod set main: " \
                                  "flavor h200-res"


def test_topology_aware_scheduling_leaves_out_gpu_nodes_a_template_does_not_tolerate():
    """GKE taints GPU nodes nvidia.com/gpu=present:NoSchedule; the API server's ExtendedResourceToleration adds the
    toleration to a pod, not to a JobSet's template, and Kueue's TAS filters nodes by the template's tolerations.
    The sandbox left h200-nccl pending with these words until the example stated the toleration."""
    docs = yaml.safe_load_all((ROOT / "examples" / "workloads" / "prod.yaml").read_text())
    nccl = next(d for d in docs if d["metadata"].get("name") == "h200-nccl")
    assert judged("prod", nccl).startswith("admitted: training-gpudirect/h200-nccl -> ClusterQueue training, pod set "
                                           "worker: flavor h200-res")
    del nccl["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["tolerations"]
    assert judged("prod", nccl) == (
        "refused: training-gpudirect/h200-nccl: Kueue: couldn't assign flavors to pod set worker: topology "
        '"gke-block-subblock-host-hostname" doesn\'t allow to fit any of 2 pod(s). Total nodes: 2; excluded: taint '
        '"nvidia.com/gpu=present:NoSchedule": 2')


def test_a_pod_requesting_gpus_tolerates_their_taint_as_the_api_server_makes_it():
    """ExtendedResourceToleration adds the toleration to the pod itself before Kueue builds its PodSet."""
    docs = yaml.safe_load_all((ROOT / "examples" / "workloads" / "prod.yaml").read_text())
    nccl = next(d for d in docs if d["metadata"].get("name") == "h200-nccl")
    template = nccl["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    spec = {k: v for k, v in template["spec"].items() if k != "tolerations"}
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": spec,
           "metadata": {"name": "p", "namespace": "training-gpudirect", "labels": nccl["metadata"]["labels"],
                        "annotations": dict(template["metadata"]["annotations"])}}
    assert judged("prod", pod) == "admitted: training-gpudirect/p -> ClusterQueue training, pod set main: " \
                                  "flavor h200-res"


# --- the owner chain (jobframework FindAncestorJobManagedByKueue) -----------------------------------------------

def owned(kind: str, name: str, uid: str, owner: dict | None = None, **labels: str) -> dict:
    api = {"Job": "batch/v1", "Deployment": "apps/v1", "ReplicaSet": "apps/v1", "Pod": "v1",
           "ConfigMap": "v1"}[kind]
    meta = {"name": name, "namespace": "training", "uid": uid, "labels": labels}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"], "controller": True,
                                    "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]}]
    return {"apiVersion": api, "kind": kind, "metadata": meta}


def objects(*objs: dict) -> dict:
    return {(o["kind"], "training", o["metadata"]["name"]): o for o in objs}


def test_the_owner_chain_stops_where_kueues_pod_webhook_stops():
    queued_job = owned("Job", "j", "u-job", **{"kueue.x-k8s.io/queue-name": "preprocessing"})
    pod = owned("Pod", "p", "u-pod", queued_job)
    assert managed_ancestor(pod, objects(queued_job), FRAMEWORKS).job is queued_job
    unlabelled = owned("Job", "j", "u-job")
    assert managed_ancestor(pod, objects(unlabelled), FRAMEWORKS).job is None  # no queue name: not managed
    assert managed_ancestor(pod, objects(unlabelled), FRAMEWORKS, without_queue_name=True).job is unlabelled
    other_uid = owned("Job", "j", "another-uid", **{"kueue.x-k8s.io/queue-name": "preprocessing"})
    assert managed_ancestor(pod, objects(other_uid), FRAMEWORKS).job is None  # uid mismatch ends the walk
    assert managed_ancestor(pod, {}, FRAMEWORKS).error == 'workload owner not found: jobs.batch "j" not found'
    deployment = owned("Deployment", "d", "u-d", **{"kueue.x-k8s.io/queue-name": "preprocessing"})
    replica_set = owned("ReplicaSet", "rs", "u-rs", deployment)
    through = owned("Pod", "p", "u-pod", replica_set)  # ReplicaSet: the known interim owner
    assert managed_ancestor(through, objects(replica_set, deployment), FRAMEWORKS).job is deployment
    assert managed_ancestor(through, objects(replica_set, deployment), ["batch/job"]).job is None
    config_map = owned("ConfigMap", "c", "u-c")
    assert managed_ancestor(owned("Pod", "p", "u-pod", config_map), {}, FRAMEWORKS).job is None  # unknown kind


def test_make_admit_follows_a_pods_owner_chain_past_the_policies():
    """The same walk in the Kueue layer of `make admit`, for a pod a controller creates (the policies refuse
    a team member's controller owner before Kueue sees it: tests/test_kueue_holds.py)."""
    path = copy.copy(tenant_path("dev"))
    path.policies, path.bindings = [], []
    queued_job = owned("Job", "j", "u-job", **{"kueue.x-k8s.io/queue-name": "preprocessing"})
    pod = {**owned("Pod", "p", "u-pod", queued_job), "spec": {"containers": [container()]}}
    pod["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "preprocessing"}
    assert describe(path.judge(pod, None, objects(queued_job))) == (
        "created: training/p (Pod): not gated: Kueue leaves it to Job training/j, which it manages, and that "
        "job's workload holds its quota")
    assert describe(path.judge(pod, None, {})) == ('refused: training/p: Kueue webhook: workload owner not found: '
                                                   'jobs.batch "j" not found')


# --- Deployments and StatefulSets: created, with their pods' verdict ---------------------------------------------

def deployment(kind: str = "Deployment", cpu: str = "4", **pod_spec: object) -> dict:
    return {"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": "d", "namespace": "training",
                         "labels": {"kueue.x-k8s.io/queue-name": "preprocessing"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"a": "b"}}, "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [container({"cpu": cpu, "memory": "16Gi"})], **pod_spec}}}}


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
def test_a_deployment_or_statefulset_is_created_with_its_pods_verdict(kind):
    assert judged("dev", deployment(kind)) == (f"created: training/d ({kind}), its pods admitted -> ClusterQueue "
                                               "cpu-batch, pod set main: flavor cpu-workers")
    assert judged("dev", deployment(kind, cpu="4000")).startswith(
        f"created: training/d ({kind}), its pods refused: Kueue: couldn't assign flavors to pod set main: "
        "insufficient quota for cpu in flavor cpu-workers")
    assert judged("dev", deployment(kind, hostPID=True)) == (
        f"created: training/d ({kind}), its pods refused: Pod Security baseline: the pods of d would be refused: "
        "host namespaces (hostPID=true)")


# --- the scale subresource (make admit ... OLD= SCALE=1) -------------------------------------------------------

def test_scaling_through_the_scale_subresource():
    """RBAC on deployments.apps/scale, the policies on a Scale (none of the stack's names the subresource),
    then Kueue's verdict on the pods at the new count; Jobs have no scale subresource."""
    path = tenant_path("dev")
    old = deployment()
    scaled = copy.deepcopy(old)
    scaled["spec"]["replicas"] = 5
    assert describe(path.judge(scaled, old, scale=True)) == (
        "updated: training/d (Deployment): scaled from 2 to 5 replicas through /scale: its controller adds or "
        "removes pods, and Kueue gates and admits each new one as on create; its pods admitted -> ClusterQueue "
        "cpu-batch, pod set main: flavor cpu-workers")
    a_job = job("training", "j", "preprocessing")  # RBAC answers before routing finds no jobs/scale (the sandbox)
    assert describe(path.judge(a_job, a_job, scale=True)) == \
        "refused: training/j: RBAC: team training may not patch jobs.batch/scale in namespace training"


def test_a_policy_sees_a_scale_request_only_when_a_rule_names_the_subresource():
    from gke_ai_batch.apiserver.cel_policies import evaluate

    def policy(resources: list[str]) -> tuple[dict, dict]:
        spec = {"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["*"],
                                                        "operations": ["UPDATE"], "resources": resources}]},
                "validations": [{"expression": "object.spec.replicas <= 3", "message": "at most 3"}]}
        return ({"kind": "ValidatingAdmissionPolicy", "metadata": {"name": "p"}, "spec": spec},
                {"kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "p"},
                 "spec": {"policyName": "p", "validationActions": ["Deny"]}})

    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d", "namespace": "training"},
             "spec": {"replicas": 5}}
    for resources, denied in ((["deployments"], False), (["deployments/scale"], True), (["*"], False),
                              (["*/scale"], True), (["deployments/*"], True)):
        p, b = policy(resources)
        denials = evaluate([p], [b], scale, None, "UPDATE", None, scale, ("apps/v1", "deployments", "scale"))
        assert bool(denials) is denied, resources
