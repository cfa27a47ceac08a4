"""The offline runtime answers registrations while the program is still declaring.

A Pulumi program's body is synchronous: each resource it declares queues its registration as a task, and
the event loop starts on them only when the body returns. Until answered, a registration holds its task,
its Output futures and its serialized inputs (about 27 KB a resource), so a plan held every resource's at
once: 2.09 GB at 5,000 teams. The SDK calls one hook as it registers each resource
(pulumi/runtime/resource.py `_get_stack_trace`, which also reads the whole Python stack for the engine's
diagnostics, something nothing offline reads). Offline that hook gives the loop one pass instead, as the
SDK's own synchronous invokes do (pulumi/runtime/sync_await.py `_sync_await`): what was declared before
moves on, and what is answered lets go. The same 5,000-team plan peaks at 1.31 GB and runs faster.

Only the program body's own task pumps: a resource declared in an apply callback, which runs inside a
pass, or after the body, does not, so passes never nest."""
from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pulumi.runtime import resource
from pulumi.runtime.proto import source_pb2


class Answering:
    """The hook that stands in for `_get_stack_trace` during one program run."""

    def __init__(self) -> None:
        self.body: asyncio.Task[Any] | None = None  # the task running the program body, while it runs
        self.pending_after_body: int | None = None  # the ready handles the loop's own pass still expects

    def __call__(self) -> source_pb2.StackTrace:
        loop = asyncio.get_event_loop()
        body = self.body
        if body is not None and asyncio.current_task(loop) is body:
            self._pass(loop, body)
        return source_pb2.StackTrace()

    def _pass(self, loop: asyncio.AbstractEventLoop, body: asyncio.Task[Any]) -> None:
        """One pass of the loop, entered as `_sync_await` enters it. The body runs as one callback of the
        loop's own pass, which will take as many ready handles as it saw when it began; that many stay on
        the ready list (cancelled ones where this pass took them), counted once, at the body's first
        resource, so the list does not grow with every pass as `_sync_await`'s recount would make it."""
        ready = loop._ready  # type: ignore[attr-defined]  # the loop's ready list, as in _sync_await
        if self.pending_after_body is None:
            self.pending_after_body = len(ready)
        asyncio.tasks._leave_task(loop, body)  # as in _sync_await
        try:
            if not ready:  # a pass with nothing ready would wait for the executor's next answer
                ready.append(_skipped(loop))
            loop._run_once()  # type: ignore[attr-defined]
        finally:
            while len(ready) < self.pending_after_body:
                ready.append(_skipped(loop))
            asyncio.tasks._enter_task(loop, body)


def _skipped(loop: asyncio.AbstractEventLoop) -> asyncio.Handle:
    handle = asyncio.Handle(lambda: None, [], loop)
    handle.cancel()
    return handle


@contextmanager
def answering_as_declared(program: Callable[[], Any]) -> Iterator[Callable[[], Any]]:
    """The hook in place for one run, and the program wrapped so that its body, and only it, pumps."""
    hook = Answering()

    def body() -> Any:
        hook.body = asyncio.current_task()
        try:
            return program()
        finally:
            hook.body = None

    original = resource._get_stack_trace
    resource._get_stack_trace = hook
    try:
        yield body
    finally:
        resource._get_stack_trace = original
