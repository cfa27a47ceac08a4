"""GKE's create-time rules over a cluster's own settings: maintenance, private control plane, groups, labels,
location."""
from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator, Sequence
from datetime import timedelta

from gke_ai_batch.model import labels
from gke_ai_batch.model.gke_rule_sources import (
    EXCLUSIONS,
    GCP_LABELS,
    GROUPS,
    LOCATIONS,
    MAINTENANCE,
    PRIVATE,
    PRIVATE_ENDPOINT,
    Finding,
    GkeRule,
    Props,
)
from gke_ai_batch.model.maintenance import WindowError, parse_time, worst_case_hours
from gke_ai_batch.model.words import did_you_mean

# The English page says 48 h in any 32 days; a newer translation says 92 days. 48 h in the worst 32
# days implies at least 96 h in any 92, so checking 32 days is right under either text.
MIN_MAINTENANCE_HOURS = 48
NO_UPGRADES_MAX = timedelta(days=90)  # 30 days until the release of 2 June 2026
MAX_EXCLUSIONS = 20
SECURITY_GROUP = re.compile(r"^gke-security-groups@[a-z0-9.-]+\.[a-z]{2,}$")


def release_channel(c: Props) -> str | None:
    channel = (c.get("releaseChannel") or {}).get("channel")
    return channel if channel and channel != "UNSPECIFIED" else None


def _window(c: Props) -> Iterator[Finding]:
    w = (c.get("maintenancePolicy") or {}).get("recurringWindow")
    if not w:
        return
    try:
        hours = worst_case_hours(w["startTime"], w["endTime"], w["recurrence"])
    except WindowError as e:
        yield Finding(str(e))
        return
    if hours < MIN_MAINTENANCE_HOURS:
        yield Finding(f"{w['recurrence']} from {w['startTime']} to {w['endTime']} gives {hours:g} h in the worst "
                      f"32 days; GKE needs {MIN_MAINTENANCE_HOURS} (counting only windows of 4 h or more): "
                      "lengthen the window or add days")


def _exclusions(c: Props) -> Iterator[Finding]:
    exclusions = (c.get("maintenancePolicy") or {}).get("maintenanceExclusions") or []
    if len(exclusions) > MAX_EXCLUSIONS:
        yield Finding(f"{len(exclusions)} exclusions: a cluster has at most {MAX_EXCLUSIONS} at a time")
    for i, e in enumerate(exclusions):
        try:
            start, end = parse_time(e["startTime"]), parse_time(e["endTime"])
        except WindowError as err:
            yield Finding(str(err), f"[{i}]")
            continue
        scope = (e.get("exclusionOptions") or {}).get("scope", "NO_UPGRADES")
        if scope != "NO_UPGRADES" and not release_channel(c):
            yield Finding(f"exclusion {e['exclusionName']!r}: scope {scope} needs a release channel; "
                          "without one only NO_UPGRADES is allowed", f"[{i}].scope")
        elif end <= start:
            yield Finding(f"exclusion {e['exclusionName']!r} ends before it starts", f"[{i}].end")
        elif scope == "NO_UPGRADES" and end - start > NO_UPGRADES_MAX:
            yield Finding(f"exclusion {e['exclusionName']!r} lasts {(end - start).days} days; a NO_UPGRADES "
                          f"exclusion lasts at most {NO_UPGRADES_MAX.days} days (NO_MINOR_UPGRADES and "
                          "NO_MINOR_OR_NODE_UPGRADES may last until the version's end of support)", f"[{i}].end")


def parse_cidr(value: str) -> ipaddress.IPv4Network | None:
    try:
        return ipaddress.IPv4Network(value)
    except ValueError:
        return None


def _master_cidr(c: Props) -> Iterator[Finding]:
    cidr = (c.get("privateClusterConfig") or {}).get("masterIpv4CidrBlock")
    if cidr is None:
        return
    net = parse_cidr(cidr)
    if net is None or net.prefixlen != 28 or not net.is_private:
        yield Finding(f"{cidr!r}: the control plane range is a /28 in a private (RFC 1918) range, "
                      "such as 172.16.0.0/28")


