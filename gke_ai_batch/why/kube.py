"""kubectl as the client, as the user has it configured (`--kubeconfig`, `--context`, GKE's exec auth plugin), each
request bounded by `--request-timeout=10s`; its refusals become one line that names what was refused."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]
TIMEOUT_S = 10

# The API server's RBAC refusal (k8s.io/apiserver pkg/endpoints/handlers/responsewriters/errors.go, forbiddenMessage):
# `User "u" cannot get resource "workloads" in API group "kueue.x-k8s.io" in the namespace "ns"`.
_FORBIDDEN = re.compile(r'cannot (\w+) resource "([^"]+)" in API group "([^"]*)"(?: in the namespace "([^"]+)")?')
_UNREACHABLE = ("connection refused", "no such host", "i/o timeout", "Client.Timeout", "context deadline exceeded",
                "Unable to connect to the server", "dial tcp", "TLS handshake timeout")


class WhyError(Exception):
    """One line for the user, and exit 2."""


class Forbidden(WhyError):
    pass


@dataclass(frozen=True)
class Kube:
    kubeconfig: str = ""
    context: str = ""
    kubectl: str = "kubectl"
    impersonate: tuple[str, ...] = ()  # kubectl's --as and --as-group, to answer as a team member would be

    def _command(self, args: list[str]) -> list[str]:
        found = shutil.which(self.kubectl)
        if not found:
            raise WhyError(f"kubectl not found ({self.kubectl}): install it, or pass --kubectl")
        return [found, *([f"--kubeconfig={self.kubeconfig}"] if self.kubeconfig else []),
                *([f"--context={self.context}"] if self.context else []), *self.impersonate,
                f"--request-timeout={TIMEOUT_S}s", *args]

    def raw(self, args: list[str]) -> tuple[bool, str, str]:
        try:
            run = subprocess.run(self._command(args), capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise WhyError(f"the cluster did not answer within {TIMEOUT_S} s") from None
        err = "\n".join(line for line in run.stderr.splitlines() if not line.startswith("Warning: ")).strip()
        if run.returncode and any(u in err for u in _UNREACHABLE):
            raise WhyError(f"the cluster is unreachable: {last_line(err)}")
        return run.returncode == 0, run.stdout, err

    def get(self, args: list[str], need: str) -> Obj:
        """`kubectl get ... -o json`; `need` says what the answer is for, in the refusal's words."""
        ok, out, err = self.raw(["get", *args, "-o", "json"])
        if not ok:
            raise refusal(err, need)
        return dict(json.loads(out))


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].removeprefix("error: ").removeprefix("Error from server ") if lines else "no answer"


def refusal(err: str, need: str) -> WhyError:
    if m := _FORBIDDEN.search(err):
        verb, resource, group, ns = m.groups()
        where = f" in namespace {ns}" if ns else ""
        return Forbidden(f"no access: {need} needs '{verb}' on {resource} ({group or 'core'} API group){where}, "
                         "which your account lacks; the platform grants it to its teams' groups (make access)")
    return WhyError(f"{need}: {last_line(err)}")
