"""Time limits: a team (or one of its LocalQueues) with `max_runtime` holds every job it submits to Kueue's
per-job limit, the `kueue.x-k8s.io/max-exec-time-seconds` label (Kueue v0.19.2: read from the job object's
labels, a positive int32, immutable while the job runs; when the admitted time runs out Kueue deactivates the
Workload), so that a stuck job cannot hold reserved TPUs forever.

Each team namespace carries its LocalQueues' limits as annotations (`max-runtime.gke-ai-batch.io/<queue>`,
`default-runtime.gke-ai-batch.io/<queue>`, in seconds), read by one policy for every team, so no policy lists the
teams:
- a ValidatingAdmissionPolicy refuses a Job, JobSet or bare Pod of a limited queue without the label, or with
  one above the maximum, on create and on an update that changes the label or the queue (a suspended job's
  labels may change), naming the value to set; an update that keeps both passes, so lowering a maximum never blocks the
  controllers' updates of work already admitted;
- where the cluster runs Kubernetes 1.36 or later (`cluster.version`), a MutatingAdmissionPolicy first sets the
  queue's default on a job that has none (admissionregistration.k8s.io/v1, GA in 1.36, KEP-3962: alpha 1.32,
  beta 1.34 off by default; GKE serves GA APIs without opting in). Below 1.36, or with the version unpinned,
  the job is refused with the default to set instead.

Deployments and StatefulSets are serving workloads that run until scaled down, which no time limit can hold:
a limited LocalQueue refuses them (their pods would hold its quota for as long as they run), and one without
a maximum takes them. A CronJob is not one: Kueue has no CronJob integration, but its Job integration suspends
and admits each Job the CronJob creates, and the limit holds each of them as any Job (each run ends by the
limit; how many run at once is the queue's quota, as for a member who submits a Job every night by hand). The
policy judges the limit of a CronJob's jobTemplate when the CronJob is submitted, so that a CronJob whose Jobs
the policy would refuse at every schedule is refused at once.
"""
from __future__ import annotations

from dataclasses import dataclass

from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.field_rules import duration_seconds
from gke_ai_batch.model.gke_pool_rules import version_key
from gke_ai_batch.model.team_config import TeamConfig
from gke_ai_batch.vocabulary import (
    DEFAULT_RUNTIME_ANNOTATION,
    MAX_EXEC_TIME_LABEL,
    MAX_RUNTIME_ANNOTATION,
    QUEUE_LABEL,
    TEAM_LABEL,
    Manifest,
)

MAX_ANNOTATION = MAX_RUNTIME_ANNOTATION
DEFAULT_ANNOTATION = DEFAULT_RUNTIME_ANNOTATION
MUTATING_MIN_VERSION = (1, 36)  # MutatingAdmissionPolicy v1 GA (KEP-3962 kep.yaml: stable v1.36)
MAX_INT32 = 2**31 - 1  # Kueue parses the label as an int32 (jobframework.MaximumExecutionTimeSecondsForObject)
POLICY = "gke-ai-batch-runtime-limits"
DEFAULTING = "gke-ai-batch-default-runtime"
API = "admissionregistration.k8s.io/v1"
# The kinds whose own labels Kueue reads the limit from, as the policies match them.
RESOURCES = (("batch", "jobs"), ("jobset.x-k8s.io", "jobsets"), ("", "pods"))


@dataclass(frozen=True)
class Limit:
    """A LocalQueue's limit, in seconds."""

    maximum: int
    default: int


def _seconds(path: str, max_runtime: str | None, default_runtime: str | None) -> Limit | None:
    if default_runtime is not None and max_runtime is None:
        raise ConfigError(f"{path}.default_runtime", f"{default_runtime!r} needs a max_runtime: the default is what a "
                          "job without a limit gets, under the maximum; set max_runtime too")
    if max_runtime is None:
        return None
    maximum = duration_seconds(max_runtime)
    default = duration_seconds(default_runtime) if default_runtime is not None else maximum
    for key, value, seconds in (("max_runtime", max_runtime, maximum), ("default_runtime", default_runtime, default)):
        if value is not None and not 0 < seconds <= MAX_INT32:
            raise ConfigError(f"{path}.{key}", f"{value!r} is {seconds} s; allowed: 1 s to {MAX_INT32} s (Kueue reads "
                              "the limit as a positive 32-bit number of seconds)")
    if default > maximum:
        raise ConfigError(f"{path}.default_runtime", f"{default_runtime!r} is above max_runtime {max_runtime!r}: a "
                          "job given the default would be refused; give a default at or below the maximum")
    return Limit(maximum, default)


