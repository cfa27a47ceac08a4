"""The Jobs a CronJob creates. Kueue v0.19.2 has no CronJob integration (pkg/controller/jobs has none; its "Run a
CronJob" task labels the jobTemplate): the CronJob itself is created and never gated, and each Job its controller
creates at a schedule is an ordinary Job to the API server and to Kueue. The controller copies the jobTemplate's
labels and annotations onto the Job and makes the CronJob its controller owner (kubernetes pkg/controller/cronjob
utils.go `getJobFromTemplate2`); the Job webhook suspends it and Kueue admits it by its queue-name label.

The controller's requests are its own, not a team member's: kube-controller-manager runs each controller under
its own service account (`--use-service-account-credentials`), so the Job passes the mutating and validating
policies, ResourceQuota (`count/jobs.batch`) and Kueue as `system:serviceaccount:kube-system:cronjob-controller`.
A Job refused there is not created at that schedule (a FailedCreate event on the CronJob), every time."""
from __future__ import annotations

from typing import Any

from gke_ai_batch.vocabulary import Obj

from .controller_users import controller_user

CRON_JOB = "CronJob"
CONTROLLER = controller_user("cronjob-controller")


def job_of(cron: Obj) -> dict[str, Any]:
    """The Job the controller creates from the CronJob's jobTemplate, owned by the CronJob (its name is the
    CronJob's and the schedule's time; the CronJob's name stands for it)."""
    meta = cron.get("metadata") or {}
    template = (cron.get("spec") or {}).get("jobTemplate") or {}
    template_meta = template.get("metadata") or {}
    owner = {"apiVersion": cron.get("apiVersion"), "kind": CRON_JOB, "name": meta.get("name") or "",
             "uid": meta.get("uid") or "", "controller": True, "blockOwnerDeletion": True}
    job_meta = {"name": meta.get("name") or "", "namespace": meta.get("namespace") or "default",
                "ownerReferences": [owner]}
    job_meta.update({k: dict(template_meta[k]) for k in ("labels", "annotations") if template_meta.get(k)})
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta, "spec": dict(template.get("spec") or {})}
