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

from gke_ai_batch.model.input_limits import MAX_DEPTH, MAX_DIGITS, TOO_DEEP, too_large, too_long
from gke_ai_batch.model.words import closest, describe, shorten


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
        """The engine's config map: plain strings, structured values as the JSON the engine hands the program.
        The CLI keeps a structured value as a Go map (sdk/go/common/resource/config/object.go `unmarshalObject`,
        non-string keys written with %v) and writes it with encoding/json (`MarshalString`, and `marshalText`
        in plaintext.go once decrypted), which sorts every mapping's keys: under `pulumi up` the program never
        sees the file's order, so the offline plan must not either."""
        return {k: v if isinstance(v, str) else engine_json(v) for k, v in self.config.items()}


def engine_json(value: Any) -> str:
    """`value` as encoding/json writes the CLI's config object: compact, UTF-8 unescaped, each mapping's keys
    as strings (json's own conversion, which is Go's %v for the keys YAML gives) sorted by their UTF-8 bytes,
    which is code point order."""
    keyed = json.loads(json.dumps(value))
    return json.dumps(keyed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_LIBYAML: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser where PyYAML has it
# libyaml 0.2.6 (in PyYAML 6.0.4's wheels) bounds nesting itself, at 1,000 levels, and meets the bound first in
# flow collections (`[[[...`), whose tokens its scanner reads ahead of the events checked here.
LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"
ALIASES = "YAML aliases (*name) are not read in a stack file: write the value out (a few aliases can expand to " \
          "billions of values)"


def _refuse_aliases_and_depth(text: str) -> None:
    """Walk the parser's events, without recursion and before anything is built from them: an alias, or a
    value nested deeper than model.input_limits.MAX_DEPTH, is refused at its line and column."""
    depth = 0
    for event in yaml.parse(text, Loader=_LIBYAML):
        if isinstance(event, yaml.AliasEvent):
            raise yaml.MarkedYAMLError(None, None, ALIASES, event.start_mark)  # type: ignore[arg-type]
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise yaml.MarkedYAMLError(None, None, TOO_DEEP, event.start_mark)  # type: ignore[arg-type]
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1


class _StackLoader(_LIBYAML):  # type: ignore[misc]  # a loader class chosen at import
    """YAML as a stack file may hold it, once _refuse_aliases_and_depth has passed it: unique keys (PyYAML
    keeps the last silently, and a second `teams:` dropped every team) and integers within
    model.input_limits.MAX_DIGITS digits."""

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        digits = str(node.value).replace("_", "")
        if len(digits.lstrip("+-")) > MAX_DIGITS:
            raise yaml.MarkedYAMLError(None, None, too_long(digits), node.start_mark)
        return int(super().construct_yaml_int(node))

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.MarkedYAMLError("while reading a mapping", node.start_mark,
                                           f"duplicate key {key!r}: YAML keys must be unique (the second "
                                           "would silently replace the first)", key_node.start_mark)
            seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep)
        return mapping


_StackLoader.add_constructor("tag:yaml.org,2002:int", _StackLoader.construct_yaml_int)

STACK_FILE_KEYS = ("config", "environment", "secretsprovider", "encryptedkey", "encryptionsalt")


def read_stack_file(path: Path) -> dict[str, Any]:
    """The stack file's `config:` mapping; SystemExit with the file, line and column for bad YAML,
    and in words for a file that is not a stack file."""
    if problem := too_large(path.stat().st_size):
        raise SystemExit(f"{path}: {problem}")
    try:
        text = path.read_text(encoding="utf-8")
        _refuse_aliases_and_depth(text)
        doc = yaml.load(text, Loader=_StackLoader)  # noqa: S506  # a SafeLoader
    except UnicodeDecodeError:
        raise SystemExit(f"{path}: not a text file (a stack file is UTF-8 YAML)") from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = TOO_DEEP if e.problem == LIBYAML_TOO_DEEP else e.problem or e.context
        raise SystemExit(f"{where}: {problem}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise SystemExit(f"{path}: a stack file is a mapping with a `config:` key, not {describe(doc)}")
    for key in doc:
        if key not in STACK_FILE_KEYS:
            guess = closest(str(key), STACK_FILE_KEYS)
            hint = f"did you mean `{guess}`?" if guess else f"stack files have {', '.join(STACK_FILE_KEYS)}"
            raise SystemExit(f"{path}: unknown top-level key `{shorten(str(key))}`; {hint}")
    config = doc.get("config") or {}
    if not isinstance(config, dict):
        raise SystemExit(f"{path}: `config:` should be a mapping of `namespace:key: value` lines, "
                         f"not {describe(config)}")
    return config


def resolve(stack: str) -> StackFile:
    """A stack name of the project, or a path to a Pulumi.<stack>.yaml anywhere. In a project without stack
    files, a stack has no config, as under the pulumi CLI, so a program that reads none plans; where the
    project has stack files, a name without one is refused, so that a misspelt `prd` is not planned empty."""
    path = stack_path(stack)
    if path.exists():
        return StackFile(name=stack_name(stack), path=path, config=read_stack_file(path))
    stacks = project().stacks()
    if Path(stack).suffix in (".yaml", ".yml") or stacks:
        raise SystemExit(f"no stack {stack!r}: give a name from {project().stack_dir} "
                         f"({', '.join(stacks) or 'none'}) or a path to a Pulumi.<stack>.yaml file")
    return StackFile(name=stack_name(stack), path=path, config={})


def stack_path(stack: str) -> Path:
    path = Path(stack)
    return path if path.suffix in (".yaml", ".yml") and path.exists() else project().stack_dir / f"Pulumi.{stack}.yaml"


def stack_name(stack: str) -> str:
    """The stack's name, from its name or its file's (known before the file is read)."""
    return stack_path(stack).name.removeprefix("Pulumi.").rsplit(".", 1)[0]
