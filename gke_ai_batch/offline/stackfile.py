"""Find the Pulumi project and read a stack's config file (Pulumi.<stack>.yaml in the project's
stack folder, or any path to one). Like the pulumi CLI, the offline tools plan the project of
the current folder or the nearest folder above it with a Pulumi.yaml."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class Project:
    root: Path
    name: str
    stack_dir: Path

    def stacks(self) -> list[str]:
        return sorted(p.name[len("Pulumi."):-len(".yaml")] for p in self.stack_dir.glob("Pulumi.*.yaml"))


@cache
def project(start: Path | None = None) -> Project:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "Pulumi.yaml").is_file():
            doc = yaml.safe_load((folder / "Pulumi.yaml").read_text()) or {}
            return Project(folder, doc["name"], folder / doc.get("stackConfigDir", "."))
    raise SystemExit(f"no Pulumi.yaml in {here} or above: run the offline tools inside a Pulumi project")


@dataclass(frozen=True)
class StackFile:
    name: str
    path: Path
    config: dict[str, Any]  # "namespace:key" -> value, as in the file

    def pulumi_config(self) -> dict[str, str]:
        """The engine's config map: plain strings, structured values as JSON."""
        return {k: v if isinstance(v, str) else json.dumps(v) for k, v in self.config.items()}


def resolve(stack: str) -> StackFile:
    """A stack name of the project, or a path to a Pulumi.<stack>.yaml anywhere."""
    path = Path(stack)
    if not (path.suffix in (".yaml", ".yml") and path.exists()):
        path = project().stack_dir / f"Pulumi.{stack}.yaml"
    if not path.exists():
        raise SystemExit(f"no stack {stack!r}: give a name from {project().stack_dir} "
                         f"({', '.join(project().stacks())}) or a path to a Pulumi.<stack>.yaml file")
    name = path.name.removeprefix("Pulumi.").rsplit(".", 1)[0]
    doc = yaml.safe_load(path.read_text()) or {}
    return StackFile(name=name, path=path, config=doc.get("config") or {})
