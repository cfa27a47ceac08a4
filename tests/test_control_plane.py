"""The control plane of production clusters is closed (issue 21, part 7): no external IP endpoint, a
DNS-based endpoint without user traffic unless the stack says why, authorized networks on the internal
endpoint too. Non-production stacks keep today's endpoints and hear the same as advice."""
import copy

import pytest

from gke_ai_batch.model.cluster_config import DNS_ENDPOINT_REASON_LABEL
from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.model.gke_rules import RULES, cluster_findings
from gke_ai_batch.offline.views.check import violations
from gke_ai_batch.plan.platform import build_platform
from gke_ai_batch.policies import resource_rules as rr
from gke_ai_batch.policies.pack import RESOURCE_POLICIES

from .conftest import ROOT, by_type, platform_of, run_config

REASON = "GitHub-hosted runners deploy it; VPC Service Controls guard container.googleapis.com"
LABEL_KEY, LABEL_VALUE = DNS_ENDPOINT_REASON_LABEL


def cluster_of(regs) -> dict:
    (cluster,) = by_type(regs, "container/cluster:Cluster")
    return cluster.inputs


def rule(name):
    return next(p.rule for p in RESOURCE_POLICIES if p.name == name)


def variant(stack, **cluster):
    cfg = platform_of(stack)
    cfg["cluster"].update(cluster)
    return cfg


def refused(cfg) -> ConfigError:
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    return e.value


def hardening(regs, level="mandatory"):
    policy = "production-hardening" if level == "mandatory" else "hardening-advisory"
    return [v["message"] for v in violations(regs) if v["policy"] == policy and v["level"] == level]


# What is sent


def test_prod_sends_a_closed_control_plane(plan):
    c = cluster_of(plan("prod"))
    assert c["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": True,
                                         "masterIpv4CidrBlock": "172.16.0.32/28"}
    assert c["controlPlaneEndpointsConfig"] == {"dnsEndpointConfig": {"allowExternalTraffic": False}}
    authorized = c["masterAuthorizedNetworksConfig"]
    assert [b["cidrBlock"] for b in authorized["cidrBlocks"]] == ["10.20.0.0/16", "10.30.0.0/24"]
    assert authorized["gcpPublicCidrsAccessEnabled"] is False
    assert authorized["privateEndpointEnforcementEnabled"] is True
    assert LABEL_KEY not in c["resourceLabels"]
    assert rr.control_plane_closed(c) == []


def test_the_production_defaults_are_what_prod_spells_out():
    """prod's ip_endpoint and dns_endpoint only repeat the production defaults."""
    cfg = platform_of("prod")
    assert (cfg["cluster"].pop("ip_endpoint"), cfg["cluster"].pop("dns_endpoint")) == ("private", False)
    c = cluster_of(run_config(cfg))
    assert c["privateClusterConfig"]["enablePrivateEndpoint"] is True
    assert c["controlPlaneEndpointsConfig"]["dnsEndpointConfig"]["allowExternalTraffic"] is False


def test_a_production_kubeconfig_names_the_internal_endpoint_with_the_cluster_ca():
    """With the DNS-based endpoint closed, the program (and so the deploying runner) reaches the control
    plane at the address GKE reports as the cluster's endpoint: the internal one, the external being off."""
    from gke_ai_batch.components.gke_cluster import GkeCluster
    from gke_ai_batch.offline.engine.runtime import MOCK_DNS_ENDPOINT, MOCK_ENDPOINT, record
    args = {"project": "acme-ml", "region": "us-east5", "environment": "prod", "owner": "ml",
            "cluster": {"name": "solo", "private_nodes": True,
                        "master_authorized_networks": [{"cidr": "10.30.0.0/24", "name": "ci-runners"}]}}
    seen: list[str] = []
    regs = record(lambda: GkeCluster("solo", args).kubeconfig.apply(seen.append), "direct")
    c = cluster_of(regs)
    assert c["privateClusterConfig"]["enablePrivateEndpoint"] is True
    assert f"server: https://{MOCK_ENDPOINT}" in seen[0] and "certificate-authority-data: " in seen[0]
    assert MOCK_DNS_ENDPOINT not in seen[0]


def test_a_stack_named_production_is_production_without_the_flag():
    cfg = platform_of("dev")
    cfg["environment"] = "production"
    c = cluster_of(run_config(cfg))
    assert c["controlPlaneEndpointsConfig"]["dnsEndpointConfig"]["allowExternalTraffic"] is False
    assert c["privateClusterConfig"]["enablePrivateEndpoint"] is True


