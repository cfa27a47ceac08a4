"""The sandbox's processes: started detached with their logs in <sandbox>/logs, recorded in <sandbox>/state.json so
that `make sandbox-stop` (or a failed start) ends every one of them, and waited for on their health endpoints."""
from __future__ import annotations

import json
import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .errors import SandboxError


@dataclass(frozen=True)
class Port:
    number: int
    owner: str  # who listens on it, for the error when it is taken


def check_free(ports: list[Port]) -> None:
    """One error naming the first port some other program holds."""
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", port.number))
            except OSError:
                raise SandboxError(f"port {port.number} on 127.0.0.1 ({port.owner}) is in use by another program: "
                                   "stop it, or stop the sandbox holding it (make sandbox-stop)") from None


class State:
    """<sandbox>/state.json: the stack, the kubeconfig, and every process started, by name."""

    def __init__(self, root: Path):
        self.path = root / "state.json"
        self.data: dict[str, object] = json.loads(self.path.read_text()) if self.path.exists() else {}

    @property
    def pids(self) -> dict[str, int]:
        pids = self.data.get("pids")
        return {str(k): int(v) for k, v in pids.items()} if isinstance(pids, dict) else {}

    def save(self, **values: object) -> None:
        self.data.update(values)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.data, indent=2))

    def running(self) -> dict[str, int]:
        return {name: pid for name, pid in self.pids.items() if _alive(pid)}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start(state: State, name: str, argv: list[str], logs: Path, env: dict[str, str] | None = None) -> int:
    """Start `argv` in its own session (it outlives this command), its output in logs/<name>.log."""
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / f"{name}.log", "ab") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env={**os.environ, **(env or {})})
    state.save(pids={**state.pids, name: proc.pid})
    return proc.pid


def stop_all(state: State, grace: float = 10.0) -> list[str]:
    """End every recorded process (SIGTERM, then SIGKILL after `grace` seconds), newest first; the names ended."""
    pids = state.running()
    for pid in reversed(list(pids.values())):
        _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(p) for p in pids.values()):
        time.sleep(0.2)
    for pid in pids.values():
        if _alive(pid):
            _signal_group(pid, signal.SIGKILL)
    state.save(pids={})
    return list(pids)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


def wait_healthy(name: str, url: str, logs: Path, pid: int, timeout: float = 120.0,
                 context: ssl.SSLContext | None = None) -> None:
    """Until `url` answers 200; an error quoting the end of the process's log if it dies or the time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            raise SandboxError(f"{name} exited while starting; the end of {logs / (name + '.log')}:\n"
                               f"{_tail(logs, name)}")
        try:
            with urllib.request.urlopen(url, timeout=2, context=context) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise SandboxError(f"{name} did not become healthy at {url} within {timeout:.0f} s; the end of its log:\n"
                       f"{_tail(logs, name)}")


def _tail(logs: Path, name: str, lines: int = 15) -> str:
    path = logs / f"{name}.log"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else "(no log)"
