"""Garbage-collector settings for the offline tools' one-shot, allocation-heavy runs."""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def long_lived_heap() -> Iterator[None]:
    """Nearly everything a plan or a check allocates lives until it ends, and the collector rescans
    those survivors again and again: with its default thresholds, time per resource grew by half from
    100 to 1,000 teams, and the check's by two and a half times. A run is short and one-shot, so the
    cyclic collector pauses for it (reference counting still frees what dies) and catches up once at
    the end; peak memory at 1,000 teams stays about half a gigabyte (`make bench`)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
