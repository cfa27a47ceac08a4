"""What `make admit` misreported after issue 36's review, each judged as the API server and Kueue v0.19.2 judge
it: a CronJob on a time-limited LocalQueue, a StatefulSet's replicas changed by update, a running Job's pod
template changed, and ResourceQuota on updates (a Service made a LoadBalancer, a PVC grown)."""
from __future__ import annotations

import copy
import dataclasses

from gke_ai_batch.offline.admit import describe

from .test_escape import container, job, tenant_path
from .test_time_limits import LIMIT

NS, QUEUE = "training", "preprocessing"  # a CPU queue of dev's training team (ClusterQueue cpu-batch)


def judged(stack: str, new: dict, old: dict | None = None) -> str:
    return describe(tenant_path(stack).judge(new, old))


# --- a CronJob: the CronJob is created, each Job it creates is judged as a Job -----------------------------------

def cron_job(ns: str, queue: str, labels: dict | None = None, **pod_spec) -> dict:
    pod_spec.setdefault("containers", [container()])
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": ns},
            "spec": {"schedule": "0 2 * * *", "jobTemplate": {
                "metadata": {"labels": {"kueue.x-k8s.io/queue-name": queue, **(labels or {})}},
                "spec": {"parallelism": 1, "completions": 1,
                         "template": {"spec": {"restartPolicy": "Never", **pod_spec}}}}}}


def test_a_cron_job_on_a_limited_queue_names_its_jobs_limit_when_it_is_submitted():
    """prod's `sweeps` holds every job to 24 h. A Job the CronJob controller creates without the limit is refused
    by the runtime-limits policy at each schedule, so the CronJob is refused when it is submitted, in the words
    a Job gets."""
    assert judged("prod", cron_job("training", "sweeps")) == (
        "refused: training/nightly: ValidatingAdmissionPolicy gke-ai-batch-runtime-limits: LocalQueue sweeps of "
        "team training holds every job to at most 86400 s: label its jobTemplate "
        f"{LIMIT}: \"14400\" (the queue's default), or another number of seconds up to 86400")
    assert judged("prod", cron_job("training", "sweeps", {LIMIT: "86401"})).startswith(
        "refused: training/nightly: ValidatingAdmissionPolicy gke-ai-batch-runtime-limits: LocalQueue sweeps of "
        f"team training holds every job to at most 86400 s; not {LIMIT}: 86401")


def test_a_cron_job_cannot_drop_or_raise_its_limit_by_update():
    """Over time: the CronJob's jobTemplate may not lose its limit or pass the maximum; a change that keeps it
    (a new schedule) passes."""
    within = cron_job("training", "sweeps", {LIMIT: "3600"})
    dropped = cron_job("training", "sweeps")
    assert judged("prod", dropped, within).startswith(
        "refused: training/nightly: ValidatingAdmissionPolicy gke-ai-batch-runtime-limits: LocalQueue sweeps of "
        "team training holds every job to at most 86400 s: label its jobTemplate ")
    raised = cron_job("training", "sweeps", {LIMIT: "90000"})
    assert judged("prod", raised, within).startswith(
        "refused: training/nightly: ValidatingAdmissionPolicy gke-ai-batch-runtime-limits: ")
    rescheduled = copy.deepcopy(within)
    rescheduled["spec"]["schedule"] = "0 3 * * *"
    assert judged("prod", rescheduled, within).startswith("updated: training/nightly (CronJob): its next Jobs are "
                                                         "created from the new jobTemplate; its Jobs refused: Kueue")


def test_a_cron_jobs_jobs_are_judged_by_kueue_as_the_jobs_they_are():
    """Kueue has no CronJob integration: its Job integration suspends each Job the CronJob creates and admits it
    by the queue-name label of the jobTemplate (Kueue's "Run a CronJob" task)."""
    assert judged("dev", cron_job(NS, QUEUE)) == ("created: training/nightly (CronJob), its Jobs admitted -> "
                                                  "ClusterQueue cpu-batch, pod set main: flavor cpu-workers")
    too_big = cron_job(NS, QUEUE, containers=[container({"cpu": "100000"})])
    assert judged("dev", too_big) == (
        "created: training/nightly (CronJob), its Jobs refused: Kueue: couldn't assign flavors to pod set main: "
        "insufficient quota for cpu in flavor cpu-workers, previously considered podsets requests (0) + current "
        "podset request (100k) > maximum capacity (40)")
    # within the limit of prod's `sweeps`, the policy passes it; its CPU-only Jobs are then Kueue's to refuse
    within = cron_job("training", "sweeps", {LIMIT: "3600"})
    assert judged("prod", within).startswith("created: training/nightly (CronJob), its Jobs refused: Kueue: ")
    changed = judged("dev", cron_job(NS, QUEUE, {LIMIT: "5"}), cron_job(NS, QUEUE))
    assert changed.startswith("updated: training/nightly (CronJob): its next Jobs are created from the new "
                              "jobTemplate; its Jobs admitted -> ClusterQueue cpu-batch")


