"""Accelerator flavors on Autopilot: there are no node pools, so a flavor is the set of node labels
Autopilot provisions a node from. Kueue adds a flavor's nodeLabels to the nodeSelector of every pod
it admits under the flavor, and Autopilot then creates a node that carries them."""
from __future__ import annotations

from gke_ai_batch import vocabulary
from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.gke_pool_rules import version_below
from gke_ai_batch.model.pool_config import AutopilotFlavorConfig
from gke_ai_batch.plan.pools import tpu_shape_at

# GKE "Deploy TPU Multislice workloads" and source page 000: Autopilot enables TPUs, multislice
# included, from this version.
AUTOPILOT_TPU_MIN_VERSION = "1.29.2-gke.1521000"


def check_autopilot_tpu_version(cfg: PlatformConfig) -> None:
    """A pinned Autopilot version must run TPUs when a flavor selects them."""
    version = cfg.cluster.version
    if any(f.tpu for f in cfg.autopilot_flavors) and version_below(version, AUTOPILOT_TPU_MIN_VERSION):
        raise ConfigError(path_of("cluster", "version"), f"{version}: Autopilot runs TPUs from "
                          f"{AUTOPILOT_TPU_MIN_VERSION}; pin that or later, or leave the version to the channel")


def autopilot_node_labels(path: str, f: AutopilotFlavorConfig) -> tuple[dict[str, str], str]:
    """(the flavor's node labels, the accelerator resource its quotas name)."""
    if (f.tpu is None) == (f.gpu is None):
        raise ConfigError(path, f"flavor {f.name!r} needs exactly one of tpu (generation and topology) or gpu")
    labels: dict[str, str]
    if f.tpu is not None:
        shape = tpu_shape_at(f"{path}.tpu", f.tpu.generation, f.tpu.topology)
        labels = {vocabulary.TPU_ACCELERATOR_LABEL: shape.accelerator, vocabulary.TPU_TOPOLOGY_LABEL: shape.topology}
        resource = vocabulary.TPU_RESOURCE
    else:
        assert f.gpu is not None  # exactly one of the two, checked above
        labels, resource = {vocabulary.GPU_ACCELERATOR_LABEL: f.gpu}, vocabulary.GPU_RESOURCE
    if f.spot:
        labels[vocabulary.SPOT_LABEL] = "true"
    if f.compute_class:
        labels[vocabulary.COMPUTE_CLASS_LABEL] = f.compute_class
    return labels, resource
