"""ValidatingAdmissionPolicies that bound what a team namespace may hold, beyond placement and priorities
(plan.admission_policies):

- no `kubernetes.io/service-account-token` Secret: the token controller would fill it with a token of the
  namespace's service account that never expires (Kubernetes "Service account token Secrets"), outliving
  the member who made it and every rotation; pods get short-lived projected tokens instead;
- a cap on the free text of one Pod, Job, JobSet, Deployment or StatefulSet (annotations and labels, its
  templates' too, container commands, arguments, environment, probes and lifecycle hooks, CSI volume
  attributes): Kueue caches each of them, and a Workload copy of each job's pod
  templates, in every replica (plan.installs sizes its memory by count x this cap), so a flood of large
  objects would OOM-kill it and, with its webhooks failing closed, stop every team;
- a privileged namespace runs on the flavors its Pod Security exception names, and on no other: its pods
  and templates must select one of them by the flavor node label (`gke-ai-batch.io/flavor`), so the
  scheduler can place them on those pools only and Kueue assigns no other flavor.

The cap and the flavors are read from the namespace's annotations, so the policies list no team. Each
binding selects team namespaces and matches every requester: controllers copy templates into pods, so
a controller's request is held to what the member's template was.
"""
from __future__ import annotations

from gke_ai_batch.plan.admission_policies import POD_SPECS, PREFIX, PRIORITY_SHAPES, _policy, _rules
from gke_ai_batch.vocabulary import (
    FLAVOR_LABEL,
    FLAVORS_ANNOTATION,
    OBJECT_SIZE_ANNOTATION,
    SERVICE_ACCOUNT_TOKEN,
    Manifest,
)

# A pod may exceed its template's cap by this: the Job, JobSet and Kueue controllers label and annotate the pods
# they create (job-name, controller-uid, jobset.sigs.k8s.io/*, kueue.x-k8s.io/podset...), so a template just
# under the cap must not make pods over it.
POD_HEADROOM = 4096
SERVICE_ACCOUNT_TOKENS = f"{PREFIX}-no-service-account-tokens"
OBJECT_SIZE = f"{PREFIX}-object-size"
PRIVILEGED_FLAVORS = f"{PREFIX}-privileged-flavors"
WORKLOADS = [r for _, rs, _ in PRIORITY_SHAPES for r in rs]

# The templates' metadata of each shape (a Pod's own metadata is the object's): a JobSet's Job templates and
# their pod templates, a Job's, Deployment's or StatefulSet's pod template.
_TEMPLATE_METAS = ("{o}.kind == 'Pod' ? [] : {o}.kind == 'JobSet' ? "
                   "{o}.spec.replicatedJobs.map(r, has(r.template.metadata) ? r.template.metadata : {{}}) + "
                   "{o}.spec.replicatedJobs.map(r, has(r.template.spec.template.metadata) ? "
                   "r.template.spec.template.metadata : {{}}) : "
                   "[has({o}.spec.template.metadata) ? {o}.spec.template.metadata : {{}}]")


def _map_bytes(m: str, field: str) -> str:
    """Keys and values of a metadata map (labels or annotations), in bytes (CEL's size() of a string counts
    code points; the free text is ASCII in practice and the cap is an order of magnitude, not a byte count)."""
    return f"(has({m}.{field}) ? {m}.{field}.map(k, size(k) + size({m}.{field}[k])).sum() : 0)"


def _strings(c: str, field: str) -> str:
    return f"(has({c}.{field}) ? {c}.{field}.map(x, size(x)).sum() : 0)"


def _handler(h: str) -> str:
    """A probe's or lifecycle hook's free text (core/v1 Probe, LifecycleHandler): exec's command, httpGet's path
    and headers."""
    return (f"(has({h}.exec) ? {_strings(f'{h}.exec', 'command')} : 0) + (has({h}.httpGet) ? "
            f"(has({h}.httpGet.path) ? size({h}.httpGet.path) : 0) + (has({h}.httpGet.httpHeaders) ? "
            f"{h}.httpGet.httpHeaders.map(x, size(x.name) + size(x.value)).sum() : 0) : 0)")


