"""The real engine on day two: after a change to a deployed stack's Kubernetes layer, `pulumi preview --diff` (the
real CLI and pulumi-resource-kubernetes, gke_ai_batch.sandbox.deploy) held to `make diff`'s lines for the same
resources. Each disagreement is one line; the e2e runner counts them.

`make diff` compares git refs; here both sides are stack configs, so each is planned offline on its own (the same
`python -m gke_ai_batch.offline plan` a side of `make diff` runs) and the two plans go through `make diff`'s own
comparison (gke_ai_batch.offline.diff.compare): its operation per resource (create, update, replace, delete) and
its changed input paths. The engine's are its step per resource and its detailed diff's paths. Paths are
compared with list positions and map keys left out (`make diff` names a flavor `flavors[name="x"]`, the engine
`flavors[1]`; a list of plain values is one path for `make diff`, one per item for the engine).
"""
from __future__ import annotations

import copy
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gke_ai_batch.model.config import CONFIG_KEY
from gke_ai_batch.model.kubernetes_only import KUBERNETES_ONLY_KEY
from gke_ai_batch.offline.changes.inputs import DIGEST_KEY
from gke_ai_batch.offline.diff import SAME, Step, compare
from gke_ai_batch.offline.engine.stackfile import project

from . import deploy
from .errors import SandboxError

Config = dict[str, Any]  # a stack file's config: "namespace:key" -> value
NOT_PATHS = ("order:", "dependencies:", "parent:", "provider:", "kubeconfig: [secret]")  # make diff's other lines
BIGGER_SLICE = {"2x4": "4x4", "4x4": "4x8", "2x2x2": "2x2x4", "4x4x4": "4x4x8"}  # a topology GKE offers, larger


@dataclass(frozen=True)
class Scenario:
    """A change to a deployed stack's config, as a user would make it in the stack file."""
    name: str
    change: Callable[[Config, Path], Config]  # (config, a folder for new files) -> the changed config


def _platform(config: Config) -> dict[str, Any]:
    return config[f"{project().name}:{CONFIG_KEY}"]  # type: ignore[no-any-return]  # the stack file's mapping


def team_added(config: Config, _: Path) -> Config:
    """A new team with a queue of its own in the first team's cohort, guaranteed nothing on its first flavor."""
    first = _platform(config)["teams"][0].get("queue") or {}
    flavor, resources = next(iter((first.get("quotas") or {}).items()))
    queue = {**({"cohort": first["cohort"]} if first.get("cohort") else {}),
             "quotas": {flavor: {next(iter(resources)): {"nominal": 0}}}}
    _platform(config)["teams"].append({"name": "e2e-added", "groups": ["e2e-added@acme.example"], "queue": queue})
    return config


