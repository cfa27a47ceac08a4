"""ValidatingAdmissionPolicies on what a team's pod specs ask of nodes and of other teams beyond their quota, on
every Pod and every template that makes pods (Job, JobSet, CronJob, Deployment, StatefulSet), so a workload whose
pods would be refused is refused itself:

- a bounded grace period (`terminationGracePeriodSeconds` at most the team's `max_termination_grace`, read from the
  namespace's `gke-ai-batch.io/termination-grace` annotation). Kueue frees a stopped job's quota once the job is no
  longer active (kueue v0.19.2 pkg/controller/jobframework/reconciler.go: on eviction, `if !job.IsActive()` it
  unsets the quota reservation; pkg/controller/jobs/job/job_controller.go: `IsActive` is `Status.Active != 0`), and
  a Job's `status.active` leaves terminating pods out (kubernetes v1.33.13 pkg/controller/job counts
  `controller.FilterActivePods`, and `IsPodActive` excludes a pod with a deletionTimestamp). A pod that ignores
  SIGTERM keeps its nodes, charged to no queue, for its whole grace period after every stop Kueue makes: a
  preemption, a reclaim, a max_runtime deactivation, a PodsReady timeout;
- pod affinity and anti-affinity terms (required and preferred) that select their own namespace only: no
  `namespaceSelector` (`{}` selects every namespace) and no `namespaces` but the pod's own. The scheduler's
  InterPodAffinity filter refuses an incoming pod a node whose topology domain holds an existing pod with a
  required anti-affinity term matching it (kubernetes v1.33.13 pkg/scheduler/framework/plugins/interpodaffinity
  filtering.go `getExistingAntiAffinityCounts`), and a term matches a pod of another namespace only when its
  `namespaces` name that namespace or its `namespaceSelector` selects it (framework/types.go `AffinityTerm.Matches`;
  with neither, `getNamespacesFromPodAffinityTerm` gives the term its own pod's namespace). So one pod with
  `namespaceSelector: {}` on a zone key would keep every other team's matching pods out of a whole zone; the same
  term without it holds only the team's own pods. Existing pods' preferred terms score incoming pods the same way
  (scoring.go `processExistingPod`), so preferred terms are held too;
- volumes of Pod Security `restricted`'s types (k8s.io/pod-security-admission v0.33.13
  policy/check_restrictedVolumes.go: configMap, csi, downwardAPI, emptyDir, ephemeral, image, persistentVolumeClaim,
  projected, secret), CSI only for the Cloud Storage FUSE driver, and hostPath only in a namespace whose Pod
  Security exception is privileged (what such an exception is for). The namespaces enforce `baseline`, which
  refuses hostPath only; the kubelet mounts nfs, iscsi, cephfs, glusterfs, rbd and the other in-tree network
  volumes from the node's own network, outside the namespace's NetworkPolicy.

Each binding selects team namespaces and matches every requester (a controller's pods are the member's template),
but the affinity policy leaves out the pods the controller manager creates (CONTROLLERS_POD).
An update that adds nothing refused passes, so objects made before a bound was lowered still take their
controllers' finalizer and status-driven updates.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from gke_ai_batch.plan.admission_policies import POD_SPECS, PREFIX, _policy, _rules
from gke_ai_batch.vocabulary import GCS_FUSE_CSI_DRIVER, GRACE_ANNOTATION, POD_SECURITY_LABEL, Manifest

TERMINATION_GRACE = f"{PREFIX}-termination-grace"
AFFINITY_NAMESPACES = f"{PREFIX}-affinity-namespaces"
VOLUME_TYPES = f"{PREFIX}-volume-types"
# Every kind a team creates that is or makes pods.
POD_MAKERS = [("", "pods"), ("batch", "jobs"), ("batch", "cronjobs"), ("apps", "deployments"),
              ("apps", "statefulsets"), ("jobset.x-k8s.io", "jobsets")]
# Pod Security restricted's volume types (check_restrictedVolumes.go, v0.33.13), csi apart: it is held to the
# drivers below.
RESTRICTED_VOLUMES = ("configMap", "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim",
                      "projected", "secret")
CSI_DRIVERS = (GCS_FUSE_CSI_DRIVER,)
_UPDATE = "request.operation == 'UPDATE'"


def _specs(o: str) -> str:
    return f"({POD_SPECS.format(o=o)})"


def _nothing_new(policy: str, name: str, found: Callable[[str], str], message: str,
                 before: Sequence[dict[str, str]] = (), conditions: list[dict[str, str]] | None = None
                 ) -> tuple[Manifest, Manifest]:
    """A policy on every pod maker refusing what `found` (CEL over `object` or `oldObject`) lists in a pod spec,
    unless an update only keeps items that were there before: an object made before the rule stays editable."""
    old = f"old{name[0].upper()}{name[1:]}"
    return _policy(policy, _rules(POD_MAKERS, ["CREATE", "UPDATE"]), [
        *before,
        {"name": name, "expression": found("object")},
        {"name": old, "expression": f"{_UPDATE} ? {found('oldObject')} : []"},
    ], [
        {"expression": f"variables.{name}.size() == 0 || ({_UPDATE} && variables.{name}.all(x, x in "
                       f"variables.{old}))", "messageExpression": message, "reason": "Forbidden"},
    ], conditions=conditions)


def _graces(o: str) -> str:
    """CEL: the grace periods of o's pod specs above the namespace's bound."""
    return (f"{_specs(o)}.filter(s, has(s.terminationGracePeriodSeconds) && "
            "s.terminationGracePeriodSeconds > variables.bound).map(s, s.terminationGracePeriodSeconds)")


def termination_grace_policy() -> tuple[Manifest, Manifest]:
    """Every pod spec's terminationGracePeriodSeconds at most the namespace's bound (unset is the API server's 30,
    which the team bound is never below)."""
    return _nothing_new(
        TERMINATION_GRACE, "over", _graces,
        "'namespace ' + namespaceObject.metadata.name + ' gives a pod at most ' + string(variables.bound) + ' s to "
        "stop (teams[].max_termination_grace): Kueue frees a stopped job\\'s quota as soon as its pods are "
        "terminating, so the grace period is time on the nodes charged to no queue; set "
        "terminationGracePeriodSeconds to ' + string(variables.bound) + ' or less, not ' + string(variables.over[0])",
        before=[{"name": "bound",
                 "expression": f"int(namespaceObject.metadata.annotations['{GRACE_ANNOTATION}'])"}])


def _terms(affinity: str) -> str:
    """CEL: the PodAffinityTerms of a PodAffinity or PodAntiAffinity, required and preferred."""
    required, preferred = (f"{affinity}.{w}DuringSchedulingIgnoredDuringExecution" for w in ("required", "preferred"))
    return (f"(has({required}) ? {required} : []) + "
            f"(has({preferred}) ? {preferred}.map(w, w.podAffinityTerm) : [])")


_AFFINITY = "s.affinity.{k}"
_SPEC_TERMS = (f"(has(s.affinity) && has(s.affinity.podAffinity) ? {_terms(_AFFINITY.format(k='podAffinity'))} "
               f": []) + (has(s.affinity) && has(s.affinity.podAntiAffinity) ? "
               f"{_terms(_AFFINITY.format(k='podAntiAffinity'))} : [])")


def _away(o: str) -> str:
    """CEL: per pod spec of o, its first term that reaches another namespace, as text for the message: its
    namespaceSelector, or the namespaces it names."""
    return (f"{_specs(o)}.map(s, ({_SPEC_TERMS}).filter(t, has(t.namespaceSelector) || "
            "(has(t.namespaces) && t.namespaces.exists(n, n != request.namespace))).map(t, "
            "has(t.namespaceSelector) ? 'namespaceSelector' : 'namespaces ' + t.namespaces.join(', ')))"
            ".filter(l, l.size() > 0).map(l, l[0])")


# A pod the controller manager creates from a template (its controllers run as kube-system service accounts with
# --use-service-account-credentials): the template was judged when the member wrote it, and what the pod adds comes
# from webhooks. JobSet's exclusive placement adds a required affinity and anti-affinity with `namespaceSelector:
# {}` on the exclusive-topology key to every leader pod (jobset v0.12.0 pkg/webhooks/pod_webhook.go
# `setExclusiveAffinities`): one JobSet per node pool across namespaces, which the sandbox's real API server showed
# this policy refusing (every multislice JobSet's pods, FailedCreate). A member cannot act as those accounts.
CONTROLLERS_POD = ("request.resource.resource == 'pods' && has(request.userInfo.username) && "
                   "request.userInfo.username.startsWith('system:serviceaccount:kube-system:')")


def affinity_namespaces_policy() -> tuple[Manifest, Manifest]:
    """No pod affinity or anti-affinity term a member writes selects another namespace."""
    return _nothing_new(
        AFFINITY_NAMESPACES, "away", _away,
        "'pod affinity and anti-affinity terms select pods of their own namespace only: the scheduler keeps an "
        "incoming pod off every node of a topology domain (a host, a zone, a region) where an existing pod has a "
        "required anti-affinity term selecting it, so a term reaching other namespaces would keep other teams\\' "
        "pods out; drop ' + variables.away[0]",
        conditions=[{"name": "not-a-controllers-pod", "expression": f"!({CONTROLLERS_POD})"}])


_ALLOWED_VOLUME = " || ".join(
    [f"has(v.{t})" for t in RESTRICTED_VOLUMES]
    + [f"(has(v.csi) && v.csi.driver in [{', '.join(repr(d) for d in CSI_DRIVERS)}])",
       "(variables.privileged && has(v.hostPath))"])


def _refused_volumes(o: str) -> str:
    """CEL: per pod spec of o, the name of its first volume of a type not allowed."""
    return (f"{_specs(o)}.map(s, has(s.volumes) ? s.volumes : [])"
            f".map(l, l.filter(v, !({_ALLOWED_VOLUME})).map(v, v.name)).filter(l, l.size() > 0).map(l, l[0])")

_ENFORCED = f"'{POD_SECURITY_LABEL}/enforce'"


def volume_types_policy() -> tuple[Manifest, Manifest]:
    """Every volume of a pod spec of an allowed type."""
    allowed = ", ".join(RESTRICTED_VOLUMES)
    drivers = ", ".join(CSI_DRIVERS)
    return _nothing_new(
        VOLUME_TYPES, "refused", _refused_volumes,
        f"'team pods mount {allowed} volumes (Pod Security restricted\\'s types), csi only of the {drivers} driver "
        "(Cloud Storage FUSE)' + (variables.privileged ? ' and hostPath (the namespace\\'s privileged exception)' : "
        "'') + ': the kubelet mounts nfs, iscsi, cephfs, glusterfs, rbd and the other network volumes from the "
        "node\\'s own network, outside the namespace\\'s NetworkPolicy; not volume ' + variables.refused[0]",
        before=[{"name": "privileged", "expression": f"has(namespaceObject.metadata.labels) && {_ENFORCED} in "
                                                     f"namespaceObject.metadata.labels && namespaceObject.metadata."
                                                     f"labels[{_ENFORCED}] == 'privileged'"}])


def pod_spec_policies() -> tuple[Manifest, ...]:
    return (*termination_grace_policy(), *affinity_namespaces_policy(), *volume_types_policy())
