"""GKE's rules over the cluster's network: ranges that do not overlap and hold every node and Pod at full size."""
from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Sequence

from gke_ai_batch.model.gke_cluster_rules import parse_cidr
from gke_ai_batch.model.gke_rule_sources import ALIAS_IPS, POD_RANGE, Finding, GkeRule, Props
from gke_ai_batch.model.pool_facts import pool_facts
from gke_ai_batch.model.words import plural

RESERVED_PER_SUBNET = 4  # Google Cloud keeps 4 addresses of every subnet's primary range
POD_BLOCK_PER_NODE = 24  # 110 Pods per node (GKE's default): a /24 per node
SURGE_NODES_PER_POOL = 1  # GKE's default maxSurge during node upgrades
RANGE_KEYS = {"control plane": "master_ipv4_cidr", "node": "nodes_cidr", "Pod": "pods_cidr", "Service": "services_cidr"}


def subnet_ranges(subnet: Props, c: Props) -> dict[str, ipaddress.IPv4Network]:
    """The cluster's ranges by role (control plane, node, Pod, Service), those given and well formed:
    the subnet's primary range, the secondary ranges the cluster names, a private Standard cluster's /28."""
    secondary = {r.get("rangeName"): r.get("ipCidrRange") for r in subnet.get("secondaryIpRanges") or []}
    policy = c.get("ipAllocationPolicy") or {}
    given = {"control plane": (c.get("privateClusterConfig") or {}).get("masterIpv4CidrBlock"),
             "node": subnet.get("ipCidrRange"), "Pod": secondary.get(policy.get("clusterSecondaryRangeName")),
             "Service": secondary.get(policy.get("servicesSecondaryRangeName"))}
    return {role: net for role, value in given.items() if value and (net := parse_cidr(value)) is not None}


def _range_overlap(subnet: Props, c: Props, pools: Sequence[Props]) -> Iterator[Finding]:
    ranges = subnet_ranges(subnet, c)
    roles = list(ranges)
    for i, role in enumerate(roles):
        for before in roles[:i]:
            if ranges[role].overlaps(ranges[before]):
                yield Finding(f"{ranges[role]} overlaps the {before} range {ranges[before]}; the control-plane, "
                              "node, Pod and Service ranges must not overlap", f".{RANGE_KEYS[role]}")
                return


def nodes_at_most(pools: Sequence[Props], zones: Sequence[str]) -> int:
    """The most nodes the pools can hold at once: every pool at full size, plus a surge node each."""
    return sum(pool_facts(p, zones).nodes for p in pools) + SURGE_NODES_PER_POOL * len(pools)


def nodes_held(cidr: ipaddress.IPv4Network, role: str) -> int:
    """How many nodes a node range (its addresses less the reserved ones) or a Pod range (a /24 each) holds."""
    if role == "node":
        return cidr.num_addresses - RESERVED_PER_SUBNET
    return cidr.num_addresses >> (32 - POD_BLOCK_PER_NODE)


def _prefix_for(nodes: int, role: str) -> int:
    """The longest prefix whose range holds `nodes` nodes in that role."""
    if role == "node":
        return 32 - (nodes + RESERVED_PER_SUBNET - 1).bit_length()
    return 32 - (nodes - 1).bit_length() - (32 - POD_BLOCK_PER_NODE)


def _range_sizes(subnet: Props, c: Props, pools: Sequence[Props]) -> Iterator[Finding]:
    ranges, nodes = subnet_ranges(subnet, c), nodes_at_most(pools, c.get("nodeLocations") or ())
    for role in ("node", "Pod"):
        if role in ranges and nodes_held(ranges[role], role) < nodes:
            yield Finding(f"{ranges[role]} holds {plural(nodes_held(ranges[role], role), 'node')}; "
                          f"the pools reach {plural(nodes, 'node')} at full size with one surge node each: use a "
                          f"/{_prefix_for(nodes, role)} or larger", f".{RANGE_KEYS[role]}")


NETWORK_RULES: tuple[GkeRule, ...] = (
    GkeRule("network-range-overlap", "network", "network",
            "the node range (the subnet's primary range), the Pod and Service secondary ranges and a private "
            "cluster's control-plane range do not overlap", ALIAS_IPS, _range_overlap),
    GkeRule("network-range-size", "network", "network",
            "the node range holds every node (less 4 reserved addresses) and the Pod range a /24 per node (110 "
            "Pods per node), for all pools at full size plus one surge node each", POD_RANGE, _range_sizes),
)
