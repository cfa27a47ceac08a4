"""ValidatingAdmissionPolicies evaluated offline, as a Kubernetes v1.33 API server would.

Hand-built policies, bindings and objects: these tests pin the API server's semantics (matching, failure
policy, messages, variables) and cel-go's (has(), equality, the ext.Strings functions), not a stack's policies."""
from __future__ import annotations

import textwrap

import pytest
import yaml

from gke_ai_batch.apiserver.cel_policies import evaluate, judge, static_problems
from gke_ai_batch.apiserver.cel_runtime import to_cel
from gke_ai_batch.apiserver.vap_matching import resource_of
from gke_ai_batch.apiserver.vap_terms import Denial, UnsupportedPolicy

TEAM, PRIORITIES = "gke-ai-batch.io/team", "gke-ai-batch.io/priorities"
KUEUE_PRIORITY = "kueue.x-k8s.io/priority-class"
ALL_WORKLOADS = [{"apiGroups": ["", "batch", "apps", "jobset.x-k8s.io"], "apiVersions": ["*"], "operations": ["*"],
                  "resources": ["pods", "jobs", "jobsets", "deployments", "statefulsets"]}]

# The lead's expressions for the stack's policies.
TOLERATIONS = ("!has(object.spec.tolerations) || object.spec.tolerations.all(t, has(t.key) && t.key != '' && "
               "t.key != 'components.gke.io/gke-managed-components')")
PRIORITY_CLASS = ("!has(object.spec.priorityClassName) || object.spec.priorityClassName in "
                  "namespaceObject.metadata.annotations['gke-ai-batch.io/priorities'].split(',')")
ASKS_FOR_TPU = ("object.spec.containers.exists(c, has(c.resources) && has(c.resources.limits) && "
                "'google.com/tpu' in c.resources.limits)")
KUEUE_PRIORITY_ALLOWED = ("!has(object.metadata.labels) || !('kueue.x-k8s.io/priority-class' in object.metadata.labels)"
                          " || object.metadata.labels['kueue.x-k8s.io/priority-class'] in variables.allowed")
PRIORITY_MESSAGE = ("'team ' + namespaceObject.metadata.labels['gke-ai-batch.io/team'] + ' may use priorities ' + "
                    "variables.allowed.join(', ') + ', not ' + object.spec.priorityClassName")
ALLOWED = {"name": "allowed",
           "expression": "namespaceObject.metadata.annotations['gke-ai-batch.io/priorities'].split(',')"}


