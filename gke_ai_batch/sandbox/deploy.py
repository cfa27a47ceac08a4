"""A real `pulumi up`, `pulumi preview --diff` and `pulumi preview --policy-pack policies/` of a stack's Kubernetes
layer onto the sandbox's API server (the stack's `kubernetesOnly` key, gke_ai_batch.model.kubernetes_only).

The Go module proxy does not serve Pulumi's Python language host (pulumi/sdk/python/cmd/pulumi-language-python),
so the CLI cannot start a `runtime: python` program itself. Pulumi's Automation API serves the language runtime
from this process instead (an inline program, `pulumi up --client=<address>`), and the inline program runs the
project's own __main__.py: the same program as under `make plan` and a real `pulumi up`.

- State: a local file backend under <sandbox>/pulumi-state, secrets under a fixed passphrase (a sandbox's state
  never leaves its folder), PULUMI_HOME under the sandbox too.
- The CLI and pulumi-resource-kubernetes come from `bin` (first on PATH). The engine takes a plugin found on PATH
  whatever version the program asks for (pulumi sdk/go/common/workspace/plugins.go, getPluginInfoAndPath:
  `exec.LookPath` before the plugin cache), and warns `using pulumi-resource-kubernetes from $PATH at ...`; the
  SDK asks for 4.34.2, and the module proxy serves the provider at one pseudo-version only.
- Policy packs: the CLI starts a Python pack through the python language plugin, or, where the pack's path is an
  executable file, launches that file as the analyzer plugin with the engine's address (pkg/resource/plugin/
  analyzer_plugin.go at v3.274.1, NewPolicyAnalyzer). Pulumi's releases once shipped the launcher of a Python pack as
  a script running `python -u -m pulumi.policy ENGINE PACK` (sdk/python/dist); `pulumi.policy` is still in the SDK,
  so the sandbox writes such a two-line script for policies/ and names it as the pack, and the pack's own
  __main__.py serves the policies.
"""
from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gke_ai_batch.model.kubernetes_only import KUBERNETES_ONLY_KEY
from gke_ai_batch.offline.engine.stackfile import project, resolve

from .errors import SandboxError

PASSPHRASE = "gke-ai-batch-sandbox"  # the local state's only key: it never leaves the sandbox folder
POLICY_SHIM = "run-policies"
REPLACE_OPS = ("replace", "create-replacement", "delete-replaced")


@dataclass(frozen=True)
class Change:
    """What the engine did (up) or would do (preview) to one resource: its operation, the top-level keys that
    differ, the property paths of its detailed diff, and its error where it failed."""
    urn: str
    type: str
    op: str
    keys: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    error: str = ""

    @property
    def failed(self) -> bool:
        return bool(self.error)

    @property
    def name(self) -> str:
        return self.urn.rsplit("::", 1)[-1]

    def line(self) -> str:
        detail = f"  ({', '.join(self.paths or self.keys)})" if self.paths or self.keys else ""
        return f"{self.op:<8} {self.type}  {self.name}{detail}" + (f"  error: {self.error}" if self.error else "")


@dataclass(frozen=True)
class Violation:
    policy: str
    level: str
    message: str
    urn: str

    @property
    def failed(self) -> bool:
        """A mandatory violation stops a deployment."""
        return self.level == "mandatory"

    def line(self) -> str:
        return f"{self.level:<9} {self.policy}  {self.urn.rsplit('::', 1)[-1] or '(stack)'}: {self.message}"


