"""The CI workflow's drift check: on a schedule, every stack previewed against its real resources."""
from pathlib import Path

import yaml

WORKFLOW = Path(__file__).resolve().parent.parent / ".github/workflows/platform.yml"


def test_every_stack_is_checked_for_drift_on_a_schedule_read_only():
    doc = yaml.safe_load(WORKFLOW.read_text())
    assert doc[True]["schedule"]  # `on:` reads as True in YAML 1.1
    jobs = doc["jobs"]
    drift = jobs["drift"]
    assert drift["if"] == "github.event_name == 'schedule'"
    assert drift["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.names) }}"
    preview = next(s for s in drift["steps"] if s.get("uses", "").startswith("pulumi/actions@"))
    assert preview["with"]["command"] == "preview"
    assert preview["with"]["refresh"] is True and preview["with"]["expect-no-changes"] is True
    assert "policyPacks" not in preview["with"]  # a read: no policy gate, nothing changes
    assert drift["environment"] == "${{ matrix.stack }}-drift"  # no reviewer, a read-only identity
    assert jobs["preview"]["if"] == "github.event_name == 'push'"  # the deploy identity is not used nightly
    assert jobs["offline"]["if"] == "github.event_name != 'schedule'"
