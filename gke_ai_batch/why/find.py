"""The job's Workload, found as Kueue links them: a Workload is owned (ownerReferences, by uid) by the object Kueue
manages, a Job, a JobSet or a Pod; a Deployment's or StatefulSet's pods are each managed as Pods (Kueue v0.19.2
pkg/controller/jobframework/reconciler.go sets the owner reference; the pod integration covers the pods of both)."""
from __future__ import annotations

import json

from .kube import Forbidden, Kube, Obj, WhyError, last_line, refusal

# What `<namespace>/<job>` may name, in the order asked: the kinds Kueue manages in this platform's stacks.
KINDS = ("jobs.batch", "jobsets.jobset.x-k8s.io", "pods", "deployments.apps", "statefulsets.apps")
_POD_OWNERS = {"Deployment", "StatefulSet"}


def parse_ref(ref: str) -> tuple[str, str]:
    ns, _, name = ref.partition("/")
    if not ns or not name or "/" in name:
        raise WhyError(f"{ref!r}: name the job as <namespace>/<job>, for example research/train-llm")
    return ns, name


def uid(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def owners(obj: Obj) -> set[str]:
    return {str(r.get("uid")) for r in (obj.get("metadata") or {}).get("ownerReferences") or []}


def job_object(kube: Kube, ns: str, name: str) -> Obj:
    """The job itself, whichever kind it is: one request for every kind (kubectl prints what it finds and one
    error per kind it may not read)."""
    ok, out, err = kube.raw(["get", *(f"{k}/{name}" for k in KINDS), "-n", ns, "-o", "json", "--ignore-not-found"])
    items = [] if not out.strip() else _items(json.loads(out))
    if items:
        return items[0]
    if not ok:
        raise refusal(err, f"finding job {ns}/{name}")
    raise WhyError(f"job {ns}/{name} does not exist (no Job, JobSet, Pod, Deployment or StatefulSet of that name)")


def _items(doc: Obj) -> list[Obj]:
    return list(doc.get("items") or []) if doc.get("kind") == "List" else [doc]


def workloads(kube: Kube, ns: str) -> list[Obj]:
    return list(kube.get(["workloads.kueue.x-k8s.io", "-n", ns], f"reading the Workloads of namespace {ns}")
                .get("items") or [])


def workloads_of(kube: Kube, job: Obj, all_workloads: list[Obj]) -> list[Obj]:
    """The Workloads owned by the job, or for a Deployment or StatefulSet by its pods (through its ReplicaSets)."""
    mine = {uid(job)}
    if job.get("kind") in _POD_OWNERS:
        ns = job["metadata"]["namespace"]
        found = kube.get(["replicasets.apps,pods", "-n", ns], f"reading the pods of {job['kind']} "
                         f"{ns}/{job['metadata']['name']}").get("items") or []
        for _ in range(2):  # Deployment -> ReplicaSet -> Pod; StatefulSet -> Pod
            mine |= {uid(o) for o in found if owners(o) & mine}
    return [w for w in all_workloads if owners(w) & mine]


def local_queue(kube: Kube, ns: str, name: str) -> Obj | None:
    """The LocalQueue (its ClusterQueue and the flavors it reaches); None when it does not exist."""
    ok, out, err = kube.raw(["get", f"localqueues.kueue.x-k8s.io/{name}", "-n", ns, "-o", "json"])
    if ok:
        return dict(json.loads(out))
    if "NotFound" in err or "not found" in err:
        return None
    raise refusal(err, f"reading LocalQueue {ns}/{name}")


# Kueue v0.19.2 serves the visibility API at v1beta2 and v1beta1 (pkg/visibility/server.go registers both), a
# LocalQueue's pending workloads as the subresource localqueues/pendingworkloads (apis/visibility/v1beta2).
VISIBILITY = "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/{ns}/localqueues/{lq}/pendingworkloads"


def positions(kube: Kube, ns: str, lq: str) -> tuple[dict[str, tuple[int, int]], str]:
    """Each pending Workload's place (in the LocalQueue, in the ClusterQueue, from 0), or why it is unknown."""
    ok, out, err = kube.raw(["get", "--raw", VISIBILITY.format(ns=ns, lq=lq)])
    if not ok:
        why = refusal(err, "the queue position")
        return {}, str(why) if isinstance(why, Forbidden) else f"the visibility API did not answer ({last_line(err)})"
    return {str((i.get("metadata") or {}).get("name")): (int(i.get("positionInLocalQueue", 0)),
                                                         int(i.get("positionInClusterQueue", 0)))
            for i in json.loads(out).get("items") or []}, ""


def provisioning_requests(kube: Kube, wl: Obj) -> tuple[list[Obj], str]:
    """The ProvisioningRequests Kueue made for the Workload (it owns them: the provisioning controller's
    SetControllerReference in pkg/controller/admissionchecks/provisioning/controller.go), or why none are shown."""
    ns = wl["metadata"]["namespace"]
    ok, out, err = kube.raw(["get", "provisioningrequests.autoscaling.x-k8s.io", "-n", ns, "-o", "json"])
    if not ok:
        return [], str(refusal(err, "the ProvisioningRequest's state"))
    return [p for p in json.loads(out).get("items") or [] if uid(wl) in owners(p)], ""
