"""A ResourceFlavor or ClusterQueue changed under running work, and what Kueue then does to it: the notes
`make diff` puts on such a line. None of these changes evicts anything by itself; each changes what Kueue
admits next, and some make running work preemptible. Read at kubernetes-sigs/kueue v0.19.2:

- A flavor's nodeLabels and tolerations go into a job's pod template once, when Kueue starts the job
  (pkg/controller/jobframework/reconciler.go `startJob` -> pkg/podset `FromAssignment`). A running job is not
  re-read: `EquivalentToWorkload` compares only a pod set's count and containers (pkg/util/equality/podset.go,
  tolerations ignored once admitted), so its pods, replacement pods too, keep the old selector. The flavor
  assigner matches a workload's own selector and tolerations against the new nodeLabels and nodeTaints
  (pkg/scheduler/flavorassigner `checkFlavorForPodSets`), and the flavor controller retries the queues' waiting
  workloads (pkg/controller/core/resourceflavor_controller.go `flavorSchedulingFieldsChanged`). A job evicted or
  preempted later gets its template restored (`stopJob` -> `RestorePodSetsInfo`) and the new labels at its next
  start.
- A ClusterQueue's cohortName moves its usage: the cache re-adds what the queue uses above its nominal quota to
  the new cohort's usage and drops it from the old one's (pkg/cache/scheduler/clusterqueue.go
  `updateClusterQueue`, resource_node.go `accumulateFromChild`). Nothing is evicted; the old cohort counts the
  lent quota as free while the borrowing workloads still hold its nodes, and in the new cohort they are
  borrowing, which a member reclaiming its nominal quota preempts (pkg/scheduler/preemption/classical
  hierarchical_preemption.go, candidates whose queue is `BorrowingWith`).
- A lower nominalQuota is the same: `updateClusterQueue` recomputes the quotas and evicts nothing; usage above
  the new quota counts as borrowing.
"""
from __future__ import annotations

from typing import Any

from gke_ai_batch.vocabulary import kueue_type

from .inputs import ABSENT, amount, changes, under

RESOURCE_FLAVOR = kueue_type("ResourceFlavor")
CLUSTER_QUEUE = kueue_type("ClusterQueue")
QUOTA_RUNBOOK = 'docs/operating.md, Runbooks, "A quota cut below what a team is running"'
FLAVOR_NOTES = {
    "spec.nodeLabels": (
        "Kueue put the flavor's nodeLabels into each running job's nodeSelector when it started it, and does not "
        "redo that: running jobs and their replacement pods keep selecting the old labels (where no node has them "
        "any more, their new pods stay Pending); jobs started from now on get the new ones, and if no node has "
        "those, their pods stay Pending until waitForPodsReady evicts and requeues them"),
    "spec.tolerations": (
        "Kueue added the flavor's tolerations to each running job's pods when it started it, and does not redo "
        "that: running jobs and their replacement pods keep the old ones (on nodes whose taints changed with "
        "them, their new pods stay Pending); jobs started from now on get the new ones"),
    "spec.nodeTaints": (
        "running jobs keep running (Kueue does not re-judge them); a waiting workload that does not tolerate the "
        "new taints can no longer be given this flavor"),
}
COHORT = ("the team's queue moves to another cohort: Kueue evicts nothing, and moves what its workloads use above "
          "its nominal quota to the new cohort's usage. The old cohort counts that lent quota as free at once, "
          "while those workloads still hold its nodes (its new admissions may wait for nodes); in the new cohort "
          "they are borrowing, and a member reclaiming its own quota preempts them. Move a team after its "
          "borrowing work ends")
LEFT_COHORT = ("the team's queue leaves its cohort: Kueue evicts nothing; the cohort counts the quota it lent as free "
               "at once, while the queue's workloads above its nominal quota still hold its nodes (its new admissions "
               "may wait for nodes), and the queue admits nothing more until its usage is below its quota. Take a "
               "team out after its borrowing work ends")
QUOTA_CUT = ("a lower nominal quota: Kueue evicts nothing for it, so if the team runs more than this, its workloads "
             "keep running, the excess counts as borrowing (a cohort member reclaiming its own quota preempts it), "
             f"and until its usage is below, the queue admits only what it can borrow; {QUOTA_RUNBOOK}")


def _lowered(a: Any, b: Any) -> bool:
    before, after = amount(a), amount(b)
    return before is not None and (after is None or after < before)


def _note(type_: str, path: str, a: Any, b: Any) -> str | None:
    if type_ == RESOURCE_FLAVOR:
        return next((note for field, note in FLAVOR_NOTES.items() if under(path, field)), None)
    if type_ == CLUSTER_QUEUE and path == "spec.cohortName" and a is not ABSENT:
        return LEFT_COHORT if b is ABSENT else COHORT
    if type_ == CLUSTER_QUEUE and path.endswith(".nominalQuota") and _lowered(a, b):
        return QUOTA_CUT
    return None


def queue_notes(type_: str, paths: list[str], old: dict[str, Any], new: dict[str, Any]) -> dict[str, str]:
    """The note for each changed path of `paths` that changes what a flavor selects or tolerates, moves a queue
    out of its cohort (joining one borrows nothing yet), or lowers a nominal quota."""
    wanted = set(paths)
    return {path: note for path, a, b in changes(old, new)
            if path in wanted and (note := _note(type_, path, a, b)) is not None}
