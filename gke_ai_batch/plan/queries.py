"""Every PromQL expression the platform writes (dashboard, alerts, docs), in one place.

Each one selects Kueue's own series: `cluster` (this stack's cluster, so one project's several clusters
stay apart), `namespace="kueue-system"` and `job="kueue"`, the target labels GMP writes from the
scraped pod's namespace and the PodMonitoring's name (plan.monitoring). A team may run a PodMonitoring in
its own namespaces, and GMP refuses relabeling onto `namespace` or `job` (prometheus-engine v0.17.2,
pod_config.go, protectedLabel), so no team's series can claim to be Kueue's. A LocalQueue's namespace is
therefore `exported_namespace`: GMP does not honor the scraped labels, and Prometheus' honor_labels false
"renames conflicting labels in the scraped data to exported_<original-label>"
(prometheus.io/docs/prometheus/latest/configuration/configuration/#scrape_config). The tests hold every query
to Kueue's metrics reference (tests/kueue_metrics.py).

Kueue runs two replicas, and the standby reports its queue and cache gauges too: the core controllers run on
every replica (NeedLeaderElection false), and the gauges are set from caches every replica keeps. Every
series but kueue_build_info carries `replica_role` ("leader", "follower" or "standalone", the role tracker's
values; a replica elected leader clears its follower gauges: kueue v0.19.2 pkg/util/roletracker/tracker.go,
pkg/metrics/metrics.go ClearGaugeMetricsForRole, cmd/kueue/main.go), so every query selects the leader's
series: a sum over both replicas would double the figures. No replica is standalone: the platform's Kueue
configuration always elects a leader (plan.kueue_configuration, leaderElect: true). Only the replica counts
(kueue_replicas, kueue_absent) read every replica, from kueue_build_info, which has no role."""
from __future__ import annotations

import re
from collections.abc import Iterable

from gke_ai_batch.vocabulary import KUEUE_NAMESPACE, KUEUE_RELEASE

LEADER = {"replica_role": "leader"}  # the elected replica's series (pkg/util/roletracker: RoleLeader)


def kueue(cluster: str, **matchers: str) -> str:
    """The label matchers of the leading Kueue replica's series in `cluster`; a value with `|` or a regex
    character matches as a regex."""
    return every_replica(cluster, **LEADER, **matchers)


def every_replica(cluster: str, **matchers: str) -> str:
    """The label matchers of every Kueue replica's series in `cluster`: only for kueue_build_info, the one
    metric without `replica_role`, which counts the replicas."""
    pairs = {"cluster": cluster, "namespace": KUEUE_NAMESPACE, "job": KUEUE_RELEASE, **matchers}
    return "{" + ",".join(f'{k}{"=~" if _is_regex(v) else "="}"{v}"' for k, v in pairs.items()) + "}"


def _is_regex(value: str) -> bool:
    return bool(re.search(r"[|*+?()\[\]]", value))


def one_of(values: Iterable[str]) -> str:
    """A regex matching exactly these names (Kubernetes names hold no regex characters but `.`)."""
    return "|".join(v.replace(".", r"\\.") for v in sorted(set(values)))


# -- the platform ---------------------------------------------------------------------------------------

def kueue_replicas(cluster: str) -> str:
    """Kueue controller replicas scraped in the last 5 minutes: every replica reports its build (metrics.go
    Register: buildInfo), leader and followers alike."""
    return f"count(last_over_time(kueue_build_info{every_replica(cluster)}[5m]))"


def kueue_absent(cluster: str) -> str:
    """No Kueue replica scraped for 5 minutes: the controller is down, and with it the webhooks every team
    pod and job passes through (one manager binary serves both, cmd/kueue/main.go)."""
    return f"absent_over_time(kueue_build_info{every_replica(cluster)}[5m])"


def admission_attempts(cluster: str) -> str:
    return f"sum by (result) (rate(kueue_admission_attempts_total{kueue(cluster)}[5m]))"


def admission_latency_p90(cluster: str) -> str:
    return ("histogram_quantile(0.9, sum by (le) "
            f"(rate(kueue_admission_attempt_duration_seconds_bucket{kueue(cluster)}[5m])))")


def pending_by_cluster_queue(cluster: str) -> str:
    return f"sum by (cluster_queue, status) (kueue_pending_workloads{kueue(cluster)})"


def cohort_usage(cluster: str) -> str:
    return (f"sum by (cohort, flavor, resource) (kueue_cohort_subtree_resource_reservations{kueue(cluster)}) "
            f"/ sum by (cohort, flavor, resource) (kueue_cohort_subtree_quota{kueue(cluster)}) > 0")


def admission_check_waits(cluster: str) -> str:
    """How long admitted quota waits for its checks (ProvisioningRequests: flex-start and queued capacity)."""
    return ("histogram_quantile(0.9, sum by (le, cluster_queue) "
            f"(rate(kueue_admission_checks_wait_time_seconds_bucket{kueue(cluster)}[30m])))")


