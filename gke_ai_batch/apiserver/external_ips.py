"""Service externalIPs, which every planned cluster blocks (plan.gke_inputs: `service_external_ips_config` off, for
CVE-2020-8554). GKE holds the block with Kubernetes' DenyServiceExternalIPs admission plugin
(kubernetes plugin/pkg/admission/network/denyserviceexternalips/admission.go): a Service may keep the external
IPs it has, but neither a create nor an update may add one."""
from __future__ import annotations

from gke_ai_batch.vocabulary import Obj

PLUGIN = "DenyServiceExternalIPs"
DENIED = "Use of external IPs is denied by admission control"  # admission.go, admission.NewForbidden


def _ips(obj: Obj | None) -> list[str]:
    return list(((obj or {}).get("spec") or {}).get("externalIPs") or [])


def adds_external_ips(obj: Obj, old: Obj | None) -> bool:
    """Whether the plugin refuses: a Service with an external IP that `old` (None on a create) did not have
    (admission.go `isSubset`)."""
    return obj.get("kind") == "Service" and any(ip not in _ips(old) for ip in _ips(obj))