_HANDLERS = " + ".join(
    [f"(has(c.{p}) ? {_handler(f'c.{p}')} : 0)" for p in ("livenessProbe", "readinessProbe", "startupProbe")] +
    [f"(has(c.lifecycle) && has(c.lifecycle.{h}) ? {_handler(f'c.lifecycle.{h}')} : 0)"
     for h in ("postStart", "preStop")])
_CONTAINER_BYTES = (f"{_strings('c', 'command')} + {_strings('c', 'args')} + "
                    "(has(c.env) ? c.env.map(e, size(e.name) + (has(e.value) ? size(e.value) : 0)).sum() : 0) + "
                    f"{_HANDLERS}")
_VOLUME_BYTES = f"(has(v.csi) ? {_map_bytes('v.csi', 'volumeAttributes')} : 0)"


def _text_bytes(o: str) -> str:
    """One CEL expression: the bytes of free text of object `o` (its metadata and its templates', then every
    container's command, arguments, environment, probes' and lifecycle hooks' commands, paths and headers, and
    the CSI volumes' attributes). Each list and map of the object is walked once, at a few units of CEL cost per
    element: the API server's 3 MiB request limit bounds an object to some 10^6 elements, inside the 10,000,000
    budget per binding; and an object past it would be refused (failurePolicy Fail), as the cap would."""
    metas = f"([{o}.metadata] + ({_TEMPLATE_METAS.format(o=o)}))"
    specs = f"({POD_SPECS.format(o=o)})"
    return (f"{metas}.map(m, {_map_bytes('m', 'labels')} + {_map_bytes('m', 'annotations')}).sum() + "
            f"{specs}.map(s, ((has(s.initContainers) ? s.initContainers : []) + s.containers)"
            f".map(c, {_CONTAINER_BYTES}).sum() + "
            f"(has(s.volumes) ? s.volumes.map(v, {_VOLUME_BYTES}).sum() : 0)).sum()")


# Which requests the size cap judges: every create (a controller's pods copy a member's template), and the updates
# of anyone but another namespace's service account. Kueue's start update merges its admission checks' pod set
# updates into a job's templates (a ProvisioningRequest's autoscaling.x-k8s.io/consume-provisioning-request and
# autoscaling.x-k8s.io/provisioning-class-name annotations, and the node selectors of its config: kueue
# pkg/controller/admissionchecks/provisioning `podSetUpdates`),
# so a job a member left just under the cap must not become one Kueue cannot start; Kueue's, JobSet's and
# kube-system's controllers run as service accounts of their own namespaces, and team members (whose groups are
# never system:*) and the team namespace's own service accounts stay judged.
_JUDGED = {"name": "member-or-create",
           "expression": "request.operation == 'CREATE' || !has(request.userInfo.groups) || "
                         "!request.userInfo.groups.exists(g, g == 'system:serviceaccounts') || "
                         "request.userInfo.groups.exists(g, g == 'system:serviceaccounts:' + request.namespace)"}


