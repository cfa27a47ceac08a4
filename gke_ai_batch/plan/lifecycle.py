"""How each named resource is replaced, deleted and protected: the day-two options the components declare.

Every GKE cluster, node pool and bucket has a name fixed by the stack config, and GKE and Cloud Storage
refuse a second resource of the same name. Pulumi's default replacement creates the new resource before
deleting the old one, so on these it would fail; they are replaced delete-first. That is also the only
safe order for what they hold: a reserved TPU slice or H200 pool cannot be double-booked, and an
on-demand pool that should run blue-green is renamed in the stack file instead (a new name is a new
pool, created before the old one is deleted).

Production stacks protect what running work and data live on: the cluster (and with it its network and
node identity), the accelerator node pools, the team namespaces and the buckets, which are also kept in
Cloud Storage when removed from the stack (retainOnDelete), and the Kueue and JobSet releases, likewise
retained, whose uninstall would take every queue and Workload with it. The stack file lifts it for one resource with an
acknowledgement, and for a team's namespaces and buckets by draining the team (docs/operating.md, "Day two").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.replacement import API_IMMUTABLE, CRD_IMMUTABLE, HELD_IN_USE
from gke_ai_batch.model.team_config import TeamConfig
from gke_ai_batch.vocabulary import PoolKind

from . import adoption
from .gke_inputs import is_production
from .pools import PoolPlan

# The TPU slice's shape is not sent by the provider's node pool update (terraform-provider-google-beta
# resource_container_node_pool.go: placement_policy.tpu_topology is neither ForceNew nor updated), so a
# changed topology would report success and leave the old slices: the program forces the replacement.
TPU_SHAPE_INPUTS = ("placementPolicy.tpuTopology",)
# A pool's starting size is ForceNew (terraform-provider-google-beta resource_container_node_pool.go
# initial_node_count), and its own docs say to "use a lifecycle block to ignore subsequent changes to this
# field": it is sent at creation only, so raising a pool's minimum resizes it through autoscaling instead.
CREATION_ONLY = ("initialNodeCount",)


@dataclass(frozen=True)
class Lifecycle:
    """The options of one resource, as ResourceOptions keywords (`options()`)."""

    protect: bool = False
    retain_on_delete: bool = False
    delete_before_replace: bool = False
    replace_on_changes: tuple[str, ...] = ()
    ignore_changes: tuple[str, ...] = ()
    import_id: str | None = None  # an existing resource to adopt (plan.adoption)

    def options(self) -> dict[str, Any]:
        """Only the options set: an unset protect is inherited from the parent, as Pulumi has it."""
        out: dict[str, Any] = {"protect": True} if self.protect else {}
        out |= {"retain_on_delete": True} if self.retain_on_delete else {}
        out |= {"delete_before_replace": True} if self.delete_before_replace else {}
        out |= {"ignore_changes": list(self.ignore_changes)} if self.ignore_changes else {}
        out |= {"import_": self.import_id} if self.import_id else {}
        return out | ({"replace_on_changes": list(self.replace_on_changes)} if self.replace_on_changes else {})


NAMED = Lifecycle(delete_before_replace=True)
# The billing export's dataset, where the stack creates it, holds what Cloud Billing wrote, which no `pulumi up`
# can write again: removing it from the stack (handing it over with `create_export_dataset: false`, or dropping the
# `cost` block) leaves it in BigQuery and only takes it out of the state (Pulumi docs, Resource option:
# retainOnDelete). Without it the engine would delete an empty dataset and fail on one holding tables.
EXPORT_DATASET = Lifecycle(retain_on_delete=True)


def cluster(adopt: str | None) -> Lifecycle:
    """Delete-first (a fixed name), and imported when the stack adopts an existing cluster (pulumi-gcp takes
    its GKE name as the import ID)."""
    return Lifecycle(delete_before_replace=True, import_id=adopt)


def protects(cfg: PlatformConfig, kind: str, name: str, team: TeamConfig | None = None) -> bool:
    """Whether production protects this resource: not when the stack file acknowledges deleting or replacing
    it, nor a namespace or bucket of a draining team. The engine refuses to replace or delete a protected
    resource, and allows unprotecting and replacing in one update (pulumi/pulumi
    pkg/resource/deploy/step_generator.go: "we do allow unprotecting and replacing to happen in a single update
    cycle"); a deletion needs the unprotecting update first."""
    if team is not None and team.state != "active":
        return False
    return is_production(cfg) and not any(a.kind == kind and a.name == name for a in cfg.acknowledge)


def protection(cfg: PlatformConfig, kind: str, name: str) -> Lifecycle:
    """Given to the GkeCluster component (its cluster, network and node identity inherit it) and to a TPU or
    GPU pool's (deleting a pool evicts every job on it)."""
    return Lifecycle(protect=protects(cfg, kind, name))


def release(cfg: PlatformConfig, name: str) -> Lifecycle:
    """The Kueue and JobSet installs: protected, and where protected also retained, so that removing one from
    the stack (or `pulumi destroy`) never runs `helm uninstall`. That keeps the CRDs and every object in them:
    Kueue's chart holds its CRDs as templates (kueue v0.19.2 charts/kueue/templates/crd/, no
    `helm.sh/resource-policy: keep` and no value to add it), so an uninstall deletes them and with them every
    ClusterQueue and Workload. JobSet's chart keeps its CRD in crds/ (jobset v0.12.0 charts/jobset/crds/), which
    Helm never deletes (helm.sh/docs/topics/charts "Limitations on CRDs"). An acknowledgement naming the release
    lifts both: the next update uninstalls it, CRDs and all, on purpose."""
    kept = protects(cfg, "release", name)
    return Lifecycle(protect=kept, retain_on_delete=kept)


def manifest(kind: str) -> Lifecycle:
    """A Kueue object with a field its CRD makes immutable, or a PriorityClass with a changed value or
    preemption policy (replacement.API_IMMUTABLE), is replaced, delete-first (its name is fixed), when that
    field changes: pulumi-kubernetes would otherwise send an update the API server refuses. Not the objects
    Kueue holds while in use (replacement.HELD_IN_USE), whose delete-first replacement would hang on its
    finalizer: `make diff` refuses a change of their immutable fields with the two-step way instead."""
    paths = () if kind in HELD_IN_USE else {**CRD_IMMUTABLE, **API_IMMUTABLE}.get(kind, ())
    return Lifecycle(delete_before_replace=bool(paths), replace_on_changes=paths)


def node_pool(plan: PoolPlan) -> Lifecycle:
    """Delete-first (a fixed name); a TPU pool is also replaced when its slice shape changes; its starting size
    is sent at creation only (CREATION_ONLY); imported when the stack adopts an existing one."""
    shape = TPU_SHAPE_INPUTS if plan.kind == PoolKind.TPU else ()
    return Lifecycle(delete_before_replace=True, replace_on_changes=shape, ignore_changes=CREATION_ONLY,
                     import_id=adoption.pool_import_id(plan.adopt) if plan.adopt else None)


def bucket(protect: bool, production: bool) -> Lifecycle:
    """Delete-first (a global name); in production kept when removed from the stack, and protected until
    its team drains or an acknowledgement names it."""
    return Lifecycle(protect=protect, retain_on_delete=production, delete_before_replace=True)
