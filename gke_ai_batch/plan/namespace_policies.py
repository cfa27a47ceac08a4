"""ValidatingAdmissionPolicies that bound what a team namespace may hold, beyond placement and priorities
(plan.admission_policies):

- no `kubernetes.io/service-account-token` Secret: the token controller would fill it with a token of the
  namespace's service account that never expires (Kubernetes "Service account token Secrets"), outliving
  the member who made it and every rotation; pods get short-lived projected tokens instead;
- a cap on the text of one Pod, Job, JobSet, Deployment or StatefulSet (every key and string of its spec,
  templates included, and of its labels, annotations, finalizers and owner references): Kueue caches each of
  them, and a Workload copy of each job's pod templates, in every replica (plan.installs sizes its memory by
  count x this cap), so a flood of large objects would OOM-kill it and, with its webhooks failing closed, stop
  every team;
- a PodMonitoring (Managed Prometheus) sets a per-scrape sample limit no higher than its team's, and scrapes no
  endpoint more often than its team's shortest interval: the ResourceQuota counts PodMonitorings, but each one
  could otherwise scrape unbounded samples every second, driving the project's ingestion cost and the collectors'
  memory;
- a PodMonitoring scrapes its own pods directly: no `proxyUrl`, which sends the managed collector's requests
  through any address, and no `oauth2`, whose `tokenURL` (and own `proxyUrl`) has the collector post to any URL;
  its targets are its namespace's pods only (prometheus-engine v0.17.2 pod_config.go keeps targets by
  `__meta_kubernetes_namespace`), and the Secrets of `authorization`, `basicAuth` and `tls` its namespace's own
  (http_types.go `toPrometheusSecretRef`: "must use namespace"), sent to those pods;
- a privileged namespace runs on the flavors its Pod Security exception names, and on no other: its pods
  and templates must select one of them by the flavor node label (`gke-ai-batch.io/flavor`), so the
  scheduler can place them on those pools only and Kueue assigns no other flavor.

The caps, the scrape bounds and the flavors are read from the namespace's annotations, so the policies list no
team. Each binding selects team namespaces and matches every requester: controllers copy templates into pods, so
a controller's request is held to what the member's template was.
"""
from __future__ import annotations

from gke_ai_batch.plan.admission_policies import POD_SPECS, PREFIX, PRIORITY_SHAPES, _policy, _rules
from gke_ai_batch.vocabulary import (
    FLAVOR_LABEL,
    FLAVORS_ANNOTATION,
    GMP_API,
    OBJECT_SIZE_ANNOTATION,
    SCRAPE_INTERVAL_ANNOTATION,
    SCRAPE_SAMPLES_ANNOTATION,
    SERVICE_ACCOUNT_TOKEN,
    Manifest,
)

# A pod may exceed its template's cap by this: the Job, JobSet and Kueue controllers label and annotate the pods
# they create (job-name, controller-uid, jobset.sigs.k8s.io/*, kueue.x-k8s.io/podset...), and the API server adds
# an owner reference, the service account token volume and its mounts, and the default NoExecute tolerations
# (some 2.2 KiB as the cap counts them, for a JobSet's pod), so a template just under the cap must not make pods
# over it.
POD_HEADROOM = 4096
SERVICE_ACCOUNT_TOKENS = f"{PREFIX}-no-service-account-tokens"
OBJECT_SIZE = f"{PREFIX}-object-size"
PRIVILEGED_FLAVORS = f"{PREFIX}-privileged-flavors"
SCRAPE_LIMITS = f"{PREFIX}-scrape-limits"
SCRAPE_ROUTES = f"{PREFIX}-scrape-routes"
WORKLOADS = [r for _, rs, _ in PRIORITY_SHAPES for r in rs]

# How deep the size cap walks: one level per map or list, from the object's spec. The deepest string a schema of
# the judged kinds holds (Kubernetes 1.33, JobSet v0.12.0) is a JobSet's
# spec.replicatedJobs[].template.spec.template.spec.volumes[].projected.sources[].clusterTrustBundle.labelSelector
# .matchExpressions[].values[], in 17 maps and lists, the spec included (tests/test_object_size.py derives it from
# the schemas); the walk reads maps and lists to 20 deep, leaving room for fields later versions add, and refuses
# one at WALK_DEPTH.
WALK_DEPTH = 21
_TOO_DEEP = 2**40  # what a map or list at WALK_DEPTH counts: more than any cap, so it is refused
# The metadata a member sets that Kueue's caches keep; name, namespace and generateName are bounded (253), and
# Kueue's caches drop managedFields (kueue v0.19.2 pkg/config/config.go: TransformStripManagedFields).
_METADATA = "['labels', 'annotations', 'finalizers', 'ownerReferences']"


