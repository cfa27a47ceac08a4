"""Find and read a stack's config file (stacks/Pulumi.<stack>.yaml, or any path to one)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PROJECT = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["name"]


@dataclass(frozen=True)
class StackFile:
    name: str
    path: Path
    config: dict  # "namespace:key" -> value, as in the file

    def pulumi_config(self) -> dict[str, str]:
        """The engine's config map: plain strings, structured values as JSON."""
        return {k: v if isinstance(v, str) else json.dumps(v) for k, v in self.config.items()}


def resolve(stack: str) -> StackFile:
    """A stack name in stacks/, or a path to a Pulumi.<stack>.yaml anywhere."""
    path = Path(stack)
    if not (path.suffix in (".yaml", ".yml") and path.exists()):
        path = ROOT / "stacks" / f"Pulumi.{stack}.yaml"
    if not path.exists():
        known = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
        raise SystemExit(f"no stack {stack!r}: give a name from stacks/ ({', '.join(known)}) "
                         "or a path to a Pulumi.<stack>.yaml file")
    name = path.name.removeprefix("Pulumi.").rsplit(".", 1)[0]
    doc = yaml.safe_load(path.read_text()) or {}
    return StackFile(name=name, path=path, config=doc.get("config") or {})