# -- a team ---------------------------------------------------------------------------------------------

def team_pending(cluster: str, namespaces: Iterable[str]) -> str:
    ns = kueue(cluster, exported_namespace=one_of(namespaces))
    return f"sum by (exported_namespace, name, status) (kueue_local_queue_pending_workloads{ns})"


def team_admitted(cluster: str, namespaces: Iterable[str]) -> str:
    ns = kueue(cluster, exported_namespace=one_of(namespaces))
    return f"sum by (exported_namespace, name) (kueue_local_queue_admitted_active_workloads{ns})"


def usage_of_quota(cluster: str, cluster_queue: str) -> str:
    """Usage over nominal quota per flavor and resource: 1 is the whole quota, above 1 is borrowing
    (both series need metrics.enableClusterQueueResources, which the Kueue configuration sets)."""
    cq = kueue(cluster, cluster_queue=cluster_queue)
    return (f"sum by (flavor, resource) (kueue_cluster_queue_resource_usage{cq}) "
            f"/ (sum by (flavor, resource) (kueue_cluster_queue_nominal_quota{cq}) > 0)")


def team_wait(cluster: str, namespaces: Iterable[str], quantile: float) -> str:
    ns = kueue(cluster, exported_namespace=one_of(namespaces))
    return (f"histogram_quantile({quantile}, sum by (le) "
            f"(rate(kueue_local_queue_admission_wait_time_seconds_bucket{ns}[1h])))")


def evictions(cluster: str, cluster_queue: str, window: str = "1h") -> str:
    cq = kueue(cluster, cluster_queue=cluster_queue)
    return f"sum by (cluster_queue, reason) (increase(kueue_evicted_workloads_total{cq}[{window}]))"


def preemptions(cluster: str, cluster_queue: str) -> str:
    cq = kueue(cluster, preempting_cluster_queue=cluster_queue)
    return f"sum by (reason) (increase(kueue_preempted_workloads_total{cq}[1h]))"


# -- alert conditions -----------------------------------------------------------------------------------

def teams_queues(cluster: str, label: str, these: Iterable[str] | None, but: Iterable[str] = ()) -> str:
    """The leading replica's series whose `label` is one of `these` (None: any value) and none of `but`: the
    queues of one team, or of every team that shares the stack's alert settings but those with their own."""
    selector = kueue(cluster, **({label: one_of(these)} if these is not None else {}))
    excluded = one_of(but)
    return f'{selector[:-1]},{label}!~"{excluded}"}}' if excluded else selector


def stuck_pending(selector: str, minutes: int) -> str:
    """A LocalQueue (of the selector's namespaces, `teams_queues` over exported_namespace) that has had workloads
    pending for the whole of the last `minutes` and admitted none in them: its work has waited at least that long
    (a queue that was idle, then got one job, is not)."""
    by = "exported_namespace, name"
    return (f"min_over_time((sum by ({by}) (kueue_local_queue_pending_workloads{selector}))[{minutes}m:1m]) > 0 "
            f"unless on ({by}) "
            f"sum by ({by}) (increase(kueue_local_queue_admitted_workloads_total{selector}[{minutes}m])) > 0")


def at_quota(selector: str) -> str:
    """Resources of the selector's ClusterQueues (`teams_queues` over cluster_queue) used to at least their whole
    nominal quota, per queue, flavor and resource."""
    by = "cluster_queue, flavor, resource"
    return (f"sum by ({by}) (kueue_cluster_queue_resource_usage{selector}) "
            f"/ (sum by ({by}) (kueue_cluster_queue_nominal_quota{selector}) > 0) >= 1")


def eviction_burst(selector: str, per_hour: int) -> str:
    return f"sum by (cluster_queue) (increase(kueue_evicted_workloads_total{selector}[1h])) > {per_hour}"


def provisioning_failures(cluster: str, cluster_queues: Iterable[str]) -> str:
    """Workloads a ProvisioningRequest check sent back: a failed request sets the check to Retry and Kueue
    evicts the workload with reason AdmissionCheck; one out of retries is Rejected and deactivated, then
    evicted as Deactivated with underlying cause AdmissionCheck (kueue v0.19.2,
    pkg/controller/admissionchecks/provisioning/controller.go, core/workload_controller.go)."""
    queues = one_of(cluster_queues)
    retried = kueue(cluster, cluster_queue=queues, reason="AdmissionCheck")
    rejected = kueue(cluster, cluster_queue=queues, reason="Deactivated", underlying_cause="AdmissionCheck")
    return (f"sum by (cluster_queue) (increase(kueue_evicted_workloads_total{retried}[30m])) > 0 or "
            f"sum by (cluster_queue) (increase(kueue_evicted_workloads_total{rejected}[30m])) > 0")