def object_size_policy() -> tuple[Manifest, Manifest]:
    """The free text of one workload object against its namespace's cap (the Kubernetes CEL list library's
    sum(); a request whose evaluation runs past the API server's CEL cost budget of 10,000,000 per binding,
    k8s.io/apiserver pkg/apis/cel RuntimeCELCostBudget, fails and so is refused: failurePolicy Fail). An
    update that does not grow the text passes, so objects made before the cap (or before a team's cap was
    lowered) can still take a controller's finalizer or status-driven change; a controller's update (`_JUDGED`)
    is not judged, so Kueue can start a job near the cap."""
    return _policy(OBJECT_SIZE, _rules(WORKLOADS, ["CREATE", "UPDATE"]), [
        {"name": "bytes", "expression": _text_bytes("object")},
        {"name": "oldBytes", "expression": f"request.operation == 'UPDATE' ? {_text_bytes('oldObject')} : 0"},
        {"name": "cap", "expression": f"int(namespaceObject.metadata.annotations['{OBJECT_SIZE_ANNOTATION}']) + "
                                      f"(object.kind == 'Pod' ? {POD_HEADROOM} : 0)"},
    ], [
        {"expression": "variables.bytes <= variables.cap || "
                       "(request.operation == 'UPDATE' && variables.bytes <= variables.oldBytes)",
         "messageExpression": "'the object holds ' + string(variables.bytes) + ' bytes of labels, annotations, "
                              "commands, arguments, environment, probes, hooks and volume attributes; namespace ' "
                              "+ namespaceObject.metadata.name + "
                              "' allows ' + string(variables.cap) + ' per object "
                              "(teams[].object_quotas.object_size): Kueue keeps every workload in memory; put "
                              "large data in a bucket or a ConfigMap volume'",
         "reason": "RequestEntityTooLarge"},
    ], [_JUDGED])


def service_account_token_policy() -> tuple[Manifest, Manifest]:
    """Secrets of the service-account-token type are refused in team namespaces (the type is immutable, so
    create is where it is set)."""
    return _policy(SERVICE_ACCOUNT_TOKENS, _rules([("", "secrets")], ["CREATE", "UPDATE"]), [], [
        {"expression": f"!has(object.type) || object.type != '{SERVICE_ACCOUNT_TOKEN}'",
         "message": f"a {SERVICE_ACCOUNT_TOKEN} Secret holds a token of the namespace's service account that never "
                    "expires and outlives whoever made it; pods get short-lived projected tokens of their "
                    "service account", "reason": "Forbidden"},
    ])


_FLAVORS_NAMED = (f"map(s, has(s.nodeSelector) && '{FLAVOR_LABEL}' in s.nodeSelector ? "
                  f"s.nodeSelector['{FLAVOR_LABEL}'] : '')")


def privileged_flavor_policy() -> tuple[Manifest, Manifest]:
    """In a namespace with a flavors annotation (a privileged exception's), every pod spec selects one of them.
    An update that keeps the flavors a spec selects passes: a pod made before the exception named its flavors
    must still take Kueue's finalizer removal (a pod's nodeSelector cannot change once it is scheduled)."""
    allowed = f"namespaceObject.metadata.annotations['{FLAVORS_ANNOTATION}']"
    return _policy(PRIVILEGED_FLAVORS, _rules([("", "pods"), *WORKLOADS], ["CREATE", "UPDATE"]), [
        {"name": "bound", "expression": f"has(namespaceObject.metadata.annotations) && "
                                        f"'{FLAVORS_ANNOTATION}' in namespaceObject.metadata.annotations"},
        {"name": "named", "expression": f"({POD_SPECS.format(o='object')}).{_FLAVORS_NAMED}"},
        {"name": "oldNamed", "expression": f"request.operation == 'UPDATE' ? "
                                           f"({POD_SPECS.format(o='oldObject')}).{_FLAVORS_NAMED} : []"},
    ], [
        {"expression": f"!variables.bound || variables.named.all(f, f in {allowed}.split(',')) || "
                       "(request.operation == 'UPDATE' && variables.named == variables.oldNamed)",
         "messageExpression": f"'namespace ' + namespaceObject.metadata.name + ' is privileged for the flavors ' + "
                              f"{allowed} + ' only (teams[].pod_security[].flavors): every pod selects one of them "
                              f"with nodeSelector {FLAVOR_LABEL}'", "reason": "Forbidden"},
    ])


def namespace_policies() -> tuple[Manifest, ...]:
    return (*service_account_token_policy(), *object_size_policy(), *privileged_flavor_policy())