def _walk(v: str, depth: int) -> str:
    """CEL: the text of the value bound to identifier `v`: a string its length, a map the length of its keys and
    a list or map one per element, plus their values' text. The value's next level appears once in the expression
    (a map's values are listed, then walked as a list's elements), so the expression grows with the depth, not
    exponentially."""
    collection = f"(type({v}) == map || type({v}) == list)"
    if depth == WALK_DEPTH:
        return f"({collection} ? {_TOO_DEEP} : type({v}) == string ? size({v}) : 0)"
    k, e = f"k{depth}", f"e{depth}"
    return (f"(type({v}) == string ? size({v}) : {collection} ? "
            f"(type({v}) == map ? {v}.map({k}, size({k})).sum() : 0) + "
            f"(type({v}) == map ? {v}.map({k}, {v}[{k}]) : {v}).map({e}, 1 + {_walk(e, depth + 1)}).sum() : 0)")


def _text_bytes(o: str) -> str:
    """One CEL expression: the text of object `o`: its spec (templates and their metadata included) and the
    labels, annotations, finalizers and ownerReferences of its metadata, walked whole.

    Why the whole spec, and not a list of the fields a member could inflate: a pod spec has some 200 strings,
    lists and maps a member sets (affinity terms, tolerations, host aliases, DNS options, security contexts,
    resource claims, ...), Kueue copies every one of them into a Workload's pod sets, and each Kubernetes minor
    adds more; a list misses some (the review of issue 36 found eleven). A walk bounded by depth counts
    every field of every version, and refuses what nests deeper than any schema (WALK_DEPTH). CEL has no
    serialisation and no recursion, so the walk is spelled out level by level (`_walk`).

    Its cost, by our count of cel-go's runtime costs (interpreter/runtimecost.go: 1 per identifier, select and
    call, 10 per list made, which map() does per element; the Kubernetes list library's sum() 1 per element):
    about 20 units per list element and 50 per map entry. Every element counts at least one byte and every entry
    two, so at most some 35 units per byte counted: an object within the default cap (16 KiB, 20 KiB for a pod)
    costs under 750,000 of the API server's limit of 1,000,000 per expression (k8s.io/apiserver
    pkg/apis/cel/config.go PerCallLimit). Past the limit the evaluation fails and the request is refused
    (failurePolicy Fail): with a team cap above some 28 KiB, an object of many tiny values can be refused for
    its cost before its size. The object's status is the API server's and its controllers', and not counted."""
    return (f"([has({o}.spec) ? {o}.spec : {{}}] + {o}.metadata.filter(m, m in {_METADATA})"
            f".map(m, {o}.metadata[m])).map(e0, {_walk('e0', 1)}).sum()")


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
    """The text of one workload object (`_text_bytes`) against its namespace's cap (the Kubernetes CEL list
    library's sum(); a request whose evaluation runs past the API server's CEL cost limits, 1,000,000 per
    expression and 10,000,000 per binding, k8s.io/apiserver pkg/apis/cel/config.go, fails and so is refused:
    failurePolicy Fail). An update that does not grow the text passes, so objects made before the cap (or
    before a team's cap was lowered) can still take a controller's finalizer or status-driven change; a
    controller's update (`_JUDGED`) is not judged, so Kueue can start a job near the cap."""
    return _policy(OBJECT_SIZE, _rules(WORKLOADS, ["CREATE", "UPDATE"]), [
        {"name": "bytes", "expression": _text_bytes("object")},
        {"name": "oldBytes", "expression": f"request.operation == 'UPDATE' ? {_text_bytes('oldObject')} : 0"},
        {"name": "cap", "expression": f"int(namespaceObject.metadata.annotations['{OBJECT_SIZE_ANNOTATION}']) + "
                                      f"(object.kind == 'Pod' ? {POD_HEADROOM} : 0)"},
    ], [
        {"expression": "variables.bytes <= variables.cap || "
                       "(request.operation == 'UPDATE' && variables.bytes <= variables.oldBytes)",
         "messageExpression": f"(variables.bytes >= {_TOO_DEEP} ? 'the object nests maps and lists more than "
                              f"{WALK_DEPTH - 1} deep, deeper than any field of its kind; ' : "
                              "'the object holds ' + string(variables.bytes) + ' bytes of text (every key and "
                              "string of its spec, labels, annotations, finalizers and owner references, and one "
                              "per value); ') + 'namespace ' + namespaceObject.metadata.name + "
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


def _samples(o: str) -> str:
    """spec.limits.samples, 0 when unset (GMP v0.17.2 pod_types.go ScrapeLimits.Samples, a uint64 with
    omitempty: 0 or unset is Prometheus's default, no limit)."""
    return f"has({o}.spec.limits) && has({o}.spec.limits.samples) ? int({o}.spec.limits.samples) : 0"


def _intervals(o: str) -> str:
    """Every endpoint's interval as text (required in v1, a Prometheus duration; a typed schema may give it as a
    duration, which string() writes back as Go does)."""
    return f"has({o}.spec.endpoints) ? {o}.spec.endpoints.map(e, string(e.interval)) : []"


def scrape_limits_policy() -> tuple[Manifest, Manifest]:
    """A PodMonitoring names spec.limits.samples between 1 and its namespace's cap, and scrapes every endpoint
    at its namespace's shortest interval or slower. A Prometheus duration with days, weeks or years is longer
    than any shortest interval (at most an hour, by the config) and is not parsed (CEL's duration() reads
    Go's units only). An update that keeps the limit and the intervals passes, so a PodMonitoring made before the
    bounds (or before its team's bounds were tightened) still takes a finalizer or label change."""
    annotations = "namespaceObject.metadata.annotations"
    return _policy(SCRAPE_LIMITS, _rules([(GMP_API.split("/")[0], "podmonitorings")], ["CREATE", "UPDATE"]), [
        {"name": "samples", "expression": _samples("object")},
        {"name": "maxSamples", "expression": f"int({annotations}['{SCRAPE_SAMPLES_ANNOTATION}'])"},
        {"name": "minInterval", "expression": f"{annotations}['{SCRAPE_INTERVAL_ANNOTATION}'] + 's'"},
        {"name": "intervals", "expression": _intervals("object")},
        {"name": "tooFast", "expression": "variables.intervals.filter(i, !i.matches('[dwy]') && "
                                          "duration(i) < duration(variables.minInterval))"},
        {"name": "kept", "expression": f"request.operation == 'UPDATE' && ({_samples('oldObject')}) == "
                                       f"variables.samples && ({_intervals('oldObject')}) == variables.intervals"},
    ], [
        {"expression": "variables.kept || (variables.samples >= 1 && variables.samples <= variables.maxSamples)",
         "messageExpression": "'namespace ' + namespaceObject.metadata.name + ' holds every PodMonitoring to at "
                              "most ' + string(variables.maxSamples) + ' samples per scrape "
                              "(teams[].object_quotas.scrape_samples): set spec.limits.samples from 1 to ' + "
                              "string(variables.maxSamples) + "
                              "(variables.samples == 0 ? ' (unset or 0 is no limit)' : ', not ' + "
                              "string(variables.samples))", "reason": "Forbidden"},
        {"expression": "variables.kept || variables.tooFast.size() == 0",
         "messageExpression": "'namespace ' + namespaceObject.metadata.name + ' scrapes a PodMonitoring endpoint at "
                              "most every ' + variables.minInterval + ' "
                              "(teams[].object_quotas.scrape_interval): set spec.endpoints[].interval to ' + "
                              "variables.minInterval + "
                              "' or longer, not ' + variables.tooFast[0]", "reason": "Forbidden"},
    ])


def _routed(o: str) -> str:
    """CEL: per endpoint of PodMonitoring o that routes its scrape elsewhere, what does: its proxyUrl, its oauth2
    tokenURL."""
    return (f"(has({o}.spec.endpoints) ? {o}.spec.endpoints : []).map(e, (has(e.proxyUrl) ? ['proxyUrl ' + "
            "e.proxyUrl] : []) + (has(e.oauth2) ? ['oauth2 (tokenURL ' + (has(e.oauth2.tokenURL) ? e.oauth2.tokenURL "
            ": '') + ')'] : [])).filter(l, l.size() > 0).map(l, l[0])")


def scrape_routes_policy() -> tuple[Manifest, Manifest]:
    """No PodMonitoring endpoint sets proxyUrl or oauth2 (v1 and v1alpha1 both have proxyUrl; v1 adds oauth2). An
    update that keeps what it had passes, so one made before the policy still takes a finalizer or label change."""
    return _policy(SCRAPE_ROUTES, _rules([(GMP_API.split("/")[0], "podmonitorings")], ["CREATE", "UPDATE"]), [
        {"name": "routed", "expression": _routed("object")},
        {"name": "oldRouted", "expression": f"request.operation == 'UPDATE' ? {_routed('oldObject')} : []"},
    ], [
        {"expression": "variables.routed.size() == 0 || (request.operation == 'UPDATE' && "
                       "variables.routed.all(r, r in variables.oldRouted))",
         "messageExpression": "'a PodMonitoring has the managed collector scrape its namespace\\'s pods directly: "
                              "an endpoint\\'s proxyUrl would send the collector\\'s requests through any address, "
                              "and oauth2 would have it post to any token URL; drop ' + variables.routed[0]",
         "reason": "Forbidden"},
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
    return (*service_account_token_policy(), *object_size_policy(), *scrape_limits_policy(),
            *scrape_routes_policy(), *privileged_flavor_policy())
