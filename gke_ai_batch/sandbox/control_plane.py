"""etcd, kube-apiserver, kube-controller-manager and kube-scheduler on 127.0.0.1. The API server runs RBAC and the
admission plugins the platform relies on (Pod Security, LimitRanger, ResourceQuota, ValidatingAdmissionPolicy,
Priority, the webhooks); MutatingAdmissionPolicy is alpha in Kubernetes 1.33 and off, as GKE leaves alpha APIs off.
The controller manager turns Jobs into pods, counts quota usage and collects garbage. The scheduler binds pods to
the Node objects that stand for the pools' nodes (sandbox.nodes). There is no kubelet: a bound pod stays Pending,
which is all admission, Kueue and JobSet need; so the node-lifecycle controller, which would find no kubelet's
heartbeat and taint every node unreachable, is off."""
from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

import yaml

from .processes import Port, State, start, wait_healthy

# Below Linux's ephemeral range (net.ipv4.ip_local_port_range, 32768-60999 by default): a port in it can be the
# source port of any outgoing connection, such as a client's to the API server, and a manager's listener then fails
# to bind (`bind: address already in use`), as the JobSet manager's did on 39444 once.
ETCD = Port(22379, "the sandbox's etcd")
ETCD_PEER = Port(22380, "the sandbox's etcd peer port")
APISERVER = Port(26443, "the sandbox's kube-apiserver")
CONTROLLER_MANAGER = Port(20257, "the sandbox's kube-controller-manager")
SCHEDULER = Port(20259, "the sandbox's kube-scheduler")
PORTS = [ETCD, ETCD_PEER, APISERVER, CONTROLLER_MANAGER, SCHEDULER]

# ExtendedResourceToleration as GKE runs it: GKE taints GPU nodes nvidia.com/gpu:NoSchedule "and automatically
# applies corresponding tolerations to Pods requesting GPUs by running the ExtendedResourceToleration admission
# controller" (GKE's GPU page, as kserve's docs/samples/accelerators quote it); without it Kueue's topology-aware
# scheduling found every GPU node's taint untolerated and left TAS workloads pending.
ADMISSION_PLUGINS = ("NamespaceLifecycle,LimitRanger,ServiceAccount,PodSecurity,Priority,DefaultTolerationSeconds,"
                     "ExtendedResourceToleration,ResourceQuota,RuntimeClass,MutatingAdmissionWebhook,"
                     "ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,DenyServiceExternalIPs")


@dataclass(frozen=True)
class Paths:
    root: Path
    bin: Path

    @property
    def pki(self) -> Path:
        return self.root / "pki"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def kubeconfig(self) -> Path:
        return self.root / "admin.kubeconfig"

    def tool(self, name: str) -> str:
        return str(self.bin / name)


def server_url() -> str:
    return f"https://127.0.0.1:{APISERVER.number}"


def write_kubeconfig(paths: Paths) -> None:
    """The admin's kubeconfig (client certificate in group system:masters)."""
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "sandbox",
              "clusters": [{"name": "sandbox", "cluster": {"server": server_url(),
                                                           "certificate-authority": str(paths.pki / "ca.crt")}}],
              "users": [{"name": "sandbox-admin", "user": {"client-certificate": str(paths.pki / "admin.crt"),
                                                           "client-key": str(paths.pki / "admin.key")}}],
              "contexts": [{"name": "sandbox", "context": {"cluster": "sandbox", "user": "sandbox-admin"}}]}
    paths.kubeconfig.write_text(yaml.safe_dump(config, sort_keys=False))


def admin_tls(paths: Paths) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(paths.pki / "ca.crt"))
    context.load_cert_chain(str(paths.pki / "admin.crt"), str(paths.pki / "admin.key"))
    return context


