"""Declare a derived Kubernetes manifest as the matching pulumi-kubernetes resource."""
from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
from pulumi_kubernetes import _utilities

from gke_ai_batch.plan import lifecycle
from gke_ai_batch.vocabulary import Manifest


class CustomObject(k8s.apiextensions.CustomResource):
    """A CustomResource carrying its whole body. The Python SDK's CustomResource only takes `spec`,
    but some kinds keep fields at the top level (WorkloadPriorityClass `value`); the provider
    passes any field of a `kubernetes:<group/version>:<Kind>` resource through to the API server."""

    def __init__(self, name: str, manifest: Manifest, opts: pulumi.ResourceOptions):
        version = _utilities.get_version()  # type: ignore[no-untyped-call]  # the SDK leaves it untyped
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=version))
        pulumi.CustomResource.__init__(self, f"kubernetes:{manifest['apiVersion']}:{manifest['kind']}", name,
                                       dict(manifest), opts)


def declare(name: str, manifest: Manifest, opts: pulumi.ResourceOptions, patch: bool = False) -> pulumi.CustomResource:
    """The typed resource for built-in kinds (a NamespacePatch where the object exists already), a
    CustomObject for the rest; a PriorityClass and a custom object are replaced when a field their API makes
    immutable changes (not the objects Kueue holds while in use: plan.lifecycle.manifest)."""
    kind, meta = manifest["kind"], manifest["metadata"]
    if kind == "Namespace":
        make = k8s.core.v1.NamespacePatch if patch else k8s.core.v1.Namespace
        return make(name, metadata=meta, opts=opts)
    if kind == "PriorityClass":
        replaced = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(**lifecycle.manifest(kind).options()))
        return k8s.scheduling.v1.PriorityClass(
            name, metadata=meta, value=manifest["value"], global_default=manifest["globalDefault"],
            preemption_policy=manifest["preemptionPolicy"], description=manifest.get("description"), opts=replaced)
    if kind == "ResourceQuota":
        return k8s.core.v1.ResourceQuota(name, metadata=meta, spec=manifest["spec"], opts=opts)
    if kind == "LimitRange":
        return k8s.core.v1.LimitRange(name, metadata=meta, spec=manifest["spec"], opts=opts)
    if kind == "ServiceAccount":
        return k8s.core.v1.ServiceAccount(name, metadata=meta, opts=opts)
    if kind == "Secret":
        return k8s.core.v1.Secret(name, metadata=meta, type=manifest["type"], opts=opts)
    if kind == "Role":
        return k8s.rbac.v1.Role(name, metadata=meta, rules=manifest["rules"], opts=opts)
    if kind in ("RoleBinding", "ClusterRoleBinding"):
        make_binding = k8s.rbac.v1.RoleBinding if kind == "RoleBinding" else k8s.rbac.v1.ClusterRoleBinding
        return make_binding(name, metadata=meta, role_ref=manifest["roleRef"], subjects=manifest["subjects"],
                            opts=opts)
    immutable = lifecycle.manifest(kind).options()
    return CustomObject(name, manifest, pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(**immutable)))
