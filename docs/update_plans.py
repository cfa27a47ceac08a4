"""Rewrite the plan block of each docs/scenarios/<stack>.md from the stack's current plan.
Run after an intended change: `make docs` (then review the diff)."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from offline.render import summary  # noqa: E402
from offline.runtime import close_thread_loops, run_program  # noqa: E402
from offline.stackfile import resolve  # noqa: E402

for page in sorted((Path(__file__).parent / "scenarios").glob("*.md")):
    block = summary(run_program(resolve(page.stem)))
    page.write_text(re.sub(r"```text\n.*?\n```", lambda _: f"```text\n{block}\n```", page.read_text(), flags=re.S))
    print(f"updated {page}")
close_thread_loops()
