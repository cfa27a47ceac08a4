"""The sandbox's pure parts: what it says when the proxy refuses a version or a port is taken, how it points the
charts' webhooks at the local managers, what it changes of their Configuration, the ComputeClass CRD it makes, and
the Node objects standing for the pools' nodes."""
from __future__ import annotations

import base64
import socket
from pathlib import Path

import pytest

from gke_ai_batch.offline.engine.stackfile import resolve
from gke_ai_batch.sandbox import build, controllers
from gke_ai_batch.sandbox.errors import SandboxError
from gke_ai_batch.sandbox.gke_crds import _from_extract, _structural
from gke_ai_batch.sandbox.nodes import NODE_POOL_LABEL, node_manifests
from gke_ai_batch.sandbox.processes import Port, check_free
from gke_ai_batch.sandbox.sandbox import plan_of

PROXY_403 = """go: downloading sigs.k8s.io/kueue v0.20.0
go: sigs.k8s.io/kueue@v0.20.0: reading https://proxy.golang.org/sigs.k8s.io/kueue/@v/v0.20.0.info: 403 Forbidden
	server response: This module version is not available.
"""


def test_a_refused_version_is_one_line_with_the_module_the_version_and_the_proxys_words() -> None:
    assert build._refusal(PROXY_403) == ("the Go module proxy refused sigs.k8s.io/kueue v0.20.0: 403 Forbidden, "
                                         "'This module version is not available.'")


def test_every_gap_names_what_is_built_instead() -> None:
    assert any(build.PULUMI_VERSION in gap for gap in build.GAPS)
    assert any(build.PULUMI_KUBERNETES_VERSION in gap for gap in build.GAPS)


def test_a_taken_port_is_named() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        with pytest.raises(SandboxError, match=f"port {taken} on 127.0.0.1 \\(the test's server\\) is in use"):
            check_free([Port(taken, "the test's server")])


def test_the_charts_webhooks_call_the_local_manager_by_url_with_the_sandbox_ca() -> None:
    doc = {"kind": "ValidatingWebhookConfiguration", "webhooks": [
        {"name": "vjob.kb.io", "failurePolicy": "Fail",
         "clientConfig": {"service": {"name": "kueue-webhook-service", "namespace": "kueue-system",
                                      "path": "/validate-batch-v1-job"}}}]}
    hook, = controllers.by_url(doc, controllers.KUEUE_WEBHOOK, b"CA")["webhooks"]
    assert hook["clientConfig"] == {"url": "https://127.0.0.1:29443/validate-batch-v1-job",
                                    "caBundle": base64.b64encode(b"CA").decode()}
    assert hook["failurePolicy"] == "Fail"  # everything else as the chart renders it


def test_the_managers_keep_the_charts_configuration_but_for_what_a_local_process_needs(tmp_path: Path) -> None:
    rendered = [{"kind": "ConfigMap", "data": {"controller_manager_config.yaml": (
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nmetrics:\n  bindAddress: :8443\n"
        "  enableClusterQueueResources: true\nmanageJobsWithoutQueueName: true\n")}}]
    config = controllers.local_config(rendered, controllers.KUEUE, tmp_path)
    assert config["manageJobsWithoutQueueName"] is True
    assert config["metrics"] == {"bindAddress": "0", "enableClusterQueueResources": True}
    assert config["webhook"] == {"port": 29443, "host": "127.0.0.1", "certDir": str(tmp_path)}
    assert config["internalCertManagement"] == {"enable": False}


def test_the_compute_class_crd_is_structural_and_cluster_scoped() -> None:
    from gke_ai_batch.conform.crds import vendored

    crd = _from_extract(vendored()[("cloud.google.com", "ComputeClass")])
    assert crd["metadata"]["name"] == "computeclasses.cloud.google.com"
    assert crd["spec"]["scope"] == "Cluster"
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert "additionalProperties" not in str(_structural({"a": {"additionalProperties": False}}))
    assert "'additionalProperties': False" not in str(schema)


def test_the_sandbox_has_the_nodes_make_admit_counts_with_gkes_labels_and_taints() -> None:
    """prod's h200-res pool is 2 fixed a3-ultragpu-8g nodes in a TAS flavor: Kueue's TAS and JobSet's exclusive
    placement need Ready nodes carrying the topology levels and the node pool label, and GKE's GPU taint."""
    nodes = node_manifests(plan_of(resolve("prod")).pools)
    h200 = [n for n in nodes if n["metadata"]["labels"][NODE_POOL_LABEL] == "h200-res"]
    assert len(h200) == 2
    labels = h200[1]["metadata"]["labels"]
    assert labels["cloud.google.com/gce-topology-host"] == labels["kubernetes.io/hostname"] == "gke-h200-res-1"
    assert labels["cloud.google.com/gce-topology-block"] == "h200-res-block"
    assert labels["gke-ai-batch.io/flavor"] == "h200-res"
    assert h200[0]["spec"]["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    assert h200[0]["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    assert h200[0]["status"]["conditions"][0]["type"] == "Ready"
    flex = [n for n in nodes if n["metadata"]["labels"][NODE_POOL_LABEL].startswith("v6e-flex")]
    assert flex == []  # a flex-start pool autoscales from zero: no node at rest
