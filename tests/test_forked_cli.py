"""tests/forked_cli.py runs the package's CLIs in a child forked from the test worker: the child must answer as a
new interpreter answers, and leave the worker able to plan (issue 49: the suite's time)."""
from __future__ import annotations

import asyncio
import signal
import subprocess
import sys

import pytest

from gke_ai_batch.offline.engine import runtime

from .conftest import ROOT, platform_of, run_config_afresh
from .forked_cli import run_module


@pytest.mark.parametrize("args", [("plan", "no-such-stack"), ("plan", "dev", "--no-such-flag")])
def test_a_forked_run_answers_as_a_new_interpreter_does(args):
    forked = run_module("gke_ai_batch.offline", *args)
    new = subprocess.run([sys.executable, "-m", "gke_ai_batch.offline", *args], cwd=ROOT, capture_output=True,
                         text=True)
    assert (forked.returncode, forked.stdout, forked.stderr) == (new.returncode, new.stdout, new.stderr)
    assert forked.returncode == 2 and forked.stderr


def test_the_worker_plans_after_a_forked_run_closed_its_loops(tmp_path):
    """The CLI closes the event loops it planned with (runtime.close_thread_loops). Inherited from the worker,
    a loop shares its epoll instance with the worker's: closed in the child, the worker's loop would never wake."""
    loop = asyncio.get_event_loop()
    runtime._THREAD_LOOPS.add(loop)  # as when the worker's own thread recorded a registration
    try:
        assert run_module("gke_ai_batch.offline", "plan", "dev", "--out", str(tmp_path)).returncode == 0

        def stuck(*_):
            raise TimeoutError("the worker's event loop no longer wakes")
        previous = signal.signal(signal.SIGALRM, stuck)
        signal.alarm(60)
        try:
            assert run_config_afresh(platform_of("dev"), "dev")
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
    finally:
        runtime._THREAD_LOOPS.discard(loop)
