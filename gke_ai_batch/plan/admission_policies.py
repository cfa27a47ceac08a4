"""ValidatingAdmissionPolicies (CEL, admissionregistration.k8s.io/v1, GA in Kubernetes 1.30) that hold
every team namespace to the platform's rules, whatever RBAC lets a member create:

- team pods stay off nodes their quota does not reach: no `nodeName` (it skips the scheduler, so the
  nodes' taints and the flavor Kueue chose), no toleration without a key (it tolerates every taint),
  none for the system pool's taint, and GKE's accelerator taints only with a request for that
  accelerator (a cpu-only pod on TPU or GPU nodes would run outside the accelerator quota);
- pods and jobs name only the priorities their team may use, read from the namespace's
  `gke-ai-batch.io/priorities` annotation (the plan writes it; teams cannot change namespaces);
- a team member cannot take a pod or job out of Kueue's hands (`kueue_holds`): Kueue's scheduling gates,
  its `managed` label, `suspend` and controller owners are Kueue's and the workload controllers' to change.

The bindings select namespaces by the team label, so adding a team changes no policy; the kueue-holds policy
judges the requests of the namespace's team groups, read from its `gke-ai-batch.io/groups` annotation.
`make admit` evaluates these same objects (apiserver.cel_policies).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gke_ai_batch.vocabulary import (
    FLAVOR_LABEL,
    GPU_RESOURCE,
    GPU_TAINT_KEY,
    GROUPS_ANNOTATION,
    KUEUE_GROUP,
    MANAGED_LABEL,
    POD_GROUP_LABEL,
    PRIORITIES_ANNOTATION,
    PRIORITY_LABEL,
    SUSPENDING_PARENT_ANNOTATION,
    SYSTEM_POOL_TAINT,
    TEAM_LABEL,
    TPU_RESOURCE,
    TPU_TAINT_KEY,
    Manifest,
)

API = "admissionregistration.k8s.io/v1"
PREFIX = "gke-ai-batch"
TEAM_NAMESPACES = {"matchExpressions": [{"key": TEAM_LABEL, "operator": "Exists"}]}


def _requests(resource: str) -> str:
    """Whether any container of the pod asks for `resource` (a request, or a limit standing for one)."""
    return (f"object.spec.containers.exists(c, has(c.resources) && ((has(c.resources.requests) && "
            f"'{resource}' in c.resources.requests) || "
            f"(has(c.resources.limits) && '{resource}' in c.resources.limits)))")


def _tolerations_never(key: str) -> str:
    return f"variables.tolerations.all(t, !has(t.key) || t.key != '{key}')"


def _accelerator_taint(key: str, resource: str, name: str) -> dict[str, str]:
    return {"expression": f"{_tolerations_never(key)} || variables.{name}",
            "message": f"a pod that tolerates the {key} taint of accelerator nodes must request {resource}: "
                       "accelerator-free pods run on the nodes of their own flavor"}


POD_PLACEMENT = (
    # Checked on create only: the scheduler's binding sets nodeName later, and an update cannot set it.
    {"expression": "request.operation != 'CREATE' || !has(object.spec.nodeName) || object.spec.nodeName == ''",
     "message": "team pods are placed by the scheduler after Kueue admits them: spec.nodeName would skip the "
                "nodes' taints and the flavor Kueue chose"},
    {"expression": "variables.tolerations.all(t, has(t.key) && t.key != '')",
     "message": "a toleration without a key tolerates every taint, including those that keep team pods off "
                "the system pool and the accelerator nodes: name the taint's key"},
    {"expression": _tolerations_never(SYSTEM_POOL_TAINT["key"]),
     "message": f"the system pool ({SYSTEM_POOL_TAINT['key']}) runs GKE's and the platform's controllers, "
                "not team pods"},
    _accelerator_taint(TPU_TAINT_KEY, TPU_RESOURCE, "tpu"),
    _accelerator_taint(GPU_TAINT_KEY, GPU_RESOURCE, "gpu"),
)

# (policy suffix, the resources it matches, a CEL list of the pod specs the object holds)
PRIORITY_SHAPES = (
    ("pods", [("", "pods")], "[object.spec]"),
    ("templates", [("batch", "jobs"), ("apps", "deployments"), ("apps", "statefulsets")],
     "[object.spec.template.spec]"),
    ("jobsets", [("jobset.x-k8s.io", "jobsets")], "object.spec.replicatedJobs.map(r, r.template.spec.template.spec)"),
)
ALLOWED = f"namespaceObject.metadata.annotations['{PRIORITIES_ANNOTATION}']"
TEAM = f"namespaceObject.metadata.labels['{TEAM_LABEL}']"


def _priority_message(what: str) -> str:
    return (f"'team ' + {TEAM} + ' may use the priorities ' + ({ALLOWED} == '' ? 'none' : {ALLOWED}) + "
            f"'; not ' + {what}")


def _priority_validations() -> list[dict[str, str]]:
    label = f"object.metadata.labels['{PRIORITY_LABEL}']"
    return [
        {"expression": f"!has(object.metadata.labels) || !('{PRIORITY_LABEL}' in object.metadata.labels) || "
                       f"{label} in variables.allowed",
         "messageExpression": _priority_message(label), "reason": "Forbidden"},
        {"expression": "variables.podSpecs.all(s, !has(s.priorityClassName) || s.priorityClassName == '' || "
                       "s.priorityClassName in variables.allowed)",
         "messageExpression": _priority_message("variables.podSpecs.filter(s, has(s.priorityClassName) && "
                                                "!(s.priorityClassName in variables.allowed))[0].priorityClassName"),
         "reason": "Forbidden"},
    ]


def _rules(resources: list[tuple[str, str]], operations: list[str]) -> list[dict[str, Any]]:
    groups: dict[str, list[str]] = {}
    for group, plural in resources:
        groups.setdefault(group, []).append(plural)
    return [{"apiGroups": [g], "apiVersions": ["*"], "resources": r, "operations": operations}
            for g, r in groups.items()]


def _policy(name: str, rules: list[dict[str, Any]], variables: list[dict[str, str]],
            validations: list[dict[str, str]], conditions: list[dict[str, str]] | None = None
            ) -> tuple[Manifest, Manifest]:
    policy = {"apiVersion": API, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name},
              "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": rules},
                       **({"matchConditions": conditions} if conditions else {}),
                       "variables": variables, "validations": validations}}
    binding = {"apiVersion": API, "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name},
               "spec": {"policyName": name, "validationActions": ["Deny"],
                        "matchResources": {"namespaceSelector": TEAM_NAMESPACES}}}
    return policy, binding


FLEET_FLAVOR = f"{PREFIX}-fleet-flavor"
# The pod specs an object is or makes: a Pod's own, a JobSet's per replicated Job, a CronJob's Jobs' template, the
# template of a Job, Deployment or StatefulSet.
POD_SPECS = ("{o}.kind == 'Pod' ? [{o}.spec] : {o}.kind == 'JobSet' ? "
             "{o}.spec.replicatedJobs.map(r, r.template.spec.template.spec) : {o}.kind == 'CronJob' ? "
             "[{o}.spec.jobTemplate.spec.template.spec] : [{o}.spec.template.spec]")
_FLAVORS_NAMED = (f"map(s, has(s.nodeSelector) && '{FLAVOR_LABEL}' in s.nodeSelector ? "
                  f"s.nodeSelector['{FLAVOR_LABEL}'] : '')")
_FLAVORS_KEPT = "(request.operation == 'UPDATE' && variables.named == variables.oldNamed)"


def fleet_flavor_policy(flavor_workers: dict[str, str]) -> tuple[Manifest, Manifest]:
    """On a fleet manager, every pod template names its flavor (`gke-ai-batch.io/flavor` -> the worker holding it,
    draining workers' left out), and one object's templates name one worker's flavors: MultiKueue copies a
    workload's spec to a worker, not the flavor the manager charged (kueue v0.19.2 multikueue/workload.go
    `cloneForCreate`), so a job naming none could be charged to one worker and run on another, and one naming two
    workers' flavors would hold quota no worker admits. An update that keeps the flavors passes: Kueue itself
    unsuspends jobs and removes pod finalizers, also for a draining worker's work. A pod group is several pods,
    which no policy sees together, so the manager takes none."""
    literal = "{" + ", ".join(f"'{f}': '{w}'" for f, w in sorted(flavor_workers.items())) + "}"
    allowed = ", ".join(sorted(flavor_workers)) or "none, every worker is draining"
    return _policy(FLEET_FLAVOR, _rules([r for _, rs, _ in PRIORITY_SHAPES for r in rs], ["CREATE", "UPDATE"]), [
        {"name": "podSpecs", "expression": POD_SPECS.format(o="object")},
        {"name": "named", "expression": f"variables.podSpecs.{_FLAVORS_NAMED}"},
        {"name": "oldNamed", "expression": f"request.operation == 'UPDATE' ? ({POD_SPECS.format(o='oldObject')})"
                                           f".{_FLAVORS_NAMED} : []"},
        {"name": "workers", "expression": literal},
    ], [
        {"expression": f"{_FLAVORS_KEPT} || variables.named.all(f, f in variables.workers)",
         "message": f"on a fleet manager a job names the flavor it runs in (nodeSelector {FLAVOR_LABEL}: one of "
                    f"{allowed}): the worker holding that flavor runs it, and the manager charges its quota; "
                    "without it another worker could run it in another flavor; a draining worker's flavors take no "
                    "new jobs", "reason": "Invalid"},
        {"expression": f"{_FLAVORS_KEPT} || !variables.named.all(f, f in variables.workers) || "
                       "variables.named.all(f, variables.workers[f] == variables.workers[variables.named[0]])",
         "message": "a job's pod templates name the flavors of one worker: MultiKueue runs a workload whole on one "
                    "worker, so one naming two workers' flavors would hold the manager's quota with no worker to "
                    "admit it", "reason": "Invalid"},
        {"expression": "request.operation != 'CREATE' || object.kind != 'Pod' || !has(object.metadata.labels) || "
                       f"!('{POD_GROUP_LABEL}' in object.metadata.labels)",
         "message": "a pod group's pods are separate objects, which no admission policy sees together, so the "
                    "manager cannot hold them to one worker: run the group as a Job or JobSet", "reason": "Invalid"},
    ])


KUEUE_HOLDS = f"{PREFIX}-kueue-holds"
_ON_UPDATE = "(request.operation == 'UPDATE')"
# A controller owner as Kueue's owner walk reads it: kind, name and uid (a changed kind or name with a kept uid
# would point the walk elsewhere).
_CONTROLLERS = ("(has({o}.metadata.ownerReferences) ? {o}.metadata.ownerReferences : [])"
                ".filter(r, has(r.controller) && r.controller).map(r, r.kind + '/' + r.name + '/' + r.uid)")
_GATES = "(has({o}.spec.schedulingGates) ? {o}.spec.schedulingGates : []).map(g, g.name)"
_LABEL = "(has({o}.metadata.labels) && '{k}' in {o}.metadata.labels ? {o}.metadata.labels['{k}'] : '')"
_ANNOTATION = ("(has({o}.metadata.annotations) && '{k}' in {o}.metadata.annotations ? "
               "{o}.metadata.annotations['{k}'] : '')")
_SUSPENDED = "(has({o}.spec.suspend) && {o}.spec.suspend)"
_PARALLELISM = "(has({o}.spec.parallelism) ? {o}.spec.parallelism : 1)"  # the API server's default


# Whether the requester is in a group of the namespace's team, from the namespace's GROUPS_ANNOTATION: the holds
# judge only those requests. Kueue, the Job, JobSet and ReplicaSet controllers and the kubelet run as service
# accounts or nodes, in no team group, and must still ungate, unsuspend, own and delete. A variable, not a
# matchCondition: match conditions cannot read the namespace (only validations and variables get
# `namespaceObject`), and one policy for every team is what keeps the objects a team costs down (issue 51).
MEMBER = {"name": "member", "expression": (
    "has(request.userInfo.groups) && has(namespaceObject.metadata.annotations) && "
    f"'{GROUPS_ANNOTATION}' in namespaceObject.metadata.annotations && request.userInfo.groups.exists(g, "
    f"g in namespaceObject.metadata.annotations['{GROUPS_ANNOTATION}'].split(','))")}


def members_only(validations: Iterable[Manifest]) -> list[Manifest]:
    """Each validation, passing every request but a team member's."""
    return [{**v, "expression": f"!variables.member || ({v['expression']})"} for v in validations]


