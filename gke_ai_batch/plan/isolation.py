"""The network boundary of a team namespace: one NetworkPolicy that denies every connection in and
out except what its workloads need (GKE Dataplane V2 enforces NetworkPolicy; it is on in every
cluster the platform creates, and always on Autopilot).

Allowed: pods of the same namespace (a JobSet's pods, a multislice job's coordinator), DNS from
kube-dns, the GKE metadata server (Workload Identity Federation tokens for the team's buckets), the
managed Prometheus collector's pods scraping the team's PodMonitorings, and addresses outside the private
ranges (Google APIs: Cloud Storage, Artifact Registry). Every private range is excluded, so no pod of
another team's namespace, no node and no internal service is reachable.

The collector is let in on every port: the ports it scrapes are the ones the namespace's own PodMonitorings name,
which members write after the plan (a name or number, resolved against the selected pods at scrape time), so no
port list known to the plan would be both sound and complete. The bound is who and where instead: only the
collector's pods (not the operator or rule evaluator beside them), which scrape only this namespace's pods, as
its PodMonitorings direct (the collector targets a PodMonitoring's own namespace, and the scrape-routes policy
refuses proxies and token URLs: plan.namespace_policies).
"""
from __future__ import annotations

from typing import Any

from gke_ai_batch.vocabulary import GMP_COLLECTOR_LABELS, GMP_NAMESPACES, TEAM_LABEL, Manifest

NAME_LABEL = "kubernetes.io/metadata.name"  # set by Kubernetes on every namespace
# RFC 1918 and RFC 6598 (the ranges the platform's networks may use: plan.network) and link-local.
PRIVATE_RANGES = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16")
# GKE's metadata server, which serves Workload Identity Federation tokens (the Cloud Storage FUSE
# sidecar in the pod needs them too): 169.254.169.254 on Dataplane V2 (ports 80 and 8080), and
# 169.254.169.252 on ports 987/988 where the legacy path is used (Google's Cloud Service Mesh egress
# tutorial, and GKE's network policy page as third parties quote it).
METADATA_SERVER = (("169.254.169.254/32", (80, 8080)), ("169.254.169.252/32", (987, 988)))
# kube-dns pods, and NodeLocal DNSCache on the node (host network, so by address; always on in Autopilot).
DNS = ({"namespaceSelector": {"matchLabels": {NAME_LABEL: "kube-system"}},
        "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}},
       {"ipBlock": {"cidr": "169.254.20.10/32"}})
DNS_PORTS = [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]


def _egress() -> list[dict[str, Any]]:
    same_namespace: dict[str, Any] = {"to": [{"podSelector": {}}]}
    dns = {"to": list(DNS), "ports": DNS_PORTS}
    metadata = [{"to": [{"ipBlock": {"cidr": cidr}}], "ports": [{"protocol": "TCP", "port": p} for p in ports]}
                for cidr, ports in METADATA_SERVER]
    public = {"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": list(PRIVATE_RANGES)}}]}
    return [same_namespace, dns, *metadata, public]


def _ingress() -> list[dict[str, Any]]:
    collectors = [{"namespaceSelector": {"matchLabels": {NAME_LABEL: ns}},
                   "podSelector": {"matchLabels": dict(GMP_COLLECTOR_LABELS)}}
                  for ns in sorted(set(GMP_NAMESPACES.values()))]
    return [{"from": [{"podSelector": {}}]}, {"from": collectors}]


def isolation_policy(team: str, ns: str, name: str) -> Manifest:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": ns, "labels": {TEAM_LABEL: team}},
            "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"], "ingress": _ingress(),
                     "egress": _egress()}}
