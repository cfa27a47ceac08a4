"""Start and stop the sandbox of one stack: binaries, certificates, etcd, kube-apiserver, kube-controller-manager,
the GKE CRDs, Kueue and JobSet, then the stack's Kubernetes layer by a real `pulumi up`. One sandbox runs at a time
(its ports are fixed); a start that fails stops everything it started."""
from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from gke_ai_batch.model.config import CONFIG_KEY
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.input_limits import parse_config
from gke_ai_batch.offline.engine.stackfile import StackFile, project, resolve
from gke_ai_batch.plan.platform import Platform, build_platform

from . import control_plane, controllers
from .build import ensure_binaries
from .controllers import apply, kubectl
from .errors import SandboxError
from .gke_crds import gke_crds
from .nodes import NOT_READY_TAINT, node_manifests
from .pki import make_pki
from .processes import State, check_free, stop_all

Say = Callable[[str], None]


def default_dir() -> Path:
    return project().root / ".sandbox"


def plan_of(stack: StackFile) -> Platform:
    """The stack's platform plan, as `make plan` derives it (a bad config is the plan's one error)."""
    config = stack.pulumi_config()
    try:
        return build_platform(parse_config(config.get(f"{project().name}:{CONFIG_KEY}")), project().name, config)
    except ConfigError as e:
        raise SandboxError(f"stack {stack.name} ({stack.path}): {e}") from None


def running(root: Path) -> str | None:
    """What already runs in `root`, with its kubeconfig; None when nothing does."""
    state = State(root)
    if state.running():
        return (f"a sandbox of stack {state.data.get('stack')} is already running: export "
                f"KUBECONFIG={state.data.get('kubeconfig')} (make sandbox-stop ends it)")
    return None


def up(stack_name: str, root: Path, say: Say = print, deploy: bool = True) -> control_plane.Paths:
    """A running sandbox of the stack; SandboxError (after stopping what it started) when any step fails."""
    stack = resolve(stack_name)
    platform = plan_of(stack)
    if busy := running(root):
        raise SandboxError(busy)
    check_free(control_plane.PORTS + controllers.PORTS)
    paths = control_plane.Paths(root, ensure_binaries(say))
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    state = State(root)
    state.save(stack=stack.name, kubeconfig=str(paths.kubeconfig), pids={})
    try:
        _start(paths, state, platform, say)
        if deploy:
            _deploy(stack, paths, say)
        _register_nodes(paths, platform, say)
    except BaseException:
        stop_all(state)
        raise
    return paths


def _start(paths: control_plane.Paths, state: State, platform: Platform, say: Say) -> None:
    make_pki(paths.root)
    control_plane.write_kubeconfig(paths)
    say("starting etcd, kube-apiserver, kube-controller-manager and kube-scheduler on 127.0.0.1")
    control_plane.start_etcd(paths, state)
    control_plane.start_apiserver(paths, state)
    control_plane.start_controller_manager(paths, state)
    control_plane.start_scheduler(paths, state)
    say("installing the GKE CRDs the stack uses, and Kueue and JobSet (their charts' objects, managers as processes)")
    apply(paths, gke_crds())
    controllers.install(paths, state, platform)
    say("waiting for the quota controller to count the custom resources the teams' quotas name (up to a minute)")
    controllers.wait_for_quota_discovery(paths)


def _deploy(stack: StackFile, paths: control_plane.Paths, say: Say) -> None:
    from . import deploy  # the Automation API loads only where a deploy is asked for

    say(f"deploying stack {stack.name}'s Kubernetes layer with pulumi up")
    deploy.deploy(stack.name, paths.root, paths.kubeconfig, paths.bin)


def _register_nodes(paths: control_plane.Paths, platform: Platform, say: Say) -> None:
    """After the deploy: the provider waits for a DaemonSet's pods to be ready, which no kubelet makes them. The API
    server's TaintNodesByCondition admission taints a new node not-ready until the node-lifecycle controller sees
    its kubelet report Ready (plugin/pkg/admission/nodetaint); with neither in the sandbox, it lifts that taint."""
    nodes = node_manifests(platform.pools)
    say(f"registering {len(nodes)} Node objects for the nodes the pools have at rest (no kubelet runs them)")
    apply(paths, nodes)
    if nodes:
        kubectl(paths, "taint", "nodes", "--all", f"{NOT_READY_TAINT}:NoSchedule-")


def stop(root: Path) -> list[str]:
    """End every process the sandbox started; the names of those that were running."""
    return stop_all(State(root))
