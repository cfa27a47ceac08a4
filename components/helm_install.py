"""Shared shape of the Helm installs: a release that waits until its workloads are ready, so that
objects depending on it are created only once the controller's webhook answers."""
from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s


def child_options(parent: pulumi.Resource, opts: pulumi.ResourceOptions | None) -> pulumi.ResourceOptions:
    """The release waits on what its component was told to wait on, and is retained where the component is:
    children inherit neither a component's depends_on nor its retain_on_delete (only protect), so without this
    the controllers could install before any node exists, and removing the install would uninstall it."""
    opts = opts or pulumi.ResourceOptions()
    return pulumi.ResourceOptions(parent=parent, depends_on=opts.depends_on, retain_on_delete=opts.retain_on_delete)


def helm_release(name: str, release: str, chart: str, version: str, namespace: str, values: dict[str, Any],
                 opts: pulumi.ResourceOptions) -> k8s.helm.v3.Release:
    return k8s.helm.v3.Release(
        name, name=release, chart=chart, version=version, namespace=namespace, create_namespace=True,
        values=values, atomic=True, cleanup_on_fail=True, timeout=600, skip_await=False, opts=opts)