def start_etcd(paths: Paths, state: State) -> None:
    client, peer = f"http://127.0.0.1:{ETCD.number}", f"http://127.0.0.1:{ETCD_PEER.number}"
    pid = start(state, "etcd", [paths.tool("etcd"), "--name", "sandbox", "--data-dir", str(paths.root / "etcd"),
                                "--listen-client-urls", client, "--advertise-client-urls", client,
                                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                                "--initial-cluster", f"sandbox={peer}", "--log-level", "warn"], paths.logs)
    wait_healthy("etcd", f"{client}/health", paths.logs, pid)


def start_apiserver(paths: Paths, state: State) -> None:
    pki = paths.pki
    pid = start(state, "kube-apiserver", [
        paths.tool("kube-apiserver"), f"--etcd-servers=http://127.0.0.1:{ETCD.number}",
        "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={APISERVER.number}",
        f"--tls-cert-file={pki / 'apiserver.crt'}", f"--tls-private-key-file={pki / 'apiserver.key'}",
        f"--client-ca-file={pki / 'ca.crt'}", "--authorization-mode=RBAC",
        f"--enable-admission-plugins={ADMISSION_PLUGINS}", "--allow-privileged=true",
        "--service-cluster-ip-range=10.96.0.0/24", "--service-account-issuer=https://kubernetes.default.svc",
        f"--service-account-key-file={pki / 'sa.pub'}", f"--service-account-signing-key-file={pki / 'sa.key'}",
        f"--cert-dir={pki}", "--profiling=false", "--v=1"], paths.logs)
    wait_healthy("kube-apiserver", f"{server_url()}/readyz", paths.logs, pid, context=admin_tls(paths))


# The quota controller counts a custom resource (Kueue's Workloads) in a ResourceQuota created before it found that
# resource by discovery only at its next full sync, 5 minutes by default; until then the API server refuses every
# Workload in the namespace ("status unknown for quota"). A fresh sandbox creates both within a minute, so it syncs
# every 20 s: the same behaviour, sooner (docs/e2e.md).
QUOTA_SYNC = "20s"


def start_controller_manager(paths: Paths, state: State) -> None:
    """Each controller with its own service account's rights (--use-service-account-credentials), as GKE runs it."""
    pki, config = paths.pki, str(paths.kubeconfig)
    pid = start(state, "kube-controller-manager", [
        paths.tool("kube-controller-manager"), f"--kubeconfig={config}", f"--authentication-kubeconfig={config}",
        f"--authorization-kubeconfig={config}", "--bind-address=127.0.0.1",
        f"--secure-port={CONTROLLER_MANAGER.number}", f"--cert-dir={paths.root / 'controller-manager'}",
        "--leader-elect=false", "--use-service-account-credentials=true",
        f"--service-account-private-key-file={pki / 'sa.key'}", f"--root-ca-file={pki / 'ca.crt'}",
        "--cluster-name=sandbox", f"--resource-quota-sync-period={QUOTA_SYNC}",
        "--controllers=*,-node-lifecycle-controller", "--v=1"], paths.logs)
    wait_healthy("kube-controller-manager", f"https://127.0.0.1:{CONTROLLER_MANAGER.number}/healthz", paths.logs,
                 pid, context=_self_signed())


def start_scheduler(paths: Paths, state: State) -> None:
    """The default scheduler with its default profile, as GKE Standard runs it."""
    config = str(paths.kubeconfig)
    pid = start(state, "kube-scheduler", [
        paths.tool("kube-scheduler"), f"--kubeconfig={config}", f"--authentication-kubeconfig={config}",
        f"--authorization-kubeconfig={config}", "--bind-address=127.0.0.1", f"--secure-port={SCHEDULER.number}",
        f"--cert-dir={paths.root / 'scheduler'}", "--leader-elect=false", "--v=1"], paths.logs)
    wait_healthy("kube-scheduler", f"https://127.0.0.1:{SCHEDULER.number}/healthz", paths.logs, pid,
                 context=_self_signed())


def _self_signed() -> ssl.SSLContext:
    """For a component's health endpoint, served with its own self-signed certificate."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context
