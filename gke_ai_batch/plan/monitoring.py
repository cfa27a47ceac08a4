"""Kueue's metrics for Google Cloud Managed Service for Prometheus (GMP managed collection): a
PodMonitoring on the controller, and the identity and rights its scrapes need (pure, testable).

Kueue refuses anonymous scrapes, so a PodMonitoring alone collects nothing. Upstream facts:
- Kueue v0.19.2 serves /metrics over HTTPS on the manager container's port named `metrics` (8443)
  and authenticates (TokenReview) and authorizes (SubjectAccessReview) each request
  (cmd/kueue/main.go: SecureServing, filters.WithAuthenticationAndAuthorization); a request without
  a token allowed `get /metrics` gets 401 or 403.
- Its chart grants that right in ClusterRole `<fullname>-metrics-reader`
  (charts/kueue/templates/rbac/metrics_reader_role.yaml) and labels the controller pods with
  `kueue.selectorLabels` (templates/_helpers.tpl, templates/manager/manager.yaml).
- A PodMonitoring sends no token of the collector's own: `authorization` takes credentials from a
  Secret in the PodMonitoring's namespace only (prometheus-engine v0.17.2,
  pkg/operator/apis/monitoring/v1/http_types.go and the PodMonitoring CRD), and the collector reads
  it with its own ServiceAccount, which may read no Secret (manifests/operator.yaml) until a Role
  allows it, as GMP's e2e/authorization_test.go and the GKE tutorial "Implement a Job queuing
  system with quota sharing between namespaces on GKE" (docs.cloud.google.com/kubernetes-engine/
  docs/tutorials/kueue-cohort) do. That Secret is a ServiceAccount token the cluster fills in."""
from __future__ import annotations

from dataclasses import dataclass

from gke_ai_batch.vocabulary import (
    GMP_API,
    GMP_COLLECTOR,
    GMP_NAMESPACES,
    KUEUE_NAMESPACE,
    KUEUE_RELEASE,
    RBAC_GROUP,
    ClusterMode,
    Manifest,
)

SCRAPER = f"{KUEUE_RELEASE}-metrics-reader"  # the ServiceAccount whose token the collector presents
TOKEN = f"{SCRAPER}-token"
METRICS_READER_ROLE = f"{KUEUE_RELEASE}-metrics-reader"  # the chart's ClusterRole: get /metrics
METRICS_PORT = 8443  # the chart's `metrics` container port, by number: the CRD's port rule checks numbers
TOKEN_READER = f"{KUEUE_RELEASE}-secret-reader"
CONTROLLER_LABELS = {"app.kubernetes.io/name": "kueue", "app.kubernetes.io/instance": KUEUE_RELEASE,
                     "control-plane": "controller-manager"}  # the chart's kueue.selectorLabels


# The series of Kueue's own controller: GMP sets `namespace` to the scraped pod's namespace (a PodMonitoring
# selects pods of its own namespace only) and `job` to the PodMonitoring's name, and refuses relabeling onto
# either (prometheus-engine v0.17.2 pkg/operator/apis/monitoring/v1/pod_config.go, and the PodMonitoring
# CRD's "cannot relabel onto protected label"); a scraped pod's own `namespace` or `job` label is kept only as
# exported_namespace / exported_job (honor_labels is off). Teams may create PodMonitorings but no
# ClusterPodMonitoring, so no team pod can publish a series with these two labels.
KUEUE_SERIES = f'namespace="{KUEUE_NAMESPACE}", job="{KUEUE_RELEASE}"'
# The documented queries (docs/policies.md shows them; a test keeps the two the same): each reads Kueue's series.
QUERIES: tuple[tuple[str, str], ...] = (
    ("pending workloads per ClusterQueue (status: active or inadmissible)",
     f"sum by (cluster_queue, status) (kueue_pending_workloads{{{KUEUE_SERIES}}})"),
    ("admitted workloads still running, per ClusterQueue",
     f"sum by (cluster_queue) (kueue_admitted_active_workloads{{{KUEUE_SERIES}}})"),
    ("quota used / nominal per team, flavor and resource (above 1: borrowing from the cohort)",
     f"sum by (cluster_queue, flavor, resource) (kueue_cluster_queue_resource_usage{{{KUEUE_SERIES}}})\n"
     "  / on (cluster_queue, flavor, resource)\n"
     f"(sum by (cluster_queue, flavor, resource) (kueue_cluster_queue_nominal_quota{{{KUEUE_SERIES}}}) > 0)"),
)


@dataclass(frozen=True)
class MonitoringPlan:
    service_account: Manifest
    token: Manifest  # must follow its ServiceAccount: the token controller deletes an orphaned token Secret
    reader_binding: Manifest
    token_role: Manifest
    collector_binding: Manifest
    pod_monitoring: Manifest


def _meta(name: str) -> dict[str, str]:
    return {"name": name, "namespace": KUEUE_NAMESPACE}


def _rbac(mode: ClusterMode) -> tuple[Manifest, Manifest, Manifest]:
    """The scraper may get /metrics; the collector may read its token, and no other Secret."""
    reader = {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": SCRAPER},
              "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": METRICS_READER_ROLE},
              "subjects": [{"kind": "ServiceAccount", **_meta(SCRAPER)}]}
    role = {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "Role", "metadata": _meta(TOKEN_READER),
            "rules": [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": [TOKEN],
                       "verbs": ["get", "list", "watch"]}]}
    collector = {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "RoleBinding",
                 "metadata": _meta(f"gmp-{GMP_COLLECTOR}-{TOKEN_READER}"),
                 "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": TOKEN_READER},
                 "subjects": [{"kind": "ServiceAccount", "name": GMP_COLLECTOR, "namespace": GMP_NAMESPACES[mode]}]}
    return reader, role, collector


def _pod_monitoring() -> Manifest:
    endpoint = {
        "port": METRICS_PORT, "path": "/metrics", "scheme": "https", "interval": "30s", "timeout": "10s",
        # Under Kueue's internal cert management (the default, kept here) the endpoint serves
        # controller-runtime's self-signed certificate for `localhost`: there is no CA to verify it
        # against (controller-runtime v0.24.1 pkg/metrics/server/server.go; Kueue's own ServiceMonitor
        # skips verification too, chart values.yaml metrics.serviceMonitor.tlsConfig).
        "tls": {"insecureSkipVerify": True},
        "authorization": {"type": "Bearer", "credentials": {"secret": {"name": TOKEN, "key": "token"}}},
    }
    return {"apiVersion": GMP_API, "kind": "PodMonitoring", "metadata": _meta(KUEUE_RELEASE),
            "spec": {"selector": {"matchLabels": dict(CONTROLLER_LABELS)}, "endpoints": [endpoint]}}


def kueue_monitoring(mode: ClusterMode) -> MonitoringPlan:
    """The scrape of Kueue's controller; the collector's namespace differs between Standard and Autopilot."""
    token = {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
             "metadata": {**_meta(TOKEN), "annotations": {"kubernetes.io/service-account.name": SCRAPER}}}
    reader, role, collector = _rbac(mode)
    return MonitoringPlan(service_account={"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(SCRAPER)},
                          token=token, reader_binding=reader, token_role=role, collector_binding=collector,
                          pod_monitoring=_pod_monitoring())
