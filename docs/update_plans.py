"""Rewrite the plan block of each docs/scenarios/<stack>.md from the stack's current plan.
Run after an intended change: `make docs` (then review the diff)."""
import re
from pathlib import Path

from gke_ai_batch.offline.engine.runtime import close_thread_loops, run_program
from gke_ai_batch.offline.engine.stackfile import resolve
from gke_ai_batch.offline.views.render import summary

for page in sorted((Path(__file__).parent / "scenarios").glob("*.md")):
    block = summary(run_program(resolve(page.stem)))
    page.write_text(re.sub(r"```text\n.*?\n```", lambda _, block=block: f"```text\n{block}\n```", page.read_text(),
                           flags=re.S))
    print(f"updated {page}")
close_thread_loops()
