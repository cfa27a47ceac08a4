"""Onboarding, changing or removing one team changes only that team's resources: the Kueue release
(whose config change restarts the controller for every team), the flavors, cohorts and other teams'
queues stay byte-for-byte the same. And the controllers wait on the system pool alone."""
from .conftest import platform_of, run_config

NEW_TEAM = {"name": "vision", "namespaces": ["vision"], "groups": ["ml-vision@acme.example"],
            "queue": {"cohort": "ml-prod", "quotas": {"v5e-spot": {"google.com/tpu": {"nominal": 8}}}}}


def resources(regs) -> dict:
    """name -> what the engine would receive, with dependencies by name (URNs carry the stack)."""
    def short(urn):
        return urn.rsplit("::", 1)[-1]
    return {r.name: (r.type, r.inputs, sorted(short(d) for d in r.dependencies), r.parent and short(r.parent))
            for r in regs}


def changed(before: dict, after: dict) -> set[str]:
    return {n for n in before.keys() | after.keys() if before.get(n) != after.get(n)}


def plan_with(change) -> dict:
    cfg = platform_of("prod")
    change(cfg)
    return resources(run_config(cfg, "prod"))


def test_adding_a_team_adds_only_its_resources():
    before, after = plan_with(lambda c: None), plan_with(lambda c: c["teams"].append(NEW_TEAM))
    # its objects, its groups in the queue viewers' binding, its dashboard section and its namespace in the cost
    # view; no alert policy: the shared team alerts cover a team that keeps the stack's alert settings
    assert changed(before, after) == {"team-vision", "team-vision-ns-vision", "team-vision-lq-vision",
                                      "team-vision-rb-vision", "team-vision-quota-vision", "team-vision-limits-vision",
                                      "team-vision-netpol-vision", "queues-cq-vision",
                                      "tenancy-queue-viewer-clusterrolebinding",
                                      "observability-dashboard", "team-cost-view"}
    assert set(before) < set(after)


def test_removing_a_team_removes_only_its_resources():
    before = plan_with(lambda c: None)
    after = plan_with(lambda c: c["teams"].pop(2))
    # and its groups in the queue viewers' binding, the dashboard's section, the cost view's namespace, the
    # ProvisioningRequest alert's queue
    assert changed(before, after) == {n for n in before if "inference-eval" in n} | {
        "tenancy-queue-viewer-clusterrolebinding", "observability-dashboard", "team-cost-view",
        "observability-platform-provisioning-request-failing"}


def test_changing_a_quota_changes_only_that_queue():
    def more(c):
        c["teams"][1]["queue"]["quotas"]["v5e-spot"]["google.com/tpu"]["nominal"] = 8
    assert changed(plan_with(lambda c: None), plan_with(more)) == {"queues-cq-research"}


def test_joining_a_shared_queue_leaves_the_queue_alone():
    def base(c):
        c["shared_queues"] = [{"name": "pool", "cohort": "ml-prod", "quotas": {"v5e-spot": {"google.com/tpu": 8}}}]
    before = plan_with(base)
    after = plan_with(lambda c: (base(c), c["teams"].append({"name": "vision", "cluster_queue": "pool"})))
    assert changed(before, after) == {"team-vision", "team-vision-ns-vision", "team-vision-lq-vision",
                                      "team-vision-quota-vision", "team-vision-limits-vision",
                                      "team-vision-netpol-vision",
                                      "observability-dashboard", "team-cost-view"}


def test_releases_wait_on_the_system_pool_only():
    regs = run_config(platform_of("prod"), "prod")
    pools = {r.urn: r.inputs["name"] for r in regs if r.type == "gcp:container/nodePool:NodePool"}
    components = {r.urn: r.name for r in regs if r.type.startswith("gke-ai-batch:index:")}
    for release in (r for r in regs if r.type == "kubernetes:helm.sh/v3:Release"):
        waits = [pools.get(d) or components.get(d) for d in release.dependencies]
        assert "system" in waits and not any(w and w.startswith(("v5p", "v6e", "v5e", "h100")) for w in waits), waits