def quota_changed(config: Config, _: Path) -> Config:
    """The first team's first plain quota (a nominal only, no borrowing or lending limit) halved."""
    quotas = _platform(config)["teams"][0]["queue"]["quotas"]
    flavor, resource, nominal = next((f, r, q.get("nominal", q) if isinstance(q, dict) else q)
                                     for f, resources in quotas.items() for r, q in resources.items()
                                     if not isinstance(q, dict) or set(q) == {"nominal"})
    quotas[flavor][resource] = max(int(nominal) // 2, 1)
    return config


def topology_changed(config: Config, _: Path) -> Config:
    """The first TPU pool's slice made larger: its flavor's topology label and the quotas' capacity move."""
    pool = next(p for p in _platform(config).get("tpu_pools") or [] if p.get("topology") in BIGGER_SLICE)
    pool["topology"] = BIGGER_SLICE[pool["topology"]]
    return config


def endpoint_changed(config: Config, folder: Path) -> Config:
    """The kubeconfig now reaches another API server (a copy of it with another port)."""
    key = f"{project().name}:{KUBERNETES_ONLY_KEY}"
    doc = yaml.safe_load(Path(config[key]["kubeconfig"]).read_text())
    for cluster in doc.get("clusters") or []:
        cluster["cluster"]["server"] = re.sub(r":(\d+)$", lambda m: f":{int(m.group(1)) + 1}",
                                              cluster["cluster"]["server"])
    moved = folder / "moved.kubeconfig"
    moved.write_text(yaml.safe_dump(doc, sort_keys=False))
    config[key] = {**config[key], "kubeconfig": str(moved)}
    return config


SCENARIOS = (Scenario("a team added", team_added), Scenario("a quota changed", quota_changed),
             Scenario("a flavor's topology changed", topology_changed),
             Scenario("the provider's endpoint changed", endpoint_changed))


@dataclass
class Offline:
    """`make diff`'s side: the deployed config's offline plan, made once, and the key both sides' secrets are
    digested with (as `make diff` does, one per run)."""
    stack: str
    before: list[dict[str, Any]]
    key: str

    @classmethod
    def of(cls, stack: str, before: Config, folder: Path) -> Offline:
        key = secrets.token_hex(32)
        return cls(stack, _plan(stack, before, folder / "deployed", key), key)

    def steps(self, after: Config, folder: Path) -> list[Step]:
        """`make diff`'s steps from the deployed config to `after`."""
        return [s for s in compare(self.before, _plan(self.stack, after, folder, self.key)).steps if s[0] != SAME]


def _plan(stack: str, config: Config, folder: Path, key: str) -> list[dict[str, Any]]:
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / f"Pulumi.{stack}.yaml"
    file.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    done = subprocess.run([sys.executable, "-m", "gke_ai_batch.offline", "plan", str(file), "--out",
                           str(folder / "out")], cwd=project().root, capture_output=True, text=True, check=False,
                          env={**os.environ, DIGEST_KEY: key})
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise SandboxError(f"stack {stack}: the offline plan of a changed config failed: {last}")
    return json.loads((folder / "out" / "resources.json").read_text())  # type: ignore[no-any-return]  # a list of resources


def shape(path: str) -> str:
    """A path without list positions and map keys, and without a trailing list: `spec.flavors[].resources`."""
    return re.sub(r"(\[\])+$", "", re.sub(r"\[[^\]]*\]", "[]", path))


def offline_paths(lines: list[str]) -> set[str]:
    """The changed input paths of a `make diff` step (its `path: old -> new` lines)."""
    return {shape(ln.split(": ", 1)[0]) for ln in lines if " -> " in ln and not ln.startswith(NOT_PATHS)}


def disagreements(scenario: str, offline: list[Step], engine: list[deploy.Change]) -> tuple[int, list[str]]:
    """How many resources either side changes, and one line per resource where the engine's operation or changed
    paths differ from `make diff`'s."""
    ours = {r["urn"]: (op, offline_paths(lines)) for op, r, lines in offline}
    theirs = {c.urn: (c.op, {shape(p) for p in c.paths or c.keys}) for c in engine if c.op != SAME}
    out = []
    for urn in sorted(ours.keys() | theirs.keys()):
        (op, paths), (real, real_paths) = ours.get(urn, (SAME, set())), theirs.get(urn, (SAME, set()))
        name = urn.rsplit("::", 1)[-1]
        if op != real:
            out.append(f"{scenario}: {name}: make diff says {op}, pulumi preview says {real}")
        elif op == "update" and paths != real_paths:
            out.append(f"{scenario}: {name}: make diff changes {_listed(paths - real_paths)} that pulumi preview "
                       f"does not, pulumi preview {_listed(real_paths - paths)} that make diff does not")
    return len(ours.keys() | theirs.keys()), out


def _listed(paths: set[str]) -> str:
    return ", ".join(sorted(paths)) or "nothing"


def compare_scenario(scenario: Scenario, offline: Offline, sandbox_dir: Path, kubeconfig: Path,
                     bin_dir: Path) -> tuple[int, list[str]]:
    """One change to the deployed stack (deploy.deploy ran first): the resources compared and the disagreements
    between `make diff`'s steps and the real preview's."""
    before = deploy.stack_config(offline.stack, kubeconfig)
    with tempfile.TemporaryDirectory(prefix="engine-compare-", dir=sandbox_dir) as name:
        after = scenario.change(copy.deepcopy(before), Path(name))
        steps = offline.steps(after, Path(name))
        engine = deploy.preview_diff(offline.stack, sandbox_dir, kubeconfig, bin_dir, config=after)
    return disagreements(scenario.name, steps, engine)


def compare_all(stack: str, sandbox_dir: Path, kubeconfig: Path, bin_dir: Path) -> tuple[int, list[str]]:
    """Every scenario on the deployed stack: the resource verdicts compared, and the disagreements."""
    with tempfile.TemporaryDirectory(prefix="engine-compare-", dir=sandbox_dir) as name:
        offline = Offline.of(stack, deploy.stack_config(stack, kubeconfig), Path(name))
    results = [compare_scenario(s, offline, sandbox_dir, kubeconfig, bin_dir) for s in SCENARIOS]
    return sum(n for n, _ in results), [line for _, lines in results for line in lines]
