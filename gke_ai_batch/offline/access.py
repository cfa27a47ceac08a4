"""CLI: `python -m gke_ai_batch.offline.access STACK TEAM [--check "VERB RESOURCE NAMESPACE"]`: what may a
member of a team's groups do?

Plans STACK under mocks and asks gke_ai_batch.apiserver.access (the stack's RBAC with the upstream roles a
cluster has) on behalf of the team's members.

Without --check: one line per check of CHECKS, in each of the team's namespaces, at cluster scope, and
in the first namespace of the first other team; exit 0. With --check: that one line, exit 0 if
allowed and 1 if not, like `kubectl auth can-i`. A line is `yes|no  VERB  RESOURCE  NAMESPACE`, the
resource `plural` for the core group, else `plural.group`, `/subresource` appended; namespace `*` is
cluster scope; a `no` ends with why: the subjects RBAC grants the verb to (whose it is). A team whose
block names no groups has no members: a first line says so. Exit 2 if the stack cannot be planned,
the team is unknown or the check malformed.

RBAC only: GKE's IAM authorizer may allow more to principals with project IAM roles, and admission
(quotas, policies) may still refuse what RBAC allows.
"""
from __future__ import annotations

import argparse
import sys

from gke_ai_batch.apiserver.access import NO_GROUPS, StackAccess
from gke_ai_batch.apiserver.rbac import parse_resource

from .engine.runtime import PlanError, close_thread_loops, run_program
from .engine.stackfile import resolve
from .views.render import is_manifest, manifest_of


def line(allowed: bool, verb: str, resource: str, namespace: str, why: str = "") -> str:
    """`yes|no  VERB  RESOURCE  NAMESPACE`, a refusal followed by `  (why)`."""
    return f"{'yes' if allowed else 'no'}  {verb}  {resource}  {namespace}" + (f"  ({why})" if why else "")


def parse_check(text: str) -> tuple[str, str, str]:
    """`VERB RESOURCE NAMESPACE`, the resource checked for form; ValueError saying the form if not."""
    parts = text.split()
    form = ('--check takes "VERB RESOURCE NAMESPACE", e.g. "create jobs.batch team-a" or '
            '"create priorityclasses.scheduling.k8s.io *" (namespace * for cluster scope)')
    if len(parts) != 3:
        raise ValueError(f"{form}; got {text!r}")
    try:
        parse_resource(parts[1])
    except ValueError as e:
        raise ValueError(f"{e}; {form}") from None
    return parts[0], parts[1], parts[2]


def main(argv: list[str] | None = None) -> int:
    """Exit 0 (or, with --check, 0 if allowed and 1 if not); 2 for an unusable stack, team or check."""
    ap = argparse.ArgumentParser(prog="python -m gke_ai_batch.offline.access", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack", help="a stack name in stacks/ or a path to Pulumi.<stack>.yaml")
    ap.add_argument("team", help="a team of the stack")
    ap.add_argument("--check", metavar='"VERB RESOURCE NAMESPACE"', help="one question, e.g. 'create jobs.batch ns'")
    args = ap.parse_args(argv)
    try:
        check = parse_check(args.check) if args.check is not None else None
        stack = resolve(args.stack)
        access = StackAccess(manifest_of(r) for r in run_program(stack) if is_manifest(r))
        questions = [check] if check else [(c.verb, c.resource, ns) for c, ns in access.standard(args.team)]
        answers = [access.may(args.team, *q) for q in questions]
    except SystemExit as e:  # resolve() exits with a message for an unknown stack
        return _error(str(e))
    except PlanError as e:
        return _error(f"stack {args.stack}: {e}")
    except ValueError as e:  # UnknownTeam, or a malformed --check
        return _error(str(e))
    if not access.groups(args.team):
        print(NO_GROUPS.format(team=args.team))
    for answer, q in zip(answers, questions, strict=True):
        print(line(answer, *q, why="" if answer else access.why_not(args.team, *q)))
    return 1 if check and not answers[0] else 0


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    code = main()
    close_thread_loops()
    sys.exit(code)