KUEUE_HOLD_VALIDATIONS = (
    # Kubernetes lets any caller with update on pods remove scheduling gates (Pod Scheduling Readiness), and
    # Kueue's pod ValidateUpdate does not look at them (pkg/controller/jobs/pod/pod_webhook.go, v0.19.2).
    {"expression": f"!{_ON_UPDATE} || object.kind != 'Pod' || variables.oldGates.all(g, "
                   f"!g.startsWith('{KUEUE_GROUP}/') || g in variables.gates)",
     "message": f"only Kueue removes its scheduling gates ({KUEUE_GROUP}/admission, /topology, /elastic-job): "
                "it does when the pod's workload is admitted, on the nodes it was given; without them the pod "
                "would run outside its team's quota"},
    # Kueue refuses values other than "true" (validateManagedLabel) but not removing the label; its reconciler
    # then no longer looks at the pod.
    {"expression": f"!{_ON_UPDATE} || object.kind != 'Pod' || "
                   f"{_LABEL.format(o='oldObject', k=MANAGED_LABEL)} == {_LABEL.format(o='object', k=MANAGED_LABEL)}",
     "message": f"the {MANAGED_LABEL} label is Kueue's: removing or changing it takes the pod out of Kueue's "
                "hands"},
    # A pod carrying it is gated by Kueue's pod webhook but never labelled managed (Default in pod_webhook.go):
    # the parent controller that set it is expected to admit it, and no reconciler looks at a bare one.
    {"expression": f"object.kind != 'Pod' || {_ANNOTATION.format(o='object', k=SUSPENDING_PARENT_ANNOTATION)} "
                   f"== '' || ({_ON_UPDATE} && {_ANNOTATION.format(o='oldObject', k=SUSPENDING_PARENT_ANNOTATION)} "
                   f"== {_ANNOTATION.format(o='object', k=SUSPENDING_PARENT_ANNOTATION)})",
     "message": f"the {SUSPENDING_PARENT_ANNOTATION} annotation is set by Kueue on the pod templates of the "
                "Deployments and StatefulSets it manages: on a pod of a team member's it would gate a pod that "
                "nothing admits or meters"},
    # Kueue's Job update validation does not look at suspend; Kueue unsuspends what it admits.
    {"expression": f"!{_ON_UPDATE} || object.kind == 'Pod' || !{_SUSPENDED.format(o='oldObject')} || "
                   f"{_SUSPENDED.format(o='object')}",
     "message": "only Kueue unsuspends a job (spec.suspend true to false), when it admits its workload: a job "
                "unsuspended by hand would start its pods before Kueue charges them to the team's quota"},
    # Kubernetes lets a Job's parallelism change while it runs, and the Job controller creates the new pods at once:
    # they are not gated (their Job is Kueue's). Kueue v0.19.2 only then finds no workload matching the Job's counts
    # and suspends it (jobframework/reconciler.go `ensureOneWorkload`: "job with no matching workload, suspending";
    # elastic Jobs, which would be judged as a new slice, are off), and suspending deletes the pods gracefully
    # (KEP-2232), so they would run outside the quota through their terminationGracePeriodSeconds. A suspended
    # Job's parallelism may change: Kueue judges its new workload before any pod starts. (A JobSet's parallelism is
    # immutable: JobSet v0.12.0's ElasticJobSet gate is alpha and off.)
    {"expression": f"!{_ON_UPDATE} || object.kind != 'Job' || {_SUSPENDED.format(o='oldObject')} || "
                   f"{_PARALLELISM.format(o='object')} <= {_PARALLELISM.format(o='oldObject')}",
     "message": "a running job's parallelism grows only while it is suspended: the Job controller starts the new "
                "pods at once, before Kueue suspends a job whose admitted workload no longer matches, and they run, "
                "charged to no quota, through their termination grace period; suspend the job, then change it, and "
                "Kueue admits it again"},
    # A controller knows its pods by their labels (a Job's selector, a ReplicaSet's pod-template-hash): one that no
    # longer matches is released (the controller drops its ownerReference itself) and replaced, and the released
    # pod runs on, outside the quota its job's workload charges. Adding a label changes no selector's match.
    {"expression": f"!{_ON_UPDATE} || object.kind != 'Pod' || size(variables.oldControllers) == 0 || "
                   "!has(oldObject.metadata.labels) || oldObject.metadata.labels.all(k, "
                   "has(object.metadata.labels) && k in object.metadata.labels && "
                   "object.metadata.labels[k] == oldObject.metadata.labels[k])",
     "message": "a pod's labels are how its controller knows it (a Job's selector): a team member may add labels "
                "to a controller's pod but not remove or change one, or the controller releases the pod and it "
                "runs on outside the quota its job is charged"},
    # Kueue's pod and job webhooks stop at an owner Kueue manages (jobframework FindAncestorJobManagedByKueue)
    # and leave the object to it; "same-namespace ownership spoofing is out of scope" (jobframework/reconciler.go).
    # Removed, the owner no longer holds the object: a Job's pod without it is left as Kueue found it, ungated, by
    # a Job whose workload no longer counts it. A Deployment, StatefulSet or ReplicaSet owned by a Kueue job is
    # left to that job in turn, with the pods it makes.
    {"expression": "variables.controllers.all(u, u in variables.oldControllers) && "
                   "variables.oldControllers.all(u, u in variables.controllers)",
     "message": "a controller ownerReference is set by the controller that creates the object and removed by it or "
                "the garbage collector: one a team member sets, changes or removes would leave the object to an "
                "owner that never created it, or take it from the job whose workload charges its quota, so no "
                "quota would be charged for it"},
)


