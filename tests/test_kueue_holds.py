"""A team member cannot take work out of Kueue's hands after the create: every variant of "take Kueue's gates
off" and "spoof an owner" (issue 36), judged as `make admit ... OLD=` judges it (apiserver.tenant_path), with
the layer and the words that refuse it; and the controllers, which must still ungate, unsuspend and own."""
from __future__ import annotations

import copy
import subprocess

import pytest
import yaml

from gke_ai_batch.apiserver.cel_policies import evaluate
from gke_ai_batch.offline.admit import describe

from .forked_cli import run_module
from .test_escape import container, job, pod, tenant_path
from .test_kueue_fidelity import deployment, judged_elastic, kueue_alone, with_elastic_jobs

NS, QUEUE = "research", "research-queue"  # dev's research team
HOLDS = "refused: research/{}: ValidatingAdmissionPolicy gke-ai-batch-kueue-holds: "
GATES = ("only Kueue removes its scheduling gates (kueue.x-k8s.io/admission, /topology, /elastic-job): it does "
         "when the pod's workload is admitted, on the nodes it was given; without them the pod would run outside "
         "its team's quota")
MANAGED = "the kueue.x-k8s.io/managed label is Kueue's: removing or changing it takes the pod out of Kueue's hands"
PARENT = ("the kueue.x-k8s.io/pod-suspending-parent annotation is set by Kueue on the pod templates of the "
          "Deployments and StatefulSets it manages: on a pod of a team member's it would gate a pod that nothing "
          "admits or meters")
UNSUSPEND = ("only Kueue unsuspends a job (spec.suspend true to false), when it admits its workload: a job "
             "unsuspended by hand would start its pods before Kueue charges them to the team's quota")
OWNER = ("a controller ownerReference is set by the controller that creates the object and removed by it or the "
         "garbage collector: one a team member sets, changes or removes would leave the object to an owner that "
         "never created it, or take it from the job whose workload charges its quota, so no quota would be charged "
         "for it")
TPU = {"google.com/tpu": "4"}
V5E = {"cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice", "cloud.google.com/gke-tpu-topology": "2x4"}


RESOURCES = {"ReplicaSet": "replicasets.apps", "Job": "jobs.batch", "JobSet": "jobsets.jobset.x-k8s.io"}


def judged(new: dict, old: dict | None = None) -> str:
    return describe(tenant_path("dev").judge(new, old))


def gated_pod(name: str = "p", *gates: str, **meta: dict) -> dict:
    """A pod as Kueue's pod webhook leaves it: managed, gated (pod_webhook.go `Default`)."""
    p = pod(NS, name, QUEUE, labels={"kueue.x-k8s.io/managed": "true"})
    p["metadata"].update(meta)
    p["spec"]["schedulingGates"] = [{"name": g} for g in gates or ("kueue.x-k8s.io/admission",)]
    return p


def without_gate(p: dict, gate: str) -> dict:
    new = copy.deepcopy(p)
    new["spec"]["schedulingGates"] = [g for g in p["spec"]["schedulingGates"] if g["name"] != gate]
    return new


def suspended_job(**annotations: str) -> dict:
    j = job(NS, "j", QUEUE, pods=2, containers=[container(TPU, resources={"limits": TPU})], nodeSelector=V5E)
    j["metadata"]["annotations"] = dict(annotations)
    j["spec"]["suspend"] = True
    return j


def running(obj: dict) -> dict:
    new = copy.deepcopy(obj)
    new["spec"]["suspend"] = False
    return new


def jobset() -> dict:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "js", "namespace": NS, "labels": {"kueue.x-k8s.io/queue-name": QUEUE}},
            "spec": {"suspend": True, "replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": {
                "parallelism": 1, "completions": 1, "template": {"spec": {
                    "restartPolicy": "Never", "containers": [container()]}}}}}]}}


# --- take Kueue's gates off -------------------------------------------------------------------------------

@pytest.mark.parametrize("gate", ["kueue.x-k8s.io/admission", "kueue.x-k8s.io/topology"])
def test_removing_a_kueue_scheduling_gate_is_refused(gate):
    """The team role has update on pods, and the API server lets such a caller remove gates."""
    old = gated_pod("p", "kueue.x-k8s.io/admission", "kueue.x-k8s.io/topology")
    assert judged(without_gate(old, gate), old) == HOLDS.format("p") + GATES