@dataclass
class Events:
    """The engine's events of one operation, by resource: the last step of each, its failure, and the policy
    violations and error diagnostics."""
    steps: dict[str, Change] = field(default_factory=dict)
    errors: dict[str, list[str]] = field(default_factory=dict)  # urn ("" for the stack's) -> error messages
    violations: list[Violation] = field(default_factory=list)

    def __call__(self, event: Any) -> None:
        if (pre := event.resource_pre_event) is not None:
            self._step(pre.metadata)
        if (failed := event.res_op_failed_event) is not None:
            self._step(failed.metadata)
        if (diag := event.diagnostic_event) is not None and diag.severity == "error":
            self.errors.setdefault(diag.urn or "", []).append(_one_line(diag.message))
        if (policy := event.policy_event) is not None:
            self.violations.append(Violation(policy.policy_name, str(policy.enforcement_level),
                                             _one_line(policy.message), policy.resource_urn or ""))

    def _step(self, m: Any) -> None:
        """A replacement's steps (create-replacement, replace, delete-replaced) are one `replace`."""
        op = "replace" if str(m.op.value) in REPLACE_OPS else str(m.op.value)
        seen = self.steps.get(m.urn)
        if seen is not None and seen.op == "replace":
            op = "replace"
        paths = tuple(sorted((m.detailed_diff or {}).keys()))
        self.steps[m.urn] = Change(m.urn, m.type, op, tuple(sorted(m.diffs or ())), paths)

    def changes(self) -> list[Change]:
        """Each resource's step, with its errors; the stack's own row and the providers' left out."""
        out = []
        for urn, c in sorted(self.steps.items(), key=lambda kv: (kv[1].type, kv[1].name)):
            if c.type == "pulumi:pulumi:Stack":
                continue
            error = "; ".join(self.errors.get(urn, []))
            out.append(Change(c.urn, c.type, c.op, c.keys, c.paths, error))
        return out

    def failure(self) -> str:
        """One line: the first error the engine reported, and how many more."""
        messages = [m for ms in self.errors.values() for m in ms]
        if not messages:
            return "the engine reported no error message (see the CLI's output above)"
        return messages[0] + (f" (and {len(messages) - 1} more errors)" if len(messages) > 1 else "")


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def environment(sandbox_dir: Path, bin_dir: Path) -> dict[str, str]:
    """The CLI's environment: the sandbox's state, passphrase and PULUMI_HOME, and bin first on PATH."""
    state = sandbox_dir / "pulumi-state"
    state.mkdir(parents=True, exist_ok=True)
    return {"PULUMI_BACKEND_URL": f"file://{state}", "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
            "PULUMI_HOME": str(sandbox_dir / "pulumi-home"), "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])}


def policy_launcher(sandbox_dir: Path, pack: Path) -> Path:
    """The executable the CLI takes as the policy pack (see the module's docstring), written at run time."""
    path = sandbox_dir / "policy-bin" / POLICY_SHIM
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\n# written by gke_ai_batch.sandbox.deploy: serve the pack {pack} to the engine '
                    f'at "$1"\nexec "{sys.executable}" -u -m pulumi.policy "$1" "{pack}"\n')
    path.chmod(0o755)
    return path


