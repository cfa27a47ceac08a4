"""Kueue and JobSet in the sandbox: their CRDs from their Go modules, their charts rendered by Helm with the values
the stack's plan gives the releases (plan.installs), and their managers run as local processes.

Of each rendered chart the sandbox applies what configures the API server (RBAC, webhook configurations, the
manager's ConfigMap) and leaves out what would run or reach pods (Deployment, Service, APIService, ServiceMonitor,
cert-manager objects): no kubelet runs them. Each webhook is reached by URL on 127.0.0.1 with the sandbox's CA, and
each manager reads the Configuration the chart renders, with only what a local process needs changed (LOCAL)."""
from __future__ import annotations

import base64
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from gke_ai_batch.plan.installs import jobset_values, kueue_values
from gke_ai_batch.plan.platform import Platform

from .build import KUBERNETES_VERSION, module_dir
from .control_plane import Paths
from .errors import SandboxError
from .processes import Port, State, start, wait_healthy

# Below the ephemeral range, as control_plane.PORTS.
KUEUE_WEBHOOK = Port(29443, "the sandbox's Kueue webhook")
JOBSET_WEBHOOK = Port(29444, "the sandbox's JobSet webhook")
KUEUE_PROBE = Port(28081, "the sandbox's Kueue health probe")
JOBSET_PROBE = Port(28082, "the sandbox's JobSet health probe")
PORTS = [KUEUE_WEBHOOK, JOBSET_WEBHOOK, KUEUE_PROBE, JOBSET_PROBE]

NOT_APPLIED = {"CustomResourceDefinition", "Deployment", "Service", "APIService", "ServiceMonitor", "Certificate",
               "Issuer"}
WEBHOOK_KINDS = {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}


class Controller:
    """One manager: its module (in sandbox/modules/kueue's graph), chart, CRDs, ConfigMap key and ports."""

    def __init__(self, name: str, module: str, namespace: str, config_key: str, webhook: Port, probe: Port,
                 crd_folders: tuple[str, ...]):
        self.name, self.module, self.namespace, self.config_key = name, module, namespace, config_key
        self.webhook, self.probe, self.crd_folders = webhook, probe, crd_folders


KUEUE = Controller("kueue", "sigs.k8s.io/kueue", "kueue-system", "controller_manager_config.yaml", KUEUE_WEBHOOK,
                   KUEUE_PROBE, ("config/components/crd/bases",))
JOBSET = Controller("jobset", "sigs.k8s.io/jobset", "jobset-system", "controller_manager_config.yaml", JOBSET_WEBHOOK,
                    JOBSET_PROBE, ("config/components/crd/bases",))


