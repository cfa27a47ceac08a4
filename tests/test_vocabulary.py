"""The vocabulary is the only spelling of the capacity modes: a mode spelt as a string elsewhere drifts from
it unseen (the code had about 36 such literals and two more copies of the capacity enum)."""
from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

from gke_ai_batch.vocabulary import Capacity

from .conftest import ROOT

# "spot" and "reservation" are also field names (nodeConfig.spot, a pool's `reservation`), so only the modes
# that are nothing else are looked for.
MODES = {Capacity.FLEX_START, Capacity.QUEUED, Capacity.ON_DEMAND}


def string_literals(path: Path) -> list[tuple[int, str]]:
    found = []
    for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if token.type == tokenize.STRING and not token.string.lstrip("rbuRBU").startswith(("f", "F")):
            value = ast.literal_eval(token.string)
            if isinstance(value, str):
                found.append((token.start[0], value))
    return found


def test_capacity_modes_are_spelt_only_in_the_vocabulary():
    sources = [p for d in ("gke_ai_batch", "components", "policies") for p in (ROOT / d).rglob("*.py")]
    assert len(sources) > 50
    spelt = [f"{p.relative_to(ROOT)}:{line}: {value!r}" for p in [*sources, ROOT / "__main__.py"]
             if p.name != "vocabulary.py" for line, value in string_literals(p) if value in MODES]
    assert spelt == []


def test_the_check_finds_a_mode_spelt_as_a_string(tmp_path):
    source = tmp_path / "drifted.py"
    source.write_text('FLEX = "flex-start"\nNOTE = f"{FLEX} pools"\n')
    assert [v for _, v in string_literals(source) if v in MODES] == ["flex-start"]


def test_every_name_of_the_vocabulary_is_used():
    """A name defined once and read nowhere (`KUEUE_CONFIG_API` was) says a fact the code does not follow."""
    import re
    source = (ROOT / "gke_ai_batch" / "vocabulary.py").read_text()
    body = ast.parse(source).body
    names = [t.id for n in body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)]
    names += [n.target.id for n in body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
    names += [n.name for n in body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    readers = [p for folder in ("gke_ai_batch", "components", "policies") for p in (ROOT / folder).rglob("*.py")
               if p.name != "vocabulary.py"]
    text = "\n".join(p.read_text() for p in [*readers, ROOT / "__main__.py"])
    unused = [n for n in names if not re.search(rf"\b{n}\b", text) and len(re.findall(rf"\b{n}\b", source)) == 1]
    assert unused == []
