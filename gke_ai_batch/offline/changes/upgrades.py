"""The Kueue and JobSet upgrades a `make diff` carries: the Helm release versions at BASE and in the working
tree, each move planned by gke_ai_batch.model.releases (its steps shown, a downgrade or skipped step refused)."""
from __future__ import annotations

from typing import Any

from gke_ai_batch.model.releases import unknown_version, upgrade
from gke_ai_batch.vocabulary import HELM_RELEASE, JOBSET_RELEASE, KUEUE_RELEASE

COMPONENT = {KUEUE_RELEASE: "Kueue", JOBSET_RELEASE: "JobSet"}


def versions(resources: list[dict[str, Any]]) -> dict[str, str]:
    """Kueue's and JobSet's chart versions in a plan, by component."""
    return {COMPONENT[r["inputs"]["name"]]: str(r["inputs"].get("version")) for r in resources
            if r["type"] == HELM_RELEASE and (r.get("inputs") or {}).get("name") in COMPONENT}


def upgrades(old: list[dict[str, Any]], new: list[dict[str, Any]],
             v1beta1_migrated: bool = False) -> tuple[list[str], list[str]]:
    """(lines for the report, refusals at the config path) for each release whose version moves;
    `v1beta1_migrated`: the new stack file's kueue.v1beta1_migrated."""
    lines: list[str] = []
    refused: list[str] = []
    after = versions(new)
    for component, was in versions(old).items():
        now = after.get(component)
        if now is None or now == was:
            continue
        if unknown_version(component, was):
            lines.append(f"upgrade {component} {was} -> {now}: BASE runs a release the allow-list does not know; "
                         f"read the release notes of every release in between")
            continue
        planned = upgrade(component, was, now, v1beta1_migrated)
        if planned.refusal:
            refused.append(f"platform.{component.lower()}.version: {planned.refusal}")
        else:
            lines += [f"upgrade {component} {was} -> {now}:", *(f"  {step}" for step in planned.steps)]
    return lines, refused
