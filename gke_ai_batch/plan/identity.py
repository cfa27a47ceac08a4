"""The nodes' IAM identity: a dedicated service account with only the role GKE documents for nodes,
or an existing one named in config. GKE's docs ("Configure GKE node service accounts"): "At a
minimum, these node service accounts must have the Kubernetes Engine Default Node Service Account
(roles/container.defaultNodeServiceAccount) role on your project. By default, GKE uses the Compute
Engine default service account", which usually holds the project-wide Editor role; CIS GKE 5.2.1
asks for a dedicated least-privilege account instead."""
from __future__ import annotations

from dataclasses import dataclass

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.vocabulary import PRODUCTION_ENVIRONMENTS

NODE_ROLES = ("roles/container.defaultNodeServiceAccount",)
REPOSITORY_READER = "roles/artifactregistry.reader"  # pull images from one repository, nothing else
DEFAULT_COMPUTE_SUFFIX = "-compute@developer.gserviceaccount.com"
ACCOUNT_ID_MAX = 30  # IAM: account IDs are 6 to 30 characters


@dataclass(frozen=True)
class NodeIdentity:
    email: str
    account_id: str | None  # None: an existing account, nothing to create
    roles: tuple[str, ...]
    display_name: str = ""
    repositories: tuple[tuple[str, str, str], ...] = ()  # (project, location, repository) it reads images from


def node_account_id(cluster: str) -> str:
    """`<cluster>-nodes`, the cluster name cut so that the ID fits IAM's 30 characters."""
    suffix = "-nodes"
    return cluster[: ACCOUNT_ID_MAX - len(suffix)].rstrip("-") + suffix


def is_default_compute_account(email: str) -> bool:
    return email.endswith(DEFAULT_COMPUTE_SUFFIX)


def node_identity(cfg: PlatformConfig) -> NodeIdentity:
    given = cfg.cluster.node_service_account
    repos = tuple((r.project or cfg.project, r.location, r.repository) for r in cfg.cluster.node_image_repositories)
    if given is None:
        account_id = node_account_id(cfg.cluster.name)
        return NodeIdentity(f"{account_id}@{cfg.project}.iam.gserviceaccount.com", account_id, NODE_ROLES,
                            f"GKE nodes of {cfg.cluster.name}", repos)
    production = cfg.production or cfg.environment in PRODUCTION_ENVIRONMENTS
    if production and is_default_compute_account(given):
        raise ConfigError(path_of("cluster", "node_service_account"),
                          f"{given!r} is the Compute Engine default service account, which usually holds the "
                          "project's Editor role; production nodes need a dedicated one: leave the key out to "
                          "have one created, or name an account with only roles/container.defaultNodeServiceAccount")
    return NodeIdentity(given, None, (), repositories=repos)
