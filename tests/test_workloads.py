"""Sample workloads cannot drift from their stacks: each asks only for a queue, flavor, topology,
chip count and priority that the stack it is named after provides."""
from pathlib import Path

import pytest
import yaml

from gkebatch.pool_facts import pool_facts

from .conftest import by_type

WORKLOADS = Path(__file__).resolve().parent.parent / "examples" / "workloads"
ACCELERATORS = ("google.com/tpu", "nvidia.com/gpu")


def pod_specs(doc):
    """(count of pods per group, groups, pod template spec) of a Job or JobSet."""
    if doc["kind"] == "Job":
        yield doc["spec"].get("parallelism", 1), 1, doc["spec"]["template"]["spec"]
    elif doc["kind"] == "JobSet":
        for rj in doc["spec"]["replicatedJobs"]:
            job = rj["template"]["spec"]
            yield job.get("parallelism", 1), rj.get("replicas", 1), job["template"]["spec"]


def problems(doc, regs) -> list[str]:
    out = []
    ns = doc["metadata"]["namespace"]
    queue = doc["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    lqs = {(r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"]): r.inputs for r in by_type(regs, ":LocalQueue")}
    if (ns, queue) not in lqs:
        return [f"no LocalQueue {queue} in namespace {ns}"]
    cq = next(r.inputs for r in by_type(regs, ":ClusterQueue")
              if r.inputs["metadata"]["name"] == lqs[(ns, queue)]["spec"]["clusterQueue"])
    flavors = {r.inputs["metadata"]["name"]: r.inputs["spec"].get("nodeLabels", {}) for r in by_type(regs, ":ResourceFlavor")}
    quota = {(f["name"], r["name"]): r["nominalQuota"] for g in cq["spec"]["resourceGroups"] for f in g["flavors"]
             for r in f["resources"]}
    pools = [pool_facts(r.inputs) for r in by_type(regs, "nodePool:NodePool")]
    wpc = doc["metadata"]["labels"].get("kueue.x-k8s.io/priority-class")
    if wpc and wpc not in {r.inputs["metadata"]["name"] for r in by_type(regs, ":WorkloadPriorityClass")}:
        out.append(f"no WorkloadPriorityClass {wpc}")
    for pods, groups, spec in pod_specs(doc):
        pcs = {r.inputs["metadata"]["name"] for r in by_type(regs, ":PriorityClass")}
        if spec.get("priorityClassName") and spec["priorityClassName"] not in pcs:
            out.append(f"no PriorityClass {spec['priorityClassName']}")
        selector = spec.get("nodeSelector", {})
        limits = {k: int(v) for c in spec["containers"] for k, v in c["resources"].get("limits", {}).items()
                  if k in ACCELERATORS}
        matching = [f for f, labels in flavors.items()
                    if all(selector.get(k, v) == v for k, v in labels.items()) and any(f == q[0] for q in quota)]
        if not matching:
            out.append(f"no flavor of ClusterQueue {cq['metadata']['name']} matches nodeSelector {selector}")
            continue
        for resource, per_pod in limits.items():
            if not any((f, resource) in quota for f in matching):
                out.append(f"ClusterQueue {cq['metadata']['name']} has no {resource} quota on {matching}")
                continue
            nominal = max(int(quota[(f, resource)]) for f in matching if (f, resource) in quota)
            if per_pod * pods * groups > nominal:
                out.append(f"asks for {per_pod * pods * groups} {resource}, quota is {nominal}")
            shapes = [p for p in pools if p.resource == resource and all(
                selector.get(k, v) == v for k, v in p.node_labels.items() if k in selector)]
            # A multi-host slice runs one pod per VM: parallelism must be the slice's VM count.
            if shapes and not any(p.per_node == per_pod and (not p.multi_host or p.nodes == pods) for p in shapes):
                out.append(f"{per_pod} {resource} x {pods} pods fits no slice of the stack's pools")
    return out


@pytest.mark.parametrize("path", sorted(WORKLOADS.glob("*.yaml")), ids=lambda p: p.stem)
def test_workload_matches_its_stack(plan, path):
    regs = plan(path.stem)
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d["kind"] in ("Job", "JobSet")]
    assert docs
    for doc in docs:
        assert problems(doc, regs) == [], doc["metadata"].get("name")


def test_drift_is_caught(plan):
    doc = yaml.safe_load((WORKLOADS / "multislice.yaml").read_text())
    spec = doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    spec["nodeSelector"]["cloud.google.com/gke-tpu-topology"] = "4x4"
    assert "matches nodeSelector" in problems(doc, plan("multislice"))[0]
    doc = yaml.safe_load((WORKLOADS / "multislice.yaml").read_text())
    doc["spec"]["replicatedJobs"][0]["replicas"] = 4
    assert problems(doc, plan("multislice")) == ["asks for 32 google.com/tpu, quota is 24"]
    doc = yaml.safe_load((WORKLOADS / "multislice.yaml").read_text())
    doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["resources"][
        "limits"]["google.com/tpu"] = 8
    assert any("fits no slice" in p for p in problems(doc, plan("multislice")))
    doc["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "missing"
    assert problems(doc, plan("multislice")) == ["no LocalQueue missing in namespace default"]
