"""Kueue and JobSet versions: only releases the allow-list knows, and `make diff` plans each move between them."""
from __future__ import annotations

import dataclasses

import pytest

from gke_ai_batch.model import releases
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.releases import KUEUE_RELEASES, upgrade
from gke_ai_batch.offline.changes.upgrades import upgrades
from gke_ai_batch.plan.platform import build_platform

from .conftest import by_type, platform_of, run_config


def kueue_release(version: str) -> dict:
    return {"type": "kubernetes:helm.sh/v3:Release", "name": "kueue-release",
            "inputs": {"name": "kueue", "version": version}}


@pytest.mark.parametrize("block, chart", [
    ("kueue", "https://charts.example.com/kueue"),  # a Helm repository holds any chart under any version
    ("kueue", "./charts/kueue"),
    ("jobset", "oci://registry.k8s.io/kueue/charts/kueue"),  # the other component's chart
])
def test_a_chart_other_than_upstreams_or_a_mirror_of_it_is_refused(block, chart):
    cfg = platform_of("dev")
    cfg.setdefault(block, {})["chart"] = chart
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == f"platform.{block}.chart" and "or a mirror of it, an oci:// reference" in e.value.message


def test_a_mirror_of_the_chart_plans():
    cfg = platform_of("dev")
    cfg.setdefault("kueue", {})["chart"] = "oci://europe-docker.pkg.dev/acme/registry-k8s-io/kueue/charts/kueue"
    assert build_platform(cfg) is not None


@pytest.mark.parametrize("block, version, allowed", [
    ("kueue", "0.20.0", "allowed: 0.19.2, 0.19.3, 0.19.4, 0.19.5"),
    ("kueue", "v0.19.2", "allowed: 0.19.2"),  # the chart's version has no v
    ("jobset", "0.13.0", "allowed: 0.12.0"),
])
def test_a_version_outside_the_allow_list_is_refused_with_the_allowed_ones(block, version, allowed):
    cfg = platform_of("dev")
    cfg.setdefault(block, {})["version"] = version
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == f"platform.{block}.version" and allowed in e.value.message
    assert f"{'Kueue' if block == 'kueue' else 'JobSet'} {version} is not a release this platform knows" \
        in e.value.message


def test_every_listed_release_has_digests_its_api_versions_and_a_source():
    for table in releases.RELEASES.values():
        for r in table.values():
            assert r.chart_digest.startswith("sha256:") and len(r.chart_digest) == 71
            assert r.image_digest.startswith("sha256:") and len(r.image_digest) == 71
            assert r.storage in r.served and r.source and r.notes.endswith(f"v{r.version}")


def test_a_patch_upgrade_lists_the_notes_of_every_release_it_crosses():
    assert upgrade("Kueue", "0.19.2", "0.19.5").steps == tuple(
        f"read the release notes of 0.19.{n}: https://github.com/kubernetes-sigs/kueue/releases/tag/v0.19.{n}"
        for n in (3, 4, 5))


def test_a_downgrade_is_refused():
    assert "0.19.5 -> 0.19.2 is a downgrade" in upgrade("Kueue", "0.19.5", "0.19.2").refusal


def test_a_storage_change_declares_the_migration_and_a_skipped_step_is_refused(monkeypatch):
    """No listed Kueue release changes its storage version or needs an intermediate one (all store v1beta2,
    which Kueue stores at since v0.16.0); a release that did is planned so."""
    last = KUEUE_RELEASES["0.19.5"]
    bumped = dataclasses.replace(last, version="0.21.0", served=("v1",), storage="v1", upgrade_from="0.20.0")
    between = dataclasses.replace(last, version="0.20.0", served=("v1beta2", "v1"), storage="v1")
    monkeypatch.setitem(releases.RELEASES, "Kueue", {**KUEUE_RELEASES, "0.20.0": between, "0.21.0": bumped})
    assert "0.19.5 -> 0.21.0 skips a step: 0.21.0 upgrades only from 0.20.0 or later" in \
        upgrade("Kueue", "0.19.5", "0.21.0").refusal
    assert upgrade("Kueue", "0.19.5", "0.20.0", v1beta1_migrated=True).steps[-1] == \
        f"after the upgrade, rewrite every stored object at v1 ({releases.KUEUE_MIGRATION})"


def test_make_diff_shows_an_upgrade_and_refuses_a_downgrade_at_the_config_path():
    lines, refused = upgrades([kueue_release("0.19.2")], [kueue_release("0.19.4")])
    assert lines[0] == "upgrade Kueue 0.19.2 -> 0.19.4:" and len(lines) == 3 and not refused
    lines, refused = upgrades([kueue_release("0.19.4")], [kueue_release("0.19.2")])
    assert not lines and refused[0].startswith("platform.kueue.version: Kueue 0.19.4 -> 0.19.2 is a downgrade")