def namespace(name="team-a", labels=None, annotations=None):
    meta = {"name": name, "labels": {TEAM: "a", **(labels or {})}}
    meta["annotations"] = {PRIORITIES: "low,high"} if annotations is None else annotations
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def pod(spec=None, labels=None, name="p", ns="team-a"):
    meta = {"name": name, "namespace": ns, **({"labels": labels} if labels is not None else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": spec if spec is not None else {"containers": [{"name": "main", "image": "busybox"}]}}


def policy(*validations, name="p", rules=None, variables=(), conditions=(), **spec):
    """A policy matching workloads (or `rules`); a validation is an expression or a dict."""
    constraints = {"resourceRules": ALL_WORKLOADS if rules is None else rules}
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {"matchConstraints": constraints, "variables": list(variables),
                     "matchConditions": [{"name": f"c{i}", "expression": c} for i, c in enumerate(conditions)],
                     "validations": [v if isinstance(v, dict) else {"expression": v} for v in validations], **spec}}


def binding(policy_name="p", name="b", actions=("Deny",), match=None):
    spec = {"policyName": policy_name, "validationActions": list(actions)}
    return {"metadata": {"name": name}, "spec": {**spec, **({"matchResources": match} if match is not None else {})}}


def holds(expression, obj=None, ns=None, **kwargs):
    """Whether a one-validation policy admits obj; an evaluation error fails the test with its message."""
    denials = evaluate([policy(expression)], [binding()], obj or pod(), ns or namespace(), **kwargs)
    assert not any(d.error for d in denials), denials
    return not denials


def error_of(expression, obj=None, ns=None):
    """The error message that failurePolicy Fail turned into the denial."""
    denials = evaluate([policy(expression)], [binding()], obj or pod(), ns or namespace())
    assert len(denials) == 1 and denials[0].error, denials
    return denials[0].message


# --- the lead's expressions ---------------------------------------------------------------------

def test_tolerations_expression():
    def spec(*tolerations):
        return {"containers": [{"name": "m"}], "tolerations": list(tolerations)}

    assert holds(TOLERATIONS)
    assert holds(TOLERATIONS, pod(spec({"key": "google.com/tpu", "operator": "Exists"})))
    assert not holds(TOLERATIONS, pod(spec({"key": "google.com/tpu"},
                                           {"key": "components.gke.io/gke-managed-components"})))
    assert not holds(TOLERATIONS, pod(spec({"operator": "Exists"})))
    assert not holds(TOLERATIONS, pod(spec({"key": ""})))


def test_priority_class_expression():
    assert holds(PRIORITY_CLASS)
    assert holds(PRIORITY_CLASS, pod({"containers": [], "priorityClassName": "high"}))
    assert not holds(PRIORITY_CLASS, pod({"containers": [], "priorityClassName": "urgent"}))
    missing = error_of(PRIORITY_CLASS, pod({"containers": [], "priorityClassName": "high"}), namespace(annotations={}))
    assert missing == f"expression '{PRIORITY_CLASS}' resulted in error: no such key: {PRIORITIES}"


def test_tpu_limits_expression_with_has_on_nested_missing_fields():
    def container(**fields):
        return {"name": "m", **fields}

    tpu = container(resources={"limits": {"google.com/tpu": 4}})
    assert holds(ASKS_FOR_TPU, pod({"containers": [container(), tpu]}))
    assert not holds(ASKS_FOR_TPU, pod({"containers": [container(), container(resources={}),
                                                       container(resources={"limits": {"cpu": 1}})]}))


def test_kueue_priority_expression_with_variables_and_message_expression():
    def job(labels):
        return pod({"containers": [], "priorityClassName": "urgent"}, labels=labels)

    checked = policy({"expression": KUEUE_PRIORITY_ALLOWED, "messageExpression": PRIORITY_MESSAGE,
                      "message": "not that priority", "reason": "Forbidden"}, variables=[ALLOWED])
    assert evaluate([checked], [binding()], job({KUEUE_PRIORITY: "high"}), namespace()) == []
    assert evaluate([checked], [binding()], job({"other": "x"}), namespace()) == []
    denials = evaluate([checked], [binding()], job({KUEUE_PRIORITY: "urgent"}), namespace())
    assert denials == [Denial("p", "b", "team a may use priorities low, high, not urgent", "Forbidden")]
    assert denials[0].text == ("ValidatingAdmissionPolicy 'p' with binding 'b' denied request: "
                               "team a may use priorities low, high, not urgent")
    assert evaluate([checked], [binding()], job(None), namespace()) == []


def test_the_leads_policy_compiles():
    assert static_problems(policy(TOLERATIONS, PRIORITY_CLASS, ASKS_FOR_TPU,
                                  {"expression": KUEUE_PRIORITY_ALLOWED, "messageExpression": PRIORITY_MESSAGE},
                                  variables=[ALLOWED])) == []


# --- CEL semantics: has(), missing keys, values, equality -----------------------------------------

def test_has_is_cel_go_s_has_not_celpy_s():
    assert holds("!has(object.spec.tolerations)")
    assert holds("has(object.metadata.name) && !has(object.metadata.labels)")
    assert error_of("has(object.spec.affinity.nodeAffinity)") == (
        "expression 'has(object.spec.affinity.nodeAffinity)' resulted in error: no such key: affinity")
    assert holds("!has(object.spec.affinity) || has(object.spec.affinity.nodeAffinity)")
    assert error_of("has(object.metadata.name.first)") == (
        "expression 'has(object.metadata.name.first)' resulted in error: invalid type for field selection: string")


def test_missing_key_is_an_error_that_failure_policy_decides():
    expression = "object.metadata.labels['team'] == 'a'"
    denials = evaluate([policy(expression)], [binding()], pod(labels={}), namespace())
    assert denials == [Denial("p", "b", f"expression '{expression}' resulted in error: no such key: team", error=True)]
    assert denials[0].text.endswith("no such key: team (an evaluation error: failurePolicy Fail denies)")
    assert evaluate([policy(expression, failurePolicy="Ignore")], [binding()], pod(labels={}), namespace()) == []
    assert error_of("object.spec.nodeName == 'x'") == (
        "expression 'object.spec.nodeName == 'x'' resulted in error: no such key: nodeName")


def test_yaml_numbers_keep_their_cel_types():
    job = yaml.safe_load(textwrap.dedent("""
        apiVersion: batch/v1
        kind: Job
        metadata: {name: j, namespace: team-a, creationTimestamp: 2025-01-02T03:04:05Z}
        spec:
          parallelism: 4
          template:
            metadata: {annotations: {ratio: "0.5"}}
            spec: {containers: [{name: m, resources: {limits: {google.com/tpu: 4, memory: 1.5}}}]}
        """))
    assert holds("object.spec.parallelism == 4 && type(object.spec.parallelism) == int", job)
    assert holds("object.spec.parallelism * 2 == 8 && object.spec.parallelism / 3 == 1", job)
    limits = "object.spec.template.spec.containers[0].resources.limits"
    assert holds(f"type({limits}['google.com/tpu']) == int && type({limits}.memory) == double", job)
    assert holds("object.metadata.creationTimestamp == '2025-01-02T03:04:05Z'", job)
    dated = pod(labels={"day": "x"})
    dated["metadata"]["annotations"] = yaml.safe_load("{expires: 2025-01-02}")
    assert holds("object.metadata.annotations.expires == '2025-01-02'", dated)
    with pytest.raises(TypeError, match="cannot hand a set to CEL"):
        to_cel({"bad": {1, 2}})


def test_equality_is_heterogeneous_as_in_cel_go():
    assert holds("'8' != 8 && !('8' == 8) && 1 == 1.0 && [1, 'a'] != ['a', 1] && {'a': 1} != {'a': 'b'}")
    assert holds("2 in [1.0, 2.0] && !('2' in [2]) && 'main' in {'main': 1} && null == null")
    assert holds("true == true && true != 1 && [true] == [true]")
    assert error_of("1 < 'a'") == (
        "expression '1 < 'a'' resulted in error: no matching overload for '_<_' applied to '(int, string)'")
    assert error_of("[1][1] == 1").endswith("resulted in error: index '1' out of range in list size '1'")
    assert error_of("'abc'[0] == 'a'").endswith("resulted in error: no matching overload for '_[_]' applied to "
                                                "'(string, int)'")
    assert holds("[1, 2][1] == 2 && {'a': [3]}['a'][0] == 3")
    assert error_of("1 in 2") == (
        "expression '1 in 2' resulted in error: no matching overload for '@in' applied to '(int, int)'")


def test_standard_functions_and_macros():
    assert holds("'gke-tpu'.startsWith('gke') && 'gke-tpu'.endsWith('tpu') && 'gke-tpu'.contains('-')")
    assert holds("'v6e-16'.matches('^v[0-9]+e-[0-9]+$') && size('abc') == 3 && [1, 2].size() == 2")
    assert holds("[1, 2, 3].exists_one(x, x > 2) && [1, 2, 3].map(x, x * 2) == [2, 4, 6]")
    assert holds("[1, 2, 3].filter(x, x % 2 == 1) == [1, 3] && [1, 2].all(x, x > 0) && ![1, 2].exists(x, x > 5)")


def test_ext_strings_functions():
    assert holds("'a,b,c'.split(',') == ['a', 'b', 'c'] && 'a,b,c'.split(',', 2) == ['a', 'b,c']")
    assert holds("'abc'.split('') == ['a', 'b', 'c'] && 'a,b'.split(',', 0) == [] && ''.split(',') == ['']")
    assert holds("['a', 'b'].join() == 'ab' && ['a', 'b'].join(', ') == 'a, b' && [].join('-') == ''")
    assert holds("'TPU-v5e'.lowerAscii() == 'tpu-v5e' && 'tpu-v5e'.upperAscii() == 'TPU-V5E' && ' x \\t'.trim() == 'x'")
    assert holds("'a-b-c'.replace('-', '_') == 'a_b_c' && 'a-b-c'.replace('-', '_', 1) == 'a_b-c'")
    assert holds("'abcabc'.indexOf('c') == 2 && 'abcabc'.indexOf('c', 3) == 5 && 'abc'.indexOf('z') == -1")
    assert holds("'abcdef'.substring(2) == 'cdef' && 'abcdef'.substring(1, 3) == 'bc'")
    assert error_of("'abc'.indexOf('a', 4) == 0").endswith("resulted in error: index out of range: 4")
    assert error_of("'abc'.substring(1, 5) == ''").endswith("resulted in error: index out of range: 5")
    assert error_of("'abc'.substring(2, 1) == ''").endswith(
        "resulted in error: invalid substring range. start: 2, end: 1")
    assert error_of("[1, 2].join(',') == ''").endswith("resulted in error: no such overload")


# --- variables, messages, failure policy -----------------------------------------------------------

def test_variables_are_lazy_ordered_and_their_errors_wrapped():
    variables = [{"name": "team", "expression": "namespaceObject.metadata.labels['gke-ai-batch.io/team']"},
                 {"name": "missing", "expression": "object.metadata.labels['x']"},
                 {"name": "queue", "expression": "'lq-' + variables.team"}]
    assert evaluate([policy("variables.queue == 'lq-a'", variables=variables)], [binding()], pod(), namespace()) == []
    denial, = evaluate([policy("variables.missing == 'y'", variables=variables)], [binding()], pod(), namespace())
    assert denial.error and denial.message == (
        "expression 'variables.missing == 'y'' resulted in error: composited variable \"missing\" fails to evaluate: "
        "expression 'object.metadata.labels['x']' resulted in error: no such key: labels")


def test_a_variable_sees_only_those_declared_before_it():
    backwards = [{"name": "a", "expression": "variables.b + 1"}, {"name": "b", "expression": "1"}]
    assert static_problems(policy("variables.a == 2", variables=backwards)) == [
        "spec.variables[0].expression: ERROR: <input>: undefined field 'b'"]
    denial, = evaluate([policy("variables.a == 2", variables=backwards)], [binding()], pod(), namespace())
    assert denial.error and "composited variable \"a\" fails to compile" in denial.message


def test_message_fallbacks_and_reason():
    def message_of(validation):
        denial, = evaluate([policy({"expression": "false", **validation})], [binding()], pod(), namespace())
        return denial.message, denial.reason

    assert message_of({}) == ("failed expression: false", "Invalid")
    assert message_of({"message": " no ", "reason": "Forbidden"}) == ("no", "Forbidden")
    assert message_of({"message": "m", "messageExpression": "'from ' + object.metadata.name"}) == ("from p", "Invalid")
    assert message_of({"message": "m", "messageExpression": "object.metadata.nope"}) == ("m", "Invalid")
    assert message_of({"message": "m", "messageExpression": "1"}) == ("m", "Invalid")
    assert message_of({"message": "m", "messageExpression": "'two\\nlines'"}) == ("m", "Invalid")
    assert message_of({"message": "m", "messageExpression": "'  '"}) == ("m", "Invalid")


def test_match_conditions():
    def denials(*conditions, **spec):
        return evaluate([policy("false", conditions=conditions, **spec)], [binding()], pod(), namespace())

    assert len(denials("object.kind == 'Pod'")) == 1
    assert denials("object.kind == 'Job'") == []
    assert denials("object.metadata.labels['x'] == 'y'", "false") == []  # any false wins over errors
    error, = denials("object.metadata.labels['x'] == 'y'", "namespaceObject == null")
    assert error.error and error.message.endswith("no such key: labels")
    assert denials("object.metadata.labels['x'] == 'y'", failurePolicy="Ignore") == []
    two, = denials("object.a == 1", "object.b == 2")
    assert two.message.startswith("[expression 'object.a == 1' resulted in error: no such key: a, expression")


def test_validation_actions_warn_and_audit_do_not_deny():
    verdict = judge([policy("false")], [binding(name="warn", actions=("Warn", "Audit")), binding(name="deny")],
                    pod(), namespace())
    assert [d.binding for d in verdict.denials] == ["deny"]
    assert verdict.warnings == ("Validation failed for ValidatingAdmissionPolicy 'p' with binding 'warn': "
                                "failed expression: false",)
    assert [d.binding for d in verdict.audits] == ["warn"]


def test_configuration_errors():
    bare = policy("false")
    del bare["spec"]["matchConstraints"]
    denial, = evaluate([bare], [binding()], pod(), namespace())
    assert denial.text == ("ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: policy "
                           "contained no match constraints, a required field (an evaluation error: failurePolicy "
                           "Fail denies)")
    bare["spec"]["failurePolicy"] = "Ignore"
    assert evaluate([bare], [binding()], pod(), namespace()) == []
    assert evaluate([policy("false")], [binding(policy_name="other")], pod(), namespace()) == []


# --- the request and matching ---------------------------------------------------------------------

def test_request_user_namespace_and_old_object():
    user = {"username": "alice@example.com", "groups": ["team-a-admins", "system:authenticated"]}
    assert holds("request.operation == 'CREATE' && oldObject == null && request.namespace == 'team-a'", user=user)
    assert holds("request.userInfo.username == 'alice@example.com' && 'team-a-admins' in request.userInfo.groups",
                 user=user)
    assert holds("request.kind.kind == 'Pod' && request.resource.resource == 'pods' && request.name == 'p'")
    assert error_of("request.userInfo.username == ''") == (
        "expression 'request.userInfo.username == ''' resulted in error: no such key: username")
    assert holds("namespaceObject.metadata.labels['kubernetes.io/metadata.name'] == 'team-a'")
    old = pod(labels={"generation": "1"})
    assert holds("object.metadata.labels == oldObject.metadata.labels", pod(labels={"generation": "1"}),
                 operation="UPDATE", old_object=old)
    assert not holds("request.operation == 'CREATE'", operation="UPDATE", old_object=old)


@pytest.mark.parametrize(("api_version", "kind", "group", "resource"), [
    ("v1", "Pod", "", "pods"), ("batch/v1", "Job", "batch", "jobs"),
    ("jobset.x-k8s.io/v1alpha2", "JobSet", "jobset.x-k8s.io", "jobsets"),
    ("apps/v1", "Deployment", "apps", "deployments"), ("apps/v1", "StatefulSet", "apps", "statefulsets")])
def test_resource_rules_per_kind(api_version, kind, group, resource):
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "w", "namespace": "team-a"}, "spec": {}}
    rule = {"apiGroups": [group], "apiVersions": [api_version.rpartition("/")[2]], "operations": ["CREATE"],
            "resources": [resource]}
    assert resource_of(kind) == resource
    assert len(evaluate([policy("false", rules=[rule])], [binding()], obj, namespace())) == 1
    other = {**rule, "apiGroups": ["other"]}
    assert evaluate([policy("false", rules=[other])], [binding()], obj, namespace()) == []


