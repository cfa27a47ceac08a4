"""What admission reads of a cluster: its Kueue objects by kind and name, Kueue's Configuration and the node
pools, indexed once so that many workloads can be judged against one plan."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import yaml

from gke_ai_batch.model.pool_facts import PoolFacts
from gke_ai_batch.vocabulary import Obj

from .quotas import QuotaTree
from .terms import BLOCK_UNDECLARED, NAME_LABEL


def kueue_config_from_values(values: Obj | None) -> dict[str, Any]:
    """Kueue's Configuration from the chart's `managerConfig.controllerManagerConfigYaml` string."""
    text = ((values or {}).get("managerConfig") or {}).get("controllerManagerConfigYaml")
    return (yaml.safe_load(text) or {}) if text else {}


def quota_check_strategy(config: Obj | None) -> str:
    """Unset means BlockUndeclared (cmd/kueue/main.go); the QuotaCheckStrategy gate is Beta and on in 0.19."""
    return ((config or {}).get("resources") or {}).get("quotaCheckStrategy") or BLOCK_UNDECLARED


@dataclass(frozen=True)
class Cluster:
    """What admission reads: the stack's objects by kind and name (LocalQueues by `ns/name`),
    Kueue's Configuration, and the node pools (gke_ai_batch.model.pool_facts.PoolFacts). Build it once to
    judge many workloads with admission.decision.admit_in."""

    objects: Mapping[str, Mapping[Any, dict[str, Any]]]  # kind -> name -> object
    config: Obj = field(default_factory=dict)
    pools: tuple[PoolFacts, ...] = ()

    @classmethod
    def build(cls, manifests: Iterable[Obj], config: Obj | None = None,
              pools: Iterable[PoolFacts] = ()) -> Cluster:
        """Index manifests (as `offline.views.render.manifest_of` gives them) by kind and name."""
        objects: dict[Any, dict[Any, dict[str, Any]]] = defaultdict(dict)
        for m in manifests:
            meta = m.get("metadata") or {}
            key = f"{meta.get('namespace', 'default')}/{meta.get('name')}" if m.get("kind") == "LocalQueue" \
                else meta.get("name")
            objects[m.get("kind")][key] = dict(m)
        return cls(dict(objects), dict(config or {}), tuple(pools))

    def get(self, kind: str, key: str | None) -> dict[str, Any] | None:
        return (self.objects.get(kind) or {}).get(key)

    @cached_property
    def tree(self) -> QuotaTree:
        return QuotaTree(self.objects)

    def namespace_labels(self, ns: str) -> dict[str, Any]:
        """The namespace's labels plus the one the API server always sets."""
        labels = dict(((self.get("Namespace", ns) or {}).get("metadata") or {}).get("labels") or {})
        return {**labels, NAME_LABEL: ns}

    def pools_behind(self, flavor: str, resource: str | None = None) -> list[PoolFacts]:
        """Node pools the flavor puts pods on (PoolFacts.serves, as the quota policies and the summary judge)
        that provide `resource`."""
        spec = (self.get("ResourceFlavor", flavor) or {}).get("spec") or {}
        return [p for p in self.pools if p.serves(spec) and (resource is None or p.resource == resource)]
