"""docs/gke-rules.md from the GKE rules table (gke_ai_batch.model.gke_rules): `make docs` writes it, and
tests/test_docs.py fails when the page and the table differ."""
from __future__ import annotations

from pathlib import Path

from gke_ai_batch.model.gke_rules import RULES

PAGE = Path(__file__).resolve().parent / "gke-rules.md"
WHERE = {"cluster": "platform.{field}", "node pool": "tpu_pools[i] / gpu_pools[i] / system_pool: {field}",
         "node pools": "the pool where the total crosses the limit",
         "network": "platform.network.nodes_cidr / pods_cidr / services_cidr",
         "compute class": "compute_classes[i]: {field}", "pathways": "platform.teams[i].{field}",
         "sub-slicing": "platform.{field}"}


def render() -> str:
    lines = [
        "# GKE rules",
        "",
        "What GKE requires of every setting the platform sends it. Generated from `gke_ai_batch/model/gke_rules.py`",
        "by `make docs`; do not edit by hand. The planner stops at the first broken rule with the config",
        "path below; the policy pack's `gke-rules` policy runs the same rules over any program's resources (but",
        "the Pathways rules, which judge team blocks, and the sub-slicing rule, which judges the pools' `sub_slicing`,",
        "not resources).",
        "",
        "| rule | applies to | config path | requirement | source |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in RULES:
        where = WHERE[r.subject].format(field=r.field.removeprefix("platform.") if r.field else "")
        if r.subject in ("compute class", "pathways") and r.field.startswith("platform."):
            where = r.field  # a class's or a Pathways team's rule about a platform setting
        lines.append(f"| `{r.id}` | {r.subject} | `{where}` | {r.requirement} | [{r.source.title}]({r.source.url}) |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    PAGE.write_text(render())
    print(f"updated {PAGE}")