def _private_endpoint(c: Props) -> Iterator[Finding]:
    private = c.get("privateClusterConfig") or {}
    if private.get("enablePrivateEndpoint") and not private.get("enablePrivateNodes"):
        yield Finding("private: the external endpoint is turned off only on a cluster with private nodes (the "
                      "provider applies enablePrivateEndpoint only then): set private_nodes true, or use authorized "
                      "(the external endpoint closed to all but the authorized networks)")


def _authorized_networks(c: Props) -> Iterator[Finding]:
    for i, b in enumerate((c.get("masterAuthorizedNetworksConfig") or {}).get("cidrBlocks") or []):
        if parse_cidr(b.get("cidrBlock", "")) is None:
            yield Finding(f"{b.get('cidrBlock')!r} is not an IPv4 CIDR block such as 10.0.0.0/8", f"[{i}].cidr")


def _security_group(c: Props) -> Iterator[Finding]:
    group = (c.get("authenticatorGroupsConfig") or {}).get("securityGroup")
    if group is not None and not SECURITY_GROUP.match(group):
        yield Finding(f"{group!r}: the group must be named gke-security-groups@<your domain>")


def _cluster_labels(c: Props) -> Iterator[Finding]:
    problem = labels.gcp_labels_problem(c.get("resourceLabels") or {})
    if problem:
        yield Finding(problem)


def _zone_of(zone: str, region: str) -> bool:
    return bool(re.fullmatch(re.escape(region) + r"-[a-z]", zone))


def region_of(location: str) -> str:
    """us-east5 from us-east5 or us-east5-b (a zonal cluster's location)."""
    return location[:-2] if re.search(r"-[a-z]$", location) else location


def cluster_region(c: Props) -> str:
    return region_of(c.get("location") or "")


def zone_findings(zones: list[str], region: str, known: Sequence[str] = ()) -> Iterator[Finding]:
    """Each zone outside the region or listed twice; `known`: the cluster's zones, the guess for a typo."""
    for i, z in enumerate(zones):
        if region and not _zone_of(z, region):
            hint = did_you_mean(z, known).strip() or f"use a zone such as {region}-a"
            yield Finding(f"zone {z!r} is not in the cluster's region {region!r}; {hint}", f"[{i}]")
        elif zones.index(z) != i:
            yield Finding(f"zone {z!r} is listed twice", f"[{i}]")


def _cluster_location(c: Props) -> Iterator[Finding]:
    if not c.get("location"):
        yield Finding("a zonal cluster needs a zone: list at least one in zones")
    yield from zone_findings(list(c.get("nodeLocations") or []), cluster_region(c))


CLUSTER_RULES: tuple[GkeRule, ...] = (
    GkeRule("maintenance-availability", "cluster", "cluster.maintenance_window",
            "a recurring maintenance window gives at least 48 hours in any 32-day period, counting only "
            "contiguous windows of at least 4 hours; times are RFC 3339", MAINTENANCE, _window),
    GkeRule("maintenance-exclusion", "cluster", "cluster.maintenance_exclusions",
            "at most 20 exclusions; times are RFC 3339 and end after they start; a NO_UPGRADES exclusion lasts at "
            "most 90 days; the other scopes need a release channel", EXCLUSIONS, _exclusions),
    GkeRule("private-control-plane-range", "cluster", "cluster.master_ipv4_cidr",
            "the control plane's range of a private cluster is a /28 from a private range", PRIVATE, _master_cidr),
    GkeRule("private-endpoint-private-nodes", "cluster", "cluster.ip_endpoint",
            "the external IP endpoint is turned off (privateClusterConfig.enablePrivateEndpoint) only on a cluster "
            "with private nodes", PRIVATE_ENDPOINT, _private_endpoint),
    GkeRule("authorized-networks", "cluster", "cluster.master_authorized_networks",
            "authorized networks are IPv4 CIDR blocks", PRIVATE, _authorized_networks),
    GkeRule("security-group-name", "cluster", "cluster.security_group",
            "Google Groups for RBAC names the group gke-security-groups@<domain>", GROUPS, _security_group),
    GkeRule("cluster-resource-labels", "cluster", "labels",
            "resource labels: at most 64, keys and values of at most 63 lowercase letters, digits, '-' and '_', "
            "keys beginning with a letter", GCP_LABELS, _cluster_labels),
    GkeRule("cluster-zones", "cluster", "zones",
            "a zonal cluster has a zone; node locations are distinct zones of the cluster's region",
            LOCATIONS, _cluster_location),
)
