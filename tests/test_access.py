"""The offline RBAC authorizer (gke_ai_batch.apiserver.rbac) and `make access` (gke_ai_batch.offline.access)."""
from __future__ import annotations

import re

import pytest
import yaml

from gke_ai_batch.apiserver.access import CHECKS, OTHER, OWN, StackAccess, UnknownTeam, may
from gke_ai_batch.apiserver.rbac import CLUSTER, Authorizer, parse_resource, upstream_objects
from gke_ai_batch.offline import access
from gke_ai_batch.offline.views.render import is_manifest, manifest_of

from .conftest import ROOT, planned

UPSTREAM = ROOT / "gke_ai_batch" / "apiserver" / "upstream_rbac"


def cluster_role(name, rules=None, labels=None, aggregate=None):
    role = {"kind": "ClusterRole", "metadata": {"name": name, "labels": labels or {}}, "rules": rules}
    if aggregate is not None:
        role["aggregationRule"] = {"clusterRoleSelectors": aggregate}
    return role


def binding(role, group, namespace=None, role_kind="ClusterRole"):
    meta = {"name": f"{group}-{role}", **({"namespace": namespace} if namespace else {})}
    return {"kind": "RoleBinding" if namespace else "ClusterRoleBinding", "metadata": meta,
            "roleRef": {"kind": role_kind, "name": role}, "subjects": [{"kind": "Group", "name": group}]}


def rule(groups, resources, verbs, names=None):
    return {"apiGroups": groups, "resources": resources, "verbs": verbs, **({"resourceNames": names} if names else {})}


READ_PODS = rule([""], ["pods"], ["get", "list"])


def test_resources_are_plural_dot_group_with_an_optional_subresource():
    assert parse_resource("pods") == ("", "pods", "")
    assert parse_resource("pods/log") == ("", "pods", "log")
    assert parse_resource("jobs.batch") == ("batch", "jobs", "")
    assert parse_resource("workloads.kueue.x-k8s.io/status") == ("kueue.x-k8s.io", "workloads", "status")
    with pytest.raises(ValueError, match="plural"):
        parse_resource("/log")


def test_a_role_binding_grants_only_in_its_namespace():
    a = Authorizer([cluster_role("reader", [READ_PODS]), binding("reader", "team", "ns-a")])
    assert a.allowed(["team"], "get", "pods", "ns-a")
    assert not a.allowed(["team"], "get", "pods", "ns-b")
    assert not a.allowed(["team"], "get", "pods", CLUSTER)
    assert not a.allowed(["other"], "get", "pods", "ns-a")
    assert not a.allowed(["team"], "delete", "pods", "ns-a")


def test_a_cluster_role_binding_grants_everywhere_and_at_cluster_scope():
    a = Authorizer([cluster_role("reader", [READ_PODS]), binding("reader", "ops")])
    assert all(a.allowed(["ops"], "list", "pods", ns) for ns in ("ns-a", "ns-b", CLUSTER))


def test_a_role_binding_refers_to_a_role_of_its_own_namespace():
    role = {"kind": "Role", "metadata": {"name": "r", "namespace": "ns-a"}, "rules": [READ_PODS]}
    a = Authorizer([role, binding("r", "team", "ns-a", "Role"), binding("r", "team", "ns-b", "Role")])
    assert a.allowed(["team"], "get", "pods", "ns-a")
    assert not a.allowed(["team"], "get", "pods", "ns-b")  # no Role r in ns-b


def test_subresources_are_granted_apart_from_their_resource():
    a = Authorizer([cluster_role("r", [READ_PODS, rule(["apps"], ["*/scale"], ["patch"])]), binding("r", "g")])
    assert not a.allowed(["g"], "get", "pods/log", "ns")
    assert a.allowed(["g"], "patch", "deployments.apps/scale", "ns")
    assert not a.allowed(["g"], "patch", "deployments.apps", "ns")
    b = Authorizer([cluster_role("r", [rule([""], ["pods/log"], ["get"])]), binding("r", "g")])
    assert b.allowed(["g"], "get", "pods/log", "ns") and not b.allowed(["g"], "get", "pods", "ns")


def test_wildcards_match_every_verb_group_resource_and_subresource():
    a = Authorizer([cluster_role("all", [rule(["*"], ["*"], ["*"])]), binding("all", "admins")])
    assert a.allowed(["admins"], "create", "pods/exec", "ns")
    assert a.allowed(["admins"], "escalate", "clusterroles.rbac.authorization.k8s.io", CLUSTER)


