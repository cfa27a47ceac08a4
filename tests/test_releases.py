"""Kueue and JobSet versions: only releases the allow-list knows, and `make diff` plans each move between them."""
from __future__ import annotations

import dataclasses

import pytest

from gke_ai_batch.model import releases
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.releases import KUEUE_RELEASES, upgrade
from gke_ai_batch.offline.upgrades import upgrades
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
    assert upgrade("Kueue", "0.19.5", "0.20.0").steps[-1] == \
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
