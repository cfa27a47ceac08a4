"""The Kueue and JobSet releases a stack may run, and what moving between them takes.

Only releases listed here are allowed (`kueue.version`, `jobset.version`): for each, the chart and controller
image digests as registry.k8s.io's promotion recorded them, the API versions its CRDs serve and store, its
release notes, and the oldest release upstream supports upgrading from directly. `make diff` plans a version
change with `upgrade()`: the release notes to read for every release crossed (Kueue's installation page:
"Minor releases: The .0 release notes for each new minor version you cross. Patch releases: The patch release
notes up to and including your target version"), a storage migration where the stored API version changes,
and a refusal for a downgrade or a skipped step. The manifests are checked against the CRDs of the default
release (vendored in gke_ai_batch/conform/schemas); the 0.19 patch releases keep them (cut from release-0.19, whose CRDs
match v0.19.2's; inference from the branch, the patch tags are not in the fetched repository).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"
JOBSET_CHART = "oci://registry.k8s.io/jobset/charts/jobset"
CHARTS = {"Kueue": KUEUE_CHART, "JobSet": JOBSET_CHART}
# Where a release's chart points its controller image (hack/helm-chart-package.sh at kueue v0.19.2 and jobset
# v0.12.0: k8s_registry, then `<registry>/kueue`, `<registry>/jobset`, pullPolicy IfNotPresent).
IMAGES = {"Kueue": "registry.k8s.io/kueue/kueue", "JobSet": "registry.k8s.io/jobset/jobset"}

# Kueue's script that rewrites every stored object at the new storage version (release notes of v0.16.0,
# kubernetes-sigs/kueue#8018): the documented migration; Kueue does not use StorageVersionMigration.
KUEUE_MIGRATION = "https://github.com/kubernetes-sigs/kueue/blob/main/hack/migrate-to-v1beta2.sh"


@dataclass(frozen=True)
class Gate:
    """A Kueue feature gate the platform sets, as a release has it (pkg/features/kube_features.go)."""

    default: bool
    locked: bool = False  # LockToDefault: the controller refuses a configuration that sets it otherwise


@dataclass(frozen=True)
class Release:
    version: str
    chart_digest: str  # the Helm chart's OCI digest on registry.k8s.io
    image_digest: str  # the controller image's digest on registry.k8s.io
    served: tuple[str, ...]  # the API versions its CRDs serve
    storage: str  # the API version its CRDs store objects at
    notes: str  # its release notes
    source: str  # where the digests were read
    upgrade_from: str | None = None  # the oldest release it upgrades from directly; None: any listed release
    gates: Mapping[str, Gate] = field(default_factory=dict)  # the gates the platform sets, as this release has them

    @property
    def key(self) -> tuple[int, ...]:
        return version_key(self.version)


def version_key(version: str) -> tuple[int, ...]:
    """0.19.10 after 0.19.9."""
    return tuple(int(part) for part in version.split("."))


_KUEUE_SERVED = ("v1beta1", "v1beta2")  # v1beta1 deprecated since v0.16.0, still served in 0.19 (CRDs at v0.19.2)


# The gates the platform sets (plan.kueue_configuration), at pkg/features/kube_features.go v0.19.2, neither
# locked: UnadmittedWorkloadsObservability beta and off, ElasticJobsViaWorkloadSlices beta and on since 0.18.
# The 0.19 patch releases are cut from release-0.19, which keeps that table.
_KUEUE_019_GATES = {"UnadmittedWorkloadsObservability": Gate(default=False),
                    "ElasticJobsViaWorkloadSlices": Gate(default=True)}


def _kueue(version: str, chart: str, image: str, source: str) -> Release:
    return Release(version, f"sha256:{chart}", f"sha256:{image}", _KUEUE_SERVED, "v1beta2",
                   f"https://github.com/kubernetes-sigs/kueue/releases/tag/v{version}", source,
                   gates=_KUEUE_019_GATES)


KUEUE_RELEASES = {r.version: r for r in (
    _kueue("0.19.2", "ab436c33ef6c6b9b9e95b633e618bca0e0e436d6581d3b27bd12fc8a8026ab34",
           "8a77be2df3d441d1a99b60eb1625c835b5f4feda5db02ece26818cf2a30c4d86",
           "kubernetes/k8s.io#9856 (images.yaml), kubernetes-sigs/kueue#14323 (Images Ready)"),
    _kueue("0.19.3", "ebc458ae49180456bbfada39e2dcb20b0531ac3ee6cea183b1d9229ddb8b1fda",
           "0fc7cf6b1278bc6f20b7ce96d43f6973135b68aa3913005f1bb0c065faf26731",
           "kubernetes/k8s.io#9894, kubernetes-sigs/kueue#14693"),
    _kueue("0.19.4", "a11f1ab76d9133d8ae7cbcfbd0ad6a5ee5cb4494831144ceef09688f6738dc9d",
           "cc980ec83c698369d55f3b9105fb602ba85a558cb1bf3cafa02ce38a6a695c26",
           "kubernetes/k8s.io#9917, kubernetes-sigs/kueue#15122"),
    _kueue("0.19.5", "570cdfce9f9928a8cf36ea814278e2e56651d2e7f2dac3363ebf3e0cda303bc2",
           "a55949705d7ab1fe38034da56c5af95deecec3da0abebb209a372f7a5c414a2d",
           "kubernetes/k8s.io#9955, kubernetes-sigs/kueue#15458"),
)}

# Checked for the road to 0.20 (Kueue issue 41 of this project): the newest Kueue a primary source confirms is
# 0.19.5 (kubernetes-sigs/kueue#15458, "Release v0.19.5 has been successfully published", 2026-09-17; promotion
# kubernetes/k8s.io#9955). No v0.20.0 tag, release issue or image promotion was found (the fetched repository's
# newest tag is v0.19.2, with v0.20.0-devel on main); kueue#13957 plans to stop serving v1beta1 in 0.20 and drop
# it in 0.21. upgrade() plans such a release when one is listed. The Go module proxy, a primary source, was asked
# on 2026-11-29 for sigs.k8s.io/kueue v0.20.0 to v0.20.7: each answered 403, "This module version is not available."
# (docs/e2e.md), so no 0.20 release is recorded and the sandbox runs 0.19.2.
# No JobSet release after v0.12.0 could be verified (kubernetes-sigs/jobset#1317, v0.13.0, still open; the
# fetched repository's newest tag is v0.12.0, with v0.13.0-devel).
JOBSET_RELEASES = {r.version: r for r in (
    Release("0.12.0", "sha256:02808a890a0b0e03a1d3bf5959e2f562b3b47c15e446bbba358c1d24e1f81b24",
            "sha256:e75536f1135b7bb2f19f8c3b620782fbdd9091d73398e3a272f9a5fed322980d", ("v1alpha2",), "v1alpha2",
            "https://github.com/kubernetes-sigs/jobset/releases/tag/v0.12.0", "kubernetes/k8s.io#9456"),
)}

RELEASES = {"Kueue": KUEUE_RELEASES, "JobSet": JOBSET_RELEASES}


def pinned_image(component: str, version: str) -> dict[str, str]:
    """The chart's image values for `version`, pinned by digest: the charts write `repository:tag`
    (charts/kueue/templates/manager/manager.yaml, charts/jobset/templates/controller/deployment.yaml), so the
    tag `v0.19.2@sha256:...` names the promoted image by both, and a tag moved on the registry is not pulled."""
    release = RELEASES[component][version]
    return {"repository": IMAGES[component], "tag": f"v{version}@{release.image_digest}", "pullPolicy": "IfNotPresent"}


def unknown_version(component: str, version: str) -> str | None:
    """Why `version` is not allowed, listing the allowed ones; None when it is."""
    known = RELEASES[component]
    if version in known:
        return None
    return (f"{component} {version} is not a release this platform knows; allowed: "
            f"{', '.join(sorted(known, key=version_key))} (gke_ai_batch/model/releases.py lists each with its "
            "digests and source)")


def unknown_chart(component: str, chart: str) -> str | None:
    """Why `chart` is not allowed; None when it is. The upstream OCI repository, or a mirror of it (an
    Artifact Registry remote repository, an air-gapped registry): an `oci://` reference to the same chart
    name, so `version` still picks a listed release. Helm's `https://` repositories and local paths could hold
    any chart under any version, and are refused."""
    upstream = CHARTS[component]
    name = upstream.rsplit("/", 1)[1]
    if re.fullmatch(rf"oci://[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)*/{name}", chart):
        return None
    return (f"{chart!r} is not the {component} chart: use {upstream} (the default) or a mirror of it, an "
            f"oci:// reference ending in /{name}")


@dataclass(frozen=True)
class Upgrade:
    """What moving a release takes: the steps, or why it is refused."""
    steps: tuple[str, ...] = ()
    refusal: str | None = None


def gate_refusal(version: str, gate: str, value: bool) -> str | None:
    """Why Kueue `version` would refuse its configuration setting `gate` to `value` (a gate it does not know,
    or one locked to its default), naming what to do; None when it takes it."""
    release = RELEASES["Kueue"][version]
    known = release.gates.get(gate)
    if known is None:
        return (f"Kueue {version} does not know the feature gate {gate} (its controller refuses a configuration "
                "naming an unknown gate): set it false, which leaves the gate out")
    if known.locked and value != known.default:
        return (f"Kueue {version} locks the feature gate {gate} to {str(known.default).lower()} (its controller "
                f"refuses any other value): set it {str(known.default).lower()}")
    return None


# What proves no Kueue object is stored at v1beta1 before a release that no longer serves it: upgraded clusters
# keep v1beta1 in each CRD's status.storedVersions until the objects are rewritten (kueue#13957).
V1BETA1_CHECK = ("kubectl get crd -o jsonpath='{range .items[?(@.spec.group==\"kueue.x-k8s.io\")]}{.metadata.name} "
                 "{.status.storedVersions}{\"\\n\"}{end}'")


def _drops_v1beta1(before: Release, after: Release) -> bool:
    return "v1beta1" in before.served and "v1beta1" not in after.served


def upgrade(component: str, old: str, new: str, v1beta1_migrated: bool = False) -> Upgrade:
    """The steps from `old` to `new` (both allowed), or the refusal of a downgrade or of a release that does
    not upgrade from `old` directly, or that no longer serves the API version `old` stored objects at. A move to
    a Kueue release that no longer serves v1beta1 is refused until the stack records the migration
    (`v1beta1_migrated`, kueue.v1beta1_migrated), and its first step, before the chart, proves it."""
    known = RELEASES[component]
    before, after = known[old], known[new]
    if after.key < before.key:
        return Upgrade(refusal=f"{component} {old} -> {new} is a downgrade: objects stored by {old} may not read "
                               "back in an older release; stay on it, or restore from a backup")
    crossed = [r for r in sorted(known.values(), key=lambda r: r.key) if before.key < r.key <= after.key]
    for r in crossed:
        if r.upgrade_from and before.key < version_key(r.upgrade_from):
            return Upgrade(refusal=f"{component} {old} -> {new} skips a step: {r.version} upgrades only from "
                                   f"{r.upgrade_from} or later; upgrade to {r.upgrade_from} first")
    if before.storage not in after.served:
        return Upgrade(refusal=f"{component} {new} no longer serves {before.storage}, which {old} stores objects "
                               f"at: migrate them on a release that serves both first")
    if _drops_v1beta1(before, after) and not v1beta1_migrated:
        return Upgrade(refusal=f"{component} {old} -> {new}: {new} no longer serves v1beta1, and objects stored at "
                               "v1beta1 (any Kueue object written before 0.16) would no longer read back. Before the "
                               f"chart, on {old}: run {KUEUE_MIGRATION}, check that every Kueue CRD's "
                               "status.storedVersions is [v1beta2] and remove v1beta1 from it, then set "
                               "kueue.v1beta1_migrated: true")
    steps = [f"before the chart: prove no Kueue object is stored at v1beta1 ({V1BETA1_CHECK} lists [v1beta2] "
             f"only), else run {KUEUE_MIGRATION} on {old} first"] if _drops_v1beta1(before, after) else []
    steps += [f"read the release notes of {r.version}: {r.notes}" for r in crossed]
    how = KUEUE_MIGRATION if component == "Kueue" else "as its release notes say"
    steps += [f"after the upgrade, rewrite every stored object at {r.storage} ({how})"
              for prev, r in zip([before, *crossed], crossed, strict=False) if prev.storage != r.storage]
    return Upgrade(tuple(steps))
