"""The MultiKueue fleet in a program: a manager stack reads its workers through pulumi.StackReference
(WorkerStacks), declares on each worker what the work it dispatches there needs, with the worker's own
Kubernetes provider (FleetWorker), and connects its Kueue to them (FleetManager); a worker stack exports what its
manager reads (worker_output). The decisions are plan.fleet's.

No `from __future__ import annotations`: the component analyzer reads the annotations at run time."""
import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import yaml
from pulumi.runtime.sync_await import _sync_await

from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.model.fleet_config import FleetConfig, stack_parts
from gke_ai_batch.model.fleet_facts import KUBECONFIG_OUTPUT, WORKER_OUTPUT
from gke_ai_batch.plan.fleet import FleetPlan, WorkerPlan
from gke_ai_batch.plan.fleet_access import SERVICE_ACCOUNT
from gke_ai_batch.plan.fleet_worker import worker_facts
from gke_ai_batch.plan.platform import Platform
from gke_ai_batch.vocabulary import Manifest, component_type

from .gke_cluster import GkeCluster
from .manifests import declare


class WorkerStacks:
    """A manager's references to its worker stacks, and their `fleetWorker` outputs by worker name.

    The outputs are awaited before the plan is derived, so that every quota is checked against the workers
    before any resource is registered: the SDK's own synchronous invokes wait the same way
    (pulumi/runtime/invoke.py, `_sync_await`); StackReferences are reads, which run in previews too, so the
    values are the worker's last deployment's. A worker stack must be deployed before its manager.

    A bare stack name is qualified with this stack's organization and project: the engine would complete it
    with the backend's default organization instead (pulumi/pkg/backend/httpstate/backend.go)."""

    def __init__(self) -> None:
        self.references: dict[str, pulumi.StackReference] = {}

    def __call__(self, fleet: FleetConfig) -> dict[str, Any]:
        outputs = {}
        for i, w in enumerate(fleet.workers):
            reference = pulumi.StackReference(f"fleet-{w.name}", stack_name=qualified(w.stack))
            self.references[w.name] = reference
            try:
                details = _sync_await(reference.get_output_details(WORKER_OUTPUT))
            except Exception as e:  # the engine's refusal of the reference, in its words  # noqa: BLE001
                raise ConfigError(path_of("fleet", "workers", i, "stack"),
                                  f"stack {w.stack!r} cannot be read: {e}") from None
            outputs[w.name] = details.value if details.value is not None else details.secret_value
            if outputs[w.name] is not None and not _has_output(reference, KUBECONFIG_OUTPUT):
                raise ConfigError(path_of("fleet", "workers", i, "stack"), f"stack {w.stack!r} has no "
                                  f"`{KUBECONFIG_OUTPUT}` output, through which the manager declares the worker's "
                                  "objects: export it as the project's program does")
        return outputs


def _has_output(reference: pulumi.StackReference, name: str) -> bool:
    details = _sync_await(reference.get_output_details(name))
    return details.value is not None or details.secret_value is not None


def qualified(stack: str) -> str:
    """`organization/project/stack` for a stack of this project named alone."""
    organization, project, name = stack_parts(stack)
    return f"{organization or pulumi.get_organization()}/{project or pulumi.get_project()}/{name}"


def _kubeconfig(worker: str, server: str, ca_certificate: str, token: str) -> str:
    """What Kueue 0.19 accepts for a worker: an inline token and CA data, no exec plugin."""
    user = f"{worker}-{SERVICE_ACCOUNT}"
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": worker,
        "clusters": [{"name": worker, "cluster": {"server": f"https://{server}",
                                                  "certificate-authority-data": ca_certificate}}],
        "contexts": [{"name": worker, "context": {"cluster": worker, "user": user}}],
        "users": [{"name": user, "user": {"token": token}}]}, sort_keys=False)


@dataclass
class FleetWorkerArgs:
    plan: WorkerPlan