def test_rules_with_resource_names_match_no_unnamed_request():
    a = Authorizer([cluster_role("r", [rule([""], ["configmaps"], ["get", "create"], names=["one"])]),
                    binding("r", "g")])
    assert not a.allowed(["g"], "create", "configmaps", "ns")
    assert not a.allowed(["g"], "get", "configmaps", "ns")


def test_aggregation_is_transitive_and_replaces_the_aggregated_roles_own_rules():
    top = cluster_role("top", [rule(["x"], ["ignored"], ["*"])], aggregate=[{"matchLabels": {"to-top": "true"}}])
    mid = cluster_role("mid", None, {"to-top": "true"}, aggregate=[
        {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["low"]}]}])
    low = cluster_role("low", [READ_PODS], {"tier": "low"})
    stray = cluster_role("stray", [rule([""], ["secrets"], ["get"])], {"tier": "high"})
    a = Authorizer([top, mid, low, stray, binding("top", "g")])
    assert a.allowed(["g"], "list", "pods", "ns")
    assert not a.allowed(["g"], "get", "secrets", "ns")
    assert not a.allowed(["g"], "get", "ignored.x", "ns")


def test_authenticated_users_get_only_discovery_and_self_review_from_the_bootstrap_policy():
    a = Authorizer(upstream_objects())
    assert a.allowed([], "create", "selfsubjectaccessreviews.authorization.k8s.io", CLUSTER)
    assert a.allowed([], "create", "selfsubjectrulesreviews.authorization.k8s.io", CLUSTER)
    assert not a.allowed([], "get", "pods", "default")
    assert not a.allowed([], "list", "namespaces", CLUSTER)
    assert not a.allowed(["some-group@example.com"], "create", "jobs.batch", "default")


def vendored(name):
    return yaml.safe_load((UPSTREAM / name).read_text())


def test_the_vendored_kueue_jobset_roles_aggregate_reading_into_edit_but_not_writing():
    viewer, editor = vendored("kueue-jobset_viewer_role.yaml"), vendored("kueue-jobset_editor_role.yaml")
    assert viewer["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"
    assert "rbac.authorization.k8s.io/aggregate-to-edit" not in editor["metadata"]["labels"]
    assert editor["metadata"]["labels"]["rbac.kueue.x-k8s.io/batch-user"] == "true"
    for name in ("jobset-jobset_viewer_role.yaml", "jobset-jobset_editor_role.yaml"):
        assert not any(k.startswith("rbac.") for k in vendored(name)["metadata"]["labels"])


def test_edit_reads_jobsets_but_cannot_create_them_and_kueues_batch_user_role_can():
    bindings = [binding("edit", "editors", "ns"), binding("kueue-batch-user-role", "users", "ns")]
    a = Authorizer([*upstream_objects(), *bindings])
    assert not a.allowed(["editors"], "create", "jobsets.jobset.x-k8s.io", "ns")
    assert all(a.allowed(["editors"], v, "jobsets.jobset.x-k8s.io", "ns") for v in ("get", "list", "watch"))
    assert a.allowed(["editors"], "create", "jobs.batch", "ns")
    assert a.allowed(["users"], "create", "jobsets.jobset.x-k8s.io", "ns")
    assert not a.allowed(["users"], "create", "localqueues.kueue.x-k8s.io", "ns")


def test_the_charts_names_are_given_to_the_vendored_kustomize_roles():
    names = {o["metadata"]["name"] for o in upstream_objects() if o["kind"] == "ClusterRole"}
    assert {"kueue-batch-user-role", "kueue-jobset-viewer-role", "jobset-jobset-editor-role", "edit"} <= names
    assert "batch-user-role" not in names


def test_every_check_names_a_resource_and_a_scope():
    for c in CHECKS:
        parse_resource(c.resource)
        assert c.scope in (OWN, OTHER, CLUSTER)
    assert len(set(CHECKS)) == len(CHECKS)


@pytest.fixture
def prod(monkeypatch):
    """`make access` on the prod stack, planned once per session."""
    monkeypatch.setattr(access, "run_program", lambda stack: planned(stack.name))
    return [manifest_of(r) for r in planned("prod") if is_manifest(r)]


LINE = re.compile(r"^(yes|no)  (\S+)  (\S+)  (\S+)(  \(RBAC grants it to .+\))?$")


def test_the_standard_checks_run_in_each_team_namespace_at_cluster_scope_and_in_another_team(prod, capsys):
    assert access.main(["prod", "research"]) == 0
    lines = capsys.readouterr().out.splitlines()
    teams = StackAccess(prod).teams
    own = teams["research"]
    other = next(nss[0] for t, nss in teams.items() if t != "research")
    scoped = {OWN: len(own), CLUSTER: 1, OTHER: 1}
    assert len(lines) == sum(scoped[c.scope] for c in CHECKS)
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed)
    assert {m.group(4) for m in parsed} == {*own, CLUSTER, other}
    assert {(m.group(2), m.group(3)) for m in parsed} == {(c.verb, c.resource) for c in CHECKS}