def test_a_pod_of_its_own_with_the_suspending_parent_annotation_is_refused():
    """Gated by Kueue's pod webhook but never labelled managed: once ungated nothing meters it."""
    annotated = pod(NS, "p", QUEUE)
    annotated["metadata"]["annotations"] = {"kueue.x-k8s.io/pod-suspending-parent": "deployment"}
    assert judged(annotated) == HOLDS.format("p") + PARENT
    old = gated_pod("p", annotations={"kueue.x-k8s.io/pod-suspending-parent": "deployment"})
    assert judged(without_gate(old, "kueue.x-k8s.io/admission"), old) == HOLDS.format("p") + GATES
    plain = pod(NS, "p", QUEUE)
    added = copy.deepcopy(plain)
    added["metadata"]["annotations"] = {"kueue.x-k8s.io/pod-suspending-parent": "deployment"}
    assert judged(added, plain) == HOLDS.format("p") + PARENT


@pytest.mark.parametrize("value", [None, "false"])
def test_removing_or_changing_the_managed_label_is_refused(value):
    old = gated_pod()
    new = copy.deepcopy(old)
    if value is None:
        del new["metadata"]["labels"]["kueue.x-k8s.io/managed"]
    else:
        new["metadata"]["labels"]["kueue.x-k8s.io/managed"] = value
    assert judged(new, old) == HOLDS.format("p") + MANAGED