def stack_config(stack: str, kubeconfig: Path, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The stack file's config (stacks/Pulumi.<stack>.yaml, or a path to one) with the kubernetesOnly key
    pointing at `kubeconfig`; `extra` replaces keys (a changed platform block, for engine_compare)."""
    config = dict(resolve(stack).config)
    config[f"{project().name}:{KUBERNETES_ONLY_KEY}"] = {"kubeconfig": str(kubeconfig.resolve())}
    return {**config, **(extra or {})}


def program() -> None:
    """The project's own program, as `pulumi up` would run it."""
    runpy.run_path(str(project().root / "__main__.py"), run_name="__main__")


@contextmanager
def workspace_stack(stack: str, sandbox_dir: Path, kubeconfig: Path, bin_dir: Path,
                    config: dict[str, Any] | None = None) -> Iterator[Any]:
    """The stack in the sandbox's backend, its config set as the stack file holds it (structured values stay
    structured, so the program reads them as under the CLI), the passphrase's salt kept across runs."""
    from pulumi import automation as auto

    if not (bin_dir / "pulumi").is_file():
        raise SandboxError(f"no pulumi CLI in {bin_dir}: the sandbox's build puts it there (make sandbox)")
    name = project().name
    stack_name = Path(stack).name.removeprefix("Pulumi.").removesuffix(".yaml")
    work = sandbox_dir / "pulumi-work"
    work.mkdir(parents=True, exist_ok=True)
    cli = sandbox_dir / "pulumi-cli" / "bin"
    cli.mkdir(parents=True, exist_ok=True)
    (cli / "pulumi").unlink(missing_ok=True)
    (cli / "pulumi").symlink_to(bin_dir / "pulumi")  # the Automation API runs <root>/bin/pulumi
    try:
        command = auto.PulumiCommand(root=str(cli.parent))
        ws = auto.LocalWorkspace(work_dir=str(work), program=program, env_vars=environment(sandbox_dir, bin_dir),
                                 project_settings=auto.ProjectSettings(name=name, runtime="python"),
                                 secrets_provider="passphrase", pulumi_command=command)
        st = auto.Stack.create_or_select(stack_name, ws)
        settings = _settings(ws, stack_name)
        settings.config = config if config is not None else stack_config(stack, kubeconfig)
        ws.save_stack_settings(stack_name, settings)
    except (auto.errors.CommandError, OSError, ValueError) as e:
        raise SandboxError(f"stack {stack_name}: the Pulumi CLI in {bin_dir} cannot be used: {_one_line(e)}") from None
    yield st


def _settings(ws: Any, stack_name: str) -> Any:
    """The stack's settings file in the work folder (with the passphrase's salt `stack init` wrote), or new ones."""
    from pulumi import automation as auto
    try:
        return ws.stack_settings(stack_name)
    except FileNotFoundError:
        return auto.StackSettings()


def _run(what: str, stack: str, operation: Callable[[Events], Any]) -> Events:
    """Run one operation with its events recorded; SandboxError with the engine's first error if it fails."""
    from pulumi.automation.errors import CommandError

    events = Events()
    try:
        operation(events)
    except CommandError as e:
        if what == "policy" and events.violations:
            return events  # a mandatory violation fails the preview: the violations are the answer
        raise SandboxError(f"stack {stack}: pulumi {what} failed: {events.failure() if events.errors else _tail(e)}") \
            from None
    return events


def _tail(e: Exception) -> str:
    """The last line of a CLI's stderr that says something."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip() and not ln.strip().startswith(("code:", "stdout:"))]
    return lines[-1] if lines else "no message"


def deploy(stack: str, sandbox_dir: Path, kubeconfig: Path, bin_dir: Path) -> list[Change]:
    """`pulumi up` of the stack's Kubernetes layer onto the cluster of `kubeconfig`; each resource's operation."""
    with workspace_stack(stack, sandbox_dir, kubeconfig, bin_dir) as st:
        events = _run("up", stack, lambda ev: st.up(on_event=ev, color="never"))
    return events.changes()


def preview_diff(stack: str, sandbox_dir: Path, kubeconfig: Path, bin_dir: Path,
                 config: dict[str, Any] | None = None) -> list[Change]:
    """`pulumi preview --diff` of the stack (with `config` instead of the stack file's, when given) against what
    was deployed: each resource's operation, changed keys and detailed-diff paths."""
    with workspace_stack(stack, sandbox_dir, kubeconfig, bin_dir, config) as st:
        events = _run("preview", stack, lambda ev: st.preview(diff=True, on_event=ev, color="never"))
    return events.changes()


def preview_policy(stack: str, sandbox_dir: Path, kubeconfig: Path, bin_dir: Path) -> list[Violation]:
    """`pulumi preview --policy-pack policies/`: every violation the pack reports, mandatory and advisory."""
    pack = policy_launcher(sandbox_dir, project().root / "policies")
    with workspace_stack(stack, sandbox_dir, kubeconfig, bin_dir) as st:
        events = _run("policy", stack, lambda ev: st.preview(policy_packs=[str(pack)], on_event=ev, color="never"))
    return events.violations


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gke_ai_batch.sandbox.deploy", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["up", "preview", "policy"])
    ap.add_argument("stack", help="a stack name of the project or a path to Pulumi.<stack>.yaml")
    ap.add_argument("--dir", required=True, type=Path, help="the sandbox folder (state, PULUMI_HOME)")
    ap.add_argument("--kubeconfig", required=True, type=Path, help="the kubeconfig of the cluster to deploy onto")
    ap.add_argument("--bin", required=True, type=Path, help="the folder holding pulumi and pulumi-resource-kubernetes")
    ap.add_argument("--json", action="store_true", help="one JSON object per line instead of text")
    args = ap.parse_args(argv)
    try:
        rows = _command(args.command)(args.stack, args.dir.resolve(), args.kubeconfig, args.bin.resolve())
    except (SandboxError, SystemExit) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for row in rows:
        print(json.dumps(row.__dict__) if args.json else row.line())
    return 1 if any(r.failed for r in rows) else 0


def _command(name: str) -> Callable[[str, Path, Path, Path], list[Change] | list[Violation]]:
    return {"up": deploy, "preview": preview_diff, "policy": preview_policy}[name]  # type: ignore[return-value]  # each returns one of the two lists

if __name__ == "__main__":
    sys.exit(main())