def test_a_job_the_policies_refuse_is_refused_at_every_schedule_though_the_cron_job_is_created():
    """The object-size cap judges Jobs, not CronJobs: the CronJob is created and its controller's every Job
    refused."""
    big = cron_job(NS, QUEUE)
    big["spec"]["jobTemplate"]["metadata"]["annotations"] = {"note": "y" * 20_000}
    assert judged("dev", big).startswith("created: training/nightly (CronJob), its Jobs refused: "
                                         "ValidatingAdmissionPolicy gke-ai-batch-object-size: the object holds ")


def test_a_cron_job_that_holds_its_jobs_policy_refusal_is_refused_for_its_jobs():
    """A Job the CronJob controller creates passes the same policies as one a member creates: a Job template
    that asks for a node the team's quota does not reach is refused for its Jobs."""
    squat = cron_job(NS, QUEUE, nodeName="gke-node-1")
    assert judged("dev", squat) == (
        "created: training/nightly (CronJob), its pods refused: ValidatingAdmissionPolicy gke-ai-batch-pod-placement: "
        "its pods: team pods are placed by the scheduler after Kueue admits them: spec.nodeName would skip the "
        "nodes' taints and the flavor Kueue chose")


# --- a StatefulSet's replicas: Kueue's webhook refuses a resize of a managed one --------------------------------

def stateful_set(replicas: int, queue: str | None = QUEUE) -> dict:
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": NS, "labels": labels},
            "spec": {"replicas": replicas, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [container()]}}}}


def test_resizing_a_managed_stateful_set_is_refused_by_kueues_webhook():
    """statefulset_webhook.go `ValidateUpdate`: a StatefulSet Kueue manages may scale only to and from zero."""
    assert judged("dev", stateful_set(3), stateful_set(2)) == (
        "refused: training/db: Kueue webhook: spec.replicas: Invalid value: 3: field is immutable")


def test_a_managed_stateful_set_scaled_to_zero_and_back_is_held_and_judged_afresh():
    assert judged("dev", stateful_set(0), stateful_set(2)) == (
        "updated: training/db (StatefulSet): scaled from 2 to 0 replicas: Kueue puts its workload on hold and "
        "releases its quota (StatefulSet scaled to zero; workload on hold)")
    assert judged("dev", stateful_set(2), stateful_set(0)).startswith(
        "updated: training/db (StatefulSet): scaled from 0 to 2 replicas: Kueue takes its workload off hold and "
        "judges it afresh; its pods admitted -> ClusterQueue cpu-batch")
    assert judged("dev", stateful_set(100_000), stateful_set(0)).startswith(
        "updated: training/db (StatefulSet): scaled from 0 to 100000 replicas: Kueue takes its workload off hold "
        "and judges it afresh; its pods refused: Kueue: ")


def test_kubectl_scale_passes_kueues_webhook_but_not_its_pod_group():
    """The webhook is not registered for statefulsets/scale: scaled up, the pods past the workload's count are
    deleted as excess pods of its group; scaled down, the workload keeps its quota; to zero, it is held."""
    path = tenant_path("dev")
    assert describe(path.judge(stateful_set(3), stateful_set(2), scale=True)) == (
        "updated: training/db (StatefulSet): scaled from 2 to 3 replicas through /scale, which Kueue's webhook does "
        "not see: its workload keeps its 2 pods, and Kueue deletes every pod its controller creates past them as "
        "an excess pod of the group (Excess pod deleted)")
    assert describe(path.judge(stateful_set(1), stateful_set(2), scale=True)) == (
        "updated: training/db (StatefulSet): scaled from 2 to 1 replicas through /scale, which Kueue's webhook does "
        "not see: its controller removes pods, and its workload keeps the quota of 2")
    assert describe(path.judge(stateful_set(0), stateful_set(2), scale=True)).endswith(
        "scaled from 2 to 0 replicas: Kueue puts its workload on hold and releases its quota (StatefulSet scaled to "
        "zero; workload on hold)")


def test_a_stateful_sets_workload_counts_every_replica():
    """statefulset_reconciler.go `constructWorkload`: one pod set of `replicas` pods, so a StatefulSet too large
    for the queue is refused whole."""
    big = stateful_set(100_000)
    assert judged("dev", big).startswith("created: training/db (StatefulSet), its pods refused: Kueue: ")


def test_a_stateful_set_without_a_queue_name_is_still_kueues_in_a_team_namespace():
    """manageJobsWithoutQueueName (on in every stack): the webhook holds it all the same."""
    assert judged("dev", stateful_set(3, queue=None), stateful_set(2, queue=None)) == (
        "refused: training/db: Kueue webhook: spec.replicas: Invalid value: 3: field is immutable")


