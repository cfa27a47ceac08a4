"""The object-size cap (gke-ai-batch-object-size) counts every field a team member can inflate: the review of
issue 36 sent Jobs past the cap in eleven pod spec fields the cap's list of fields did not hold. The cap now walks
the whole spec; these tests inflate each of those fields as a member would, derive from the Kubernetes 1.33 and
JobSet v0.12.0 schemas that no field nests deeper than the walk, and hold the walk's count to its definition over
an object that sets every field of a pod spec."""
from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml
from celpy import json_to_cel

from gke_ai_batch.apiserver.cel_compile import compile_expression, run_program
from gke_ai_batch.conform.builtin_kinds import _folder
from gke_ai_batch.plan.namespace_policies import OBJECT_SIZE, WALK_DEPTH

from .conftest import ROOT
from .test_containment import prod_policies
from .test_escape import container, job, verdict

CAP = 16384
REFUSED = "refused: research/big: ValidatingAdmissionPolicy gke-ai-batch-object-size: "


def _entries(n: int, make: Any) -> list[Any]:
    return [make(i) for i in range(n)]


# Each field the review found uncounted, inflated by a member past 16 KiB with values the API server, Pod Security
# (restricted) and Kueue accept: (where in the pod spec, the value).
_SELECTOR = {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "zone", "operator": "In", "values": _entries(1200, lambda i: f"zone-{i:08}")}]}]}
INFLATED: dict[str, tuple[str, Any]] = {
    "nodeAffinity terms": ("affinity", {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": _SELECTOR}}),
    "hostAliases": ("hostAliases", _entries(400, lambda i: {"ip": f"10.0.{i // 250}.{i % 250}",
                                                            "hostnames": [f"host-{i:08}.example.com"]})),
    "tolerations": ("tolerations", _entries(400, lambda i: {"key": f"example.com/taint-{i:08}",
                                                            "operator": "Exists", "effect": "NoSchedule"})),
    "nodeSelector": ("nodeSelector", {f"example.com/label-{i:06}": "x" * 20 for i in range(600)}),
    "topologySpreadConstraints": ("topologySpreadConstraints", _entries(300, lambda i: {
        "maxSkew": 1, "topologyKey": f"example.com/key-{i:08}", "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "x"}}})),
    "imagePullSecrets": ("imagePullSecrets", _entries(1000, lambda i: {"name": f"pull-secret-{i:08}"})),
    "readinessGates": ("readinessGates", _entries(600, lambda i: {"conditionType": f"example.com/gate-{i:08}"})),
    # at most 2,048 characters of searches (the API server's validation, MaxDNSSearchListChars)
    "dnsConfig": ("dnsConfig", {"searches": _entries(20, lambda i: f"s{i}.{'x' * 60}.example.com"),
                                "options": _entries(600, lambda i: {"name": f"option-{i:08}", "value": "1"})}),
    "securityContext supplementalGroups": ("securityContext", {"supplementalGroups": list(range(1000, 21000))}),
    "resourceClaims": ("resourceClaims", _entries(400, lambda i: {"name": f"claim-{i:08}",
                                                                  "resourceClaimName": f"claim-{i:08}"})),
}


def inflated_job(where: str) -> dict:
    field, value = INFLATED[where]
    return job("research", "big", "research-queue", **{field: copy.deepcopy(value)})


@pytest.mark.parametrize("where", [*INFLATED, "volumeMounts"])
def test_a_member_cannot_inflate_a_job_past_the_cap_in_any_pod_spec_field(where):
    if where == "volumeMounts":
        mounts = _entries(500, lambda i: {"name": "scratch", "mountPath": f"/scratch/{i:08}"})
        obj = job("research", "big", "research-queue", containers=[container(volumeMounts=mounts)],
                  volumes=[{"name": "scratch", "emptyDir": {}}])
    else:
        obj = inflated_job(where)
    line = verdict("prod", obj)
    assert line.startswith(REFUSED + "the object holds ") and "namespace research allows 16384 per object" in line


def test_a_job_just_under_the_cap_is_admitted_and_one_byte_more_is_refused():
    """The cap is exact: a Job whose text is 16,384 bytes as the API server holds it (its defaults included:
    apiserver.job_defaults) passes; one more character is refused. The text is an annotation's, which the API
    server's validation leaves free (a hostname or a DNS search of that length it refuses itself)."""
    def with_note(length: int) -> dict:
        obj = job("research", "big", "research-queue")
        obj["metadata"]["annotations"] = {"note": "h" * length}
        return obj
    probe = verdict("prod", with_note(20000))
    held = int(probe.removeprefix(REFUSED + "the object holds ").split()[0])
    fits = with_note(20000 - (held - CAP))
    assert "gke-ai-batch-object-size" not in verdict("prod", fits)
    assert verdict("prod", with_note(20000 - (held - CAP) + 1)).startswith(
        REFUSED + "the object holds 16385 bytes of text")


def test_a_jobset_is_counted_in_its_deepest_field():
    """A JobSet's deepest string (WALK_DEPTH's comment) is counted like any other."""
    obj = next(d for d in yaml.safe_load_all((ROOT / "examples/workloads/prod.yaml").read_text())
               if d and d["kind"] == "JobSet" and d["metadata"]["namespace"] == "training")
    projected = {"sources": [{"clusterTrustBundle": {"path": "b", "labelSelector": {"matchExpressions": [
        {"key": "k", "operator": "In", "values": ["x" * 20000]}]}}}]}
    spec = obj["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    spec.setdefault("volumes", []).append({"name": "bundle", "projected": projected})
    line = verdict("prod", obj)
    assert "ValidatingAdmissionPolicy gke-ai-batch-object-size: the object holds 2" in line


def test_what_nests_deeper_than_any_schema_is_refused():
    """A map or list below the walk's last level would go uncounted: it is refused instead (only a schema-less
    field could hold it, and the judged kinds have none today)."""
    deep: Any = "x"
    for _ in range(WALK_DEPTH):
        deep = [deep]
    policies, bindings, namespace = prod_policies("research")
    obj = job("research", "big", "research-queue")
    obj["spec"]["template"]["metadata"] = {"annotations": {}, "deep": deep}
    from gke_ai_batch.apiserver.cel_policies import evaluate
    [denial] = evaluate(policies, bindings, obj, namespace, "CREATE")
    assert denial.message.startswith(f"the object nests maps and lists more than {WALK_DEPTH - 1} deep, deeper than "
                                     "any field of its kind; namespace research allows 16384 per object")


# --- the walk against the schemas ---------------------------------------------------------------------

def _definitions() -> dict[str, Any]:
    return json.loads(_folder().joinpath("_definitions.json").read_text())["$defs"]


def _jobset_spec() -> dict[str, Any]:
    crd = yaml.safe_load((ROOT / "gke_ai_batch/conform/schemas/jobset-v0.12.0/jobset.x-k8s.io_jobsets.yaml")
                         .read_text())
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return schema


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = defs[schema["$ref"].split("/")[-1]]
    return schema


def _type(schema: dict[str, Any]) -> str:
    """The schema's type; kubernetes-validate spells a nullable one ["integer", "null"]."""
    kind = schema.get("type", "string")
    return str(kind[0] if isinstance(kind, list) else kind)


def _depth(schema: dict[str, Any], defs: dict[str, Any]) -> int:
    """How many maps and lists deep the schema's deepest value is (the schema itself counts, if it is one)."""
    schema = _resolve(schema, defs)
    assert not schema.get("x-kubernetes-preserve-unknown-fields"), "a schema-less field could nest without bound"
    if "items" in schema:
        return 1 + _depth(schema["items"], defs)
    children = [v for k, v in schema.get("properties", {}).items() if k not in ("status", "managedFields")]
    if isinstance(schema.get("additionalProperties"), dict):
        children.append(schema["additionalProperties"])
    if children or _type(schema) == "object":
        return 1 + max((_depth(c, defs) for c in children), default=0)
    return 0


@pytest.mark.parametrize("spec", ["io.k8s.api.core.v1.PodSpec", "io.k8s.api.batch.v1.JobSpec",
                                  "io.k8s.api.apps.v1.DeploymentSpec", "io.k8s.api.apps.v1.StatefulSetSpec",
                                  "JobSet"])
def test_no_field_of_a_judged_kind_nests_deeper_than_the_walk(spec):
    defs = _definitions()
    depth = _depth(_jobset_spec() if spec == "JobSet" else defs[spec], defs)
    # the spec is the walk's first level; a map or list at WALK_DEPTH is refused: three levels to spare
    assert depth <= WALK_DEPTH - 4 and (spec != "JobSet" or depth == 17)


def _every_field(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A value setting every field the schema has: a map of one entry, a list of one element, strings of 7."""
    schema = _resolve(schema, defs)
    if "items" in schema:
        return [_every_field(schema["items"], defs)]
    if "properties" in schema or isinstance(schema.get("additionalProperties"), dict):
        value = {k: _every_field(v, defs) for k, v in schema.get("properties", {}).items() if k != "status"}
        if isinstance(schema.get("additionalProperties"), dict):
            value["entry"] = _every_field(schema["additionalProperties"], defs)
        return value
    return {"integer": 7, "number": 0.5, "boolean": True}.get(_type(schema), "s" * 7)


def _text(value: Any) -> int:
    """The cap's definition: a string's length, a map's keys' length, one per element of a list or map."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(len(k) + 1 + _text(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(1 + _text(v) for v in value)
    return 0


def test_the_cap_counts_every_field_of_a_pod_spec():
    """A Pod that sets every field of core/v1 PodSpec: the policy counts each key and string of it."""
    defs = _definitions()
    spec = _every_field(defs["io.k8s.api.core.v1.PodSpec"], defs)
    labels = {"a": "b"}
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "research", "labels": labels},
           "spec": spec}
    policies, _, _ = prod_policies("research")
    (policy,) = [p for p in policies if p["metadata"]["name"] == OBJECT_SIZE]
    (expression,) = [v["expression"] for v in policy["spec"]["variables"] if v["name"] == "bytes"]
    counted = run_program(compile_expression(expression, ()), {"object": json_to_cel(obj)})
    assert counted == _text(spec) + _text(labels) > 10000


def test_a_member_cannot_grow_a_suspended_job_past_the_cap_by_update():
    """Created small, then patched: the tolerations a member adds to a suspended Job count as at create."""
    from gke_ai_batch.apiserver.cel_policies import evaluate
    policies, bindings, namespace = prod_policies("research")
    small = job("research", "big", "research-queue")
    [denial] = evaluate(policies, bindings, inflated_job("tolerations"), namespace, "UPDATE", old_object=small)
    assert denial.policy == OBJECT_SIZE and denial.message.startswith("the object holds ")