def limits(i: int, team: TeamConfig) -> dict[str, Limit]:
    """The team's LocalQueue names that have a limit -> it: the LocalQueue's own, else the team's."""
    path = path_of("teams", i)
    team_limit = _seconds(path, team.max_runtime, team.default_runtime)
    names = [(j, lq.name, lq.max_runtime, lq.default_runtime) for j, lq in enumerate(team.local_queues)]
    if not names:
        return {team.local_queue or f"{team.name}-queue": team_limit} if team_limit else {}
    out: dict[str, Limit] = {}
    for j, name, max_runtime, default_runtime in names:
        own = _seconds(path_of("teams", i, "local_queues", j), max_runtime or team.max_runtime,
                       default_runtime or (team.default_runtime if max_runtime is None else None))
        if own:
            out[name] = own
    return out


def namespace_annotations(queue_limits: dict[str, Limit]) -> dict[str, str]:
    """What a team namespace carries for the policies."""
    out: dict[str, str] = {}
    for name, limit in sorted(queue_limits.items()):
        out[MAX_ANNOTATION + name] = str(limit.maximum)
        out[DEFAULT_ANNOTATION + name] = str(limit.default)
    return out


def mutating(version: str | None) -> bool:
    """Whether the cluster's pinned version has MutatingAdmissionPolicy v1 (an unpinned one is not assumed to)."""
    key = version_key(version or "")
    return key is not None and key[:2] >= MUTATING_MIN_VERSION


_ANNOTATIONS = "(has(namespaceObject.metadata.annotations) ? namespaceObject.metadata.annotations : {})"


def _job_labels(root: str) -> str:
    """The labels Kueue reads a job's queue and limit from: the object's own, a CronJob's jobTemplate's (the
    CronJob controller copies them onto every Job it creates)."""
    template = f"{root}.spec.jobTemplate"
    return (f"({root}.kind == 'CronJob' ? (has({template}.metadata) && has({template}.metadata.labels) ? "
            f"{template}.metadata.labels : {{}}) : (has({root}.metadata.labels) ? {root}.metadata.labels : {{}}))")


def _label(labels: str, key: str) -> str:
    return f"('{key}' in {labels} ? {labels}['{key}'] : '')"


_OLD_LABELS = f"request.operation == 'UPDATE' ? {_job_labels('oldObject')} : {{}}"
# A Pod that a controller owns (a Job's, a ReplicaSet's) is judged through its owner; any other ownerReference
# (a ConfigMap's, for garbage collection) leaves the pod its own job. Team members cannot set or change a
# controller owner (plan.admission_policies, kueue-holds).
_OWN_JOB = ("object.kind != 'Pod' || !has(object.metadata.ownerReferences) || "
            "!object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller)")
VARIABLES = (
    {"name": "annotations", "expression": _ANNOTATIONS},
    {"name": "labels", "expression": _job_labels("object")},
    {"name": "oldLabels", "expression": _OLD_LABELS},
    {"name": "queue", "expression": _label("variables.labels", QUEUE_LABEL)},
    {"name": "limited",
     "expression": f"({_OWN_JOB}) && ('{MAX_ANNOTATION}' + variables.queue) in variables.annotations"},
    {"name": "maximum",
     "expression": f"variables.limited ? variables.annotations['{MAX_ANNOTATION}' + variables.queue] : ''"},
    {"name": "default", "expression": f"variables.limited && ('{DEFAULT_ANNOTATION}' + variables.queue) in "
                                       f"variables.annotations ? variables.annotations['{DEFAULT_ANNOTATION}' + "
                                       "variables.queue] : variables.maximum"},
    {"name": "label", "expression": _label("variables.labels", MAX_EXEC_TIME_LABEL)},
    # An update that keeps the label and the queue passes: Kueue unsuspending a job, or its controller's own
    # updates, after the queue's maximum was lowered would otherwise be refused and leave admitted work stuck. A
    # suspended job's queue may change (Kueue refuses it only while running), and the new queue's maximum holds.
    {"name": "kept", "expression": f"request.operation == 'UPDATE' && "
                                   f"{_label('variables.oldLabels', MAX_EXEC_TIME_LABEL)} == variables.label && "
                                   f"{_label('variables.oldLabels', QUEUE_LABEL)} == variables.queue"},
)
_WHICH = "'LocalQueue ' + variables.queue + ' of team ' + namespaceObject.metadata.labels['" + TEAM_LABEL + "']"


