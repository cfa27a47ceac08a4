"""CLI: `python -m gke_ai_batch.offline.diff STACK BASE`: what the change since BASE would do to STACK, like a preview.

Plans and policy-checks STACK twice under mocks, each side with its own code and its own stack file: as it is
at the git ref BASE (extracted with `git archive`) and as it is in the working tree. Then compares the two plans
by URN and prints the resources to create, import (`adopt:`), update, replace and delete, each change's input paths
with old and new values (secrets compared by a keyed digest of this run, never shown; YAML held in a string key by
key), and the counts; a dependency or parent change alone is listed, not counted. URNs that differ only in stack and
project are a rename (changes.renames), compared under the new names. Offline there is no provider to say
which changes force a replacement: gke_ai_batch.model.replacement's table (the providers' ForceNew fields,
Kubernetes' immutable fields, the program's replaceOnChanges) says it, with the path that forces it and the
order the engine would replace in; in-place node pool updates that GKE applies by recreating the nodes are
marked. A created or deleted resource shows what a reviewer approves or loses (its quotas, its shape and
size: changes.essentials). A Kubernetes provider replaced takes every object on it with it
(cascade). A change of Kueue's configuration or of its controller's pod template says that Kueue's controller
restarts, and what running workloads see (changes.kueue_restart); a flavor's labels, taints or
tolerations, a queue's cohort or a lower quota say what Kueue does to running and waiting work
(changes.queue_changes). A deletion or replacement of what holds running
work or data needs the stack file's decision (changes.decisions), and what the API server, GKE
or the engine would refuse is refused with the way to do it (changes.api_refusals): each one is
named after the diff. A list item is named by its key (changes.inputs), the dashboard by its panels
(changes.dashboard_changes). After the diff come both sides' policy results, with the violations the
change brings or removes by name (changes.policy_changes), and each team's accelerator quotas before
and after. Exit 0 with the diff, 1 with the diff and the refused changes (undecided deletions and replacements,
changes the API server or GKE would refuse, a downgrade or skipped upgrade step), 2 if BASE or the stack cannot
be planned.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gke_ai_batch.model.replacement import BLOCK_KEPT, evicting_taints, kept_blocks, recreating_nodes, replacing
from gke_ai_batch.vocabulary import CLUSTER, DASHBOARD, HELM_RELEASE, K8S_PROVIDER, NODE_POOL

from .changes import api_refusals, class_migration, flavor_exceptions, handover, running_work
from .changes.dashboard_changes import DASHBOARD_JSON, dashboard_lines
from .changes.decisions import WORDS, Decisions, protected_at, read_decisions, refusals
from .changes.essentials import essentials
from .changes.inputs import ABSENT, DIGEST_KEY, SECRET, Hidden, changes, join, with_digests
from .changes.kueue_restart import restart_lines
from .changes.limit_changes import tightened
from .changes.policy_changes import policy_lines
from .changes.queue_changes import queue_notes
from .changes.quota_changes import quota_lines
from .changes.renames import RenameError, follow_rename, short
from .changes.upgrades import upgrades
from .engine.stackfile import project
from .views.price_view import diff_price_lines

PACKAGE = "gke_ai_batch"
WIDTH = 80  # printed values are cut at about this many characters, between tokens
HIDDEN_CHANGE = "(changed; secret values are compared by digest, never shown)"

# Runs one side's planner: its link tree first on sys.path, and setuptools' editable finder dropped, so that
# no module of the installed working tree can stand in for one the side does not have.
_BOOT = ("import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); "
         "sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, '__module__', '').startswith('__editable_')]; "
         "runpy.run_module('gke_ai_batch.offline', run_name='__main__', alter_sys=True)")

Resource = dict[str, Any]
Step = tuple[str, Resource, list[str]]
REPLACED_WITH = "replacedWith"  # marks an object replaced because its provider is (decided with the provider)
SAME = "same"  # a resource in both plans with nothing changed (until a replaced provider replaces it)
ENDPOINT = "controlPlaneEndpointsConfig"  # the cluster inputs that move the kubeconfig's server
KEPT = ("kubeconfig: [secret] -> [secret]  [the cluster is replaced under the same clusterIdentifier: the provider "
        "is updated, and the objects on it are not in the new cluster until `pulumi up --refresh` after this update]")


class DiffError(Exception):
    """BASE, the stack or one side's plan cannot be used: one line for the user, exit 2."""