def test_non_production_keeps_todays_endpoints(plan):
    """dev sends what it sent before: the DNS-based endpoint open, the external IP endpoint on, the
    authorized networks alone (dns_endpoint true there keeps its meaning)."""
    c = cluster_of(plan("dev"))
    assert c["controlPlaneEndpointsConfig"] == {"dnsEndpointConfig": {"allowExternalTraffic": True}}
    assert c["privateClusterConfig"]["enablePrivateEndpoint"] is False
    assert c["masterAuthorizedNetworksConfig"] == {"cidrBlocks": [{"cidrBlock": "10.0.0.0/8", "displayName": "corp"}]}
    explicit = cluster_of(run_config(variant("dev", dns_endpoint=True)))
    assert explicit["controlPlaneEndpointsConfig"] == c["controlPlaneEndpointsConfig"]


def test_non_production_may_close_its_control_plane_too():
    c = cluster_of(run_config(variant("dev", ip_endpoint="authorized", dns_endpoint=False)))
    assert c["privateClusterConfig"]["enablePrivateEndpoint"] is False
    assert c["masterAuthorizedNetworksConfig"]["gcpPublicCidrsAccessEnabled"] is False
    assert c["masterAuthorizedNetworksConfig"]["privateEndpointEnforcementEnabled"] is True
    assert rr.control_plane_closed(c) == []


def test_production_without_private_nodes_defaults_to_the_authorized_external_endpoint():
    """No private nodes, no private endpoint: the external endpoint stays, closed to all but the
    authorized networks; the production policy still asks for private nodes."""
    regs = run_config(variant("prod", private_nodes=False, ip_endpoint=None))
    c = cluster_of(regs)
    assert c.get("privateClusterConfig") is None
    assert c["masterAuthorizedNetworksConfig"]["gcpPublicCidrsAccessEnabled"] is False
    assert hardening(regs) == ["cluster ml-prod: use private nodes (privateClusterConfig.enablePrivateNodes)"]


# The reason


def test_a_reason_opens_the_dns_endpoint_in_production_and_the_policy_accepts_it():
    cfg = variant("prod", dns_endpoint_reason=REASON)
    del cfg["cluster"]["dns_endpoint"]
    regs = run_config(cfg)
    c = cluster_of(regs)
    assert c["controlPlaneEndpointsConfig"] == {"dnsEndpointConfig": {"allowExternalTraffic": True}}
    assert c["resourceLabels"][LABEL_KEY] == LABEL_VALUE
    assert hardening(regs) == []
    both = cluster_of(run_config(variant("prod", dns_endpoint=True, dns_endpoint_reason=REASON)))
    assert both["controlPlaneEndpointsConfig"] == c["controlPlaneEndpointsConfig"]
    unmarked = copy.deepcopy(c)
    del unmarked["resourceLabels"][LABEL_KEY]
    (msg,) = rule("production-hardening")(unmarked)
    assert "allowExternalTraffic true" in msg and "cluster.dns_endpoint_reason" in msg


# The policies


def test_the_production_policy_refuses_an_open_control_plane():
    """A production stack that asks for the public IP endpoint plans, and the mandatory policy
    refuses it, naming each field and how to fix it."""
    regs = run_config(variant("prod", ip_endpoint="public"))
    c = cluster_of(regs)
    assert c["privateClusterConfig"]["enablePrivateEndpoint"] is False
    external, internal = hardening(regs)
    assert external.startswith("cluster ml-prod: the external IP endpoint is on and not closed to Google Cloud's")
    assert "privateClusterConfig.enablePrivateEndpoint not true" in external
    assert "gcpPublicCidrsAccessEnabled not false" in external and "cluster.ip_endpoint private" in external
    assert "masterAuthorizedNetworksConfig.privateEndpointEnforcementEnabled not true" in internal
    assert "set cluster.ip_endpoint private or authorized" in internal
    assert hardening(regs, "advisory") == []


