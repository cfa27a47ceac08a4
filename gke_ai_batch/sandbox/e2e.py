"""CLI: `python -m gke_ai_batch.sandbox.e2e STACK --kubeconfig K --kubectl KC` (`make e2e STACK=<s>`): every offline
verdict about the stack's Kubernetes side held to a real control plane, the sandbox with the stack deployed.

The corpus (e2e_corpus): the stack's sample workloads and the objects the tests judge on its plan. Each object is
judged offline by what `make admit` runs (apiserver.tenant_path on the planned stack, as the team member it names:
`member-of-<team>` in the team's groups), then sent to the API server as that member (impersonated) and its answer
read in the same terms (e2e_verdicts, e2e_play). Then `make access` for every team against SelfSubjectAccessReviews
as its member (e2e_access). One line per disagreement, then

    e2e <stack>: N verdicts compared with kube-apiserver vX and Kueue vY: A agree, D disagree

and a line per case that could not be set up (an update's old object the administrator cannot create); these are
not verdicts. Exit 1 on any disagreement, 2 if the stack, the corpus or the sandbox cannot be read.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gke_ai_batch.admission.terms import FRAMEWORKS
from gke_ai_batch.apiserver.rbac import AUTHENTICATED
from gke_ai_batch.apiserver.tenant_path import TenantPath
from gke_ai_batch.apiserver.updates import identity
from gke_ai_batch.offline.engine.runtime import PlanError, Planned, close_thread_loops, run_program
from gke_ai_batch.offline.engine.stackfile import project, resolve
from gke_ai_batch.offline.placement.dispatch import cluster_of
from gke_ai_batch.offline.views.render import is_manifest, manifest_of
from gke_ai_batch.vocabulary import HELM_RELEASE

from . import e2e_engine, why_cases
from .e2e_access import compared
from .e2e_corpus import Case, CorpusError, corpus, from_tests
from .e2e_kubectl import Kubectl, Member
from .e2e_play import play
from .e2e_verdicts import disagreement, offline
from .errors import SandboxError


def members(path: TenantPath) -> dict[str, Member]:
    """Each team's member as `make admit` names it (tenant_path `_member`)."""
    return {team: Member(f"member-of-{team}", (*sorted(path.access.groups(team)), AUTHENTICATED))
            for team in path.access.teams}


def member_for(path: TenantPath, case: Case, all_members: dict[str, Member]) -> Member:
    """The member of the team owning the object's namespace; for a namespace of no team or a cluster-scoped
    object, the first team's (`make admit` asks whether any team may)."""
    team = path.team_of(str((case.obj.get("metadata") or {}).get("namespace") or ""))
    return all_members.get(team or "", next(iter(all_members.values())))


def _path(regs: Planned) -> TenantPath:
    """The stack as `make admit` judges on it."""
    return TenantPath([manifest_of(r) for r in regs if is_manifest(r)], cluster_of(regs))


def kueue_version(regs: Planned) -> str:
    release = next((r.inputs for r in regs if r.type == HELM_RELEASE and r.inputs.get("name") == "kueue"), {})
    return str(release.get("version", "?"))


def judge_all(kc: Kubectl, path: TenantPath, cases: list[Case], only: str = "") -> tuple[int, list[str], list[str]]:
    """(verdicts compared, disagreement lines, lines of cases not set up), of the cases whose line holds `only`."""
    everyone = members(path)
    compared_, lines, unset = 0, [], []
    for case in (c for c in cases if only in c.who()):
        objects = {identity(o): o for o in (case.old, case.obj) if o is not None}
        mine = offline(path.judge(case.obj, case.old, objects, case.scale))
        watch = bool(mine.then) and case.obj.get("kind") in FRAMEWORKS
        there = kc.get(case.obj) is not None  # the stack's own object (a hostile create of its name): kept
        real = None
        try:
            real = play(kc, case, member_for(path, case, everyone), watch)
        finally:
            if not there:
                kc.delete(real.made if real and real.made else case.obj)
        if real.verdict is None:
            unset.append(f"not played: {case.who()}: {real.setup}")
            continue
        compared_ += 1
        print(f"  {'DIFFERS' if disagreement(mine, real.verdict) else 'agrees'}: {case.who()}: {real.verdict}",
              file=sys.stderr, flush=True)
        if disagreement(mine, real.verdict):
            lines.append(f"{case.who()}: offline {mine}; real {real.verdict}" + (f" ({_short(real.words)})"
                                                                                  if real.words else ""))
    return compared_, lines, unset