def kubectl(paths: Paths, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run([paths.tool("kubectl"), f"--kubeconfig={paths.kubeconfig}", *args], input=stdin,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SandboxError(f"kubectl {' '.join(args[:2])} failed: {done.stderr.strip()}")
    return done.stdout


def wait_established(paths: Paths, timeout: float = 60) -> None:
    """Until every CRD is Established. Not `kubectl wait`: it fails outright on a CRD whose status has no
    conditions yet (".status.conditions accessor error: <nil>"), which a CRD just applied can have."""
    deadline = time.monotonic() + timeout
    while True:
        crds = json.loads(kubectl(paths, "get", "crd", "-o", "json"))["items"]
        waiting = [c["metadata"]["name"] for c in crds
                   if not any(k.get("type") == "Established" and k.get("status") == "True"
                              for k in (c.get("status") or {}).get("conditions") or [])]
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise SandboxError(f"CRDs not established within {timeout:.0f} s: {', '.join(waiting)}")
        time.sleep(1)


def apply(paths: Paths, docs: list[dict[str, Any]]) -> None:
    """Server-side apply, as the sandbox's admin."""
    if docs:
        kubectl(paths, "apply", "--server-side", "--force-conflicts", "--field-manager=gke-ai-batch-sandbox", "-f",
                "-", stdin=yaml.safe_dump_all(docs, sort_keys=False))


def _yaml_docs(text: str) -> Iterator[dict[str, Any]]:
    yield from (d for d in yaml.safe_load_all(text) if isinstance(d, dict) and d.get("kind"))


def crds(controller: Controller) -> list[dict[str, Any]]:
    root = module_dir("kueue", controller.module)
    return [d for folder in controller.crd_folders for f in sorted((root / folder).glob("*.yaml"))
            for d in _yaml_docs(f.read_text())]


def render(paths: Paths, controller: Controller, values: dict[str, Any]) -> list[dict[str, Any]]:
    """`helm template` of the controller's chart from its module, with the plan's values."""
    chart = module_dir("kueue", controller.module) / "charts" / controller.name
    values_file = paths.root / f"{controller.name}-values.json"
    values_file.write_text(json.dumps(values))
    done = subprocess.run([paths.tool("helm"), "template", controller.name, str(chart), "--namespace",
                           controller.namespace, "--values", str(values_file), "--kube-version",
                           KUBERNETES_VERSION.lstrip("v")], capture_output=True, text=True)
    if done.returncode != 0:
        raise SandboxError(f"helm template of the {controller.name} chart failed: {done.stderr.strip()}")
    return list(_yaml_docs(done.stdout))


def by_url(doc: dict[str, Any], port: Port, ca: bytes) -> dict[str, Any]:
    """A webhook configuration whose webhooks call the local manager instead of the chart's Service."""
    hooks = []
    for hook in doc.get("webhooks", []):
        path = hook["clientConfig"].get("service", {}).get("path", "/")
        hooks.append({**hook, "clientConfig": {"url": f"https://127.0.0.1:{port.number}{path}",
                                               "caBundle": base64.b64encode(ca).decode()}})
    return {**doc, "webhooks": hooks}


def local_config(rendered: list[dict[str, Any]], controller: Controller, certs: Path) -> dict[str, Any]:
    """The chart's Configuration, with what a process on 127.0.0.1 needs (LOCAL): the webhook on its port with the
    sandbox's certificate, no certificate rotation, no leader election, no metrics endpoint, and for Kueue no
    on-demand visibility server."""
    config_map = next(d for d in rendered if d["kind"] == "ConfigMap" and controller.config_key in d.get("data", {}))
    config = yaml.safe_load(config_map["data"][controller.config_key])
    return {**config, **{key: {**config.get(key, {}), **value} for key, value in LOCAL(controller, certs).items()}}


def LOCAL(controller: Controller, certs: Path) -> dict[str, Any]:  # noqa: N802  # the table of what is changed
    # Kueue's on-demand visibility server authenticates through the in-cluster service account only (its
    # delegated authentication reads KUBERNETES_SERVICE_HOST and the mounted token), which a process has not.
    kueue_only = {"featureGates": {"VisibilityOnDemand": False}} if controller is KUEUE else {}
    return {**kueue_only, "webhook": {"port": controller.webhook.number, "host": "127.0.0.1", "certDir": str(certs)},
            "internalCertManagement": {"enable": False}, "leaderElection": {"leaderElect": False},
            "metrics": {"bindAddress": "0"},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{controller.probe.number}"}}


# Kueue v0.19.2 reads its metrics endpoint's certificate from this fixed folder when it does not rotate its own
# (cmd/kueue/main.go), and exits without it, even with the endpoint off; the chart mounts a Secret there.
KUEUE_METRICS_CERTS = Path("/etc/kueue/metrics/certs")


def _certificate_into(paths: Paths, folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "tls.crt").write_bytes((paths.pki / "webhook.crt").read_bytes())
        (folder / "tls.key").write_bytes((paths.pki / "webhook.key").read_bytes())
    except PermissionError:
        raise SandboxError(f"cannot write {folder}: Kueue v0.19.2 reads a certificate from that fixed folder "
                           "(cmd/kueue/main.go); run the sandbox as root, or make the folder "
                           "writable") from None


def install(paths: Paths, state: State, platform: Platform) -> None:
    """CRDs, then each chart's objects, then each manager, waited for until its webhook answers."""
    certs = paths.root / "webhook-certs"
    _certificate_into(paths, certs)
    _certificate_into(paths, KUEUE_METRICS_CERTS)
    ca = (paths.pki / "ca.crt").read_bytes()
    controllers = [(KUEUE, kueue_values(platform))] + ([(JOBSET, jobset_values(platform))] if platform.install_jobset
                                                       else [])
    apply(paths, [d for c, _ in controllers for d in crds(c)])
    wait_established(paths)
    for controller, values in controllers:
        rendered = render(paths, controller, values)
        apply(paths, [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": controller.namespace}}])
        apply(paths, [by_url(d, controller.webhook, ca) if d["kind"] in WEBHOOK_KINDS else d
                      for d in rendered if d["kind"] not in NOT_APPLIED])
        config = paths.root / f"{controller.name}-config.yaml"
        config.write_text(yaml.safe_dump(local_config(rendered, controller, certs), sort_keys=False))
        pid = start(state, controller.name, [paths.tool(controller.name), f"--config={config}"], paths.logs,
                    env={"KUBECONFIG": str(paths.kubeconfig)})
        wait_healthy(controller.name, f"http://127.0.0.1:{controller.probe.number}/readyz", paths.logs, pid)


# The custom resources the teams' ResourceQuotas count (plan.tenancy's object quota).
COUNTED_CUSTOM = ("count/workloads.kueue.x-k8s.io", "count/jobsets.jobset.x-k8s.io",
                  "count/podmonitorings.monitoring.googleapis.com")
PROBE = "gke-ai-batch-sandbox-probe"


def wait_for_quota_discovery(paths: Paths, timeout: float = 120.0) -> None:
    """Until the controller manager's quota controller counts the custom resources the teams' quotas name. It
    finds new resources by discovery every 30 s; a ResourceQuota created before that stays "status unknown" for
    them until its next full sync (--resource-quota-sync-period, 5 minutes), and the API server refuses every
    Workload Kueue creates in its namespace meanwhile. A probe quota in a namespace of its own tells when."""
    apply(paths, [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": PROBE}},
                  {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": PROBE, "namespace": PROBE},
                   "spec": {"hard": {name: "1" for name in COUNTED_CUSTOM}}}])
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            used = json.loads(kubectl(paths, "get", "resourcequota", PROBE, "-n", PROBE, "-o", "json")
                              ).get("status", {}).get("used", {})
            if all(name in used for name in COUNTED_CUSTOM):
                return
            time.sleep(2)
        raise SandboxError(f"the quota controller did not count {', '.join(COUNTED_CUSTOM)} within {timeout:.0f} s")
    finally:
        kubectl(paths, "delete", "namespace", PROBE, "--wait=false")
