"""The MultiKueue manager's identity on each worker, as Kueue's create-multikueue-kubeconfig.sh makes it
(site/static/examples/multikueue at v0.19.2), narrowed: only the job frameworks the manager enables, and
writes only in the namespaces of the teams dispatched to the worker."""
from __future__ import annotations

from typing import Any

from gke_ai_batch.vocabulary import KUEUE_GROUP, KUEUE_NAMESPACE, RBAC_GROUP, SERVICE_ACCOUNT_TOKEN, Manifest

# The script's names.
SERVICE_ACCOUNT = "multikueue-sa"
WORKER_ROLE = "multikueue-sa-role"
WRITER = "multikueue-sa-writer"  # the part of the script's rules that writes, bound per team namespace
READ_VERBS = ("get", "list", "watch")
_CRUD = ["create", "delete", "get", "list", "watch"]
# The script's rules per framework the manager enables (only those: a framework the manager enables must
# be watchable on every worker, and nothing more is granted).
FRAMEWORK_RULES: dict[str, tuple[dict[str, Any], ...]] = {
    # patch beyond the script: Kueue resizes an elastic Job on its worker by patching it (multikueue
    # job_multikueue_adapter.go `syncElasticJob`; ElasticJobsViaWorkloadSlices is beta and on in 0.19).
    "batch/job": ({"apiGroups": ["batch"], "resources": ["jobs"], "verbs": [*_CRUD, "patch"]},
                  {"apiGroups": ["batch"], "resources": ["jobs/status"], "verbs": ["get"]}),
    "jobset.x-k8s.io/jobset": ({"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"], "verbs": _CRUD},
                               {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets/status"], "verbs": ["get"]}),
    "pod": ({"apiGroups": [""], "resources": ["pods"], "verbs": _CRUD},),
    "deployment": ({"apiGroups": [""], "resources": ["pods"], "verbs": _CRUD},),  # dispatched as its pods
    "statefulset": ({"apiGroups": ["apps"], "resources": ["statefulsets"], "verbs": _CRUD},
                    {"apiGroups": ["apps"], "resources": ["statefulsets/status"], "verbs": ["get"]}),
}
KUEUE_RULES = (
    {"apiGroups": [KUEUE_GROUP], "resources": ["workloads"], "verbs": [*_CRUD, "update", "patch"]},
    {"apiGroups": [KUEUE_GROUP], "resources": ["workloads/status"], "verbs": ["get", "patch", "update"]},
    {"apiGroups": [KUEUE_GROUP], "resources": ["clusterqueues", "localqueues"], "verbs": ["get", "list", "watch"]},
)


def worker_identity(frameworks: list[str]) -> tuple[Manifest, ...]:
    """The manager's identity on a worker: Kueue's setup script's rules, for the frameworks the manager enables
    only, split so that it reads cluster-wide (Kueue watches every namespace) and writes only where a team the
    manager dispatches there lives (WRITER, bound per namespace by writer_bindings), not in kube-system."""
    rules = [dict(r) for f in frameworks for r in FRAMEWORK_RULES[f]] + [dict(r) for r in KUEUE_RULES]
    read = _unique([{**r, "verbs": [v for v in r["verbs"] if v in READ_VERBS]} for r in rules])
    write = _unique([{**r, "verbs": [v for v in r["verbs"] if v not in READ_VERBS]} for r in rules
                     if set(r["verbs"]) - set(READ_VERBS)])
    sa = {"name": SERVICE_ACCOUNT, "namespace": KUEUE_NAMESPACE}
    return (
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": dict(sa)},
        {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole", "metadata": {"name": WORKER_ROLE}, "rules": read},
        {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": f"{SERVICE_ACCOUNT}-crb"},
         "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": WORKER_ROLE},
         "subjects": [{"kind": "ServiceAccount", **sa}]},
        {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole", "metadata": {"name": WRITER}, "rules": write},
    )


def token_secret(generation: int) -> Manifest:
    """The identity's token Secret, named by generation: raising the generation replaces the token."""
    return {"apiVersion": "v1", "kind": "Secret", "type": SERVICE_ACCOUNT_TOKEN,
            "metadata": {"name": f"{SERVICE_ACCOUNT}-token-{generation}", "namespace": KUEUE_NAMESPACE,
                         "annotations": {"kubernetes.io/service-account.name": SERVICE_ACCOUNT}}}


def _unique(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for i, r in enumerate(rules) if r["verbs"] and r not in rules[:i]]


def writer_bindings(namespaces: list[str]) -> list[Manifest]:
    """The manager's identity may write (create, delete, update, patch) jobs, pods and Workloads in these
    namespaces only."""
    return [{"apiVersion": f"{RBAC_GROUP}/v1", "kind": "RoleBinding",
             "metadata": {"name": f"{SERVICE_ACCOUNT}-writer", "namespace": ns},
             "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": WRITER},
             "subjects": [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": KUEUE_NAMESPACE}]}
            for ns in namespaces]