@pytest.mark.parametrize("annotations", [{}, {"kueue.x-k8s.io/elastic-job": "true"}], ids=["job", "elastic-job"])
def test_unsuspending_a_job_is_refused(annotations):
    """Kueue re-suspends a plain Job, but leaves an unsuspended elastic Job running (reconciler.go, step 8)."""
    old = suspended_job(**annotations)
    old["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 86400
    assert judged(running(old), old) == HOLDS.format("j") + UNSUSPEND


SCALE_UP = ("a running job's parallelism grows only while it is suspended: the Job controller starts the new pods "
            "at once, before Kueue suspends a job whose admitted workload no longer matches, and they run, charged to "
            "no quota, through their termination grace period; suspend the job, then change it, and Kueue admits it "
            "again")


def started(job_: dict, **spec) -> dict:
    """A Job Kueue admitted and started, without completions (a work queue), then `spec` changed."""
    old = running(job_)
    old["spec"].pop("completions", None)
    old["status"] = {"startTime": "2026-01-01T00:00:00Z", "active": 2}
    new = copy.deepcopy(old)
    new["spec"].update(spec)
    return old, new


def test_raising_a_running_jobs_parallelism_is_refused():
    """Attack (after issue 36): unsuspending is refused, so raise a running Job's parallelism from 2 to 64 with a
    day of termination grace. Kubernetes lets parallelism change at any time and the Job controller creates the 62
    pods at once (they are not gated: their Job is Kueue's); Kueue v0.19.2 only then finds no matching workload and
    suspends the Job (jobframework/reconciler.go `ensureOneWorkload`), and suspending deletes the pods gracefully
    (KEP-2232), so they run outside the quota for terminationGracePeriodSeconds. `make admit` said only "Kueue
    suspends it"."""
    old, new = started(suspended_job(), parallelism=64)
    new["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 86400
    old["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 86400
    assert judged(new, old) == HOLDS.format("j") + SCALE_UP
    indexed_old, indexed_new = started(suspended_job(), parallelism=64, completions=64, completionMode="Indexed")
    indexed_old["spec"].update(completions=2, completionMode="Indexed")
    assert judged(indexed_new, indexed_old) == HOLDS.format("j") + SCALE_UP


def test_lowering_a_running_jobs_parallelism_or_raising_a_suspended_ones_passes():
    old, new = started(suspended_job(), parallelism=1)
    assert judged(new, old) == ("updated: research/j (Job): Kueue suspends it: job with no matching workload (its "
                                "pods no longer match the admitted workload)")
    queued = suspended_job()
    grown = copy.deepcopy(queued)
    grown["spec"]["parallelism"] = 3
    assert judged(grown, queued).startswith("admitted: research/j -> ClusterQueue research")


def test_unsuspending_a_jobset_is_refused():
    assert judged(running(jobset()), jobset()) == HOLDS.format("js") + UNSUSPEND


def test_what_kueue_does_with_an_update_that_passes():
    """The reconciler's answer, one line per object: a queued job is judged again, a running one is left."""
    old = suspended_job()
    relabelled = copy.deepcopy(old)
    relabelled["metadata"]["labels"]["note"] = "x"
    assert judged(relabelled, old).startswith("admitted: research/j -> ClusterQueue research")
    assert judged(running(relabelled), running(old)) == \
        "updated: research/j (Job): left running: its admitted workload still matches"
    moved = running(relabelled)
    moved["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "other"
    assert judged(moved, running(old)) == ('refused: research/j: Kueue webhook: metadata.labels[kueue.x-k8s.io/'
                                           'queue-name]: Invalid value: "other": field is immutable')


def test_scaling_an_admitted_elastic_job_is_judged_as_a_new_slice_against_the_quota():
    """With the elastic-jobs gate on (every stack turns it off), Kueue makes a workload slice for the new counts
    (workload slicing): it is admitted or not as a new one."""
    old = job("training", "shards", "preprocessing", pods=8, containers=[container({"cpu": "4", "memory": "16Gi"})])
    old["metadata"]["annotations"] = {"kueue.x-k8s.io/elastic-job": "true"}
    old["spec"]["completionMode"] = "Indexed"  # completions may change, in tandem with parallelism, on Indexed Jobs
    within, past = copy.deepcopy(old), copy.deepcopy(old)
    within["spec"]["parallelism"] = within["spec"]["completions"] = 10
    past["spec"]["parallelism"] = past["spec"]["completions"] = 10_000
    path = kueue_alone(with_elastic_jobs("dev"))  # a member's growth of a running Job is refused before Kueue
    assert describe(path.judge(within, old)).startswith("admitted: training/shards -> ClusterQueue cpu-batch")
    assert describe(path.judge(past, old)).startswith("refused: training/shards: Kueue: ")
    assert judged_elastic("dev", within, old).startswith(HOLDS.replace("research", "training").format("shards"))


# --- spoof an owner -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("owner", [("apps/v1", "ReplicaSet"), ("batch/v1", "Job"), ("jobset.x-k8s.io/v1alpha2",
                                                                                     "JobSet")])
def test_a_controller_owner_set_by_a_team_member_is_refused(owner):
    """Kueue's pod webhook stops at an owner Kueue manages; a spoofed one would leave the pod ungated. Where the
    owner exists, the admission policy refuses the spoof; where it does not, Kueue's mutating webhook refuses it
    first, looking the owner up (the sandbox: `ReplicaSet.apps "real" not found` from mpod.kb.io, before any
    validating layer; this test expected the policy there before)."""
    ref = {"apiVersion": owner[0], "kind": owner[1], "name": "real", "uid": "the-real-uid", "controller": True}
    real = {"apiVersion": owner[0], "kind": owner[1], "metadata": {"name": "real", "namespace": NS, "uid": "other"}}
    there = {(owner[1], NS, "real"): real}
    spoofed = pod(NS, "p", QUEUE)
    spoofed["metadata"]["ownerReferences"] = [ref]
    assert describe(tenant_path("dev").judge(spoofed, None, there)) == HOLDS.format("p") + OWNER
    missing = f'refused: {NS}/p: Kueue webhook: workload owner not found: {RESOURCES[owner[1]]} "real" not found'
    assert judged(spoofed) == missing
    child = job(NS, "j", QUEUE)
    child["metadata"]["ownerReferences"] = [ref]
    assert describe(tenant_path("dev").judge(child, None, there)) == HOLDS.format("j") + OWNER
    assert judged(child) == missing.replace("/p:", "/j:")
    adopted = copy.deepcopy(gated_pod())
    adopted["metadata"]["ownerReferences"] = [ref]
    assert judged(adopted, gated_pod()) == HOLDS.format("p") + OWNER


JOB_OWNER = {"apiVersion": "batch/v1", "kind": "Job", "name": "real-job", "uid": "2222", "controller": True,
             "blockOwnerDeletion": True}


@pytest.mark.parametrize("change", ["removed", "other-uid", "other-name", "not-a-controller"])
def test_a_team_member_cannot_remove_or_change_a_pods_controller_owner(change):
    """Issue 36 review: a Job's pod stripped of its owner is left, ungated, by the Job whose workload charged it;
    Kueue's pod reconciler does not take it up again, so it would run unmetered."""
    owned = gated_pod(ownerReferences=[JOB_OWNER])
    new = copy.deepcopy(owned)
    ref = new["metadata"]["ownerReferences"][0]
    if change == "removed":
        del new["metadata"]["ownerReferences"]
    elif change == "other-uid":
        ref["uid"] = "3333"
    elif change == "other-name":
        ref["name"] = "other-job"
    else:
        del ref["controller"]
    assert judged(new, owned) == HOLDS.format("p") + OWNER


@pytest.mark.parametrize("kind", ["Job", "JobSet"])
def test_a_team_member_cannot_remove_a_jobs_controller_owner(kind):
    owner = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "js", "uid": "u", "controller": True}
    old = suspended_job() if kind == "Job" else jobset()
    old["metadata"]["ownerReferences"] = [owner]
    new = copy.deepcopy(old)
    del new["metadata"]["ownerReferences"]
    assert judged(new, old) == HOLDS.format(old["metadata"]["name"]) + OWNER


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
def test_a_deployment_or_statefulset_cannot_be_given_a_jobs_controller_owner(kind):
    """Issue 36 review (d_own.yaml): a Deployment owned by a real Job has its pods left to that Job by Kueue's
    owner walk, ungated and charged to nobody; refused on create and on an update that adds the owner."""
    plain = deployment(kind)
    owned = copy.deepcopy(plain)
    owned["metadata"]["ownerReferences"] = [JOB_OWNER]
    refusal = "refused: training/d: ValidatingAdmissionPolicy gke-ai-batch-kueue-holds: " + OWNER
    real_job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": JOB_OWNER["name"],
                                                                      "namespace": "training", "uid": "other"}}
    there = {("Job", "training", JOB_OWNER["name"]): real_job}
    assert describe(tenant_path("dev").judge(owned, None, there)) == refusal
    assert describe(tenant_path("dev").judge(owned, plain, there)) == refusal
    # the Job missing: Kueue's mutating webhook (on create and, for these two kinds, on update) refuses first
    missing = ("refused: training/d: Kueue webhook: workload owner not found: "
               f'jobs.batch "{JOB_OWNER["name"]}" not found')
    assert describe(tenant_path("dev").judge(owned)) == missing
    assert describe(tenant_path("dev").judge(owned, plain)) == missing


