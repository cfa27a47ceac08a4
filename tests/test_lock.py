"""CI's previews install requirements.lock with --require-hashes: it must pin, with hashes, a version of every
dependency of pyproject.toml within its range (`make lock` rewrites it), and setuptools for the package's
own build without isolation."""
from __future__ import annotations

import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from .conftest import ROOT


def locked() -> dict[str, tuple[str, int]]:
    """name -> (version, number of hashes)."""
    text = (ROOT / "requirements.lock").read_text()
    out = {}
    for m in re.finditer(r"^([A-Za-z0-9._-]+)==(\S+) \\\n((?:\s+--hash=sha256:[0-9a-f]{64}[ \\]*\n)+)", text, re.M):
        out[canonicalize_name(m.group(1))] = (m.group(2), m.group(3).count("--hash="))
    return out


def test_the_lock_pins_every_requirement_within_its_range_with_hashes():
    pins = locked()
    wanted = [Requirement(d) for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]]
    assert len(wanted) >= 7 and "setuptools" in pins
    for req in wanted:
        version, hashes = pins[canonicalize_name(req.name)]
        assert req.specifier.contains(version) and hashes >= 1, (req, version)
