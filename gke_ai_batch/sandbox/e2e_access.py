"""`make access` held to the API server: each of the questions it asks for a team (apiserver.access CHECKS in the
team's namespaces, at cluster scope, in another team's) put to the sandbox as the team's member, as `kubectl auth
can-i` puts it: a SelfSubjectAccessReview, all of a team's in one request."""
from __future__ import annotations

from collections.abc import Iterator

from gke_ai_batch.apiserver.access import StackAccess
from gke_ai_batch.apiserver.rbac import CLUSTER

from .e2e_kubectl import Kubectl, Member, Obj

Question = tuple[str, str, str]  # verb, resource (plural[.group][/subresource]), namespace (CLUSTER: cluster scope)


def review(verb: str, resource: str, namespace: str) -> Obj:
    """The SelfSubjectAccessReview `kubectl auth can-i VERB RESOURCE [-n NS | -A]` sends."""
    name, _, sub = resource.partition("/")
    plural, _, group = name.partition(".")
    attributes = {"verb": verb, "resource": plural, "group": group, "subresource": sub,
                  "namespace": "" if namespace == CLUSTER else namespace}
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {k: v for k, v in attributes.items() if v}}}


def real_answers(kc: Kubectl, member: Member, questions: list[Question]) -> list[bool] | str:
    """The API server's allowed for each question, or its error."""
    answer = kc.create({"apiVersion": "v1", "kind": "List", "items": [review(*q) for q in questions]}, member)
    if not answer.ok:
        return answer.err
    return [bool((i.get("status") or {}).get("allowed")) for i in answer.objects()]


def compared(kc: Kubectl, access: StackAccess, members: dict[str, Member]) -> Iterator[tuple[str, bool]]:
    """(line, agree) per question and team: `access TEAM: VERB RESOURCE NS: offline yes, real no`."""
    for team, member in members.items():
        questions = [(c.verb, c.resource, ns) for c, ns in access.standard(team)]
        real = real_answers(kc, member, questions)
        if isinstance(real, str):
            yield f"access {team}: the API server answered no review: {real}", False
            continue
        for q, mine, theirs in zip(questions, (access.may(team, *q) for q in questions), real, strict=True):
            yield (f"access {team}: {' '.join(q)}: offline {'yes' if mine else 'no'}, real "
                   f"{'yes' if theirs else 'no'}"), mine == theirs