@pytest.mark.parametrize("version", ["0.19.2", "0.19.5"])
def test_the_controllers_run_the_releases_images_pinned_by_digest(version):
    """The charts' images are `repository:tag`: a tag moved on the registry would otherwise be pulled."""
    cfg = platform_of("prod")
    cfg.setdefault("kueue", {})["version"] = version
    values = {r.name: r.inputs["values"] for r in by_type(run_config(cfg, "prod"), ":Release")}
    kueue = values["kueue-release"]["controllerManager"]["manager"]["image"]
    assert kueue == {"repository": "registry.k8s.io/kueue/kueue",
                     "tag": f"v{version}@{KUEUE_RELEASES[version].image_digest}", "pullPolicy": "IfNotPresent"}
    assert values["jobset-release"]["image"]["tag"] == f"v0.12.0@{releases.JOBSET_RELEASES['0.12.0'].image_digest}"


def _without_v1beta1(monkeypatch, **gates):
    """A Kueue release that no longer serves v1beta1, as kueue#13957 plans for 0.20: none is confirmed yet (no
    v0.20.0 tag, release issue or image promotion), so the planning is shown on a stand-in."""
    later = dataclasses.replace(KUEUE_RELEASES["0.19.5"], version="0.20.0", served=("v1beta2",),
                                notes="https://github.com/kubernetes-sigs/kueue/releases/tag/v0.20.0",
                                gates=gates or KUEUE_RELEASES["0.19.5"].gates)
    monkeypatch.setitem(releases.RELEASES, "Kueue", {**KUEUE_RELEASES, "0.20.0": later})


def test_a_move_to_a_release_without_v1beta1_is_refused_until_the_stack_records_the_migration(monkeypatch):
    _without_v1beta1(monkeypatch)
    refusal = upgrade("Kueue", "0.19.5", "0.20.0").refusal
    assert refusal.startswith("Kueue 0.19.5 -> 0.20.0: 0.20.0 no longer serves v1beta1")
    assert releases.KUEUE_MIGRATION in refusal and refusal.endswith("then set kueue.v1beta1_migrated: true")
    lines, refused = upgrades([kueue_release("0.19.5")], [kueue_release("0.20.0")])
    assert not lines and refused[0].startswith("platform.kueue.version: Kueue 0.19.5 -> 0.20.0: 0.20.0 no longer")


def test_with_the_migration_recorded_its_proof_comes_first_before_the_chart(monkeypatch):
    _without_v1beta1(monkeypatch)
    steps = upgrade("Kueue", "0.19.5", "0.20.0", v1beta1_migrated=True).steps
    assert steps[0].startswith("before the chart: prove no Kueue object is stored at v1beta1 (kubectl get crd")
    assert steps[1] == "read the release notes of 0.20.0: https://github.com/kubernetes-sigs/kueue/releases/tag/v0.20.0"
    lines, refused = upgrades([kueue_release("0.19.5")], [kueue_release("0.20.0")], v1beta1_migrated=True)
    assert not refused and lines[1].startswith("  before the chart:")
    # a patch move inside 0.19 keeps v1beta1 and needs nothing
    assert not upgrade("Kueue", "0.19.2", "0.19.5").steps[0].startswith("before the chart")


def test_make_diff_reads_the_recorded_migration_from_the_stack_file(tmp_path):
    from gke_ai_batch.offline.changes.decisions import read_decisions
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text("config:\n  gke-ai-batch:platform:\n    kueue: {v1beta1_migrated: true}\n")
    assert read_decisions(stack).v1beta1_migrated
    stack.write_text("config:\n  gke-ai-batch:platform:\n    kueue: {version: 0.19.5}\n")
    assert not read_decisions(stack).v1beta1_migrated


def test_a_gate_the_release_would_refuse_is_refused_by_the_plan_with_the_setting(monkeypatch):
    _without_v1beta1(monkeypatch, OtherGate=releases.Gate(default=True))  # a release without the gate we set
    cfg = platform_of("prod")
    cfg.setdefault("kueue", {})["version"] = "0.20.0"
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == "platform.kueue.unadmitted_workloads_observability"
    assert "Kueue 0.20.0 does not know the feature gate UnadmittedWorkloadsObservability" in e.value.message
    assert "set it false" in e.value.message
    cfg["kueue"]["unadmitted_workloads_observability"] = False
    assert build_platform(cfg) is not None
    _without_v1beta1(monkeypatch, UnadmittedWorkloadsObservability=releases.Gate(default=False, locked=True))
    cfg["kueue"]["unadmitted_workloads_observability"] = True
    with pytest.raises(ConfigError, match="locks the feature gate UnadmittedWorkloadsObservability to false"):
        build_platform(cfg)


def test_the_019_releases_take_the_gate_the_platform_sets():
    for version in KUEUE_RELEASES:
        assert releases.gate_refusal(version, "UnadmittedWorkloadsObservability", True) is None