def test_resource_of_guesses_like_apimachinery():
    assert [resource_of(k) for k in ("Ingress", "NetworkPolicy", "Endpoints")] == [
        "ingresses", "networkpolicies", "endpoints"]


def test_rule_details_operations_subresources_scope_and_names():
    def denied(rule, obj=None, operation="CREATE"):
        base = {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}
        ns = None if obj else namespace()  # the only cluster-scoped object here comes without a namespace
        return bool(evaluate([policy("false", rules=[{**base, **rule}])], [binding()], obj or pod(), ns,
                             operation=operation, old_object=obj or pod()))

    assert denied({}) and denied({"resources": ["*/*"]}) and not denied({"resources": ["pods/status"]})
    assert denied({"operations": ["UPDATE"]}, operation="UPDATE") and not denied({"operations": ["UPDATE"]})
    assert denied({"scope": "Namespaced"}) and not denied({"scope": "Cluster"})
    cluster_scoped = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}}
    assert denied({"scope": "Cluster"}, cluster_scoped) and not denied({"scope": "Namespaced"}, cluster_scoped)
    assert denied({"resourceNames": ["p"]}) and not denied({"resourceNames": ["q"]})


def test_selectors_and_exclusions():
    def denied(constraints, obj=None, ns=None, match=None):
        rules = {"resourceRules": ALL_WORKLOADS, **constraints}
        spec = policy("false")
        spec["spec"]["matchConstraints"] = rules
        return bool(evaluate([spec], [binding(match=match)], obj or pod(), ns or namespace()))

    assert denied({"namespaceSelector": {"matchLabels": {TEAM: "a"}}})
    assert not denied({"namespaceSelector": {"matchExpressions": [
        {"key": TEAM, "operator": "NotIn", "values": ["a"]}]}})
    assert denied({"namespaceSelector": {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["team-a"]}]}})
    assert not denied({"objectSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}})
    assert denied({"objectSelector": {"matchLabels": {"app": "x"}}}, pod(labels={"app": "x"}))
    assert not denied({"excludeResourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"],
                                                 "resources": ["pods"]}]})
    assert not denied({}, match={"namespaceSelector": {"matchLabels": {TEAM: "b"}}})
    assert denied({}, match={"namespaceSelector": {"matchLabels": {TEAM: "a"}}})


