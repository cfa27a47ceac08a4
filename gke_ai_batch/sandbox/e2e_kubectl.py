"""kubectl on the sandbox, as its administrator or as a team member (impersonated: `--as`, `--as-group`, as the
sandbox tells a user to act as one), with objects given on stdin and answers read as JSON."""
from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class Member:
    """Who a request runs as: `make admit`'s requester for the team (tenant_path `_member`)."""

    user: str
    groups: tuple[str, ...]

    def flags(self) -> list[str]:
        return [f"--as={self.user}", *(f"--as-group={g}" for g in self.groups)]


@dataclass(frozen=True)
class Answer:
    ok: bool
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    def objects(self) -> list[Obj]:
        """Every object printed: kubectl prints each object it made as one JSON document, one after another."""
        decoder, out, at = json.JSONDecoder(), list[Obj](), 0
        while at < len(self.out.rstrip()):
            doc, at = decoder.raw_decode(self.out, at)
            out += (doc.get("items") or []) if doc.get("kind") == "List" else [doc]
            while at < len(self.out) and self.out[at].isspace():
                at += 1
        return out


@dataclass(frozen=True)
class Kubectl:
    kubectl: str
    kubeconfig: str

    def run(self, args: Sequence[str], stdin: Obj | None = None, member: Member | None = None,
            timeout: float = 120) -> Answer:
        command = [self.kubectl, f"--kubeconfig={self.kubeconfig}", *(member.flags() if member else []), *args]
        run = subprocess.run(command, input=json.dumps(stdin) if stdin is not None else None, capture_output=True,
                             text=True, timeout=timeout)
        errors = [line for line in run.stderr.splitlines() if not line.startswith("Warning: ")]  # warn-only layers
        return Answer(run.returncode == 0, run.stdout, "\n".join(errors).strip())

    def create(self, obj: Obj, member: Member | None = None) -> Answer:
        return self.run(["create", "-f", "-", "-o", "json"], obj, member)

    def replace(self, obj: Obj, member: Member | None = None) -> Answer:
        return self.run(["replace", "-f", "-", "-o", "json"], obj, member)

    def get(self, obj: Obj) -> Obj | None:
        answer = self.run(["get", "-f", "-", "-o", "json"], obj)
        found = answer.objects() if answer.ok else []
        return found[0] if found else None

    def delete(self, obj: Obj, timeout: float = 90) -> Answer:
        """Deleted with what it owns (foreground), waited for: the quota it used is free for the next case. A pod
        the scheduler bound to a node waits for that node's kubelet to confirm it stopped, and no kubelet runs in
        the sandbox: when the wait stalls, its terminating pods are removed at once (`--grace-period=0 --force`),
        as a kubelet would after the pod's grace period."""
        answer = self.run(["delete", "-f", "-", "--ignore-not-found", "--cascade=foreground", "--wait",
                           "--timeout=1s"], obj)
        namespace = str((obj.get("metadata") or {}).get("namespace") or "")
        deadline = time.monotonic() + timeout
        while namespace and self.get(obj) is not None and time.monotonic() < deadline:
            stopping = [p["metadata"]["name"] for p in self.items(namespace, "pods")
                        if p["metadata"].get("deletionTimestamp")]
            if stopping:
                self.run(["delete", "pods", "-n", namespace, "--grace-period=0", "--force", "--ignore-not-found",
                          *stopping])
            answer = self.run(["wait", "--for=delete", "-f", "-", "--timeout=1s"], obj)
        return answer
    def items(self, namespace: str, kinds: str) -> list[Obj]:
        answer = self.run(["get", kinds, "-n", namespace, "-o", "json"])
        return list(answer.json().get("items") or []) if answer.ok else []
