"""The sandbox's binaries, built from their Go modules (sandbox/modules/<name>/go.mod, go.sum committed) into a cache
keyed by module, version and the module files' hash, once per machine. Nothing built is committed.

Where the Go module proxy does not serve the version the stacks or the Python SDK pin, the nearest served one is
built and the gap is said at every build (GAPS; docs/e2e.md lists them). A version the proxy refuses outright is one
error naming the module, the version and the proxy's words."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import SandboxError

MODULES = Path(__file__).resolve().parents[2] / "sandbox" / "modules"
KUBERNETES_VERSION = "v1.33.13"
KUEUE_VERSION = "v0.19.2"
JOBSET_VERSION = "v0.12.0"
PULUMI_VERSION = "v3.274.1"
PULUMI_KUBERNETES_VERSION = "v4.0.0-20260115033456-f47bc2d6f199"
HELM_VERSION = "v3.18.6"  # the one the kubernetes provider requires: it renders the charts as `pulumi up` would


@dataclass(frozen=True)
class Binary:
    name: str  # the file in the cache's bin folder
    package: str  # the Go package built ('.' for the module's own main)
    ldflags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Build:
    """One Go module of sandbox/modules and the binaries built from it."""

    folder: str
    module: str  # the upstream module it pins
    version: str
    binaries: tuple[Binary, ...]
    generated: tuple[str, ...] = ()  # files copied from the upstream module beside main.go before the build

    def key(self) -> str:
        """module@version and a hash of the files that decide the build."""
        digest = hashlib.sha256()
        for name in ("go.mod", "go.sum", "main.go"):
            path = MODULES / self.folder / name
            if path.exists():
                digest.update(path.read_bytes())
        return f"{self.folder}@{self.version}-{digest.hexdigest()[:12]}"


def _k8s_version(version: str) -> tuple[str, ...]:
    """What `kubectl version` and the API server's /version report (hack/lib/version.sh sets the same)."""
    major, minor = version.lstrip("v").split(".")[:2]
    return tuple(f"-X {pkg}.{name}={value}" for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")
                 for name, value in (("gitVersion", version), ("gitMajor", major), ("gitMinor", minor)))


def _x(variable: str, value: str) -> tuple[str, ...]:
    """The linker setting a package's version variable, as each project's release build sets it."""
    return (f"-X {variable}={value}",)


BUILDS = (
    Build("kubernetes", "k8s.io/kubernetes", KUBERNETES_VERSION, (
        Binary("etcd", "go.etcd.io/etcd/server/v3"),
        Binary("kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver", _k8s_version(KUBERNETES_VERSION)),
        Binary("kube-controller-manager", "k8s.io/kubernetes/cmd/kube-controller-manager",
               _k8s_version(KUBERNETES_VERSION)),
        Binary("kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler", _k8s_version(KUBERNETES_VERSION)),
        Binary("kubectl", "k8s.io/kubernetes/cmd/kubectl", _k8s_version(KUBERNETES_VERSION)))),
    # JobSet at the version Kueue requires, in Kueue's module graph (as Kueue's integration tests run it): the
    # dependencies both share are compiled once.
    Build("kueue", "sigs.k8s.io/kueue", KUEUE_VERSION, (
        Binary("kueue", "sigs.k8s.io/kueue/cmd/kueue", _x("sigs.k8s.io/kueue/pkg/version.GitVersion", KUEUE_VERSION)),
        Binary("jobset", "sigs.k8s.io/jobset", _x("sigs.k8s.io/jobset/pkg/version.GitVersion", JOBSET_VERSION)))),
    Build("pulumi", "github.com/pulumi/pulumi/pkg/v3", PULUMI_VERSION, (
        Binary("pulumi", "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi",
               _x("github.com/pulumi/pulumi/sdk/v3/go/common/version.Version", PULUMI_VERSION)),)),
    Build("pulumi-kubernetes", "github.com/pulumi/pulumi-kubernetes/provider/v4", PULUMI_KUBERNETES_VERSION, (
        Binary("pulumi-resource-kubernetes", ".",
               _x("github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version", PULUMI_KUBERNETES_VERSION)),
        Binary("helm", "helm.sh/helm/v3/cmd/helm", _x("helm.sh/helm/v3/internal/version.version", HELM_VERSION))),
        generated=tuple(f"cmd/pulumi-resource-kubernetes/{f}" for f in ("schema.json", "terraform-mapping.json"))),
)