@dataclass(frozen=True)
class Side:
    """One side of the diff: a source tree, the project folder to plan in, and the stack file (None: no such stack
    on this side, so every resource is added or deleted)."""
    label: str
    root: Path
    cwd: Path
    stack: Path | None


@dataclass
class Diff:
    """The steps, by type and name: registration order varies from run to run (the program registers
    concurrently), and a pull-request comment should not reshuffle on every push."""
    steps: list[Step] = field(default_factory=list)
    unchanged: int = 0
    relinked: list[tuple[Resource, list[str]]] = field(default_factory=list)  # only dependencies or parent moved
    notes: list[str] = field(default_factory=list)  # what the whole change is (a stack or project rename)

    def count(self, op: str) -> int:
        return sum(1 for s in self.steps if s[0] == op)


# --- git and the two trees -----------------------------------------------------------------------------------

def git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A read-only git command; the caller judges its exit code."""
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)


def repo_root(here: Path) -> Path:
    done = git(here, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise DiffError(f"{here} is not in a git repository: there is no BASE to compare with")
    return Path(done.stdout.strip()).resolve()


def remote_branches(repo: Path, name: str) -> list[str]:
    """The remote-tracking branches of that name (`origin/main` for `main`): a clone on another branch, or a CI
    checkout, has no local `main`, which the docs' `BASE=main` names."""
    if name.startswith("-"):
        return []
    refs = git(repo, "for-each-ref", "--format=%(refname:short)", f"refs/remotes/*/{name}").stdout
    return refs.split()


