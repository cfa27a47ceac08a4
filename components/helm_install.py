"""Shared shape of the Helm installs: a release that waits until its workloads are ready, so that
objects depending on it are created only once the controller's webhook answers."""
from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s


def helm_release(name: str, release: str, chart: str, version: str, namespace: str, values: dict,
                 opts: pulumi.ResourceOptions) -> k8s.helm.v3.Release:
    return k8s.helm.v3.Release(
        name, name=release, chart=chart, version=version, namespace=namespace, create_namespace=True,
        values=values, atomic=True, cleanup_on_fail=True, timeout=600, skip_await=False, opts=opts)
