"""GKE's create-time rules as data: what each setting the platform sends to GKE must satisfy, the
config path it concerns and the document that states it.

The planner checks every rule against the inputs it is about to send (gke_inputs, in the engine's
camelCase form) and stops with a ConfigError at the rule's config path; the policy pack runs the same
rules over the resources of any program (a mandatory violation). `docs/gke-rules.md` is generated
from this table (`make docs`). The rules are kept by subject (gke_cluster_rules, gke_pool_rules,
gke_network_rules, gke_compute_class_rules, gke_pathways_rules, gke_slicing_rules) with their documents in
gke_rule_sources; RULES is the table in the order the page lists them.

A cluster rule's check takes the Cluster's props; a node pool rule's check takes the pool's props
and its cluster's props; a rule over all node pools takes the list of them and the cluster's props;
a network rule takes the cluster's Subnetwork props, the cluster's props and its node pools' props;
a compute class rule takes a ComputeClass manifest and its cluster's props; a Pathways rule takes one
team's Pathways facts (the planner's only: they live in the team blocks, not in GKE resources); the
sub-slicing rule takes the cluster's pinned version and the pools that set sub_slicing (the planner's only too).
Each yields Findings: a message, and where in the field (or which pool) it points.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence

from gke_ai_batch.model.gke_cluster_rules import CLUSTER_RULES as OWN_CLUSTER_RULES
from gke_ai_batch.model.gke_compute_class_rules import CLASS_RULES, NAP_RULES
from gke_ai_batch.model.gke_network_rules import NETWORK_RULES
from gke_ai_batch.model.gke_pathways_rules import PATHWAYS_RULES
from gke_ai_batch.model.gke_pool_rules import POOL_RULES, STACK_RULES
from gke_ai_batch.model.gke_rule_sources import Finding, GkeRule, Props
from gke_ai_batch.model.gke_slicing_rules import SLICING_CLUSTER_RULES, SLICING_POOL_RULES, SUB_SLICING_RULES

CLUSTER_RULES = OWN_CLUSTER_RULES + NAP_RULES + SLICING_CLUSTER_RULES
NODE_POOL_RULES = POOL_RULES + SLICING_POOL_RULES
RULES = (CLUSTER_RULES + SUB_SLICING_RULES + NODE_POOL_RULES + STACK_RULES + NETWORK_RULES + CLASS_RULES
         + PATHWAYS_RULES)


def cluster_findings(cluster: Props) -> Iterator[tuple[GkeRule, Finding]]:
    for rule in CLUSTER_RULES:
        for finding in rule.check(cluster):
            yield rule, finding


def pool_findings(pool: Props, cluster: Props) -> Iterator[tuple[GkeRule, Finding]]:
    for rule in NODE_POOL_RULES:
        for finding in rule.check(pool, cluster):
            yield rule, finding


def stack_findings(pools: Sequence[Props], cluster: Props) -> Iterator[tuple[GkeRule, Finding]]:
    for rule in STACK_RULES:
        for finding in rule.check(pools, cluster):
            yield rule, finding


def class_findings(compute_class: Props, cluster: Props) -> Iterator[tuple[GkeRule, Finding]]:
    for rule in CLASS_RULES:
        for finding in rule.check(compute_class, cluster):
            yield rule, finding


def network_findings(subnet: Props, cluster: Props, pools: Sequence[Props]) -> Iterator[tuple[GkeRule, Finding]]:
    for rule in NETWORK_RULES:
        for finding in rule.check(subnet, cluster, pools):
            yield rule, finding


def pathways_findings(team: Props) -> Iterator[tuple[GkeRule, Finding]]:
    for rule in PATHWAYS_RULES:
        for finding in rule.check(team):
            yield rule, finding


def sub_slicing_findings(facts: Props) -> Iterator[tuple[GkeRule, Finding]]:
    for rule in SUB_SLICING_RULES:
        for finding in rule.check(facts):
            yield rule, finding
