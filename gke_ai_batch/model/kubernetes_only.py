"""The stack's `kubernetesOnly` key: the platform's Kubernetes layer alone, declared onto a cluster that already
exists and is reached by a kubeconfig, with no Google Cloud resource and no Kueue or JobSet release (that cluster
runs its own controllers). A platform engineer tries teams, quotas and policies against a real API server before
a GKE cluster exists (`make sandbox` sets the key for its local control plane).

A key of its own beside `platform`: the platform block says what the environment is, this key where its
Kubernetes layer goes from this machine (a kubeconfig path is one machine's), so `pulumi config set --path
kubernetesOnly.kubeconfig ...` points a copy of a stack elsewhere without touching its platform block.

The kubeconfig is read here, before any resource: given a path it cannot read, pulumi-kubernetes treats the
cluster as unreachable (provider.go Configure, `unreachableCluster`) and a preview passes with warnings."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError

from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.field_rules import Model
from gke_ai_batch.model.input_limits import too_large
from gke_ai_batch.model.pydantic_errors import config_error
from gke_ai_batch.model.words import describe, name_list

KUBERNETES_ONLY_KEY = "kubernetesOnly"
EXAMPLE = "{kubeconfig: ~/.kube/config}"


class KubernetesOnlyConfig(Model):
    """The Kubernetes layer alone (tenancy, priorities, queues, teams, monitoring objects, compute classes) on
    an existing cluster that runs its own Kueue and JobSet: no Google Cloud resource, no Helm release."""

    kubeconfig: str = Field(min_length=1)
    """The kubeconfig file that reaches the cluster: `~/` is your home folder, a relative path starts at the
    project folder."""
    context: str | None = Field(None, min_length=1)
    """The kubeconfig's context to use (default: its current-context)."""


@dataclass(frozen=True)
class ExistingCluster:
    """Where the Kubernetes layer goes: the kubeconfig file, the context, and the API server that context
    reaches (the provider's clusterIdentifier: another server replaces every object, new credentials do not)."""

    kubeconfig: str
    context: str | None
    server: str


def read_kubernetes_only(text: str | None, project_dir: Path) -> ExistingCluster | None:
    """The key's value as the engine passes it (JSON text; None: the key is not set), checked against the file it
    names; ConfigError at `kubernetesOnly...` naming the value and what is allowed."""
    if text is None:
        return None
    try:
        cfg = KubernetesOnlyConfig.model_validate(_mapping(text))
    except ValidationError as e:
        raise config_error(e, model=KubernetesOnlyConfig, root=KUBERNETES_ONLY_KEY) from None
    path = _kubeconfig_path(cfg.kubeconfig, project_dir)
    context, server = _server(_read_kubeconfig(path), cfg.context, path)
    return ExistingCluster(str(path), cfg.context, server)


def refuse_fleet(platform: Any) -> None:
    """A fleet's stacks declare objects on each other's GKE clusters through their outputs: the platform block
    (raw, before its StackReferences are read) may not hold one here."""
    if isinstance(platform, dict) and platform.get("fleet") is not None:
        raise ConfigError(KUBERNETES_ONLY_KEY, "a fleet's stack (platform.fleet) reaches its workers' GKE clusters "
                          "through their stack outputs, which a Kubernetes-only stack does not have; allowed: a "
                          "platform block without `fleet`, or no kubernetesOnly key")


def _mapping(text: str) -> Any:
    """The key's JSON value; a plain path (`pulumi config set kubernetesOnly PATH`) is refused with the form."""
    if problem := too_large(len(text.encode())):
        raise ConfigError(KUBERNETES_ONLY_KEY, problem)
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        value = text
    if not isinstance(value, dict):
        raise ConfigError(KUBERNETES_ONLY_KEY, f"should be a mapping such as {EXAMPLE}, not {describe(value)} "
                          "(pulumi config set --path kubernetesOnly.kubeconfig PATH)")
    return value


def _kubeconfig_path(value: str, project_dir: Path) -> Path:
    path = Path(value).expanduser()
    path = path if path.is_absolute() else project_dir / path
    if not path.is_file():
        raise ConfigError(f"{KUBERNETES_ONLY_KEY}.kubeconfig", f"{describe(value)}: there is no file {path}; "
                          "allowed: the path of a kubeconfig file that reaches the cluster")
    return path


def _read_kubeconfig(path: Path) -> dict[str, Any]:
    where = f"{KUBERNETES_ONLY_KEY}.kubeconfig"
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise ConfigError(where, f"{path} cannot be read as a kubeconfig: {str(e).splitlines()[0]}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("contexts"), list):
        raise ConfigError(where, f"{path} is not a kubeconfig: it has no `contexts:` list")
    return doc


def _named(doc: dict[str, Any], section: str) -> dict[str, dict[str, Any]]:
    """A kubeconfig section (`contexts`, `clusters`) by name: each entry is {name, <singular>: {...}}."""
    return {str(e["name"]): e.get(section[:-1]) or {} for e in doc.get(section) or []
            if isinstance(e, dict) and "name" in e}


def _server(doc: dict[str, Any], asked: str | None, path: Path) -> tuple[str, str]:
    """The context used (asked, or the file's current-context) and the server of its cluster."""
    contexts = _named(doc, "contexts")
    context = asked or doc.get("current-context")
    if not context:
        raise ConfigError(f"{KUBERNETES_ONLY_KEY}.context", f"required: {path} has no current-context; allowed: "
                          f"{name_list(contexts)}")
    if context not in contexts:
        raise ConfigError(f"{KUBERNETES_ONLY_KEY}.context" if asked else f"{KUBERNETES_ONLY_KEY}.kubeconfig",
                          f"{describe(context)} is no context of {path}; allowed: {name_list(contexts)}")
    cluster = str(contexts[context].get("cluster"))
    server = _named(doc, "clusters").get(cluster, {}).get("server")
    if not server:
        raise ConfigError(f"{KUBERNETES_ONLY_KEY}.kubeconfig", f"context {context!r} of {path} names cluster "
                          f"{cluster!r}, which has no server there")
    return context, str(server)
