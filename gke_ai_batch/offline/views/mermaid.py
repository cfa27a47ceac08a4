"""out/<stack>/queues.mmd: the stack's own queueing objects as a Mermaid flowchart, teams -> LocalQueues
-> ClusterQueues -> cohorts and flavors -> node pools, so that a reviewer sees at a glance where a team's
jobs go and which nodes they may land on. Node ids are generated (names may hold characters, or be
words such as `end`, that Mermaid reads as syntax) and every label is quoted."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from gke_ai_batch.model.promises import show_amount
from gke_ai_batch.vocabulary import FIXED_CAPACITY

from .view import StackView

MAX_EDGES = 500  # Mermaid's default maxEdges: GitHub and most renderers draw no more
MAX_TEXT = 50_000  # Mermaid's default maxTextSize
# Shapes: team stadium, LocalQueue box, ClusterQueue subroutine, cohort hexagon, flavor parallelogram, pool cylinder.
SHAPES = {"team": ('(["', '"])'), "lq": ('["', '"]'), "cq": ('[["', '"]]'), "cohort": ('{{"', '"}}'),
          "flavor": ('[/"', '"/]'), "pool": ('[("', '")]')}
KIND_WORD = {"team": "team", "lq": "LocalQueue", "cq": "ClusterQueue", "cohort": "cohort", "flavor": "flavor",
             "pool": "pool"}


def quoted(text: str) -> str:
    """Text for inside a quoted Mermaid label: the characters that would end or break it as entity codes."""
    return text.replace("#", "#35;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


@dataclass
class Diagram:
    lines: list[str]
    edges: int

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def renderable(self) -> bool:
        """Within Mermaid's default limits, so a Markdown page can embed it."""
        return self.edges <= MAX_EDGES and len(self.text()) <= MAX_TEXT

    def markdown(self) -> list[str]:
        if not self.renderable():
            return [f"The diagram has {self.edges:,} edges, more than Mermaid draws by default ({MAX_EDGES}); "
                    "open queues.mmd with a raised maxEdges.", ""]
        return ["```mermaid", *self.lines, "```", ""]


@dataclass
class _Graph:
    """Nodes by (kind, name) with ids unique and safe, in the order they were first named."""

    nodes: dict[tuple[str, str], str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    edges: list[str] = field(default_factory=list)

    def node(self, kind: str, name: str, label: str | None = None) -> str:
        key = (kind, name)
        if key not in self.nodes:
            base = f"{kind}_{re.sub(r'[^A-Za-z0-9]', '_', name)}"
            n, nid = 1, base
            while nid in self.used:  # names that differ only in punctuation (a.b, a-b)
                n += 1
                nid = f"{base}_{n}"
            self.nodes[key] = nid
            self.used.add(nid)
            self.labels[nid] = label or f"{KIND_WORD[kind]} {name}"
        return self.nodes[key]

    def edge(self, a: str, b: str, label: str = "") -> None:
        self.edges.append(f"  {a} -->|\"{quoted(label)}\"| {b}" if label else f"  {a} --> {b}")

    def node_lines(self) -> list[str]:
        out = []
        for (kind, _), nid in self.nodes.items():
            left, right = SHAPES[kind]
            out.append(f"  {nid}{left}{quoted(self.labels[nid])}{right}")
        return out


def _queues(g: _Graph, view: StackView) -> None:
    for t in view.teams:
        team = g.node("team", t.name)
        for lq in t.local_queues:
            q = g.node("lq", f"{lq.namespace}/{lq.name}", f"LocalQueue {lq.name} in {lq.namespace}")
            g.edge(team, q)
            g.edge(q, g.node("cq", lq.cluster_queue))
    for cq in view.cluster_queues.values():
        node = g.node("cq", cq.name)
        if cq.cohort:
            g.edge(node, g.node("cohort", cq.cohort), "cohort")
        by_flavor: dict[str, list[str]] = {}
        for quota in cq.quotas:
            amount = show_amount(quota.resource, quota.nominal)
            by_flavor.setdefault(quota.flavor, []).append(f"{quota.resource} {amount}")
        for flavor, amounts in by_flavor.items():
            g.edge(node, g.node("flavor", flavor), ", ".join(amounts))


def _nodes_below(g: _Graph, view: StackView) -> list[str]:
    """Cohorts (with their parents), flavors -> pools; returns the ids of pools whose capacity may go."""
    for name, parent in view.cohorts.items():
        node = g.node("cohort", name)
        if parent:
            g.edge(node, g.node("cohort", parent), "parent")
    for fl in view.flavors.values():
        node = g.node("flavor", fl.name)
        for pool in fl.pools:
            g.edge(node, g.node("pool", pool))
    shaky = []
    for p in view.pools:
        mode = p.facts.capacity + (f" {p.reservation}" if p.reservation else "")
        node = g.node("pool", p.facts.name)
        g.labels[node] = f"pool {p.facts.name} ({mode})"  # it may have been named by a flavor first
        if p.facts.capacity not in FIXED_CAPACITY:
            shaky.append(node)
    return shaky


def diagram(view: StackView) -> Diagram:
    g = _Graph()
    _queues(g, view)
    shaky = _nodes_below(g, view)
    lines = ["flowchart LR",
             "  %% teams -> LocalQueues -> ClusterQueues -> cohorts and flavors -> node pools (dashed: not guaranteed)",
             *g.node_lines(), *g.edges]
    if shaky:
        lines += ["  classDef notGuaranteed stroke-dasharray: 5 5", f"  class {','.join(shaky)} notGuaranteed"]
    return Diagram(lines, len(g.edges))