def test_an_unmanaged_stateful_set_is_resized_by_its_controller():
    """With manageJobsWithoutQueueName off, one without a queue name (and no `default` LocalQueue) is not Kueue's:
    its webhook neither validates nor its reconciler admits it. No stack with teams may turn it off (the plan refuses
    `kueue.manage_jobs_without_queue_name: false`), so Kueue's behaviour is tried on a copy of dev's cluster whose
    Configuration has it off."""
    path = copy.copy(tenant_path("dev"))
    path.cluster = dataclasses.replace(path.cluster, config={**path.cluster.config,
                                                             "manageJobsWithoutQueueName": False})
    assert describe(path.judge(stateful_set(3, queue=None), stateful_set(2, queue=None))) == (
        "updated: training/db (StatefulSet): scaled from 2 to 3 replicas: its controller adds or removes pods; Kueue "
        "does not manage it (no kueue.x-k8s.io/queue-name label)")


# --- a running Job's pod template is immutable (the API server refuses the update) ------------------------------

def cpu_job(suspend: bool) -> dict:
    j = job(NS, "j", QUEUE, pods=2, containers=[container()])
    j["spec"]["suspend"] = suspend
    return j


def with_image(obj: dict, image: str) -> dict:
    new = copy.deepcopy(obj)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return new


IMMUTABLE = ('refused: training/j: API server: Job.batch "j" is invalid: spec.template: Invalid value: ...: field '
             "is immutable")


def test_a_running_jobs_template_cannot_change():
    """pkg/apis/batch/validation `validatePodTemplateUpdate`: spec.template is immutable, but for the scheduling
    directives of a Job suspended and never started."""
    assert judged("dev", with_image(cpu_job(False), "python:3.12"), cpu_job(False)) == IMMUTABLE


def test_a_suspended_jobs_scheduling_directives_may_change_and_nothing_else():
    old = cpu_job(True)
    moved = copy.deepcopy(old)
    moved["spec"]["template"]["spec"]["tolerations"] = [{"key": "x", "operator": "Exists"}]
    moved["spec"]["template"]["metadata"] = {"labels": {"note": "x"}}
    assert not tenant_path("dev").judge(moved, old).refused
    assert judged("dev", with_image(old, "python:3.12"), old) == IMMUTABLE
    started = copy.deepcopy(old)
    started["status"] = {"startTime": "2026-11-27T10:00:00Z"}  # suspended after it ran: nothing may change
    assert judged("dev", moved, started) == IMMUTABLE


def test_a_jobs_completions_and_other_immutable_fields_cannot_change():
    """Review leftover: `make admit` said "left running" for a Job whose completions changed; the API server
    refuses it (`ValidateJobSpecUpdate`: completions of a NonIndexed Job, selector, completionMode,
    podFailurePolicy, backoffLimitPerIndex, managedBy, successPolicy are immutable, suspended or not)."""
    old = cpu_job(False)
    grown = copy.deepcopy(old)
    grown["spec"]["completions"] = 4
    assert judged("dev", grown, old) == ('refused: training/j: API server: Job.batch "j" is invalid: '
                                         "spec.completions: Invalid value: 4: field is immutable")
    for suspended in (False, True):
        before = cpu_job(suspended)
        after = copy.deepcopy(before)
        after["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
        assert judged("dev", after, before) == ('refused: training/j: API server: Job.batch "j" is invalid: '
                                                "spec.managedBy: Invalid value: ...: field is immutable")


def test_an_indexed_jobs_completions_change_only_in_tandem_with_parallelism():
    """`validateCompletions`: an Indexed Job's completions may change, but only to equal its parallelism."""
    old = cpu_job(True)
    old["spec"]["completionMode"] = "Indexed"
    alone, tandem = copy.deepcopy(old), copy.deepcopy(old)
    alone["spec"]["completions"] = 3
    assert judged("dev", alone, old) == ('refused: training/j: API server: Job.batch "j" is invalid: '
                                         "spec.completions: Invalid value: 3: can only be modified in tandem with "
                                         "spec.parallelism")
    tandem["spec"]["completions"] = tandem["spec"]["parallelism"] = 3
    assert not tenant_path("dev").judge(tandem, old).refused


def deployment(replicas: int = 1) -> dict:
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [container()]}}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": NS, "labels": {"kueue.x-k8s.io/queue-name": QUEUE}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": template}}


def test_a_deployment_scaled_by_update_gets_pods_kueue_admits_one_by_one():
    """deployment_webhook.go `ValidateUpdate` does not look at replicas: each new pod is a workload of its own."""
    assert judged("dev", deployment(3), deployment(1)) == (
        "updated: training/web (Deployment): scaled from 1 to 3 replicas: its controller adds or removes pods, and "
        "Kueue gates and admits each new one as on create; its pods admitted -> ClusterQueue cpu-batch, pod set "
        "main: flavor cpu-workers")