# The apps kinds whose pods Kueue's pod webhook walks through to an owner (a Deployment's ReplicaSet, a
# StatefulSet): one a team member made the child of a job Kueue manages would have its pods left to that job,
# ungated and uncharged. Team members may not write ReplicaSets (the team role reads them); held all the same.
OWNED_APPS = (("apps", "deployments"), ("apps", "statefulsets"), ("apps", "replicasets"))


def kueue_holds_policy() -> tuple[Manifest, Manifest]:
    """A member of a namespace's team groups keeps every pod, Job and JobSet of it in Kueue's hands: no removing
    Kueue's scheduling gates or `managed` label, no `pod-suspending-parent` annotation of their own, no
    unsuspending, no growing a running Job, no controller owner set, changed or removed (on Deployments,
    StatefulSets and ReplicaSets too). Each expression is linear in the pod's gates, the object's ownerReferences
    and the requester's groups times the team's, far inside the API server's CEL cost budget per evaluation."""
    old = f"{_ON_UPDATE} ? ({{l}}) : []"
    return _policy(KUEUE_HOLDS, [
        *_rules([("", "pods"), ("batch", "jobs"), ("jobset.x-k8s.io", "jobsets"), *OWNED_APPS],
                ["CREATE", "UPDATE"])], [
        MEMBER,
        {"name": "gates", "expression": f"object.kind == 'Pod' ? {_GATES.format(o='object')} : []"},
        {"name": "oldGates", "expression": old.format(l=f"object.kind == 'Pod' ? {_GATES.format(o='oldObject')} "
                                                        ": []")},
        {"name": "controllers", "expression": _CONTROLLERS.format(o="object")},
        {"name": "oldControllers", "expression": old.format(l=_CONTROLLERS.format(o="oldObject"))},
    ], members_only({**v, "reason": "Forbidden"} for v in KUEUE_HOLD_VALIDATIONS))


def admission_policies() -> tuple[Manifest, ...]:
    """Every policy with its binding: pod placement, then priorities per object shape."""
    # Tolerations are checked on update too: the API server lets a running pod gain tolerations ("pod updates
    # may not change fields other than ... spec.tolerations (only additions to existing tolerations)"), which
    # would otherwise keep a pod on nodes, or let it stay through taints, its quota does not reach.
    out = list(_policy(f"{PREFIX}-pod-placement", _rules([("", "pods")], ["CREATE", "UPDATE"]), [
        {"name": "tolerations", "expression": "has(object.spec.tolerations) ? object.spec.tolerations : []"},
        {"name": "tpu", "expression": _requests(TPU_RESOURCE)},
        {"name": "gpu", "expression": _requests(GPU_RESOURCE)},
    ], [dict(v) for v in POD_PLACEMENT]))
    for suffix, resources, specs in PRIORITY_SHAPES:
        out += _policy(f"{PREFIX}-priorities-{suffix}", _rules(resources, ["CREATE", "UPDATE"]), [
            {"name": "allowed", "expression": f"{ALLOWED}.split(',')"},
            {"name": "podSpecs", "expression": specs},
        ], _priority_validations())
    return (*out, *kueue_holds_policy())