def _short(words: str) -> str:
    text = " ".join(words.split())
    return text if len(text) <= 300 else text[:297] + "..."


def server_version(kc: Kubectl) -> str:
    answer = kc.run(["version", "-o", "json"])
    return str(answer.json().get("serverVersion", {}).get("gitVersion", "?")) if answer.ok else "?"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gke_ai_batch.sandbox.e2e", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack", help="a stack name in stacks/, deployed on the sandbox")
    ap.add_argument("--kubeconfig", required=True, help="the sandbox's administrator kubeconfig")
    ap.add_argument("--kubectl", default="kubectl", help="the kubectl of the sandbox's Kubernetes minor")
    ap.add_argument("--corpus", type=Path, metavar="FILE", help="the tests' corpus as an earlier run recorded it, "
                    "recorded there if missing: `make e2e` for several stacks runs the tests once")
    ap.add_argument("--only", default="", metavar="TEXT", help="play only the cases whose line holds TEXT (a test's "
                    "name, a kind, ns/name), and leave `make access` out: to look into one disagreement")
    ap.add_argument("--sandbox", type=Path, metavar="DIR", help="the sandbox's folder, where the stack was deployed "
                    "by pulumi up: the policy pack through the real CLI is held to the offline check too")
    ap.add_argument("--bin", type=Path, metavar="DIR", help="the sandbox's binaries (with --sandbox)")
    ap.add_argument("--known", type=Path, metavar="FILE", help="the stack's known disagreements (tests/e2e_known/"
                    "<stack>.txt): each still printed, none failing the run")
    args = ap.parse_args(argv)
    kc = Kubectl(args.kubectl, args.kubeconfig)
    try:
        stack = resolve(args.stack)
        regs = run_program(stack)
        path = _path(regs)
        cases = corpus(project().root, stack.name, from_tests(project().root, path, args.corpus))
    except SystemExit as e:  # resolve() exits with a message for an unknown stack
        return _error(str(e))
    except (PlanError, CorpusError) as e:
        return _error(f"stack {args.stack}: {e}")
    version = server_version(kc)
    if version == "?":
        return _error(f"the sandbox does not answer (kubeconfig {args.kubeconfig})")
    n, lines, unset = judge_all(kc, path, cases, args.only)
    access = [] if args.only else list(compared(kc, path.access, members(path)))
    lines += [line for line, agree in access if not agree]
    n += len(access)
    if args.sandbox and not args.only:
        for check in (e2e_engine.policy_pack,):
            try:
                compared_n, differ = check(stack.name, args.sandbox, Path(args.kubeconfig), args.bin)
            except SandboxError as e:  # the engine refused the preview outright: one verdict, disagreeing
                compared_n, differ = 1, [f"engine {check.__name__}: {e}"]
            n, lines = n + compared_n, lines + differ
    known = _known(args.known)
    new = [line for line in lines if not any(line.startswith(k) for k in known)]
    if stack.name == why_cases.STACK and not args.only:  # issue 50's live cases, never known: each must hold
        played, why_bad = why_cases.run(kc, members(path))
        n, lines, new = n + played, lines + why_bad, new + why_bad
    for line in [*lines, *unset]:
        print(("known: " if line not in new and line in lines else "") + line)
    for key in sorted(k for k in known if not any(line.startswith(k) for line in lines)):
        print(f"no longer disagrees: {key} (remove it from {args.known})")
    print(f"e2e {stack.name}: {n} verdicts compared with kube-apiserver {version} and Kueue {kueue_version(regs)}: "
          f"{n - len(lines)} agree, {len(lines)} disagree" + (f" ({len(lines) - len(new)} of them known, listed in "
                                                              f"{args.known})" if known else ""))
    return 1 if new else 0


def _known(path: Path | None) -> list[str]:
    """The disagreements a stack still has, each the start of its line (the case), with why in a comment above it:
    they do not fail the run, every other one does, and one that no longer disagrees is said."""
    if path is None or not path.exists():
        return []
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    code = main()
    close_thread_loops()
    sys.exit(code)
