"""Adopting an existing GKE cluster or node pool (`adopt:` in its block): the resource's GKE name, checked
against the name this stack gives it, and the ID Pulumi's `import` resource option takes.

The stack file names the resource as GKE does (`gcloud container clusters describe --format='value(selfLink)'`
ends in it): projects/P/locations/L/clusters/C, and .../nodePools/N for a pool. pulumi-gcp 10.x imports a
cluster by that name and a node pool as P/L/C/N (the "Import" sections of pulumi_gcp/container/cluster.py and
node_pool.py). Pulumi imports a resource only when the program's inputs match what it already has, and refuses
the import otherwise ("inputs to import do not match the existing resource", Pulumi docs, Resource option:
import): `make diff` lists what the resource must already have (docs/operating.md, "Adopting a cluster").
"""
from __future__ import annotations

import re

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of

CLUSTER_NAME = re.compile(r"projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/clusters/(?P<cluster>[^/]+)")
POOL_NAME = re.compile(CLUSTER_NAME.pattern + r"/nodePools/(?P<pool>[^/]+)")


def cluster_name(project: str, location: str, cluster: str) -> str:
    """The GKE name of this stack's cluster."""
    return f"projects/{project}/locations/{location}/clusters/{cluster}"


def checked_cluster(path: str, given: str | None, expected: str) -> str | None:
    """An adopted cluster's GKE name, refused unless it is this stack's cluster (its project, location and
    name): the import would read another cluster, or fail."""
    if given is None:
        return None
    if CLUSTER_NAME.fullmatch(given) is None:
        raise ConfigError(path, f"{given!r} is not a GKE cluster name; allowed: projects/PROJECT/locations/"
                          f"LOCATION/clusters/NAME, for this stack {expected}")
    if given != expected:
        raise ConfigError(path, f"{given!r} is not this stack's cluster; allowed: {expected} (the project, "
                          "location and name the stack gives it: change those to adopt another)")
    return given


def checked_pool(path: str, given: str | None, pool: str, cluster: str | None = None) -> str | None:
    """An adopted node pool's GKE name, refused unless it names this pool (and, when known, this stack's
    cluster)."""
    if given is None:
        return None
    found = POOL_NAME.fullmatch(given)
    if found is None:
        shape = f"{cluster or 'projects/PROJECT/locations/LOCATION/clusters/CLUSTER'}/nodePools/{pool}"
        raise ConfigError(path, f"{given!r} is not a GKE node pool name; allowed: {shape}")
    expected = f"{cluster or given.rpartition('/nodePools/')[0]}/nodePools/{pool}"
    if given != expected:
        raise ConfigError(path, f"{given!r} is not this node pool; allowed: {expected} (the pool's and the "
                          "cluster's names as the stack gives them)")
    return given


def pool_import_id(gke_name: str) -> str:
    """pulumi-gcp's import ID of a node pool: project/location/cluster/pool."""
    found = POOL_NAME.fullmatch(gke_name)
    assert found is not None, gke_name  # checked_pool accepted it
    return "/".join(found.group("project", "location", "cluster", "pool"))


def check_adoption(cfg: PlatformConfig, location: str, pools: list[tuple[str, str | None]]) -> None:
    """The cluster's `adopt` is this stack's cluster, and each pool's (path, adopt) is a pool of it."""
    expected = cluster_name(cfg.project, location, cfg.cluster.name)
    checked_cluster(path_of("cluster", "adopt"), cfg.cluster.adopt, expected)
    for path, adopt in pools:
        if adopt is not None and not adopt.startswith(f"{expected}/"):
            pool = adopt.rpartition("/")[2]
            raise ConfigError(f"{path}.adopt", f"{adopt!r} is not a node pool of this stack's cluster; allowed: "
                              f"{expected}/nodePools/{pool}")
