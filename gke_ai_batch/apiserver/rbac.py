"""Kubernetes RBAC, evaluated offline: may a member of these groups do this?

A pure model of the API server's RBAC authorizer, so that `make access` and `make admit` can answer
before any cluster exists. It follows, in Kubernetes v1.33:

- plugin/pkg/auth/authorizer/rbac/rbac.go: `RuleAllows` (verb, API group, resource and resource name
  of a resource request) and `RBACAuthorizer.Authorize` (allowed if any rule of any applicable binding
  allows; RBAC never denies);
- pkg/apis/rbac/v1/evaluation_helpers.go: `VerbMatches`, `APIGroupMatches`, `ResourceMatches` (`*`,
  `resource/subresource` and `*/subresource`) and `ResourceNameMatches`;
- pkg/registry/rbac/validation/rule.go: `VisitRulesFor` (every ClusterRoleBinding, then the
  RoleBindings of the request's namespace only; a RoleBinding's roleRef is a Role of its namespace or
  a ClusterRole) and `appliesTo` (a Group subject matches a group of the user's);
- pkg/controller/clusterroleaggregation: a ClusterRole with an `aggregationRule` has as rules the
  union of the rules of every other ClusterRole its selectors match, those roles' own rules being
  aggregated first (the controller converges on that fixpoint).

Not modelled: other authorizers (Node, ABAC, webhooks such as GKE's IAM authorizer, which may allow
what RBAC does not), admission (quotas, policies), non-resource URLs, and User or ServiceAccount
subjects (the requester is known only by its groups).
"""
from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from gke_ai_batch.vocabulary import KUEUE_RELEASE

ALL = "*"  # rbacv1.VerbAll, APIGroupAll, ResourceAll
CLUSTER = "*"  # the namespace of a cluster-scoped (or all-namespaces) request
AUTHENTICATED = "system:authenticated"  # the group the API server adds for every authenticated user
RBAC_KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")

# The Helm releases the platform installs the charts as (components/kueue_install.py and
# components/jobset_install.py), by chart (the prefix of a vendored file's name): the vendored
# kustomize roles are named as the charts name them.
JOBSET_RELEASE = "jobset"
CHART_RELEASES = {"kueue": KUEUE_RELEASE, "jobset": JOBSET_RELEASE}
UPSTREAM = "upstream_rbac"


@dataclass(frozen=True)
class PolicyRule:
    """An rbac/v1 PolicyRule, for resource requests (nonResourceURLs never match them)."""

    verbs: frozenset[str]
    api_groups: frozenset[str]
    resources: frozenset[str]
    resource_names: frozenset[str]

    @classmethod
    def of(cls, rule: Mapping[str, Any]) -> PolicyRule:
        def field(name: str) -> frozenset[str]:
            return frozenset(rule.get(name) or ())
        return cls(field("verbs"), field("apiGroups"), field("resources"), field("resourceNames"))

    def allows(self, req: Request) -> bool:
        """`RuleAllows` for a resource request. Requests here carry no object name (create and list
        never do; get, patch and delete are asked as for any object), and `ResourceNameMatches` lets
        a rule that lists resourceNames match no request without a name."""
        return ((ALL in self.verbs or req.verb in self.verbs)
                and (ALL in self.api_groups or req.group in self.api_groups)
                and self._resource_matches(req)
                and not self.resource_names)

    def _resource_matches(self, req: Request) -> bool:
        """`ResourceMatches`: `*`, the exact `resource[/subresource]`, or `*/subresource`."""
        if ALL in self.resources or req.combined in self.resources:
            return True
        return bool(req.subresource) and f"*/{req.subresource}" in self.resources