def test_a_deployments_new_template_is_validated_by_the_api_server():
    """A changed template is validated as a new one: a request above its own limit is refused."""
    old = deployment()
    over = copy.deepcopy(old)
    over["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "500m"}
    assert judged("dev", over, old) == (
        'refused: training/web: API server: the pod template of web: spec.containers[0].resources.requests: Invalid '
        'value: "1": must be less than or equal to cpu limit of 500m')


# --- ResourceQuota on UPDATE: a Service's type, a PVC's size -------------------------------------------------------

QUOTA = "refused: training/{}: ResourceQuota gke-ai-batch-objects: exceeded quota: gke-ai-batch-objects, "


def service(kind: str, **extra) -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": NS},
            "spec": {"type": kind, "selector": {"app": "x"}, "ports": [{"port": 80}], **extra}}


def claim(size: str) -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": NS},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}}


def bound_claim(size: str) -> dict:
    """A claim a pod has used: bound to its volume (in an expandable class, which a resize needs)."""
    obj = claim(size)
    obj["spec"].update(storageClassName="standard-rwo", volumeName="pvc-data")
    obj["status"] = {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": size}}
    return obj


def grown(obj: dict, size: str) -> dict:
    """The member's update: the same claim asking for `size`."""
    new = copy.deepcopy(obj)
    new["spec"]["resources"]["requests"]["storage"] = size
    return new


def test_a_service_made_a_load_balancer_by_update_is_held_to_the_quota():
    """The quota plugin's service evaluator handles UPDATE ("a service type can change"): it charges the
    difference between the new and the old object."""
    assert judged("prod", service("LoadBalancer", allocateLoadBalancerNodePorts=False), service("ClusterIP")) == \
        QUOTA.format("web") + ("requested: services.loadbalancers=1, used: services.loadbalancers=0, "
                               "limited: services.loadbalancers=0")
    assert judged("prod", service("NodePort"), service("ClusterIP")) == QUOTA.format("web") + (
        "requested: services.nodeports=1, used: services.nodeports=0, limited: services.nodeports=0")


def test_growing_a_claim_past_the_storage_quota_is_refused_and_within_it_passes():
    old = bound_claim("100Gi")
    assert judged("prod", grown(old, "2Ti"), old) == QUOTA.format("data") + (
        "requested: requests.storage=1948Gi, used: requests.storage=100Gi, limited: requests.storage=1Ti")
    assert judged("prod", grown(old, "200Gi"), old) == "updated: training/data (PersistentVolumeClaim)"


def test_a_claim_no_pod_has_used_cannot_be_grown():
    """An unbound claim's spec is immutable, its size included (`ValidatePersistentVolumeClaimUpdate`): the
    sandbox's kube-apiserver refused the growth before ResourceQuota, where `make admit` had named the quota."""
    assert judged("prod", claim("2Ti"), claim("100Gi")) == (
        'refused: training/data: API server: PersistentVolumeClaim "data" is invalid: spec: Forbidden: spec is '
        "immutable after creation except resources.requests and volumeAttributesClassName for bound claims")
    relabelled = claim("100Gi")
    relabelled["metadata"]["labels"] = {"a": "b"}
    assert judged("prod", relabelled, claim("100Gi")) == "updated: training/data (PersistentVolumeClaim)"


def test_the_refusal_prints_each_quantity_in_the_format_it_was_written_in():
    """String() keeps a quantity's format (k8s.io/apimachinery resource.Quantity, CanonicalizeBytes), and a
    difference keeps the new object's (Quantity.Sub): a claim grown by 500G asks for `500G`, not the `488281250Ki`
    the same bytes make in binary units; the 1Ti limit stays `1Ti`."""
    assert judged("prod", grown(bound_claim("600G"), "1100G"), bound_claim("600G")) == QUOTA.format("data") + (
        "requested: requests.storage=500G, used: requests.storage=600G, limited: requests.storage=1Ti")
    assert judged("prod", grown(bound_claim("0.5Ti"), "1.5T"), bound_claim("0.5Ti")) == QUOTA.format("data") + (
        "requested: requests.storage=950244186112, used: requests.storage=512Gi, limited: requests.storage=1Ti")


def test_an_update_that_charges_nothing_new_passes():
    """Quota judges only what grows: a relabelled Service, a shrunk claim (the API server refuses a shrink, which
    `make admit` leaves to it)."""
    relabelled = service("ClusterIP")
    relabelled["metadata"]["labels"] = {"a": "b"}
    assert judged("prod", relabelled, service("ClusterIP")) == "updated: training/web (Service)"
