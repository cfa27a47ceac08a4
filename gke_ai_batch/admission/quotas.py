"""ClusterQueues and Cohorts as one tree: what a ClusterQueue may use of a flavor's resource, its own
nominal quota plus what it may borrow up the tree within each node's limits."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gke_ai_batch.vocabulary import Obj

from .quantities import amount

Node = tuple[str, str]  # a quota tree node: ("cq", ClusterQueue name) or ("cohort", Cohort name)


@dataclass(frozen=True)
class Quota:
    nominal: int
    borrowing_limit: int | None
    lending_limit: int | None


def quotas_of(spec: Obj | None) -> dict[tuple[str, str], Quota]:
    """(flavor, resource) -> Quota from a ClusterQueue's or Cohort's resourceGroups."""
    out: dict[tuple[str, str], Quota] = {}
    for group in (spec or {}).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for r in flavor.get("resources") or []:
                res = r["name"]
                limits = [None if r.get(k) is None else amount(res, r[k]) for k in ("borrowingLimit", "lendingLimit")]
                out[(flavor["name"], res)] = Quota(amount(res, r.get("nominalQuota", 0)), *limits)
    return out


class QuotaTree:
    """Kueue's cohort tree on an empty cluster (pkg/cache/scheduler/resource_node.go): a node's
    subtree quota is its nominal plus what each child puts in (its subtree minus the part its
    lendingLimit keeps local); a ClusterQueue can use its own subtree plus what its parent can,
    capped at nominal + borrowingLimit. Others thus lend min(nominal, lendingLimit)."""

    def __init__(self, objects: Mapping[str, Mapping[str, dict[str, Any]]]) -> None:
        self.quotas: dict[Node, dict[tuple[str, str], Quota]] = {}
        self.parent: dict[Node, Node | None] = {}
        for name, cq in (objects.get("ClusterQueue") or {}).items():
            spec = cq.get("spec") or {}
            cohort = spec.get("cohortName") or spec.get("cohort")
            self._add(("cq", name), spec, ("cohort", cohort) if cohort else None)
        for name, co in (objects.get("Cohort") or {}).items():
            spec = co.get("spec") or {}
            parent = spec.get("parentName") or spec.get("parent")
            self._add(("cohort", name), spec, ("cohort", parent) if parent else None)
        for node in [p for p in self.parent.values() if p and p not in self.parent]:
            self._add(node, {}, None)  # a cohort only named by its members: no quota of its own
        self.children: dict[Node, list[Node]] = defaultdict(list)
        for node, parent in self.parent.items():
            if parent:
                self.children[parent].append(node)

    def _add(self, node: Node, spec: Obj, parent: Node | None) -> None:
        self.quotas[node] = quotas_of(spec)
        self.parent[node] = parent

    def quota(self, node: Node, fr: tuple[str, str]) -> Quota:
        return self.quotas.get(node, {}).get(fr) or Quota(0, None, None)

    def chain(self, node: Node) -> list[Node]:
        """The node and its ancestors up to the root (a cycle ends the walk)."""
        out = [node]
        while (up := self.parent.get(out[-1])) and up not in out:
            out.append(up)
        return out

    def subtree(self, node: Node, fr: tuple[str, str], seen: frozenset[Node] = frozenset()) -> int:
        """`SubtreeQuota`: own nominal plus each child's subtree minus its local (unlent) part."""
        seen = seen | {node}
        total = self.quota(node, fr).nominal
        for child in self.children.get(node, []):
            if child not in seen:
                total += self.subtree(child, fr, seen) - self.local(child, fr, seen)
        return total

    def local(self, node: Node, fr: tuple[str, str], seen: frozenset[Node] = frozenset()) -> int:
        """Quota a lendingLimit keeps out of the parent's reach (`localQuota`)."""
        lending = self.quota(node, fr).lending_limit
        return 0 if lending is None else max(0, self.subtree(node, fr, seen) - lending)

    def potential(self, node: Node, fr: tuple[str, str]) -> int:
        """`potentialAvailable`: the most this node can use with nothing else admitted."""
        chain = self.chain(node)
        avail = self.subtree(chain[-1], fr)
        for n in reversed(chain[:-1]):
            avail = self.local(n, fr) + avail
            limit = self.quota(n, fr).borrowing_limit
            if limit is not None:
                avail = min(self.subtree(n, fr) + limit, avail)
        return avail

    def usage(self, node: Node, fr: tuple[str, str], used: Mapping[str, Mapping[tuple[str, str], int]],
              seen: frozenset[Node] = frozenset()) -> int:
        """`Usage`: a ClusterQueue's own (`used`, by ClusterQueue name); a Cohort's, what each child uses past
        the part its lendingLimit keeps local (`accumulateFromChild`)."""
        if node[0] == "cq":
            return used.get(node[1], {}).get(fr, 0)
        seen = seen | {node}
        return sum(max(0, self.usage(c, fr, used, seen) - self.local(c, fr)) for c in self.children.get(node, [])
                   if c not in seen)

    def available(self, node: Node, fr: tuple[str, str], used: Mapping[str, Mapping[tuple[str, str], int]]) -> int:
        """`available`: what the node can take now, given what every ClusterQueue uses: its local part left, plus
        what its parent has left, capped by its borrowingLimit past what it already keeps in the parent.
        Negative where more is admitted than the tree now holds (quota removed, a queue moved)."""
        chain = self.chain(node)
        avail = self.subtree(chain[-1], fr) - self.usage(chain[-1], fr, used)
        for n in reversed(chain[:-1]):
            local, use = self.local(n, fr), self.usage(n, fr, used)
            limit = self.quota(n, fr).borrowing_limit
            if limit is not None:
                avail = min(self.subtree(n, fr) - local - max(0, use - local) + limit, avail)
            avail = max(0, local - use) + avail
        return avail

    def height(self, node: Node) -> int:
        """hierarchical_preemption.go `getNodeHeight`: 1 for a cohort of ClusterQueues, +1 per level."""
        kids = self.children.get(node, [])
        return max([min(len(kids), 1)] + [self.height(k) + 1 for k in kids if k[0] == "cohort"])

    def borrowing_level(self, node: Node, fr: tuple[str, str], val: int) -> int:
        """`FindHeightOfLowestSubtreeThatFits`: 0 within nominal, else the height of the lowest
        cohort whose subtree holds the request; > 0 means the pod set borrows."""
        chain = self.chain(node)
        if val <= self.quota(node, fr).nominal or len(chain) == 1:
            return 0
        remaining = val - self.local(node, fr)
        for ancestor in chain[1:]:
            if remaining <= self.subtree(ancestor, fr):
                return self.height(ancestor)
            remaining -= self.local(ancestor, fr)
        return self.height(chain[-1])
