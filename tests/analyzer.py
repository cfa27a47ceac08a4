"""Serve the policy pack as `pulumi preview --policy-pack policies` does, and call it as the engine does.

The engine has the python language host start `<venv>/bin/python -u -m pulumi.policy <engine address>
<absolute pack dir>` in the pack dir, reads the pack's gRPC port from the first line of its stdout, and
calls Handshake (the python pack answers UNIMPLEMENTED), ConfigureStack, GetAnalyzerInfo, Configure (every
policy's level), then Analyze for each registered resource and AnalyzeStack once with all of them. The
properties travel as google.protobuf.Struct in the form `Registration.wire` records (numbers as doubles)."""
from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc  # type: ignore[import-untyped]  # grpcio ships no type hints
from google.protobuf import empty_pb2, struct_pb2  # type: ignore[import-untyped]  # nor does protobuf
from pulumi.runtime.proto import analyzer_pb2 as pb
from pulumi.runtime.proto import analyzer_pb2_grpc

from gke_ai_batch.offline.engine.runtime import Registration

LEVELS = {pb.ADVISORY: "advisory", pb.MANDATORY: "mandatory", pb.DISABLED: "disabled", pb.REMEDIATE: "remediate"}


def pack_env(python: str, project: str, stack: str) -> dict[str, str]:
    """The language host's environment for the pack: its venv activated, the stack named, and nothing of
    this repository on PYTHONPATH, so that the pack imports its rules from the installed package only."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    bin_dir = Path(python).parent
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(bin_dir.parent),
               PULUMI_ORGANIZATION="organization", PULUMI_PROJECT=project, PULUMI_STACK=stack, PULUMI_DRY_RUN="true")
    return env


def _struct(props: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(props)
    return s


def _options(r: Registration) -> pb.AnalyzerResourceOptions:
    """What the engine sends for a resource without options: zero custom timeouts and its parent."""
    return pb.AnalyzerResourceOptions(customTimeouts=pb.AnalyzerResourceOptions.CustomTimeouts(),
                                      parent=r.parent or "")


def _diagnostics(response: pb.AnalyzeResponse, urn: str | None) -> list[dict[str, Any]]:
    """Diagnostics in the offline check's shape. pulumi_policy sends "<description>\\n<message>"; a
    resource policy's violation has no URN of its own and the engine puts it on the analyzed resource."""
    return [{"policy": d.policyName, "level": LEVELS[d.enforcementLevel], "urn": d.urn or urn,
             "message": d.message.removeprefix(d.description).removeprefix("\n")} for d in response.diagnostics]


@contextmanager
def sigint_handled() -> Iterator[None]:
    """The engine handles SIGINT itself (Go's signal.Notify), so a plugin it starts has SIGINT's default
    action even when the engine was started with SIGINT ignored, as a shell's `make test &` starts it. An
    ignored signal stays ignored across exec and a handled one does not: while a plugin starts, handle it."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if previous is signal.SIG_IGN:
            signal.signal(signal.SIGINT, previous)


class Pack:
    """A policy pack process, started and called as the engine does."""

    def __init__(self, pack_dir: Path, project: str, stack: str, python: str = sys.executable,
                 timeout: float = 60) -> None:
        pack_dir = pack_dir.resolve()
        self._stderr = tempfile.TemporaryFile()
        with sigint_handled():
            self.proc = subprocess.Popen([python, "-u", "-m", "pulumi.policy", "127.0.0.1:0", str(pack_dir)],
                                         cwd=pack_dir, env=pack_env(python, project, stack),
                                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr)
        try:
            self.channel = grpc.insecure_channel(f"127.0.0.1:{self._port(timeout)}")
            self.stub = analyzer_pb2_grpc.AnalyzerStub(self.channel)
            self._start(project, stack)
        except BaseException:
            self.stop()
            raise

    def _port(self, timeout: float) -> int:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline().decode().strip() if ready else ""
        if not line.isdigit():
            raise RuntimeError(f"the pack reported no port (read {line!r}):\n{self.stderr()}")
        return int(line)

    def _start(self, project: str, stack: str) -> None:
        """The engine's start-up calls: Handshake, ConfigureStack, then Configure with every policy's level."""
        try:
            self.stub.Handshake(pb.AnalyzerHandshakeRequest(engine_address="127.0.0.1:0"))
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.UNIMPLEMENTED:
                raise
        self.stub.ConfigureStack(pb.AnalyzerStackConfigureRequest(project=project, stack=stack,
                                                                  organization="organization", dry_run=True))
        request = pb.ConfigureAnalyzerRequest()
        for policy in self.info().policies:
            request.policyConfig[policy.name].enforcementLevel = policy.enforcementLevel
        self.stub.Configure(request)

    def info(self) -> pb.AnalyzerInfo:
        info: pb.AnalyzerInfo = self.stub.GetAnalyzerInfo(empty_pb2.Empty())
        return info

    def analyze(self, r: Registration) -> list[dict[str, Any]]:
        request = pb.AnalyzeRequest(type=r.type, urn=r.urn, name=r.name, properties=_struct(r.wire),
                                    options=_options(r))
        return _diagnostics(self.stub.Analyze(request), r.urn)

    def analyze_stack(self, regs: Sequence[Registration]) -> list[dict[str, Any]]:
        """AnalyzeStack with every registration, as the engine sends the stack, components and providers too."""
        resources = [pb.AnalyzerResource(type=r.type, urn=r.urn, name=r.name, properties=_struct(r.wire),
                                         options=_options(r), parent=r.parent or "", dependencies=r.dependencies)
                     for r in regs]
        return _diagnostics(self.stub.AnalyzeStack(pb.AnalyzeStackRequest(resources=resources)), None)

    def check(self, regs: Sequence[Registration]) -> list[dict[str, Any]]:
        """What a preview reports: Analyze for each resource, then AnalyzeStack."""
        return [d for r in regs for d in self.analyze(r)] + self.analyze_stack(regs)

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def stop(self, timeout: float = 10) -> int:
        """As the engine closes a plugin: interrupt it (the pack stops its server on KeyboardInterrupt), and
        kill it if it lingers. Returns its exit code."""
        if hasattr(self, "channel"):
            self.channel.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return self.proc.returncode