def test_each_opening_is_one_finding_on_hand_built_props(plan):
    closed = cluster_of(plan("prod"))
    cases = {
        "dns": (lambda c: c["controlPlaneEndpointsConfig"]["dnsEndpointConfig"].update(allowExternalTraffic=True),
                "controlPlaneEndpointsConfig.dnsEndpointConfig.allowExternalTraffic true"),
        "external": (lambda c: (c["privateClusterConfig"].update(enablePrivateEndpoint=False),
                                c["masterAuthorizedNetworksConfig"].pop("gcpPublicCidrsAccessEnabled")),
                     "gcpPublicCidrsAccessEnabled not false"),
        "internal": (lambda c: c["masterAuthorizedNetworksConfig"].update(privateEndpointEnforcementEnabled=False),
                     "privateEndpointEnforcementEnabled not true"),
    }
    for change, fragment in cases.values():
        opened = copy.deepcopy(closed)
        change(opened)
        (msg,) = rule("production-hardening")(opened)
        assert fragment in msg
    authorized = copy.deepcopy(closed)  # the external endpoint on, closed to Google Cloud: accepted
    authorized["privateClusterConfig"]["enablePrivateEndpoint"] = False
    assert rule("production-hardening")(authorized) == []
    no_ip = copy.deepcopy(closed)  # no IP endpoints at all: nothing for the IP findings to judge
    no_ip["controlPlaneEndpointsConfig"]["ipEndpointsConfig"] = {"enabled": False}
    no_ip["privateClusterConfig"]["enablePrivateEndpoint"] = False
    no_ip["masterAuthorizedNetworksConfig"] = {"cidrBlocks": [{"cidrBlock": "10.20.0.0/16"}]}
    assert rule("production-hardening")(no_ip) == []


def test_non_production_hears_the_same_as_advice(plan):
    regs = plan("dev")
    advice = [m for m in hardening(regs, "advisory") if "endpoint" in m]
    assert len(advice) == 3
    assert any("DNS-based endpoint" in m and "cluster.dns_endpoint false" in m for m in advice)
    assert any("external IP endpoint" in m for m in advice) and any("internal IP endpoint" in m for m in advice)
    assert hardening(regs) == []


# Bad input: one error at the config path


@pytest.mark.parametrize("stack,change,path,fragment", [
    ("prod", dict(dns_endpoint=True), "platform.cluster.dns_endpoint",
     "true in a production stack opens the control plane"),
    ("dev", dict(dns_endpoint_reason=REASON), "platform.cluster.dns_endpoint_reason",
     "only production stacks close the DNS-based endpoint"),
    ("prod", dict(dns_endpoint_reason=REASON), "platform.cluster.dns_endpoint_reason",
     "with dns_endpoint false: the reason opens nothing"),
    ("prod", dict(dns_endpoint=None, dns_endpoint_reason="  "), "platform.cluster.dns_endpoint_reason",
     "an empty reason"),
    ("dev", dict(private_nodes=False, ip_endpoint="private"), "platform.cluster.ip_endpoint",
     "private: the external endpoint is turned off only on a cluster with private nodes"),
    ("dev", dict(ip_endpoint="authorized", master_authorized_networks=[]), "platform.cluster.ip_endpoint",
     "authorized closes the external endpoint to all but the authorized networks, and none are listed"),
    ("dev", dict(ip_endpoint="internal"), "platform.cluster.ip_endpoint", "'private', 'authorized' or 'public'"),
], ids=["dns-true-in-prod", "reason-outside-prod", "reason-with-dns-off", "blank-reason",
        "private-endpoint-without-private-nodes", "authorized-without-networks", "unknown-mode"])
def test_bad_control_plane_input_is_one_clear_error(stack, change, path, fragment):
    cfg = variant(stack, **change)
    cfg["cluster"] = {k: v for k, v in cfg["cluster"].items() if v is not None}
    e = refused(cfg)
    assert e.path == path
    assert fragment in str(e)


def test_the_private_endpoint_rule_is_in_the_table_with_its_source():
    (r,) = [r for r in RULES if r.id == "private-endpoint-private-nodes"]
    assert r.field == "cluster.ip_endpoint" and "enable_private_nodes is true" in r.source.title
    bad = {"privateClusterConfig": {"enablePrivateNodes": False, "enablePrivateEndpoint": True}, "location": "x"}
    assert [found.id for found, _ in cluster_findings(bad)] == ["private-endpoint-private-nodes"]
    good = {"privateClusterConfig": {"enablePrivateNodes": True, "enablePrivateEndpoint": True}, "location": "x"}
    assert list(cluster_findings(good)) == []
    assert "`private-endpoint-private-nodes`" in (ROOT / "docs" / "gke-rules.md").read_text()
