"""The package's CLIs run as `python -m` runs them, in a child forked from this test worker instead of in a new
interpreter. A new interpreter spends about 1.3 s of CPU importing the package, the Pulumi SDK and its providers,
most of what a run that refuses a stack file costs; the worker has imported them already. The child is still a
process of its own: its exit code, its stdout and stderr and its working directory are its own, and nothing it
changes reaches the worker. Only the thread that forks lives on in the child, so it gets an event loop of its own,
whose executor starts its threads anew, and it leaves the worker's event loops alone: an epoll instance is shared
across a fork, so closing a loop in the child would stop the worker's loop from waking.

Runs whose code comes from another tree (`make diff` in a copy of the repository, a program of a user's own in
test_reuse) keep their own interpreter, as do the runs that show each CLI starting as a user starts it
(test_admission's `..._runs_as_a_module`, and the getting-started page's `make plan`, `make check` and `make
admit` in test_getting_started)."""
from __future__ import annotations

import asyncio
import os
import runpy
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from gke_ai_batch.offline.engine import runtime

from .conftest import ROOT


def run_module(module: str, *args: str, cwd: Path = ROOT, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`python -m MODULE ARGS` in cwd, as subprocess.run(..., capture_output=True, text=True) returns it."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(module, args, cwd, out.fileno(), err.fileno())
        code = _wait(pid, timeout, [module, *args])
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess([sys.executable, "-m", module, *args], code,
                                           out.read().decode(), err.read().decode())


def _wait(pid: int, timeout: float, cmd: list[str]) -> int:
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise subprocess.TimeoutExpired(cmd, timeout)
        time.sleep(0.01)


def _child(module: str, args: tuple[str, ...], cwd: Path, out: int, err: int) -> None:
    """Run the module as __main__ the way the interpreter would, and exit with its code: never returns."""
    code = 1
    try:
        os.chdir(cwd)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 (the child exits without closing anything)
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        sys.argv = [module, *args]
        # the worker's event loop hands the SDK's calls to executor threads, which a forked child does not have
        asyncio.set_event_loop(asyncio.new_event_loop())
        # and the worker's loops share their epoll instances with the child: closing one here (the CLI closes the
        # loops it planned with, runtime.close_thread_loops) would unregister the worker's own wake-up pipe
        runtime._THREAD_LOOPS.clear()
        for name in (module, f"{module}.__main__"):  # runpy warns when the module it runs was imported before
            sys.modules.pop(name, None)
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as e:
        code = _exit_code(e.code)
    except BaseException:  # noqa: BLE001 (printed as the interpreter prints it, and the exit code is 1)
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def _exit_code(code: object) -> int:
    """SystemExit's code as the interpreter turns it into an exit status."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
