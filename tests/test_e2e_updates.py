"""How the e2e runner plays a test's update on the sandbox: the change from the test's old object to its new one,
carried onto the object as the cluster holds it; and which objects are a workload's, for its Kueue verdict."""
from __future__ import annotations

from gke_ai_batch.sandbox.e2e_patch import apply_patch, merge_patch
from gke_ai_batch.sandbox.e2e_play import at, descendants, leaves, within


def test_the_members_change_lands_on_the_live_object_and_what_the_cluster_set_stays():
    old = {"metadata": {"name": "p", "labels": {"kueue.x-k8s.io/managed": "true", "a": "1"}},
           "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}], "containers": [{"name": "x"}]}}
    new = {"metadata": {"name": "p", "labels": {"a": "1"}},
           "spec": {"schedulingGates": [], "containers": [{"name": "x"}]}}
    live = {"metadata": {"name": "p", "resourceVersion": "7", "uid": "u",
                         "labels": {"kueue.x-k8s.io/managed": "true", "a": "1"}},
            "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}], "containers": [{"name": "x"}],
                     "dnsPolicy": "ClusterFirst"}}
    assert apply_patch(live, merge_patch(old, new)) == {
        "metadata": {"name": "p", "resourceVersion": "7", "uid": "u", "labels": {"a": "1"}},
        "spec": {"schedulingGates": [], "containers": [{"name": "x"}], "dnsPolicy": "ClusterFirst"}}


def test_a_workload_is_found_through_every_owner_between_it_and_the_object():
    def item(uid, *owners):
        return {"metadata": {"uid": uid, "ownerReferences": [{"uid": o} for o in owners]}}
    items = [item("rs", "deploy"), item("pod", "rs"), item("wl", "pod"), item("other-pod", "other-rs")]
    assert descendants(items, "deploy") == {"deploy", "rs", "pod", "wl"}


def test_every_object_kubectl_prints_is_read():
    """`kubectl create -o json` of a List prints one document per object; `kubectl get -f` prints a List."""
    from gke_ai_batch.sandbox.e2e_kubectl import Answer
    printed = '{"kind": "A", "n": 1}\n{"kind": "A", "n": 2}\n{"kind": "List", "items": [{"kind": "B"}]}\n'
    assert Answer(True, printed, "").objects() == [{"kind": "A", "n": 1}, {"kind": "A", "n": 2}, {"kind": "B"}]


def test_the_fields_an_update_changes_are_the_ones_checked_for_the_clusters_own_changes():
    """Kueue may admit the old object and ungate or unsuspend it first: the test's update would then be another."""
    patch = merge_patch({"spec": {"suspend": True, "x": 1}}, {"spec": {"suspend": False, "x": 1}, "metadata": {"a": 1}})
    assert leaves(patch) == ["spec.suspend", "metadata.a"]
    assert at({"spec": {"suspend": False}}, "spec.suspend") is False and at({}, "spec.suspend") is None


def test_the_api_servers_defaults_are_not_a_change_and_kueues_are():
    container = {"name": "x", "image": "busybox"}
    defaulted = {**container, "imagePullPolicy": "Always", "terminationMessagePath": "/dev/termination-log"}
    assert within([container], [defaulted])
    assert not within([{"name": "kueue.x-k8s.io/admission"}, {"name": "t"}], [{"name": "t"}])
    assert not within(True, False)


def test_a_workload_kueue_cannot_write_a_reason_for_is_pending(monkeypatch):
    """dev's research/gpu-grab asks for GPUs its ClusterQueue does not cover: Kueue 0.19.2 writes an empty condition
    reason, the Workload CRD refuses it, and the Workload stays without conditions. That is pending, as `make
    admit` says ("resource nvidia.com/gpu unavailable in ClusterQueue"), not "no Workload"."""
    from gke_ai_batch.sandbox import e2e_play

    class Cluster:
        def items(self, namespace, kinds):
            return [{"kind": "Workload", "metadata": {"uid": "wl", "ownerReferences": [{"uid": "job"}]}}]

    monkeypatch.setattr(e2e_play, "BOUND", 0.01)
    job = {"kind": "Job", "metadata": {"namespace": "research", "uid": "job"}}
    assert e2e_play.outcome(Cluster(), job) == ("pending", e2e_play.UNWRITTEN)


def test_a_follower_pod_waiting_for_its_leader_is_not_a_refusal(monkeypatch):
    """CI's e2e prod read JobSet's "follower pod node selector for topology domain not found" on llm-pretrain as
    its pods refused; JobSet's pod webhook says it refuses followers until the leader is scheduled, and the Job
    controller retries. A refusal by anything else still counts."""
    from gke_ai_batch.sandbox import e2e_play

    def cluster(message):
        class Cluster:
            def items(self, namespace, kinds):
                return [{"kind": "Workload", "metadata": {"uid": "wl", "ownerReferences": [{"uid": "js"}]},
                         "status": {"conditions": [{"type": "QuotaReserved", "status": "True"}],
                                    "admission": {"clusterQueue": "training"}}},
                        {"kind": "Pod", "metadata": {"uid": "leader", "ownerReferences": [{"uid": "js"}]}},
                        {"kind": "Event", "reason": "FailedCreate", "involvedObject": {"uid": "js"},
                         "message": message}]
        return Cluster()

    monkeypatch.setattr(e2e_play, "BOUND", 0.01)
    jobset = {"kind": "JobSet", "metadata": {"namespace": "training", "uid": "js"}}
    waiting = ('Error creating: admission webhook "validate--v1-pod.x-k8s.io" denied the request: follower pod node '
               "selector for topology domain not found. missing selector: cloud.google.com/gke-nodepool")
    assert e2e_play.outcome(cluster(waiting), jobset) == ("quota reserved in ClusterQueue training", "")
    refused = 'Error creating: pods "x" is forbidden: violates PodSecurity "baseline:latest": privileged'
    assert e2e_play.outcome(cluster(refused), jobset)[0].startswith("its pods refused by")