# The versions the proxy refused, and what is built instead (the registry's words: "This module version is not
# available."). Said at every build, never silently.
GAPS = (
    "github.com/pulumi/pulumi/pkg/v3 v3.272.0 (the Python SDK's): the Go module proxy answers 'This module version is "
    f"not available.'; building the Pulumi CLI at {PULUMI_VERSION}, the nearest served",
    "github.com/pulumi/pulumi-kubernetes/provider/v4 v4.34.2 (the Python SDK's): the proxy serves no tagged version, "
    f"only {PULUMI_KUBERNETES_VERSION} (2026-01-15); building that, found on PATH as an ambient plugin",
    "github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3: the proxy serves no version; the Python "
    "program runs under the Automation API's own language server (pulumi.automation), which the CLI joins with "
    "--client",
    "sigs.k8s.io/kueue v0.20.x: 'This module version is not available.'; the sandbox runs v0.19.2, the stacks' pin",
)


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gke-ai-batch" / "sandbox"


def _go(args: list[str], cwd: Path, what: str) -> None:
    env = {**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"}
    done = subprocess.run(["go", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SandboxError(_refusal(done.stderr) or f"{what}: go {' '.join(args[:2])} failed:\n{done.stderr.strip()}")


def _refusal(stderr: str) -> str | None:
    """The proxy's refusal of a module version, in one line: module, version and its words."""
    found = re.search(r"go: (?:downloading )?([^\s@]+)@(\S+): reading \S+: (\d{3} [^\n]*)\n\s*server response: "
                      r"([^\n]*)", stderr)
    if not found:
        return None
    module, version, status, words = found.groups()
    return f"the Go module proxy refused {module} {version.rstrip(':')}: {status.strip()}, '{words.strip()}'"


def _module_dir(folder: str, module: str) -> Path:
    env = {**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"}
    done = subprocess.run(["go", "list", "-m", "-f", "{{.Dir}}", module], cwd=MODULES / folder, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0 or not done.stdout.strip():
        raise SandboxError(_refusal(done.stderr) or f"{module} (sandbox/modules/{folder}): {done.stderr.strip()}")
    return Path(done.stdout.strip())


def module_dir(folder: str, module: str) -> Path:
    """Where the Go module cache holds `module` as sandbox/modules/<folder> pins it (its CRDs, charts, manifests)."""
    _go(["mod", "download", module], MODULES / folder, f"{module} (sandbox/modules/{folder})")
    return _module_dir(folder, module)


def _build(build: Build, into: Path, say: Callable[[str], None]) -> None:
    folder = MODULES / build.folder
    say(f"building {', '.join(b.name for b in build.binaries)} from {build.module} {build.version} "
        f"(once per machine; minutes on 2 cores)")
    _go(["mod", "download"], folder, f"{build.module} {build.version}")
    copied = [folder / Path(g).name for g in build.generated]
    for source, target in zip(build.generated, copied, strict=True):
        shutil.copyfile(_module_dir(build.folder, build.module) / source, target)
    tmp = into.with_name(into.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        for binary in build.binaries:
            _go(["build", "-trimpath", "-ldflags", " ".join(("-s", *binary.ldflags)), "-o", str(tmp / binary.name),
                 binary.package], folder, f"{binary.name} ({build.module} {build.version})")
    finally:
        for path in copied:
            path.unlink(missing_ok=True)
    tmp.rename(into)


def ensure_binaries(say: Callable[[str], None] = print) -> Path:
    """Every binary the sandbox runs, in one folder of links into the cache; builds what the cache lacks."""
    if shutil.which("go") is None:
        raise SandboxError("the sandbox builds its binaries with Go, and `go` is not on PATH: install Go 1.26")
    for gap in GAPS:
        say(f"version gap: {gap}")
    bin_dir = cache_root() / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for build in BUILDS:
        built = cache_root() / "builds" / build.key()
        if not built.is_dir():
            built.parent.mkdir(parents=True, exist_ok=True)
            _build(build, built, say)
        for binary in build.binaries:
            link = bin_dir / binary.name
            link.unlink(missing_ok=True)
            link.symlink_to(built / binary.name)
    return bin_dir
