"""A pytest plugin that records the corpus the tests judge: every object (and old object, for an update) a test
hands to `TenantPath.judge`, the call `make admit` makes, with the test that made it.

Loaded by gke_ai_batch.sandbox.e2e_corpus (`pytest -p gke_ai_batch.sandbox.e2e_harvest`): the tests keep their
manifests where they are (built by their helpers, next to the verdicts they expect) and the e2e runner plays the
same objects on a real API server, so neither copy goes stale. Only calls on a stack's own plan are kept: many
tests judge on a variant (a team without groups, Kueue's elastic gate on, a policy left out), which the deployed
stack is not: each call is written with the fingerprint of the plan it was judged on, one JSON object a line, to
E2E_HARVEST_OUT at the session's end, and the runner keeps those on its stack's.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
from typing import Any

from gke_ai_batch.apiserver.tenant_path import CLUSTER_SCOPED, TenantPath

OUT = "E2E_HARVEST_OUT"
_calls: list[tuple[TenantPath, str, dict[str, Any], dict[str, Any] | None, bool]] = []
_original = TenantPath.judge


def fingerprint(path: TenantPath) -> str:
    """What a path judges with: its namespaces, policies, quotas, RoleBindings and Kueue's view (its objects
    of the cluster-scoped kinds and LocalQueues: admission.cluster indexes the others by name alone, where namesakes
    in two namespaces leave whichever came last, in an order that varies from one process to the next). Two paths
    with the same fingerprint give the same verdicts."""
    indexed = {kind: objects for kind, objects in path.cluster.objects.items()
               if kind in CLUSTER_SCOPED or kind == "LocalQueue"}  # by name alone, another kind's namesakes collide
    own = {k: v for k, v in vars(path).items() if k not in ("access", "cluster")}  # its objects by kind
    parts = [own, path.access.teams, path.access._bindings, path.cluster.config, indexed]
    return hashlib.sha256(_canonical(parts).encode()).hexdigest()


def _canonical(value: Any) -> str:
    """JSON with every list sorted: a plan lists some items in the order of a Python set, which differs from one
    process to the next (string hashing is salted per process)."""
    if isinstance(value, dict):
        pairs = sorted((str(k), v) for k, v in value.items())
        return "{" + ",".join(f"{json.dumps(k)}:{_canonical(v)}" for k, v in pairs) + "}"
    if isinstance(value, list | tuple | set | frozenset):
        return "[" + ",".join(sorted(_canonical(v) for v in value)) + "]"
    return json.dumps(value, default=str)


def _recording(self: TenantPath, obj: Any, old: Any = None, objects: Any = None, scale: bool = False) -> Any:
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
    _calls.append((self, test, copy.deepcopy(obj), copy.deepcopy(old), scale))
    return _original(self, obj, old, objects, scale)


def pytest_configure(config: Any) -> None:
    TenantPath.judge = _recording  # type: ignore[method-assign]  # the recorder stands in for the whole run


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    prints: dict[int, str] = {}
    with open(os.environ[OUT], "w") as f:
        for path, test, obj, old, scale in _calls:
            key = prints.setdefault(id(path), fingerprint(path))
            f.write(json.dumps({"plan": key, "test": test, "obj": obj, "old": old, "scale": scale}) + "\n")
