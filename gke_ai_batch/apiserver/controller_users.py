"""Who a controller's requests come from: kube-controller-manager runs each controller under its own kube-system
service account (`--use-service-account-credentials`, as GKE and the sandbox run it), so the objects it makes from a
template reach admission as that account, not as the member who wrote the template."""
from __future__ import annotations

from typing import Any

# Who creates the pods of each kind that makes them; a JobSet's and a CronJob's pods come from their Jobs.
POD_MAKERS = {"Job": "job-controller", "JobSet": "job-controller", "CronJob": "job-controller",
              "Deployment": "replicaset-controller", "StatefulSet": "statefulset-controller"}


def controller_user(name: str) -> dict[str, Any]:
    """The userInfo of controller `name`'s requests."""
    return {"username": f"system:serviceaccount:kube-system:{name}",
            "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"]}


def pod_maker(kind: str) -> dict[str, Any] | None:
    """The requester of the pods an object of `kind` makes; None for a kind that makes none."""
    name = POD_MAKERS.get(kind)
    return controller_user(name) if name else None
