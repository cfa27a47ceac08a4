"""The stack's `kubernetesOnly` key: the Kubernetes layer alone onto an existing cluster, with the same objects
`make plan` writes to manifests/, no Google Cloud resource and no release; and its bad values, each refused at
its path before any resource."""
from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
import yaml

from gke_ai_batch.offline.engine.runtime import PlanError, run_program
from gke_ai_batch.offline.engine.stackfile import StackFile
from gke_ai_batch.offline.views.render import is_manifest, manifest_of
from gke_ai_batch.vocabulary import HELM_RELEASE, K8S_PROVIDER

from .conftest import planned, platform_of

SERVER = "https://127.0.0.1:16443"


def kubeconfig(folder: Path, current: str | None = "sandbox") -> Path:
    path = folder / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", **({"current-context": current} if current else {}),
        "clusters": [{"name": "sandbox", "cluster": {"server": SERVER}}],
        "contexts": [{"name": "sandbox", "context": {"cluster": "sandbox", "user": "admin"}}],
        "users": [{"name": "admin", "user": {"token": "t"}}]}))
    return path


def kubernetes_only(stack: str, value: object, platform: dict | None = None):
    config = {"gke-ai-batch:platform": platform or platform_of(stack), "gke-ai-batch:kubernetesOnly": value}
    return run_program(StackFile(name=stack, path=Path(stack), config=config))


@functools.cache
def layer(stack: str, folder: str):
    return kubernetes_only(stack, {"kubeconfig": str(kubeconfig(Path(folder)))})


def objects(regs) -> dict[str, dict]:
    """Each manifest by URN name and kind, as `make plan` writes it."""
    return {f"{r.type} {r.name}": manifest_of(r) for r in regs if is_manifest(r)}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_kubernetes_layer_alone_declares_the_plans_manifests_and_nothing_of_google_cloud(stack, tmp_path_factory):
    regs = layer(stack, str(tmp_path_factory.mktemp(stack)))
    assert objects(regs) == objects(planned(stack))
    assert not [r.type for r in regs if r.type.startswith("gcp:") or r.type == HELM_RELEASE]
    [provider] = [r for r in regs if r.type == K8S_PROVIDER]
    assert provider.inputs["clusterIdentifier"] == SERVER  # another server replaces the objects; new credentials do not
    assert all(r.provider_urn == provider.urn for r in regs if is_manifest(r))


def test_without_releases_queues_still_wait_for_what_they_name(tmp_path):
    """The controllers and CRDs are there before the deploy; the objects keep their order among themselves."""
    regs = layer("dev", str(tmp_path))
    urns = {r.urn: r for r in regs}
    queues = [r for r in regs if r.inputs.get("kind") == "ClusterQueue"]
    local = [r for r in regs if r.inputs.get("kind") == "LocalQueue"]
    assert queues and local
    for q in queues:
        kinds = {urns[d].inputs.get("kind") for d in q.dependencies}
        assert "ResourceFlavor" in kinds
        assert not any(urns[d].type == HELM_RELEASE for d in q.dependencies if d in urns)
    for lq in local:
        assert {"Namespace", "ClusterQueue"} <= {urns[d].inputs.get("kind") for d in lq.dependencies}


def test_the_plain_plan_still_waits_for_the_releases():
    regs = planned("dev")
    releases = {r.urn for r in regs if r.type == HELM_RELEASE}
    queues = [r for r in regs if r.inputs.get("kind") in ("ClusterQueue", "LocalQueue", "WorkloadPriorityClass")]
    assert queues and all(releases & set(q.dependencies) for q in queues)


@pytest.mark.parametrize("value, message", [
    ("~/.kube/config", r"invalid stack config at kubernetesOnly: should be a mapping such as \{kubeconfig: "
                       r"~/.kube/config\}, not '~/.kube/config'"),
    ({"kubeconfg": "x"}, r"invalid stack config at kubernetesOnly.kubeconfg: .*kubeconfig"),
    ({}, r"invalid stack config at kubernetesOnly.kubeconfig: required, and missing"),
    ({"kubeconfig": "no/such/file"}, r"invalid stack config at kubernetesOnly.kubeconfig: 'no/such/file': there is "
                                     r"no file .*no/such/file; allowed: the path of a kubeconfig file"),
    ({"context": "prod"}, r"invalid stack config at kubernetesOnly.context: 'prod' is no context of .*kubeconfig; "
                          r"allowed: sandbox"),
])
def test_a_bad_value_is_refused_at_its_path(value, message, tmp_path):
    path = kubeconfig(tmp_path)
    if isinstance(value, dict) and "context" in value:
        value = {**value, "kubeconfig": str(path)}
    with pytest.raises(PlanError, match=message):
        kubernetes_only("dev", value)


def test_a_kubeconfig_without_current_context_needs_one_named(tmp_path):
    path = kubeconfig(tmp_path, current=None)
    with pytest.raises(PlanError, match=r"at kubernetesOnly.context: required: .* has no current-context; "
                                        r"allowed: sandbox"):
        kubernetes_only("dev", {"kubeconfig": str(path)})


def test_a_relative_kubeconfig_starts_at_the_project_folder(tmp_path):
    """The program reads the file before any resource: a path it cannot read would leave the provider
    treating the cluster as unreachable, and a preview passing with warnings."""
    with pytest.raises(PlanError, match=r"there is no file .*/kube/absent"):
        kubernetes_only("dev", {"kubeconfig": "kube/absent"})


def test_a_fleet_stack_is_refused(tmp_path):
    fleet = platform_of("fleet-manager")
    with pytest.raises(PlanError, match=r"at kubernetesOnly: a fleet's stack \(platform.fleet\)"):
        kubernetes_only("fleet-manager", {"kubeconfig": str(kubeconfig(tmp_path))}, fleet)


def test_the_schema_takes_the_key():
    from gke_ai_batch.model.schema_docs import stack_schema
    config = stack_schema()["properties"]["config"]
    assert json.dumps(config["properties"]["gke-ai-batch:kubernetesOnly"]["required"]) == '["kubeconfig"]'


def test_the_policy_pack_passes_a_kubernetes_only_stack(tmp_path):
    """The real `pulumi preview --policy-pack` of the sandbox's dev stack reported every Kueue object as
    kueue-after-release (no dependsOn the release), though a kubernetesOnly stack declares no release by design,
    and each compute class as needing a pinned version, judged against no cluster at all."""
    from gke_ai_batch.offline.views.check import violations

    assert [v["policy"] for v in violations(layer("dev", str(tmp_path))) if v["level"] == "mandatory"] == []