def test_an_owner_that_is_not_a_controller_and_a_kept_owner_pass():
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u"}
    p = pod(NS, "p", QUEUE)
    p["metadata"]["ownerReferences"] = [ref]
    assert not judged(p).startswith("refused: research/p: ValidatingAdmissionPolicy")
    owned = gated_pod(ownerReferences=[{**ref, "kind": "ReplicaSet", "controller": True}])
    relabelled = copy.deepcopy(owned)
    relabelled["metadata"]["labels"]["note"] = "x"
    assert judged(relabelled, owned) == ("updated: research/p (Pod): updated in place: Kueue's pod reconciler keeps "
                                         "it as its gates and labels say")


# --- the controllers still do their work ------------------------------------------------------------------

def test_kueue_and_the_workload_controllers_still_ungate_unsuspend_and_own():
    """The policy matches team groups only: Kueue's and kube-controller-manager's service accounts pass."""
    path = tenant_path("dev")
    namespace = path.namespaces[NS]
    for user in ({"username": "system:serviceaccount:kueue-system:kueue-controller-manager",
                  "groups": ["system:serviceaccounts", "system:serviceaccounts:kueue-system", "system:authenticated"]},
                 {"username": "system:serviceaccount:kube-system:job-controller",
                  "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"]}):
        old = gated_pod()
        assert evaluate(path.policies, path.bindings, without_gate(old, "kueue.x-k8s.io/admission"), namespace,
                        "UPDATE", user, old) == []
        assert evaluate(path.policies, path.bindings, running(suspended_job()), namespace, "UPDATE", user,
                        suspended_job()) == []
        owned = gated_pod(ownerReferences=[{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u",
                                            "controller": True}])
        assert evaluate(path.policies, path.bindings, owned, namespace, "CREATE", user) == []


