"""Would the stack's ValidatingAdmissionPolicies let this object in? admissionregistration.k8s.io/v1, offline.

A pure model (no Pulumi) of the API server's ValidatingAdmissionPolicy plugin at Kubernetes v1.33, read from
k8s.io/apiserver v0.33.13 (kubernetes/kubernetes staging/src/k8s.io/apiserver; paths below are under
pkg/admission/plugin/), with CEL evaluated by cel-python (celpy) instead of cel-go:

- policy/validating/dispatcher.go `Dispatch`: each policy whose matchConstraints match, then each of its
  bindings whose matchResources match; a binding's validationActions decide what a failed validation does:
  Deny refuses the request, Warn is a client warning, Audit an audit annotation. Warn and Audit are both
  reported (`Verdict.warnings`, `Verdict.audits`) and neither refuses. The API server's error names only
  the first denial; `evaluate` returns them all.
- policy/matching/matching.go and webhook/predicates/{rules,namespace,object}: resourceRules and
  excludeResourceRules (apiGroups, apiVersions, resources with subresources, operations, scope,
  resourceNames, "*"),
  namespaceSelector and objectSelector. matchPolicy is taken as Exact: Equivalent only adds resources served
  under another group or version, which none of the workload kinds here are.
- policy/validating/validator.go `Validate` and webhook/matchconditions/matcher.go: matchConditions (any
  false skips the policy, an error falls to failurePolicy), validations with message, messageExpression and
  reason, and failurePolicy (unset means Fail): an evaluation or compilation error under Fail is a denial,
  under Ignore nothing.
- cel/compile.go, cel/condition.go, cel/composition.go: the variables `object` (null on DELETE), `oldObject`
  (null on CREATE; the object deleted on DELETE), `request` (with a DELETE's DeleteOptions as
  `request.options`), `namespaceObject` (null in matchConditions, as there) and `variables` (each evaluated on
  first use, seeing only the variables declared before it).

Not modelled, and refused with `UnsupportedPolicy` rather than judged wrongly: paramKind/paramRef (so
`params` is undeclared, as the API server has it without paramKind) and the `authorizer` variable.
Omitted: auditAnnotations, the CEL cost budget, type checking against the objects' OpenAPI schemas (only
undeclared names, functions and variables are caught at compile time), and a create's or update's
`request.options` (CreateOptions, UpdateOptions: absent here).

CEL is cel-go's where celpy differs in ways a policy here would notice: has(), indexing and equality
(`'8' == 8` is false, `1 == 1.0` true) follow cel-go, and errors are worded as cel-go words them, since the
API server quotes cel-go. Of Kubernetes' CEL libraries (apiserver pkg/cel/environment/base.go), celpy has
the standard functions and macros, and this module adds ext.Strings' split, join, lowerAscii, upperAscii,
trim, replace, indexOf and substring; regex, URL, IP, CIDR, quantity, semver, sets, two-variable
comprehensions and optional types are absent. Left as celpy has them: size(null) is 0 rather than an error,
and an error inside exists() reads "no such overload".

This module is the entry (`judge`, `evaluate`); the parts are cel_runtime and cel_compile (CEL), and
vap_matching, vap_evaluation and vap_terms (the plugin).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gke_ai_batch.apiserver.cel_runtime import to_cel
from gke_ai_batch.apiserver.vap_evaluation import Policy, compile_policy, decisions
from gke_ai_batch.apiserver.vap_matching import Attributes, attributes_of, matches, namespace_object, request_of
from gke_ai_batch.apiserver.vap_terms import Denial, UnsupportedPolicy, Verdict
from gke_ai_batch.vocabulary import Obj


def _refuse_unsupported(policy: Policy, bindings: Sequence[Obj]) -> None:
    """Raise UnsupportedPolicy for params or the authorizer, which would otherwise be judged wrongly."""
    if policy.spec.get("paramKind") is not None or any((b.get("spec") or {}).get("paramRef") for b in bindings):
        raise UnsupportedPolicy(f"ValidatingAdmissionPolicy {policy.name!r} takes params (paramKind/paramRef), "
                                "which the offline model does not support")
    if any("authorizer" in program.roots for _, program in policy.programs()):
        raise UnsupportedPolicy(f"ValidatingAdmissionPolicy {policy.name!r} uses the authorizer, "
                                "which the offline model does not support")


def _policy_verdict(policy: Policy, bindings: Sequence[Obj], attrs: Attributes, inputs: dict[str, Any]) -> Verdict:
    """dispatcher.go `Dispatch` for one policy and its bindings."""
    constraints = policy.spec.get("matchConstraints")
    if constraints is None:
        message = "failed to configure policy: policy contained no match constraints, a required field"
        return Verdict(denials=(Denial(policy.name, "", message, error=True),) if policy.fails_closed else ())
    if not matches(constraints, attrs):
        return Verdict()
    denials, warnings, audits = [], [], []
    for binding in bindings:
        criteria, name = (binding.get("spec") or {}).get("matchResources"), (binding.get("metadata") or {}).get("name")
        if criteria is not None and not matches(criteria, attrs):
            continue
        for message, reason, error in decisions(policy, inputs):
            denial = Denial(policy.name, str(name or ""), message, reason, error)
            actions = (binding.get("spec") or {}).get("validationActions") or []
            denials += [denial] if "Deny" in actions else []
            audits += [denial] if "Audit" in actions else []
            warnings += [f"Validation failed for ValidatingAdmissionPolicy '{policy.name}' with binding "
                         f"'{denial.binding}': {message}"] if "Warn" in actions else []
    return Verdict(tuple(denials), tuple(warnings), tuple(audits))


def judge(policies: Sequence[Obj], bindings: Sequence[Obj], obj: Obj | None, namespace_obj: Obj | None,
          operation: str = "CREATE", user: Obj | None = None, old_object: Obj | None = None,
          subresource: tuple[str, str, str] | None = None, options: Obj | None = None) -> Verdict:
    """Everything the policies say about creating (or updating, with old_object) obj in namespace_obj; with
    operation DELETE, about deleting old_object (obj is then None, as `object` is null on a DELETE).

    user: the requester's userInfo ({"username": ..., "groups": [...]}); subresource: (parent apiVersion,
    resource, subresource) for a request to one, such as ("apps/v1", "deployments", "scale"); options: a
    DELETE's DeleteOptions ({"propagationPolicy": "Orphan"}, {} for none). Raises UnsupportedPolicy for a policy
    or binding that needs params or the authorizer."""
    attrs = attributes_of(obj if obj is not None else old_object or {}, old_object, namespace_obj, operation,
                          subresource)
    inputs = {"object": to_cel(obj), "oldObject": to_cel(old_object),
              "request": to_cel(request_of(attrs, user, options)),
              "namespaceObject": to_cel(namespace_object(namespace_obj, attrs))}
    denials: list[Denial] = []
    warnings: list[str] = []
    audits: list[Denial] = []
    for raw in policies:
        policy = compile_policy(raw)
        own = [b for b in bindings if (b.get("spec") or {}).get("policyName") == policy.name]
        _refuse_unsupported(policy, own)
        verdict = _policy_verdict(policy, own, attrs, inputs)
        denials += verdict.denials
        warnings += verdict.warnings
        audits += verdict.audits
    return Verdict(tuple(denials), tuple(warnings), tuple(audits))


def evaluate(policies: Sequence[Obj], bindings: Sequence[Obj], obj: Obj | None, namespace_obj: Obj | None,
             operation: str = "CREATE", user: Obj | None = None, old_object: Obj | None = None,
             subresource: tuple[str, str, str] | None = None, options: Obj | None = None) -> list[Denial]:
    """The denials (bindings with validationActions Deny) of `judge`: empty means the policies admit obj."""
    return list(judge(policies, bindings, obj, namespace_obj, operation, user, old_object, subresource,
                      options).denials)


def static_problems(policy: Obj) -> list[str]:
    """What the API server would refuse in this policy, or this model cannot judge: every expression's parse
    and name errors (undeclared identifiers, functions and variables), a missing matchConstraints, an
    unknown failurePolicy, params and the authorizer. [] for a policy that compiles."""
    compiled = compile_policy(policy)
    problems = [f"{where}: {program.problem}" for where, program in compiled.programs() if program.problem]
    if compiled.spec.get("matchConstraints") is None:
        problems.append("spec.matchConstraints: Required value")
    if compiled.spec.get("failurePolicy", "Fail") not in ("Fail", "Ignore"):
        problems.append(f"spec.failurePolicy: Unsupported value: {compiled.spec['failurePolicy']!r}")
    try:
        _refuse_unsupported(compiled, [])
    except UnsupportedPolicy as err:
        problems.append(str(err))
    return problems
