"""Managed Service for Prometheus can scrape Kueue: a PodMonitoring with a token Kueue accepts, and
Kueue exporting the quota metrics the queries of docs/policies.md read."""
import yaml

from gke_ai_batch.vocabulary import QUEUE_VIEWER

from .conftest import by_type


def objects(regs, kind: str) -> dict:
    """`namespace/name` (or `name`) -> inputs of every declared object of a kind."""
    found = {}
    for r in by_type(regs, f":{kind}"):
        meta = r.inputs["metadata"]
        found["/".join(filter(None, (meta.get("namespace"), meta["name"])))] = r.inputs
    return found


def test_pod_monitoring_scrapes_kueue_over_https_with_a_token(plan):
    regs = plan("prod")
    (pm,) = objects(regs, "PodMonitoring").values()
    assert pm["apiVersion"] == "monitoring.googleapis.com/v1" and pm["metadata"]["namespace"] == "kueue-system"
    assert pm["spec"]["selector"]["matchLabels"]["control-plane"] == "controller-manager"
    (endpoint,) = pm["spec"]["endpoints"]
    assert (endpoint["port"], endpoint["path"], endpoint["scheme"]) == (8443, "/metrics", "https")
    assert endpoint["tls"] == {"insecureSkipVerify": True}
    assert endpoint["authorization"]["type"] == "Bearer"
    secret = endpoint["authorization"]["credentials"]["secret"]
    assert "namespace" not in secret  # GMP reads it from the PodMonitoring's own namespace only
    token = objects(regs, "Secret")[f"kueue-system/{secret['name']}"]
    assert token["type"] == "kubernetes.io/service-account-token" and secret["key"] == "token"


def scraper_and_collector(regs) -> tuple[str, set, list]:
    """The token's ServiceAccount, the Secrets the collector may read, and who may read them."""
    (token,) = objects(regs, "Secret").values()
    (role,) = objects(regs, "Role").values()
    bindings = [b for b in objects(regs, "RoleBinding").values() if b["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role["metadata"]["name"]}]
    readable = {n for rule in role["rules"] if "secrets" in rule["resources"] for n in rule["resourceNames"]}
    return token["metadata"]["annotations"]["kubernetes.io/service-account.name"], readable, bindings


def test_collector_reads_exactly_the_token_and_the_scraper_may_get_metrics(plan):
    regs = plan("prod")
    account, readable, (binding,) = scraper_and_collector(regs)
    assert readable == {"kueue-metrics-reader-token"}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "collector", "namespace": "gmp-system"}]
    assert f"kueue-system/{account}" in objects(regs, "ServiceAccount")
    (reader,) = [b for b in objects(regs, "ClusterRoleBinding").values()
                 if b["roleRef"]["name"] == "kueue-metrics-reader"]
    assert reader["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": "kueue-system"}]


def test_autopilot_binds_its_own_collector(plan):
    _, _, (binding,) = scraper_and_collector(plan("batch-teams"))
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "collector", "namespace": "gke-gmp-system"}]


def test_token_and_binding_wait_for_what_they_name(plan):
    regs = plan("prod")
    release = next(r.urn for r in regs if r.type == "kubernetes:helm.sh/v3:Release" and r.inputs["name"] == "kueue")
    (token,) = by_type(regs, ":Secret")
    account = token.inputs["metadata"]["annotations"]["kubernetes.io/service-account.name"]
    (owner,) = [r for r in by_type(regs, ":ServiceAccount") if r.inputs["metadata"] == {
        "name": account, "namespace": "kueue-system"}]
    assert owner.urn in token.dependencies  # the token controller deletes a token whose account is missing
    (reader,) = [r for r in by_type(regs, ":ClusterRoleBinding") if r.inputs["roleRef"]["name"] != QUEUE_VIEWER]
    assert release in reader.dependencies  # the chart's ClusterRole


def test_kueue_exports_cluster_queue_quota_metrics(plan):
    (kueue,) = [r for r in plan("prod") if r.type.endswith("Release") and r.inputs["name"] == "kueue"]
    conf = yaml.safe_load(kueue.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert conf["metrics"]["enableClusterQueueResources"] is True
