"""Golden plans: every example stack's resources and manifests, reviewed like code.
After an intended change: `make golden`, then read the diff of tests/golden/."""
import json
import os
from pathlib import Path

import pytest

from gke_ai_batch.offline.views.render import is_manifest, manifest_of

from .conftest import STACKS

GOLDEN = Path(__file__).parent / "golden"


def snapshot(regs) -> dict:
    """Sorted, with the mock ids and registration order dropped; parents as type::name."""
    def short(urn):
        return urn and urn.split("::", 2)[2]
    resources = sorted(({"type": r.type, "name": r.name, "parent": short(r.parent), "inputs": r.inputs,
                         "dependencies": sorted(short(d) for d in r.dependencies),
                         **({"options": r.options} if r.options else {})} for r in regs),
                       key=lambda r: (r["type"], r["name"]))
    manifests = sorted((manifest_of(r) for r in regs if is_manifest(r)),
                       key=lambda m: (m["kind"], m["metadata"].get("namespace", ""), m["metadata"]["name"]))
    return {"resources": resources, "manifests": manifests}


@pytest.mark.parametrize("stack", STACKS)
def test_golden_plan(plan, stack):
    path = GOLDEN / f"{stack}.json"
    current = json.dumps(snapshot(plan(stack)), indent=1, sort_keys=True) + "\n"
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(current)
    assert path.exists(), f"no golden plan for {stack}: run `make golden` and review tests/golden/{stack}.json"
    assert current == path.read_text(), f"plan of {stack} changed: run `make golden` and review the diff"
