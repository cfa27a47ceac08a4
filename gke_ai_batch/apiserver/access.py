"""What a member of a team's groups may do on the planned cluster, by RBAC alone.

Evaluates, with gke_ai_batch.apiserver.rbac, every Role, ClusterRole, RoleBinding and ClusterRoleBinding a
stack declares together with the upstream ones a cluster has (Kubernetes' bootstrap policy, the Kueue and
JobSet charts' roles; see apiserver/upstream_rbac/). A team is the Namespaces labelled
`gke-ai-batch.io/team: <team>`; its members are in every Group its RoleBindings there name (and in
system:authenticated). GKE's IAM authorizer may allow more to principals with project IAM roles, and
admission (quotas, policies) may still refuse what RBAC allows.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import product
from typing import Any

from gke_ai_batch.vocabulary import TEAM_LABEL

from .rbac import AUTHENTICATED, CLUSTER, Authorizer, request, upstream_objects

OWN = "own"  # in each of the team's namespaces
OTHER = "other"  # in another team's namespace
MASTERS, ADMINS = "system:masters", "cluster administrators"
NO_GROUPS = ("team {team} names no groups (its block's `groups` in teams[] is empty): no one is a member, so "
             "RBAC lets it nothing of its own; add its Google groups there")


@dataclass(frozen=True)
class Check:
    """One question and the answer the platform means it to have: `scope` is OWN, OTHER or CLUSTER."""

    verb: str
    resource: str
    scope: str
    expected: bool


def _checks(verbs: str, resources: str, scope: str, expected: bool) -> tuple[Check, ...]:
    return tuple(Check(v, r, scope, expected) for r, v in product(resources.split(), verbs.split()))


# What a team needs (yes) and must not be able to do (no). `make access` prints them, tests assert the
# expectations, and `make admit` can ask the same questions.
CHECKS: tuple[Check, ...] = (
    *_checks("create get list watch delete patch",
             "jobs.batch jobsets.jobset.x-k8s.io pods deployments.apps statefulsets.apps", OWN, True),
    *_checks("get", "pods/log", OWN, True),
    *_checks("create", "pods/exec", OWN, True),
    *_checks("get list watch", "localqueues.kueue.x-k8s.io workloads.kueue.x-k8s.io", OWN, True),
    # `gke-ai-batch why` and `queue` (docs/why-pending.md): a pending job's place and its DWS request's state.
    *_checks("get", "localqueues.visibility.kueue.x-k8s.io/pendingworkloads", OWN, True),
    *_checks("get list", "provisioningrequests.autoscaling.x-k8s.io", OWN, True),
    # ... and what the team holds, uses and could borrow now: the quota tree, read only.
    *_checks("get list", "clusterqueues.kueue.x-k8s.io cohorts.kueue.x-k8s.io", CLUSTER, True),
    *_checks("create get", "configmaps services persistentvolumeclaims", OWN, True),
    *_checks("get", "secrets", OWN, True),
    *_checks("create patch", "rolebindings.rbac.authorization.k8s.io roles.rbac.authorization.k8s.io", OWN, False),
    *_checks("create patch delete", "localqueues.kueue.x-k8s.io", OWN, False),
    *_checks("update patch", "workloads.kueue.x-k8s.io workloads.kueue.x-k8s.io/status", OWN, False),
    *_checks("create delete", "networkpolicies.networking.k8s.io", OWN, False),
    *_checks("create update", "resourcequotas", OWN, False),
    *_checks("create", "serviceaccounts/token", OWN, False),
    *_checks("patch", "namespaces", CLUSTER, False),
    *_checks("create", "priorityclasses.scheduling.k8s.io workloadpriorityclasses.kueue.x-k8s.io", CLUSTER, False),
    *_checks("create patch", "clusterqueues.kueue.x-k8s.io", CLUSTER, False),
    *_checks("create", "validatingadmissionpolicies.admissionregistration.k8s.io", CLUSTER, False),
    *_checks("get list", "secrets", CLUSTER, False),
    *_checks("get list", "secrets", OTHER, False),
    *_checks("create", "jobs.batch pods", OTHER, False),
    *_checks("get", "localqueues.visibility.kueue.x-k8s.io/pendingworkloads", OTHER, False),
)


class UnknownTeam(ValueError):
    """A team the stack does not have; the message names the ones it has."""


class StackAccess:
    """A planned stack's RBAC, upstream objects included, asked on behalf of its teams."""

    def __init__(self, manifests: Iterable[Mapping[str, Any]]) -> None:
        ms = list(manifests)
        self.teams = teams_of(ms)
        self.rbac = Authorizer([*upstream_objects(), *ms])
        self._bindings = [m for m in ms if m.get("kind") == "RoleBinding"]

    def groups(self, team: str) -> frozenset[str]:
        """The Groups the team's RoleBindings in its namespaces name, Kubernetes' own `system:` ones aside."""
        namespaces = set(self.namespaces(team))
        return frozenset(s["name"] for b in self._bindings if b["metadata"].get("namespace") in namespaces
                         for s in b.get("subjects") or () if s.get("kind") == "Group"
                         and not s["name"].startswith("system:"))

    def namespaces(self, team: str) -> list[str]:
        if team not in self.teams:
            known = ", ".join(self.teams) or "none"
            raise UnknownTeam(f"no team {team!r} in this stack (its teams: {known})")
        return self.teams[team]

    def may(self, team: str, verb: str, resource: str, namespace: str) -> bool:
        """May a member of the team's groups do `verb` on `resource` in `namespace` (`*`: cluster scope)?"""
        return self.rbac.allowed(self.groups(team), verb, resource, namespace)

    def why_not(self, team: str, verb: str, resource: str, namespace: str) -> str:
        """Why a member of the team may not: whose verb it is, the subjects RBAC grants it to."""
        holders = sorted(self.rbac.granted_to(request(verb, resource, namespace)) - {AUTHENTICATED})
        named = ", ".join(f"{g} ({ADMINS})" if g == MASTERS else g for g in holders)
        return f"RBAC grants it to {named}" if holders else "RBAC grants it to no group"

    def standard(self, team: str) -> list[tuple[Check, str]]:
        """CHECKS with their namespaces: the team's own, in order, then cluster scope, then the first
        namespace of the first other team (those checks are left out when there is no other team)."""
        own = [(c, ns) for ns in self.namespaces(team) for c in CHECKS if c.scope == OWN]
        others = [nss[0] for t, nss in self.teams.items() if t != team and nss]
        other = [(c, others[0]) for c in CHECKS if c.scope == OTHER] if others else []
        return [*own, *((c, CLUSTER) for c in CHECKS if c.scope == CLUSTER), *other]


def teams_of(manifests: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Team -> its Namespaces (the ones labelled with TEAM_LABEL), both in the order the stack declares them."""
    teams: dict[str, list[str]] = {}
    for m in manifests:
        team = (m["metadata"].get("labels") or {}).get(TEAM_LABEL) if m.get("kind") == "Namespace" else None
        if team:
            teams.setdefault(team, []).append(m["metadata"]["name"])
    return teams


def may(manifests: Iterable[Mapping[str, Any]], team: str, verb: str, resource: str, namespace: str) -> bool:
    """One question about a planned stack's manifests: may a member of `team`'s groups do this?
    Raises UnknownTeam for a team the stack does not have. (Ask many through one StackAccess.)"""
    return StackAccess(manifests).may(team, verb, resource, namespace)