# Deployments and StatefulSets serve until scaled down: no time limit can hold them, so a limited LocalQueue
# refuses them (their pods are charged to its quota for as long as they run).
SERVING = (("apps", "deployments"), ("apps", "statefulsets"))
_SERVES = "object.kind in ['Deployment', 'StatefulSet']"
# A CronJob's Jobs are each held to the limit, as any Job: it is judged when it is submitted by the labels of its
# jobTemplate, not refused at each schedule when its controller creates a Job (the MutatingAdmissionPolicy sets
# no default on it: a CronJob names its Jobs' limit itself).
CRON_JOBS = (("batch", "cronjobs"),)
_LABEL_IT = "(object.kind == 'CronJob' ? 'its jobTemplate' : 'it')"


def _rules(operations: list[str], resources: tuple[tuple[str, str], ...] = RESOURCES) -> list[dict[str, object]]:
    groups: dict[str, list[str]] = {}
    for group, plural in resources:
        groups.setdefault(group, []).append(plural)
    return [{"apiGroups": [g], "apiVersions": ["*"], "resources": r, "operations": operations}
            for g, r in groups.items()]


def validating_policy() -> tuple[Manifest, Manifest]:
    """Every job of a limited LocalQueue names a limit no larger than the queue's maximum."""
    policy = {"apiVersion": API, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": POLICY}, "spec": {
        "failurePolicy": "Fail", "matchConstraints": {"resourceRules": _rules(["CREATE", "UPDATE"],
                                                                               RESOURCES + SERVING + CRON_JOBS)},
        "variables": [dict(v) for v in VARIABLES],
        "validations": [
            {"expression": f"!({_SERVES}) || variables.kept || !variables.limited",
             "messageExpression": f"{_WHICH} + ' holds every job to at most ' + variables.maximum + ' s, and a ' + "
                                  "object.kind + ' serves until it is scaled down, which no time limit holds: name a "
                                  "LocalQueue without max_runtime'", "reason": "Invalid"},
            {"expression": f"{_SERVES} || variables.kept || !variables.limited || variables.label != ''",
             "messageExpression": f"{_WHICH} + ' holds every job to at most ' + variables.maximum + ' s: label ' + "
                                  f"{_LABEL_IT} + ' {MAX_EXEC_TIME_LABEL}: \"' + variables.default + "
                                  "'\" (the queue\\'s default), or another number of seconds up to ' + "
                                  "variables.maximum", "reason": "Invalid"},
            {"expression": f"{_SERVES} || variables.kept || !variables.limited || variables.label == '' || "
                           "(variables.label.matches('^[1-9][0-9]{0,9}$') && "
                           "int(variables.label) <= int(variables.maximum))",
             "messageExpression": f"{_WHICH} + ' holds every job to at most ' + variables.maximum + ' s; not "
                                  f"{MAX_EXEC_TIME_LABEL}: ' + variables.label + ' (the queue\\'s default is ' + "
                                  "variables.default + ')'", "reason": "Invalid"},
        ]}}
    binding = {"apiVersion": API, "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": POLICY},
               "spec": {"policyName": POLICY, "validationActions": ["Deny"], "matchResources": {
                   "namespaceSelector": {"matchExpressions": [{"key": TEAM_LABEL, "operator": "Exists"}]}}}}
    return policy, binding


# The one mutation: the queue's default as the limit of a job of a limited queue that names none (server-side
# apply merges it into the labels); for any other job an empty object, which changes nothing.
WITHOUT_A_LIMIT = "variables.limited && variables.label == ''"
APPLY_DEFAULT = (f"{WITHOUT_A_LIMIT} ? "
                 f"Object{{metadata: Object.metadata{{labels: {{'{MAX_EXEC_TIME_LABEL}': variables.default}}}}}} : "
                 "Object{}")


def mutating_policy() -> tuple[Manifest, Manifest]:
    """A job of a limited LocalQueue that names no limit gets the queue's default, at creation."""
    policy = {"apiVersion": API, "kind": "MutatingAdmissionPolicy", "metadata": {"name": DEFAULTING}, "spec": {
        "failurePolicy": "Fail", "reinvocationPolicy": "Never",
        "matchConstraints": {"resourceRules": _rules(["CREATE"])},
        "variables": [dict(v) for v in VARIABLES],
        "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": APPLY_DEFAULT}}]}}
    binding = {"apiVersion": API, "kind": "MutatingAdmissionPolicyBinding", "metadata": {"name": DEFAULTING},
               "spec": {"policyName": DEFAULTING, "matchResources": {
                   "namespaceSelector": {"matchExpressions": [{"key": TEAM_LABEL, "operator": "Exists"}]}}}}
    return policy, binding


def policies(version: str | None) -> tuple[Manifest, ...]:
    """The defaulting policy where the cluster has it, then the validating one."""
    return (*(mutating_policy() if mutating(version) else ()), *validating_policy())