class FleetWorker(pulumi.ComponentResource):
    """What the manager declares on one worker, through the worker's provider: the MultiKueue identity and
    its token, then priorities, cohorts, namespaces, ClusterQueues and LocalQueues mirroring the manager's."""

    def __init__(self, name: str, args: FleetWorkerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("FleetWorker"), name, None, opts)
        p = args.plan
        token = p.token
        made = [declare(f"{name}-{m['kind'].lower()}-{m['metadata']['name']}", m, pulumi.ResourceOptions(parent=self))
                for m in p.identity]
        # The token controller fills the Secret, and the provider waits for it (pulumi-kubernetes#2048);
        # the ServiceAccount first (pulumi-kubernetes#4396).
        secret = k8s.core.v1.Secret(f"{name}-token-{token['metadata']['name'].rsplit('-', 1)[-1]}",
                                    metadata=token["metadata"], type=token["type"],
                                    opts=pulumi.ResourceOptions(parent=self, depends_on=made))
        self.token: pulumi.Output[str] = pulumi.Output.secret(secret.data.apply(
            lambda d: base64.b64decode((d or {}).get("token", "")).decode()))
        self._declare_objects(name, p.objects, p.protected)
        self.register_outputs({})

    def _declare_objects(self, name: str, objects: tuple[Manifest, ...], protected: tuple[str, ...]) -> None:
        """In dependency order: namespaces and what ClusterQueues name, what lives in the namespaces, the queues,
        then the LocalQueues that name them. A team namespace the manager protects is protected here too:
        deleting it would end the work running in it."""
        def layer(ms: list[Manifest], after: list[pulumi.Resource]) -> list[pulumi.Resource]:
            return [declare(_object_name(name, m), m, pulumi.ResourceOptions(
                parent=self, depends_on=after,
                protect=m["kind"] == "Namespace" and m["metadata"]["name"] in protected)) for m in ms]
        queues = ("ClusterQueue", "LocalQueue")
        first = layer([m for m in objects if m["kind"] not in queues and not m["metadata"].get("namespace")], [])
        inside = layer([m for m in objects if m["kind"] not in queues and m["metadata"].get("namespace")], first)
        cqs = layer([m for m in objects if m["kind"] == "ClusterQueue"], first)
        layer([m for m in objects if m["kind"] == "LocalQueue"], [*first, *inside, *cqs])


def _worker_kubeconfig(plan: WorkerPlan, worker: FleetWorker) -> pulumi.Output[str]:
    """The worker's kubeconfig for Kueue, secret: it holds the token."""
    facts = plan.facts
    config: pulumi.Output[str] = worker.token.apply(
        lambda token: _kubeconfig(plan.name, facts.server, facts.ca_certificate, token))
    return pulumi.Output.secret(config)


def _object_name(prefix: str, m: Manifest) -> str:
    meta = m["metadata"]
    where = f"{meta['namespace']}-" if meta.get("namespace") else ""
    return f"{prefix}-{m['kind'].lower()}-{where}{meta['name']}"


@dataclass
class FleetManagerArgs:
    plan: FleetPlan
    references: Mapping[str, pulumi.StackReference]
    kueue: pulumi.Resource  # the manager's Kueue release: its CRDs and namespace


class FleetManager(pulumi.ComponentResource):
    """On the manager, the fleet-flavor admission policy, and per worker a kubeconfig Secret and a
    MultiKueueCluster; each worker's objects, through a provider from the worker stack's kubeconfig output (the
    MultiKueueConfigs and AdmissionChecks are the KueueQueues')."""

    def __init__(self, name: str, args: FleetManagerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("FleetManager"), name, None, opts)
        secrets = {s["metadata"]["name"]: s for s in args.plan.secrets}
        for policy in args.plan.policies:
            declare(f"{name}-{policy['kind'].lower()}", policy, pulumi.ResourceOptions(parent=self))
        for w, cluster in zip(args.plan.workers, args.plan.clusters, strict=True):
            # require_output: a provider without a kubeconfig would use the deployer's current context.
            # The worker's cluster identity: its credential rotation updates this provider, its replacement
            # replaces it (a worker stack from before it has none: pulumi-kubernetes' heuristic applies).
            provider = k8s.Provider(f"{name}-{w.name}-k8s", kubeconfig=args.references[w.name].require_output(
                KUBECONFIG_OUTPUT), cluster_identifier=w.facts.cluster_identifier,
                opts=pulumi.ResourceOptions(parent=self))
            worker = FleetWorker(f"{name}-{w.name}", FleetWorkerArgs(w), pulumi.ResourceOptions(
                parent=self, providers=[provider]))
            body = secrets[cluster["spec"]["clusterSource"]["kubeConfig"]["location"]]
            secret = k8s.core.v1.Secret(f"{name}-{w.name}-kubeconfig", metadata=body["metadata"], type=body["type"],
                                        string_data={"kubeconfig": _worker_kubeconfig(w, worker)},
                                        opts=pulumi.ResourceOptions(parent=self, depends_on=[args.kueue]))
            declare(f"{name}-{w.name}-cluster", cluster, pulumi.ResourceOptions(
                parent=self, depends_on=[secret, args.kueue]))
        self.register_outputs({"workers": [w.name for w in args.plan.workers]})


def worker_output(platform: Platform, cluster: GkeCluster) -> dict[str, Any]:
    """A worker stack's `fleetWorker` output: its facts, the address and CA its manager's Kueue connects to
    (the IP endpoint: a ServiceAccount token is not an IAM identity), and its cluster's identity, which the
    manager's provider for the worker takes."""
    return {**worker_facts(platform.config, platform.scheduling.flavors, platform.frameworks),
            "server": cluster.endpoint, "ca_certificate": cluster.cluster.master_auth.cluster_ca_certificate,
            "cluster_identifier": cluster.identifier}