# --- make admit OLD= ------------------------------------------------------------------------------------------

def admit(tmp_path, new: list[dict], old_text: str | None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "new.yaml").write_text(yaml.safe_dump_all(new))
    args = ["dev", str(tmp_path / "new.yaml")]
    if old_text is not None:
        (tmp_path / "old.yaml").write_text(old_text)
        args += ["--old", str(tmp_path / "old.yaml")]
    return run_module("gke_ai_batch.offline.admit", *args)


def test_make_admit_judges_the_objects_old_also_holds_as_updates(tmp_path):
    old = suspended_job()
    created = copy.deepcopy(old)
    created["metadata"]["name"] = "fresh"
    r = admit(tmp_path, [running(old), created], yaml.safe_dump_all([old]))
    lines = r.stdout.splitlines()
    assert r.returncode == 1, r.stderr
    assert lines[0] == HOLDS.format("j") + UNSUSPEND
    assert lines[1].startswith("admitted: research/fresh -> ClusterQueue research")


@pytest.mark.parametrize("old_text, error", [
    (None, "error: OLD={dir}/missing.yaml: No such file or directory"),
    ("kind: Job\nmetadata: {name: a}\n---\n- just\n- a list\n", "error: OLD={dir}/old.yaml: document 1 is not a "
                                                                  "Kubernetes object (kind, metadata.name)"),
    ("kind: Job\nmetadata: {name: a, namespace: research}\n---\nkind: Job\nmetadata: {name: a, namespace: research}\n",
     "error: OLD={dir}/old.yaml: document 1 is Job research/a again: one object per identity (kind, namespace, name)"),
], ids=["missing", "not-an-object", "twice"])
def test_a_bad_old_file_is_one_error_and_nothing_judged(tmp_path, old_text, error):
    (tmp_path / "new.yaml").write_text(yaml.safe_dump(suspended_job()))
    old = tmp_path / ("missing.yaml" if old_text is None else "old.yaml")
    if old_text is not None:
        old.write_text(old_text)
    r = run_module("gke_ai_batch.offline.admit", "dev", str(tmp_path / "new.yaml"), "--old", str(old))
    assert (r.returncode, r.stdout, r.stderr.strip()) == (2, "", error.format(dir=tmp_path))


RELEASE = ("a pod's labels are how its controller knows it (a Job's selector): a team member may add labels to a "
           "controller's pod but not remove or change one, or the controller releases the pod and it runs on "
           "outside the quota its job is charged")


@pytest.mark.parametrize("change", ["replaced", "one-removed", "one-changed"])
def test_a_team_member_cannot_release_a_jobs_pod_by_its_labels(change):
    """Issue 36, second review: a Job's pod whose labels no longer match the Job's selector is released by the Job
    controller (which drops the ownerReference itself) and replaced, and runs on outside the job's quota."""
    owned = gated_pod(ownerReferences=[JOB_OWNER])
    owned["metadata"]["labels"]["batch.kubernetes.io/job-name"] = "real-job"
    new = copy.deepcopy(owned)
    labels = new["metadata"]["labels"]
    if change == "replaced":
        new["metadata"]["labels"] = {"kueue.x-k8s.io/managed": "true", "escaped": "yes"}
    elif change == "one-removed":
        del labels["batch.kubernetes.io/job-name"]
    else:
        labels["batch.kubernetes.io/job-name"] = "other"
    assert judged(new, owned) == HOLDS.format("p") + RELEASE


def test_a_label_added_to_a_controllers_pod_and_a_bare_pods_labels_pass():
    owned = gated_pod(ownerReferences=[JOB_OWNER])
    added = copy.deepcopy(owned)
    added["metadata"]["labels"]["note"] = "debugging"
    assert not judged(added, owned).startswith("refused")
    bare = gated_pod()
    relabelled = copy.deepcopy(bare)
    relabelled["metadata"]["labels"]["note"] = "x"
    assert not judged(relabelled, bare).startswith("refused")