@dataclass(frozen=True)
class Request:
    """A resource request as the authorizer sees it; namespace "" is cluster scope."""

    verb: str
    group: str
    resource: str
    subresource: str
    namespace: str

    @property
    def combined(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def parse_resource(text: str) -> tuple[str, str, str]:
    """`plural[.group][/subresource]` -> (group, plural, subresource): `pods/log` is the core group's,
    `jobs.batch` batch's, `workloads.kueue.x-k8s.io/status` a subresource of kueue.x-k8s.io's."""
    head, _, sub = text.partition("/")
    plural, _, group = head.partition(".")
    if not plural or "/" in sub:
        raise ValueError(f"resource {text!r} is not of the form plural[.group][/subresource]")
    return group, plural, sub


def request(verb: str, resource: str, namespace: str) -> Request:
    """The request for `verb resource namespace` as `make access` writes them (`*`: cluster scope)."""
    group, plural, sub = parse_resource(resource)
    return Request(verb, group, plural, sub, "" if namespace == CLUSTER else namespace)


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector (matchLabels and matchExpressions; an empty one matches everything)."""
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    return all(_expression_matches(e, labels) for e in selector.get("matchExpressions") or ())


def _expression_matches(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op, values = expr["key"], expr["operator"], expr.get("values") or ()
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    raise ValueError(f"label selector operator {op!r} is not In, NotIn, Exists or DoesNotExist")


def aggregated_rules(cluster_roles: Iterable[Mapping[str, Any]]) -> dict[str, tuple[PolicyRule, ...]]:
    """Each ClusterRole's rules after aggregation. The controller replaces an aggregated role's rules
    with the union of the current rules of the other roles its selectors match; repeating that until
    nothing changes gives what it converges on, aggregated roles of aggregated roles included."""
    roles = {r["metadata"]["name"]: r for r in cluster_roles}
    rules = {n: () if r.get("aggregationRule") else _rules_of(r) for n, r in roles.items()}
    changed = True
    while changed:
        changed = False
        for name, role in roles.items():
            if role.get("aggregationRule"):
                new = _union(rules[m] for m in _selected(role, roles) if m != name)
                changed |= new != rules[name]
                rules[name] = new
    return rules


def _rules_of(role: Mapping[str, Any]) -> tuple[PolicyRule, ...]:
    return tuple(PolicyRule.of(r) for r in role.get("rules") or ())


def _selected(role: Mapping[str, Any], roles: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The ClusterRoles any of `role`'s clusterRoleSelectors matches, by name (the controller's order)."""
    selectors = role["aggregationRule"].get("clusterRoleSelectors") or ()
    return [n for n in sorted(roles) if any(
        selector_matches(s, roles[n]["metadata"].get("labels") or {}) for s in selectors)]


def _union(rule_sets: Iterable[tuple[PolicyRule, ...]]) -> tuple[PolicyRule, ...]:
    out: list[PolicyRule] = []
    for rules in rule_sets:
        out += [r for r in rules if r not in out]
    return tuple(out)


@dataclass(frozen=True)
class Binding:
    """A RoleBinding (namespace set) or ClusterRoleBinding (namespace ""), reduced to what applies."""

    namespace: str
    groups: frozenset[str]
    role_kind: str
    role_name: str
    others: frozenset[str] = frozenset()  # its users and service accounts, as `User u`, `ServiceAccount ns/name`

    @classmethod
    def of(cls, m: Mapping[str, Any]) -> Binding:
        ns = m["metadata"].get("namespace", "") if m["kind"] == "RoleBinding" else ""
        subjects = m.get("subjects") or ()
        groups = frozenset(s["name"] for s in subjects if s.get("kind") == "Group")
        others = frozenset(_subject(s, ns) for s in subjects if s.get("kind") != "Group")
        return cls(ns, groups, m["roleRef"]["kind"], m["roleRef"]["name"], others)


def _subject(s: Mapping[str, Any], namespace: str) -> str:
    """`User name`, or `ServiceAccount namespace/name` (a RoleBinding's own namespace when it names none)."""
    where = f"{s.get('namespace', namespace)}/" if s.get("kind") == "ServiceAccount" else ""
    return f"{s.get('kind')} {where}{s['name']}"


class Authorizer:
    """The RBAC objects of a cluster, asked `allowed(groups, verb, resource, namespace)`."""

    def __init__(self, objects: Iterable[Mapping[str, Any]]) -> None:
        objs = [o for o in objects if o.get("kind") in RBAC_KINDS]
        self.cluster_roles = aggregated_rules(o for o in objs if o["kind"] == "ClusterRole")
        self.roles = {(o["metadata"].get("namespace", ""), o["metadata"]["name"]): _rules_of(o)
                      for o in objs if o["kind"] == "Role"}
        self.bindings = [Binding.of(o) for o in objs if o["kind"] in ("RoleBinding", "ClusterRoleBinding")]

    def allowed(self, groups: Iterable[str], verb: str, resource: str, namespace: str) -> bool:
        """May a user in `groups` (and, being authenticated, in system:authenticated) do `verb` on
        `resource` (`plural[.group][/subresource]`) in `namespace` (`*`: cluster scope)?"""
        return self.allows(frozenset(groups) | {AUTHENTICATED}, request(verb, resource, namespace))

    def allows(self, groups: frozenset[str], req: Request) -> bool:
        """`VisitRulesFor`: ClusterRoleBindings apply everywhere, RoleBindings in their namespace."""
        return any(rule.allows(req) for b in self.bindings
                   if (not b.namespace or b.namespace == req.namespace) and b.groups & groups
                   for rule in self._role_rules(b))

    def granted_to(self, req: Request) -> frozenset[str]:
        """The subjects whose bindings allow `req` (groups by name, others as `Kind [namespace/]name`): who
        holds a verb that a team is refused."""
        return frozenset(g for b in self.bindings if (not b.namespace or b.namespace == req.namespace)
                         and any(rule.allows(req) for rule in self._role_rules(b)) for g in b.groups | b.others)

    def _role_rules(self, b: Binding) -> tuple[PolicyRule, ...]:
        """The rules of a binding's roleRef; none if it names a role that does not exist (as the API
        server, which lets a binding refer to a role created later)."""
        if b.role_kind == "Role":
            return self.roles.get((b.namespace, b.role_name), ())
        return self.cluster_roles.get(b.role_name, ())


@functools.cache
def upstream_objects() -> tuple[dict[str, Any], ...]:
    """The vendored ClusterRoles and ClusterRoleBindings (upstream_rbac/README.md says whence), the
    Kueue and JobSet ones named as their charts install them. Read once a process (libyaml's loader
    where PyYAML has it: the pure-Python one takes a third of a second for these files); not to be
    modified by callers."""
    out: list[dict[str, Any]] = []
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for f in sorted(resources.files(__package__).joinpath(UPSTREAM).iterdir(), key=lambda f: f.name):
        if f.name.endswith(".yaml"):
            docs = [d for d in yaml.load_all(f.read_text(), Loader=loader) if d]
            items = [i for d in docs for i in (d["items"] if d.get("kind") == "List" else [d])]
            chart = f.name.partition("-")[0]
            out += [as_installed(i, chart, CHART_RELEASES[chart]) for i in items] if chart in CHART_RELEASES else items
    return tuple(out)


def as_installed(role: dict[str, Any], chart: str, release: str) -> dict[str, Any]:
    """A chart's ClusterRole from the kustomize file its template is generated from. The chart names
    it `{{ include "<chart>.fullname" . }}-<name>` (charts/kueue/templates/rbac/*.yaml and
    charts/jobset/templates/rbac/jobset_*_role.yaml) and labels it with the chart's common labels
    instead of kustomize's `app.kubernetes.io/*` ones; the rules, the aggregation rule and the
    `rbac.*` labels are the same in both."""
    meta = role["metadata"]
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if not k.startswith("app.kubernetes.io/")}
    labels |= {"app.kubernetes.io/name": chart, "app.kubernetes.io/instance": release,
               "app.kubernetes.io/managed-by": "Helm"}
    return {**role, "metadata": {**meta, "name": f"{fullname(chart, release)}-{meta['name']}", "labels": labels}}


def fullname(chart: str, release: str) -> str:
    """`<chart>.fullname` of charts/kueue/templates/_helpers.tpl and charts/jobset/templates/_helpers.tpl
    (no fullnameOverride or nameOverride set): the release name if it contains the chart name."""
    return (release if chart in release else f"{release}-{chart}")[:63].rstrip("-")