# --- what the model refuses, and static problems --------------------------------------------------

def test_params_and_authorizer_are_refused():
    with pytest.raises(UnsupportedPolicy, match="takes params"):
        evaluate([policy("params.x == 1", paramKind={"apiVersion": "v1", "kind": "ConfigMap"})], [binding()],
                 pod(), namespace())
    with_ref = binding()
    with_ref["spec"]["paramRef"] = {"name": "limits"}
    with pytest.raises(UnsupportedPolicy, match="takes params"):
        evaluate([policy("true")], [with_ref], pod(), namespace())
    with pytest.raises(UnsupportedPolicy, match="uses the authorizer"):
        evaluate([policy("authorizer.group('').resource('pods').check('create').allowed()")], [binding()], pod(),
                 namespace())


def test_static_problems():
    bad = policy("object.spec.(", "objet.spec == null", "frobnicate(object)", "has(object)",
                 "[1].all(1, true)", "params.x == 1", {"expression": "true", "messageExpression": "variables.nope"},
                 failurePolicy="Sometimes")
    del bad["spec"]["matchConstraints"]
    assert static_problems(bad) == [
        "spec.validations[0].expression: ERROR: <input>:1:13: Syntax error",
        "spec.validations[1].expression: ERROR: <input>: undeclared reference to 'objet'",
        "spec.validations[2].expression: ERROR: <input>: undeclared reference to 'frobnicate'",
        "spec.validations[3].expression: ERROR: <input>: invalid argument to has() macro",
        "spec.validations[4].expression: ERROR: <input>: all() needs a variable name and an expression",
        "spec.validations[5].expression: ERROR: <input>: undeclared reference to 'params'",
        "spec.validations[6].messageExpression: ERROR: <input>: undefined field 'nope'",
        "spec.matchConstraints: Required value",
        "spec.failurePolicy: Unsupported value: 'Sometimes'",
    ]
    assert static_problems(policy("object.spec.frobnicate() && [1].map(x, y)")) == [
        "spec.validations[0].expression: ERROR: <input>: undeclared reference to 'frobnicate'; "
        "ERROR: <input>: undeclared reference to 'y'"]
    denial, = evaluate([policy("objet.spec == null")], [binding()], pod(), namespace())
    assert denial.error and denial.message == (
        "compilation error: compilation failed: ERROR: <input>: undeclared reference to 'objet'")
    assert static_problems(policy("authorizer.serviceAccount('ns', 'sa') != null"))[-1].endswith(
        "uses the authorizer, which the offline model does not support")