def base_commit(repo: Path, base: str) -> str:
    """BASE as a commit id; a clear line if it is no ref of this repository or predates the package."""
    done = git(repo, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
    if base.startswith("-") or done.returncode != 0:
        if remote := remote_branches(repo, base):
            raise DiffError(f"BASE {base!r} is no branch of this clone, but its remote's is: "
                            + " or ".join(f"BASE={r}" for r in remote))
        raise DiffError(f"BASE {base!r} is not a commit, branch or tag of {repo} (a shallow clone may lack it: "
                        "fetch with full history)")
    sha = done.stdout.strip()
    if git(repo, "cat-file", "-e", f"{sha}:{PACKAGE}/offline/__main__.py").returncode != 0:
        raise DiffError(f"BASE {base} ({sha[:7]}) predates the {PACKAGE} package (it has no {PACKAGE}/offline/): "
                        "there is no offline plan of it to compare with")
    return sha


def extract(repo: Path, sha: str, dest: Path) -> None:
    """BASE's tracked files, as `git archive BASE | tar -x` would write them."""
    dest.mkdir(parents=True)
    with subprocess.Popen(["git", "-C", str(repo), "archive", "--format=tar", sha], stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
            tar.extractall(dest, filter="data")
        proc.stdout.read()  # the archive's end padding, which tarfile leaves unread: git would die of SIGPIPE
    if proc.returncode != 0:
        raise DiffError(f"git archive {sha[:7]} failed (exit {proc.returncode})")


def mapped_packages(root: Path) -> dict[str, str]:
    """Subpackages that setuptools' package-dir maps in from elsewhere (`components` -> components/), as that
    tree's own pyproject.toml says."""
    try:
        doc = tomllib.loads((root / "pyproject.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    dirs = doc.get("tool", {}).get("setuptools", {}).get("package-dir", {})
    prefix = f"{PACKAGE}."
    return {k[len(prefix):]: v for k, v in dirs.items() if k.startswith(prefix) and "." not in k[len(prefix):]}


def link_tree(root: Path, dest: Path) -> Path:
    """A folder with the tree's installed layout (like `make lint`'s): gke_ai_batch/* linked in, plus the mapped
    subpackages; first on sys.path, it makes that tree's code the one imported."""
    pkg = dest / PACKAGE
    pkg.mkdir(parents=True)
    for entry in (root / PACKAGE).iterdir():
        (pkg / entry.name).symlink_to(entry)
    for name, folder in mapped_packages(root).items():
        if (root / folder).is_dir() and not (pkg / name).exists():
            (pkg / name).symlink_to(root / folder)
    return dest


# --- the stack on each side ----------------------------------------------------------------------------------

def stack_name(stack: str) -> str:
    """The stack's name as the planner derives it: `dev` for both `dev` and `path/Pulumi.dev.yaml`."""
    return Path(stack).name.removeprefix("Pulumi.").rsplit(".", 1)[0] if is_path(stack) else stack


def is_path(stack: str) -> bool:
    """A path to a stack file even if it does not exist (it may exist on one side only)."""
    return Path(stack).suffix in (".yaml", ".yml")


def locate(stack: str, here: Path, repo: Path) -> tuple[Path, Path | None]:
    """The project folder relative to the repository, and the stack file if STACK is a path: relative to the
    repository (each side has its own), or absolute if outside it (both sides plan that same file)."""
    try:
        proj = project(here).root
    except SystemExit as e:  # project() exits with a message outside a Pulumi project
        raise DiffError(str(e)) from None
    if not proj.is_relative_to(repo) or not (repo / PACKAGE / "offline").is_dir():
        raise DiffError(f"run the diff inside the {PACKAGE} repository (its project and {PACKAGE}/offline/): "
                        f"{repo} has no {PACKAGE}/offline/ or {proj} is outside it")
    if not is_path(stack):
        return proj.relative_to(repo), None
    path = (here / stack).resolve()
    return proj.relative_to(repo), path.relative_to(repo) if path.is_relative_to(repo) else path


def side(label: str, root: Path, proj: Path, stack: str, path: Path | None) -> Side:
    """Where this side plans and which stack file it plans (a name is looked up in that side's stackConfigDir)."""
    cwd = root / proj
    if path is not None:
        file = root / path  # an absolute path stays as it is
    elif (cwd / "Pulumi.yaml").is_file():
        file = project(cwd).stack_dir / f"Pulumi.{stack}.yaml"
    else:
        return Side(label, root, cwd, None)
    return Side(label, root, cwd, file if file.is_file() else None)


# --- planning ------------------------------------------------------------------------------------------------

def start(s: Side, tmp: Path, tag: str, key: str) -> subprocess.Popen[bytes] | None:
    """Plan and policy-check one side in its own process with its own code (both sides run at once), its
    secrets digested with this run's key."""
    if s.stack is None:
        return None
    link = link_tree(s.root, tmp / f"{tag}-link")
    with open(tmp / f"{tag}.err", "wb") as err:
        return subprocess.Popen([sys.executable, "-c", _BOOT, str(link), "check", str(s.stack),
                                 "--out", str(tmp / f"{tag}-out")], cwd=s.cwd, stdout=subprocess.DEVNULL,
                                stderr=err, env={**os.environ, DIGEST_KEY: key})


@dataclass(frozen=True)
class Planned:
    """One side's plan: its resources and its policy violations (none for a side without the stack)."""
    resources: list[Resource] = field(default_factory=list)
    violations: list[dict[str, str]] = field(default_factory=list)


def finish(s: Side, proc: subprocess.Popen[bytes] | None, tmp: Path, tag: str) -> Planned:
    """The side's plan (its check exits 1 on a mandatory violation, with the plan written), or its planner's
    refusal (exit 2, an `error:` line) saying which side it was."""
    if proc is None:
        return Planned()
    code = proc.wait()
    err = (tmp / f"{tag}.err").read_text(errors="replace").replace(f"{s.root}/", "")
    if code in (0, 1):
        try:
            out = tmp / f"{tag}-out"
            return Planned(json.loads((out / "resources.json").read_text()),
                           json.loads((out / "violations.json").read_text()))
        except (OSError, ValueError) as e:  # a planner too old or too new to write them as read here
            raise DiffError(f"the {s.label} planned but its resources.json or violations.json is unreadable: "
                            f"{e}") from None
    refusal = [ln for ln in err.splitlines() if ln.startswith("error:")]
    if code == 2 and refusal:
        raise DiffError(f"the {s.label} refuses the stack: {refusal[-1].removeprefix('error:').strip()}")
    sys.stderr.write(err)
    last = err.strip().splitlines()[-1] if err.strip() else "no message"
    raise DiffError(f"planning the {s.label} failed (exit {code}): {last}")


def plan_both(base: Side, now: Side, tmp: Path) -> tuple[Planned, Planned]:
    """Both sides' resources; a side left running when the other fails is stopped."""
    key = secrets.token_hex(32)  # this run's only: a digest in one run tells nothing in another
    procs = start(base, tmp, "base", key), start(now, tmp, "now", key)
    try:
        return finish(base, procs[0], tmp, "base"), finish(now, procs[1], tmp, "now")
    finally:
        for p in procs:
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


# --- comparing -----------------------------------------------------------------------------------------------

def compare(old: list[Resource], new: list[Resource]) -> Diff:
    """Match resources by URN: only in the working tree is a create, only at BASE a delete, in both with other
    inputs, dependencies or parent an update or a replacement; then a replaced provider's objects replaced."""
    before, now = {r["urn"]: r for r in old}, {r["urn"] for r in new}
    def step(r: Resource) -> Step:
        if r["urn"] in before:
            return update_or_replace(before[r["urn"]], r) or (SAME, r, [])
        if (r.get("options") or {}).get("import"):
            return "import", r, import_lines(r)
        return "create", r, essentials(r)
    gone = [("delete", r, essentials(r)) for r in old if r["urn"] not in now]
    steps = handover.forgotten([*cascade([step(r) for r in new], old), *gone], old, new)
    diff = Diff(unchanged=sum(op == SAME for op, _, _ in steps))
    diff.relinked = [(r, relations) for op, r, _ in steps
                     if op == SAME and (relations := relation_changes(before[r["urn"]], r))]
    diff.steps = [s for s in steps if s[0] != SAME]
    diff.steps.sort(key=lambda s: (s[1]["type"], s[1]["name"], s[1]["urn"]))
    diff.relinked.sort(key=lambda s: (s[0]["type"], s[0]["name"], s[0]["urn"]))
    return diff


def update_or_replace(old: Resource, new: Resource) -> tuple[str, Resource, list[str]] | None:
    """None when no input changed (a dependency or the parent alone changes nothing in the cloud: the engine
    only rewrites its state). A replacement when a changed input forces one (each such line says why, and
    the first says the order); else an update, its lines marked where GKE recreates the nodes to apply them.
    Inputs the program's ignoreChanges names are left out: the engine keeps BASE's value, or none (ignored())."""
    options = new.get("options") or {}
    a, b = old.get("inputs") or {}, new.get("inputs") or {}
    inputs = [c for c in input_changes(old, new) if not ignored(c[0], options.get("ignoreChanges") or [])]
    if not inputs:
        return None
    relations = relation_changes(old, new)
    paths = [path for path, _ in inputs]
    forced = {path: f"forces replacement: {why}"
              for path, why in replacing(new["type"], paths, a, b, options.get("replaceOnChanges") or ())}
    if forced:
        return "replace", new, [f"order: {order(new)}", *_marked(inputs, forced), *relations]
    disruptive = {path: "GKE recreates every node of the pool to apply it"
                  for path in recreating_nodes(new["type"], paths, a, b)}
    disruptive |= {path: BLOCK_KEPT for path in kept_blocks(new["type"], paths, a, b)}
    disruptive |= tightened(new["type"], paths, a, b) | queue_notes(new["type"], paths, a, b)
    disruptive |= running_work.retention_notes(new["type"], paths, a, b)
    if new["type"] == NODE_POOL and evicting_taints(a, b):
        disruptive |= {p: "a NoExecute taint added: evicts every running pod that does not tolerate it"
                       for p in paths if p.startswith("nodeConfig.taints")}
    return "update", new, [*_marked(inputs, disruptive), *restart_lines(new["type"], paths), *relations]


def ignored(path: str, ignore_changes: list[str]) -> bool:
    """Whether an ignoreChanges entry covers this input path (the entry or a path under it). The engine resets
    such a path to BASE's value, or deletes it from the new inputs where BASE has none (pulumi
    sdk/go/common/resource/properties_path.go, PropertyPath.Reset), so it never differs on an update."""
    return any(path == p or path.startswith((f"{p}.", f"{p}[")) for p in ignore_changes)


def order(r: Resource) -> str:
    """The order the engine replaces in: delete-first where the program says so, and for a Kubernetes object
    or Helm release with a fixed name (pulumi-kubernetes provider.go Diff: deleteBeforeReplace when the
    object is named and keeps its name and namespace), else create-first."""
    inputs = r.get("inputs") or {}
    named = r["type"].startswith("kubernetes:") and bool((inputs.get("metadata") or {}).get("name") or
                                                          r["type"] == HELM_RELEASE)
    if (r.get("options") or {}).get("deleteBeforeReplace"):
        return "delete first, then create (deleteBeforeReplace)"
    if named:
        return "delete first, then create (pulumi-kubernetes: a named object keeps its name)"
    return "create the new one first, then delete the old one"


def cascade(steps: list[Step], old: list[Resource]) -> list[Step]:
    """The steps with every object of a replaced Kubernetes provider replaced too, as the engine does. A
    provider whose clusterIdentifier changes is replaced (replacement.PROVIDER_IDENTITY); one without a
    clusterIdentifier on either side also when its cluster is replaced or its endpoint changes (its kubeconfig
    then names another cluster or server: pulumi-kubernetes DiffConfig replaces on a computed kubeconfig and
    on a changed active cluster). One that keeps its identifier through its cluster's replacement is updated,
    and says that its objects are not in the new cluster until a refresh."""
    before = {r["urn"]: r for r in old}
    moved = {r["urn"] for op, r, lines in steps if r["type"] == CLUSTER and (
        op == "replace" or any(ln.startswith(ENDPOINT) for ln in lines))}
    out: list[Step] = []
    for op, r, lines in steps:
        cluster = next((u for u in r.get("dependencies") or [] if u in moved), None)
        if r["type"] != K8S_PROVIDER or op not in (SAME, "update") or cluster is None:
            out.append((op, r, lines))
        elif all("clusterIdentifier" in (x.get("inputs") or {}) for x in (r, before.get(r["urn"]) or {})):
            replaced = any(o == "replace" and c["urn"] == cluster for o, c, _ in steps)
            out.append(("update", r, [*lines, *([KEPT] if replaced else [])]) if replaced or lines else (op, r, lines))
        else:
            out.append(("replace", r, [f"order: {order(r)}", *lines, f"kubeconfig: [secret] -> [secret]  [forces "
                                       f"replacement: {short(cluster)} moves, and the provider has no "
                                       "clusterIdentifier on both sides]"]))
    gone = {r["urn"] for op, r, _ in out if op == "replace" and r["type"] == K8S_PROVIDER}
    return [("replace", {**r, REPLACED_WITH: r["provider"]}, [
        f"order: {order(r)}", f"provider: {short(r['provider'])} is replaced, and with it every object on it",
        *(ln for ln in lines if not ln.startswith("order: "))])
            if r.get("provider") in gone and op != "create" else (op, r, lines) for op, r, lines in out]


def import_lines(r: Resource) -> list[str]:
    """What an adopted resource must already have: every input the plan sends, since Pulumi imports only a
    resource whose inputs match ("inputs to import do not match the existing resource"; Pulumi docs,
    Resource option: import). Those that force replacement are blockers: no later update can change them."""
    skip = (r.get("options") or {}).get("ignoreChanges") or []
    leaves = [(path, value) for path, value in leaf_inputs(r.get("inputs") or {}) if not ignored(path, skip)]
    forced = dict(replacing(r["type"], [path for path, _ in leaves], {}, r.get("inputs") or {}))
    lines = [f"id: {r['options']['import']}",
             "the existing resource must already have each value below, or Pulumi refuses the import:"]
    for path, value in leaves:
        note = f"  [blocker: {forced[path]}: a difference cannot be updated, only replaced]" if path in forced else ""
        lines.append(f"{path} = {SECRET if has_secret(value) else show(value)}{note}")
    return lines


def leaf_inputs(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Each input path `make diff` prints with its value: dict keys by name, lists of objects by index."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from leaf_inputs(item, join(path, str(key)))
    elif isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        for i, item in enumerate(value):
            yield from leaf_inputs(item, f"{path}[{i}]")
    else:
        yield path, value


def _marked(inputs: list[tuple[str, str]], notes: dict[str, str]) -> list[str]:
    """Each input change's line, with the note its path has."""
    return [f"{line}  [{notes[path]}]" if path in notes else line for path, line in inputs]


def input_changes(old: Resource, new: Resource) -> list[tuple[str, str]]:
    """(path, `path: old -> new`) for each changed input path; secrets compared by the digests each side's plan
    recorded, and shown without their values; a dashboard's document by its panels (dashboard_changes)."""
    out = []
    for path, a, b in changes(with_digests(old.get("inputs", {}), old.get("secretDigests") or {}),
                              with_digests(new.get("inputs", {}), new.get("secretDigests") or {})):
        panels = dashboard_lines(a, b, show) if (new["type"], path) == (DASHBOARD, DASHBOARD_JSON) else None
        out += [(path, line) for line in panels or ["{}: {} -> {}".format(path or "inputs", *shown(a, b))]]
    return out


def relation_changes(old: Resource, new: Resource) -> list[str]:
    """The parent and each dependency gained or lost."""
    lines = []
    if old.get("parent") != new.get("parent"):
        lines.append(f"parent: {short(old.get('parent'))} -> {short(new.get('parent'))}")
    gone, came = set(old.get("dependencies", [])), set(new.get("dependencies", []))
    lines += [f"dependencies: + {short(u)}" for u in sorted(came - gone)]
    lines += [f"dependencies: - {short(u)}" for u in sorted(gone - came)]
    return lines


def has_secret(value: Any) -> bool:
    """Whether a value is or holds a masked secret (the plans mask every secret as [secret])."""
    if isinstance(value, dict):
        return any(map(has_secret, value.values()))
    if isinstance(value, list):
        return any(map(has_secret, value))
    return isinstance(value, Hidden) or bool(value == SECRET)


def shown(old: Any, new: Any) -> tuple[str, str]:
    """Both values as printed: [secret] on both sides if either holds a secret (its old or new plain value
    could tell it), the new one saying that it changed; otherwise compact JSON cut at about WIDTH characters."""
    if has_secret(old) or has_secret(new):
        return SECRET, f"{SECRET} {HIDDEN_CHANGE}"
    return show(old), show(new)


def show(value: Any) -> str:
    """Compact JSON (strings quoted, so `"8"` and `8` differ), cut so that one line stays readable: after the
    last separator (`,`, `:`, a space, a bracket) before WIDTH characters, never inside a number, word or
    key, and saying how much is left out; a single token longer than that is shown whole."""
    text = repr(value) if value is ABSENT else json.dumps(value, ensure_ascii=False)
    if len(text) <= WIDTH:
        return text
    cut = max((i + 1 for i, ch in enumerate(text[:WIDTH - 1]) if ch in ",: []{}"), default=len(text))
    return text if cut >= len(text) else f"{text[:cut].rstrip()}… (+{len(text) - cut} characters)"


# --- report --------------------------------------------------------------------------------------------------

SIGNS = {"create": "+", "import": "=", "update": "~", "replace": "+-", "delete": "-", handover.FORGET: "<"}


def report(name: str, base: Side, now: Side, diff: Diff) -> str:
    """Preview-like text: a header, one line per step with its changed paths under it, then the counts."""
    out = [f"stack {name}: {base.label} -> {now.label}"]
    out += [f"stack {name} does not exist at the {s.label}: every resource is {what}"
            for s, what in ((base, "added"), (now, "deleted")) if s.stack is None]
    out += diff.notes
    out.append("")
    for op, r, lines in diff.steps:
        out.append(f"{SIGNS[op]} {op}  {r['type']}  {r['name']}")
        out += [f"      {line}" for line in lines]
    out += [] if diff.steps else ["no changes"]
    if diff.relinked:
        out += ["", "unchanged, only their dependencies or parent moved (the engine rewrites its state, nothing "
                    "in the cloud):"]
        for r, lines in diff.relinked:
            out.append(f"  {r['type']}  {r['name']}")
            out += [f"      {line}" for line in lines]
    imports = f"{diff.count('import')} to import, " if diff.count("import") else ""
    forgets = f", {diff.count(handover.FORGET)} to forget (left in the cloud)" if diff.count(handover.FORGET) else ""
    out += ["", f"{diff.count('create')} to add, {imports}{diff.count('update')} to change, {diff.count('replace')} "
                f"to replace, {diff.count('delete')} to delete{forgets}, {diff.unchanged} unchanged"]
    return "\n".join(out)


def run(stack: str, base: str, here: Path, renamed_from: str | None = None) -> tuple[str, list[str]]:
    """The diff of STACK between BASE and the working tree around `here` (both sides' policy results, team quotas
    and list price), and its deletions and replacements that lack the stack file's decision. `renamed_from`: the
    stack's name (or file) at BASE, when this change renames it."""
    repo = repo_root(here)
    sha = base_commit(repo, base)
    proj, path = locate(stack, here, repo)
    was, was_path = (renamed_from, locate(renamed_from, here, repo)[1]) if renamed_from else (stack, path)
    with tempfile.TemporaryDirectory(prefix="gke-ai-batch-diff-") as name:
        tmp = Path(name)
        extract(repo, sha, tmp / "base")
        before = side(f"BASE {base} ({sha[:7]})", tmp / "base", proj, was, was_path)
        after = side("working tree", repo, proj, stack, path)
        if renamed_from and before.stack is None:
            raise DiffError(f"--renamed-from {renamed_from}: BASE {base} has no such stack to rename")
        if before.stack is None and after.stack is None:
            raise DiffError(f"no stack {stack!r} at BASE {base} nor in the working tree")
        old, new = plan_both(before, after, tmp)
        try:
            was_resources, renamed = follow_rename(old.resources, new.resources, asked=renamed_from is not None)
        except RenameError as e:
            raise DiffError(str(e)) from None
        diff = compare(was_resources, new.resources)
        diff.notes = renamed.advice() if renamed else []
        decided = read_decisions(after.stack)
        refused = judge([(op, r) for op, r, _ in diff.steps], was_resources, new.resources,
                        read_decisions(before.stack), decided)
    moves, wrong_moves = upgrades(was_resources, new.resources, decided.v1beta1_migrated)
    review = ["", *policy_lines(old.violations, new.violations), "", *quota_lines(was_resources, new.resources), "",
              *diff_price_lines(was_resources, new.resources), *(["", *moves] if moves else [])]
    return "\n".join([report(stack_name(stack), before, after, diff), *review]), refused + wrong_moves


def judge(steps: list[tuple[str, Resource]], old: list[Resource], new: list[Resource], base: Decisions,
          now: Decisions) -> list[str]:
    """Every refused change of the diff: undecided deletions and replacements (decisions), what the API
    server, GKE or the engine would refuse (api_refusals), what Kueue would turn against existing work
    (running_work), and each acknowledgement this change no longer needs (stale)."""
    lines = _refused(steps, old, new, base, now)
    return [*lines, *stale(steps, old, new, base, now, lines)]


def _refused(steps: list[tuple[str, Resource]], old: list[Resource], new: list[Resource], base: Decisions,
             now: Decisions) -> list[str]:
    return [*refusals([(op, r) for op, r in steps if REPLACED_WITH not in r], old, new, base, now),
            *api_refusals.refused(steps, old, new, now.acknowledged),
            *running_work.refused(steps, old, new, now.acknowledged), *handover.refused(steps, now.acknowledged),
            *class_migration.refused(steps, old, now.acknowledged),
            *flavor_exceptions.refused(steps, old, new, now.acknowledged)]


def stale(steps: list[tuple[str, Resource]], old: list[Resource], new: list[Resource], base: Decisions,
          now: Decisions, refused: list[str]) -> list[str]:
    """One line per acknowledgement whose removal would refuse nothing more: the change it decided on is no
    longer in the diff (undone, or already landed). One that lifts BASE's protection is kept: the engine
    deletes only what an update before left unprotected, so it lands before the deletion it decides on. One
    already refused (it names nothing, or was at BASE) is not named twice, and a stack that does not change
    is not held up by one BASE carried."""
    if not steps:
        return []
    judged = {line for line in refused if not line.startswith("acknowledge[")}
    out = []
    for i, (kind, name) in enumerate(now.acknowledged):
        if (any(line.startswith(f"acknowledge[{i}].") for line in refused) or (kind, name) in base.acknowledged
                or protected_at(old, kind, name)):
            continue
        without = replace(now, acknowledged=now.acknowledged[:i] + now.acknowledged[i + 1:])
        if {line for line in _refused(steps, old, new, base, without) if not line.startswith("acknowledge[")} <= judged:
            out.append(f"acknowledge[{i}].{kind}: {name!r} is stale: this change no longer shows the {WORDS[kind]} "
                       "change it decides on; remove it")
    return out


def main(argv: list[str] | None = None) -> int:
    """Exit 0 with the diff printed, 1 with it and a `refused:` line per refused change, 2 with an `error:` line."""
    ap = argparse.ArgumentParser(prog="python -m gke_ai_batch.offline.diff", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stack", help="a stack name of the project or a path to Pulumi.<stack>.yaml")
    ap.add_argument("base", help="the git ref to compare with (branch, tag or commit), e.g. origin/main")
    ap.add_argument("--renamed-from", metavar="OLD", help="the stack's name (or file) at BASE, when this change "
                    "renames it: the diff then advises `pulumi stack rename` instead of deletes and creates")
    args = ap.parse_args(argv)
    try:
        text, refused = run(args.stack, args.base, Path.cwd(), args.renamed_from)
    except DiffError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(text)
    if refused:
        print(f"\n{len(refused)} change(s) refused (docs/operating.md, \"Day two\"):")
        print("\n".join(f"refused: {line}" for line in refused))
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
