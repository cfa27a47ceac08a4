"""The stack's MutatingAdmissionPolicies, offline: the platform declares one, which gives a job of a
time-limited LocalQueue the queue's default limit (plan.runtime_limits). Mutating admission runs after
authorization and before validation (Pod Security and the ValidatingAdmissionPolicies then see the job with
its label). Its variables and its condition are evaluated from the manifest, by the same evaluator as the
validating policies (a probe policy whose one validation fails where the mutation applies, with the value as
its message); the mutation itself must be the platform's (`APPLY_DEFAULT`, the label set to
`variables.default`), any other is refused as not modelled rather than judged wrongly."""
from __future__ import annotations

import copy
from collections.abc import Sequence

from gke_ai_batch.apiserver.cel_policies import evaluate
from gke_ai_batch.apiserver.vap_terms import UnsupportedPolicy
from gke_ai_batch.plan.runtime_limits import APPLY_DEFAULT, WITHOUT_A_LIMIT
from gke_ai_batch.vocabulary import MAX_EXEC_TIME_LABEL, Obj


def _probe(policy: Obj) -> Obj:
    spec = {k: v for k, v in policy["spec"].items() if k not in ("mutations", "reinvocationPolicy")}
    return {**policy, "kind": "ValidatingAdmissionPolicy", "spec": {**spec, "validations": [
        {"expression": f"!({WITHOUT_A_LIMIT})", "messageExpression": "variables.default"}]}}


def mutate(policies: Sequence[Obj], bindings: Sequence[Obj], obj: Obj, namespace_obj: Obj | None,
           user: Obj | None) -> Obj:
    """obj as the stack's MutatingAdmissionPolicies leave it on create."""
    for policy in policies:
        name = policy["metadata"]["name"]
        expressions = [(m.get("applyConfiguration") or {}).get("expression") for m in policy["spec"]["mutations"]]
        if expressions != [APPLY_DEFAULT]:
            raise UnsupportedPolicy(f"MutatingAdmissionPolicy {name}: only the platform's default time limit is "
                                    "modelled offline")
        probes = [{**b, "kind": "ValidatingAdmissionPolicyBinding",
                   "spec": {**b["spec"], "validationActions": ["Deny"]}}
                  for b in bindings if (b.get("spec") or {}).get("policyName") == name]
        applies = evaluate([_probe(policy)], probes, obj, namespace_obj, "CREATE", user)
        if applies:
            changed = copy.deepcopy(dict(obj))
            changed.setdefault("metadata", {}).setdefault("labels", {})[MAX_EXEC_TIME_LABEL] = applies[0].message
            obj = changed
    return obj
