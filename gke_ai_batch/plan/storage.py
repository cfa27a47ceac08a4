"""Team data access: the Cloud Storage buckets a team's workloads read (datasets) and write
(checkpoints), granted to the team's Kubernetes service account in each of its namespaces through
Workload Identity Federation for GKE, with no Google service account and no key.

Upstream rules: bucket names (Cloud Storage "Bucket naming"); the member
principal://iam.googleapis.com/projects/PROJECT_NUMBER/locations/global/workloadIdentityPools/
PROJECT_ID.svc.id.goog/subject/ns/NAMESPACE/sa/KSA (GKE "Authenticate to Google Cloud APIs from GKE
workloads"); roles/storage.objectViewer to read, roles/storage.objectUser to read and write (the Cloud
Storage FUSE CSI driver's docs; objectUser cannot change ACLs or IAM); soft delete 7 to 90 days or 0
(Cloud Storage "Soft delete"); ServiceAccount names are DNS subdomains (Kubernetes "Object names")."""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.team_config import BucketConfig, TeamConfig
from gke_ai_batch.vocabulary import TEAM_LABEL

ROLES = {"read": "roles/storage.objectViewer", "read-write": "roles/storage.objectUser"}
SOFT_DELETE_DAYS = (7, 90)  # or 0: none
KEEP_DAYS = f"{SOFT_DELETE_DAYS[0]} to {SOFT_DELETE_DAYS[1]}"
DEFAULT_SOFT_DELETE_DAYS = 7
BUCKET_PART = re.compile(r"^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$")  # a name, or each dot-separated part of one
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
CREATED_ONLY = ("location", "versioning", "soft_delete_days")


@dataclass(frozen=True)
class BucketPlan:
    name: str
    role: str
    create: bool
    path: str
    location: str = ""
    versioning: bool = False
    soft_delete_days: int = DEFAULT_SOFT_DELETE_DAYS


@dataclass(frozen=True)
class TeamStoragePlan:
    team: str
    namespaces: tuple[str, ...]
    service_account: str
    buckets: tuple[BucketPlan, ...]

    def service_account_manifests(self) -> tuple[dict[str, Any], ...]:
        return tuple({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {
            "name": self.service_account, "namespace": ns, "labels": {TEAM_LABEL: self.team}}}
            for ns in self.namespaces)


def bucket_name_problem(name: str) -> str | None:
    """What breaks Cloud Storage's naming rules, in words; None when the name is allowed."""
    parts = name.split(".")
    if not all(BUCKET_PART.match(p) for p in parts):
        return ("use lowercase letters, digits, '-' and '_', starting and ending with a letter or digit (with "
                "dots between such parts, for a name under a domain you have verified)")
    if len(name) > (222 if len(parts) > 1 else 63) or len(name) < 3 or any(len(p) > 63 for p in parts):
        return "3 to 63 characters (up to 222 with dots, each dot-separated part at most 63)"
    if name.startswith("goog") or "google" in name or "g00gle" in name:
        return "a name may not begin with 'goog' or contain 'google' (or a close misspelling)"
    try:
        ipaddress.IPv4Address(name)
        return "a name may not be an IP address in dotted-decimal form"
    except ValueError:
        return None


def _bucket(cfg: PlatformConfig, b: BucketConfig, path: str) -> BucketPlan:
    problem = bucket_name_problem(b.name)
    if problem:
        raise ConfigError(f"{path}.name", f"{b.name!r} is not a Cloud Storage bucket name: {problem}")
    if b.existing:
        for key in CREATED_ONLY:
            if getattr(b, key) is not None:
                raise ConfigError(f"{path}.{key}", "an existing bucket keeps its own settings; the stack only "
                                  "grants access to it: drop the key, or set existing: false to create the bucket")
        return BucketPlan(b.name, ROLES[b.access], False, path)
    days = DEFAULT_SOFT_DELETE_DAYS if b.soft_delete_days is None else b.soft_delete_days
    if days and not SOFT_DELETE_DAYS[0] <= days <= SOFT_DELETE_DAYS[1]:
        raise ConfigError(f"{path}.soft_delete_days", f"{days}: soft delete keeps deleted objects {KEEP_DAYS} days, "
                          "or 0 for none")
    if b.access == "read-write" and not days and not b.versioning:
        raise ConfigError(f"{path}.soft_delete_days", "a read-write bucket holds checkpoints, which a bad write "
                          f"or delete can lose: keep soft delete ({KEEP_DAYS} days) or turn versioning on")
    return BucketPlan(b.name, ROLES[b.access], True, path, b.location or cfg.region, bool(b.versioning), days)


def _team_storage(cfg: PlatformConfig, i: int, team: TeamConfig, namespaces: tuple[str, ...]) -> TeamStoragePlan:
    ksa = team.service_account or f"{team.name}-workload"
    if ksa == "default":
        raise ConfigError(path_of("teams", i, "service_account"), "'default' exists in every namespace and every "
                          "Pod that names no account runs as it: name the team's own service account")
    if not DNS_SUBDOMAIN.match(ksa) or len(ksa) > 253:
        raise ConfigError(path_of("teams", i, "service_account"), f"{ksa!r} is not a Kubernetes service account "
                          "name: a DNS subdomain of at most 253 lowercase letters, digits, '-' and '.', each "
                          "part starting and ending with a letter or digit")
    buckets = tuple(_bucket(cfg, b, path_of("teams", i, "buckets", j)) for j, b in enumerate(team.buckets))
    return TeamStoragePlan(team.name, namespaces, ksa, buckets)


def _one_creator(plans: list[TeamStoragePlan]) -> None:
    """A bucket is created by one team (others name it existing) and listed once per team."""
    creator: dict[str, str] = {}
    listed: set[tuple[str, str]] = set()
    for plan in plans:
        for b in plan.buckets:
            if (plan.team, b.name) in listed:
                raise ConfigError(f"{b.path}.name", f"bucket {b.name!r} is listed twice for team {plan.team!r}")
            listed.add((plan.team, b.name))
            if b.create and b.name in creator:
                raise ConfigError(f"{b.path}.name", f"bucket {b.name!r} is also created at {creator[b.name]}; one "
                                  "team creates a bucket, and the others name it with existing: true")
            if b.create:
                creator[b.name] = b.path


def plan_storage(cfg: PlatformConfig, namespaces: dict[str, tuple[str, ...]]) -> tuple[TeamStoragePlan, ...]:
    """Each team that has buckets or names a service account: its service account and bucket grants."""
    plans = [_team_storage(cfg, i, t, namespaces[t.name]) for i, t in enumerate(cfg.teams)
             if t.buckets or t.service_account]
    _one_creator(plans)
    return tuple(plans)


def workload_principal(project_number: str, project: str, namespace: str, ksa: str) -> str:
    return (f"principal://iam.googleapis.com/projects/{project_number}/locations/global/workloadIdentityPools/"
            f"{project}.svc.id.goog/subject/ns/{namespace}/sa/{ksa}")


def bucket_inputs(b: BucketPlan, project: str, labels: dict[str, str]) -> dict[str, Any]:
    """A private bucket: uniform bucket-level access (IAM only, which Workload Identity Federation
    needs for read-write mounts) and public access prevention enforced, whatever the organisation's
    policy; soft delete and versioning as planned."""
    return dict(name=b.name, project=project, location=b.location.upper(), labels=labels,
                uniform_bucket_level_access=True, public_access_prevention="enforced",
                versioning={"enabled": b.versioning},
                soft_delete_policy={"retention_duration_seconds": b.soft_delete_days * 86400})