def test_check_exits_like_kubectl_auth_can_i(prod, capsys):
    assert access.main(["prod", "research", "--check", "create selfsubjectreviews.authentication.k8s.io *"]) == 0
    assert capsys.readouterr().out == "yes  create  selfsubjectreviews.authentication.k8s.io  *\n"
    assert access.main(["prod", "research", "--check", "create clusterqueues.kueue.x-k8s.io *"]) == 1
    assert capsys.readouterr().out == "no  create  clusterqueues.kueue.x-k8s.io  *  (RBAC grants it to " \
        "system:masters (cluster administrators))\n"


def test_a_refusal_says_whose_verb_it_is(prod, capsys):
    """`make access` printed bare `no` lines; a `no` now names who holds the verb."""
    other = next(nss[0] for t, nss in StackAccess(prod).teams.items() if t != "research")
    assert access.main(["prod", "research", "--check", f"create jobs.batch {other}"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"no  create  jobs.batch  {other}  (RBAC grants it to ")
    assert "ml-training@" in out and "system:masters (cluster administrators))" in out


def test_a_team_without_groups_is_told_so_and_is_an_advisory(monkeypatch, capsys):
    """A team block without `groups` binds its role to no one: `make access` said only `no`, `make check` nothing."""
    from gke_ai_batch.offline.views.check import violations

    from .conftest import platform_of, run_config
    cfg = platform_of("dev")
    research = next(t for t in cfg["teams"] if t["name"] == "research")
    research.pop("groups")
    regs = run_config(cfg, "dev")
    found = [v for v in violations(regs) if v["policy"] == "team-has-members"]
    assert [(v["level"], v["message"]) for v in found] == [("advisory", "team research: its block names no `groups` "
        "(teams[].groups), so no one may run its workloads; list the Google groups of its members there")]
    monkeypatch.setattr(access, "run_program", lambda stack: regs)
    assert access.main(["dev", "research"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("team research names no groups (its block's `groups` in teams[] is empty)")
    assert all(line.startswith("no  ") for line in lines[1:])


def test_an_unknown_team_is_an_error_that_lists_the_teams(prod, capsys):
    assert access.main(["prod", "nobody"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "research" in err
    with pytest.raises(UnknownTeam):
        may(prod, "nobody", "get", "pods", "default")


def test_a_malformed_check_says_the_form(prod, capsys):
    for bad in ("create jobs.batch", "create /x ns"):
        assert access.main(["prod", "research", "--check", bad]) == 2
        assert "VERB RESOURCE NAMESPACE" in capsys.readouterr().err


def test_an_unknown_stack_is_an_error(capsys):
    assert access.main(["no-such-stack", "research"]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_may_answers_for_a_teams_groups_in_a_planned_stack(prod):
    assert StackAccess(prod).groups("research")
    assert may(prod, "research", "create", "selfsubjectaccessreviews.authorization.k8s.io", CLUSTER)
    assert not may(prod, "research", "create", "priorityclasses.scheduling.k8s.io", CLUSTER)


def test_members_may_read_their_queue_positions_and_provisioning_requests_for_gke_ai_batch_why(prod, capsys):
    """`gke-ai-batch why` with a member's own rights (docs/why-pending.md): the visibility API's pendingworkloads
    of the team's own LocalQueues, and the ProvisioningRequests Kueue makes in its namespaces; not another team's."""
    assert access.main(["prod", "research"]) == 0
    lines = capsys.readouterr().out.splitlines()
    teams = StackAccess(prod).teams
    other = next(nss[0] for t, nss in teams.items() if t != "research")
    for ns in teams["research"]:
        assert f"yes  get  localqueues.visibility.kueue.x-k8s.io/pendingworkloads  {ns}" in lines
        assert f"yes  list  provisioningrequests.autoscaling.x-k8s.io  {ns}" in lines
    assert any(line.startswith(f"no  get  localqueues.visibility.kueue.x-k8s.io/pendingworkloads  {other}")
               for line in lines)
