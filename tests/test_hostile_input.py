"""A hostile or broken stack file ends in one `error:` line, not a traceback, a hang or gigabytes of memory:
each of these once did (an alias bomb ran 97 s and took 6.2 GB; deep nesting and a 100,000-digit integer ended
in tracebacks). The same bounds hold for the config the engine passes the program as JSON."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.input_limits import MAX_BYTES, parse_config

from .forked_cli import run_module

HEAD = "config:\n  gke-ai-batch:platform:\n    cluster: {name: x, project: p, region: us-central1}\n"


def alias_bomb(key: str) -> str:
    lines = [f"    {key}:", '      a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefghi", "bcdefghij", strict=True):
        lines.append(f"      {name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    return "\n".join(lines) + "\n"


HOSTILE = {
    "alias bomb in an unused key": (alias_bomb("unused"), ":6:14: YAML aliases (*name) are not read"),
    "alias bomb in labels": (alias_bomb("labels"), ":6:14: YAML aliases (*name) are not read"),
    "50,000 nested lists": ("    labels: " + "[" * 50_000 + "]" * 50_000 + "\n", "nested more than 32 levels"),
    "5,000 nested mappings": ("    labels: " + "{a: " * 5_000 + "1" + "}" * 5_000 + "\n", "nested more than 32 levels"),
    "a 100,000-digit integer": ("    labels: {a: " + "9" * 100_000 + "}\n", "an integer of 100,000 digits"),
    "a file over the size bound": ("    labels: {a: " + "b" * MAX_BYTES + "}\n", "MiB is read"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_stack_file_ends_in_one_error_line(name: str, tmp_path: Path) -> None:
    body, expected = HOSTILE[name]
    stack = tmp_path / "Pulumi.hostile.yaml"
    stack.write_text(HEAD + body)
    r = run_module("gke_ai_batch.offline", "plan", str(stack), "--out", str(tmp_path), timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("error: "), r.stderr[-2000:]
    assert expected in r.stderr


@pytest.mark.parametrize("text, expected", [
    ("[" * 50_000 + "]" * 50_000, "nested more than 32 levels"),
    (json.dumps({"labels": {"a": 1}}).replace("1", "[" * 40 + "]" * 40), "nested more than 32 levels"),
    ('{"labels": {"a": ' + "9" * 100_000 + "}}", "an integer of 100,000 digits"),
    ('"x' + "y" * MAX_BYTES + '"', "MiB is read"),
    ("teams: []", "should be a mapping of keys to values, not text"),
])
def test_the_programs_json_config_has_the_same_bounds(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_config(text)
    assert e.value.path == "platform" and expected in e.value.message


def test_a_real_config_is_far_inside_the_bounds() -> None:
    assert parse_config(json.dumps({"teams": [{"name": "a", "queue": {"quotas": {"f": {"cpu": {"nominal": 8}}}}}]}))
