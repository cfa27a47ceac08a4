"""The whole path a team member's object takes on the planned cluster, judged offline layer by layer.

`kubectl create` of a Job, JobSet, Pod, Deployment or StatefulSet by a member of the team that owns the
object's namespace passes, in the API server's order and then Kueue's:

1. RBAC: may the team create (or update) this kind there? (apiserver.access, the stack's roles and the upstream
   ones); a Service gaining external IPs is refused by GKE's DenyServiceExternalIPs (apiserver.external_ips);
   then on a create the stack's MutatingAdmissionPolicies (apiserver.mutating_policies: a queue's default
   time limit); then, on an update, the object's own validation: a Job's pod template is immutable but for
   a suspended Job's scheduling directives (apiserver.job_updates), and a claim's spec but for a bound claim's size
   (apiserver.claim_updates);
2. the API server's validation of every pod the object is or will create: no request above its limit, and an
   accelerator's (an extended resource's) limit given and equal to its request
   (apiserver.pod_resources; the namespace's LimitRange only fills in default requests and refuses nothing); on an
   update only the pods a changed template will create;
3. Pod Security at the namespace's enforce level and version, on every pod the object is or will create:
   PSA enforces on Pods only, so a refused template is a workload admitted and then never given its pods
   (apiserver.pod_security);
4. the stack's ValidatingAdmissionPolicies, on the object and then on each pod it will create
   (apiserver.cel_policies);
5. the namespace's ResourceQuotas, on what the object itself charges (on an update of a Service or a claim,
   what it grows by; apiserver.resource_quotas);
6. Kueue: its webhooks (admission.webhooks; for a Pod, the owner walk of admission.owners), then is it
   admitted, to which ClusterQueue and flavors (gke_ai_batch.admission). A CronJob is not Kueue's: it is
   created, and each Job it creates passes the policies, the quota and Kueue as its controller's request
   (apiserver.cron_jobs).

With the object as it was (`old`), the request is an UPDATE: RBAC's `update` verb, Pod Security unless only
fields it exempts changed, the policies with `oldObject`, Kueue's update validation, then what Kueue's
reconciler does with the result (admission.reconciler); with `scale`, an update of the scale subresource.

`judge_delete` is a member's DELETE of an object on the cluster: RBAC's `delete`, the policies with the object
as `oldObject` and the DeleteOptions as `request.options`, then what the garbage collector and Kueue do with what
the object owns (apiserver.deletes).

The first layer that refuses is the verdict. Pods are judged as their templates declare them: the
platform's ResourceFlavors add node labels but no tolerations, so nothing Kueue adds at admission changes
what a policy says. Other kinds (a Service, a ConfigMap, a LocalQueue, a RoleBinding) are judged by RBAC,
the policies and the quotas only. Cluster-scoped objects belong to no team: they pass only if some team may create them.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from gke_ai_batch.admission.cluster import Cluster
from gke_ai_batch.admission.decision import admit_in, workload_identity
from gke_ai_batch.admission.owners import managed_ancestor
from gke_ai_batch.admission.queues import enabled_frameworks, management_blocker
from gke_ai_batch.admission.reconciler import reconciler_effect
from gke_ai_batch.admission.results import AdmissionResult
from gke_ai_batch.admission.stateful_sets import replicas
from gke_ai_batch.admission.stateful_sets import scale_effect as stateful_set_scale
from gke_ai_batch.admission.stateful_sets import update_effect as stateful_set_effect
from gke_ai_batch.admission.stateful_sets import update_errors as stateful_set_errors
from gke_ai_batch.admission.terms import FRAMEWORKS, POD_TEMPLATE_KINDS
from gke_ai_batch.admission.webhooks import create_errors, update_errors, workload_slicing
from gke_ai_batch.vocabulary import Key, Obj

from .access import StackAccess
from .cel_policies import evaluate
from .claim_updates import claim_refusal
from .controller_users import pod_maker
from .cron_jobs import CONTROLLER as CRON_JOB_CONTROLLER
from .cron_jobs import CRON_JOB, job_of
from .deletes import KUBECTL, admitted_options, delete_effect
from .extended_tolerations import with_extended_tolerations
from .external_ips import DENIED as EXTERNAL_IPS_DENIED
from .external_ips import PLUGIN as EXTERNAL_IPS_PLUGIN
from .external_ips import adds_external_ips
from .job_defaults import as_validated
from .job_updates import template_refusal
from .mutating_policies import mutate
from .pod_gates import assigned_while_gated
from .pod_resources import invalid_resources
from .pod_security import check_pod, forbidden_detail, namespace_policy, pod_specs_of
from .rbac import AUTHENTICATED, CLUSTER
from .resource_quotas import exceeded
from .updates import new_pods, pod_security_judges
from .vap_matching import resource_of

# Kinds a tenant might write into a workload file that have no namespace (Kubernetes API reference,
# Kueue v0.19.2 and JobSet v0.12.0 CRDs): the ones the platform keeps to itself.
CLUSTER_SCOPED = frozenset({
    "Namespace", "Node", "PersistentVolume", "StorageClass", "PriorityClass", "ClusterRole", "ClusterRoleBinding",
    "CustomResourceDefinition", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ClusterQueue", "ResourceFlavor", "Cohort",
    "AdmissionCheck", "WorkloadPriorityClass", "ProvisioningRequestConfig", "Topology", "MultiKueueCluster",
    "MultiKueueConfig",
})
RBAC, KUEUE, POLICY = "RBAC", "Kueue", "ValidatingAdmissionPolicy"
KUEUE_WEBHOOK = "Kueue webhook"
API_SERVER = "API server"
SCALABLE = ("Deployment", "StatefulSet")  # the kinds a team creates that have a scale subresource
CONTROLLER_KINDS = (*POD_TEMPLATE_KINDS, CRON_JOB)  # created whatever becomes of what they create
Layer = tuple[str | None, str, tuple[str, ...]]  # (the layer that refuses, why, the other layers that refuse too)
NO_LAYER: Layer = (None, "", ())


@dataclass(frozen=True)
class Passage:
    """Where one object got to: `layer` names what refused it (None: it passed), `reason` says why;
    `admission` is Kueue's result for a workload that reached it."""

    kind: str
    namespace: str  # "" for a cluster-scoped object
    name: str
    layer: str | None = None
    reason: str = ""
    admission: AdmissionResult | None = None
    effect: str | None = None  # an update Kueue does not judge afresh: what its reconciler does with it
    note: str | None = None  # a create that passes without a verdict of Kueue's: why
    created: bool = False  # a Deployment or StatefulSet the API server creates, whose pods are refused
    defaulted: str = ""  # what a MutatingAdmissionPolicy set on it
    updated: bool = False  # an update of a kind Kueue does not manage that passes
    children: str = "pods"  # what the verdict of a created controller is about: its pods, or a CronJob's Jobs
    also: tuple[str, ...] = ()  # other layers that refuse at the same step, any of which the API server may name
    deleted: bool = False  # a DELETE: `effect` says what the garbage collector and Kueue do after it

    @property
    def refused(self) -> bool:
        return self.layer is not None


def _defaulted(given: Obj, mutated: Obj) -> str:
    """The labels the mutating policies added, as `key=value`."""
    before = (given.get("metadata") or {}).get("labels") or {}
    after = (mutated.get("metadata") or {}).get("labels") or {}
    return ", ".join(f"{k}={v}" for k, v in sorted(after.items()) if before.get(k) != v)


def resource_name(obj: Obj) -> str:
    """The resource as RBAC names it: `plural` for the core group, else `plural.group`."""
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    plural = resource_of(str(obj.get("kind", "")))
    return f"{plural}.{group}" if group else plural


# The kinds whose Kueue mutating webhook also runs on UPDATE (config/components/webhook/manifests.yaml at v0.19.2:
# mdeployment.kb.io and mstatefulset.kb.io take CREATE and UPDATE; mpod, mjob and mjobset CREATE only).
MUTATED_ON_UPDATE = frozenset({"Deployment", "StatefulSet"})


class TenantPath:
    """A planned stack, ready to judge many objects: its RBAC, Namespaces, policies and Kueue's view."""

    def __init__(self, manifests: Iterable[Obj], cluster: Cluster) -> None:
        ms = list(manifests)
        self.access = StackAccess(ms)
        self.cluster = cluster
        self.namespaces = {m["metadata"]["name"]: m for m in ms if m.get("kind") == "Namespace"}
        self.policies = [m for m in ms if m.get("kind") == "ValidatingAdmissionPolicy"]
        self.bindings = [m for m in ms if m.get("kind") == "ValidatingAdmissionPolicyBinding"]
        self.mutating = [m for m in ms if m.get("kind") == "MutatingAdmissionPolicy"]
        self.mutating_bindings = [m for m in ms if m.get("kind") == "MutatingAdmissionPolicyBinding"]
        self.quotas = [m for m in ms if m.get("kind") == "ResourceQuota"]

    def judge(self, obj: Obj, old: Obj | None = None, objects: Mapping[Key, Obj] | None = None,
              scale: bool = False) -> Passage:
        """The first layer that refuses obj (an UPDATE from `old` when given, through the scale subresource with
        `scale`), or its passage through them all. `objects`: what else is on the cluster by (kind, namespace,
        name), for the owners Kueue looks up."""
        kind, ns, name = workload_identity(obj)
        verb = "create" if old is None else "update"
        if kind in CLUSTER_SCOPED:
            return self._cluster_scoped(obj, kind, name, verb)
        team = self.team_of(ns)
        if team is None:
            return Passage(kind, ns, name, RBAC, f"namespace {ns} belongs to no team of this stack "
                                                 f"(team namespaces: {', '.join(self.namespaces_of_teams())})")
        if scale and old is not None:
            return self._scale(team, obj, old)
        layer, reason = self._rbac(team, obj, ns, verb)
        if layer:
            return Passage(kind, ns, name, layer, reason)
        if adds_external_ips(obj, old):
            return Passage(kind, ns, name, f"{API_SERVER} ({EXTERNAL_IPS_PLUGIN})",
                           f'services "{name}" is forbidden: {EXTERNAL_IPS_DENIED}')
        given = obj
        if old is None:
            obj = mutate(self.mutating, self.mutating_bindings, obj, self.namespaces.get(ns), self._member(team))
            obj = with_extended_tolerations(obj) if kind == "Pod" else obj
        mutated = old is None or kind in MUTATED_ON_UPDATE
        if mutated and (missing := self._missing_owner(obj, kind, ns, objects or {})):
            return Passage(kind, ns, name, KUEUE_WEBHOOK, missing)
        defaulted = _defaulted(given, obj)
        invalid = (template_refusal(old, obj) or claim_refusal(old, obj)) if old is not None else None
        if kind == "Pod" and old is None:
            invalid = assigned_while_gated(self.cluster, obj, ns, objects or {}) or None
        if invalid:
            return Passage(kind, ns, name, API_SERVER, invalid)
        layer, reason, also = self._first_refusal(team, obj, ns, old)
        if layer:
            pods = kind in CONTROLLER_KINDS and (layer.startswith("Pod Security") or reason.startswith("its"))
            return Passage(kind, ns, name, layer, reason, created=pods, also=also)
        if kind == CRON_JOB:
            return self._jobs_of(obj, old, objects or {})
        if kind not in FRAMEWORKS:
            return Passage(kind, ns, name, defaulted=defaulted, updated=old is not None)
        return replace(self._kueue(obj, old, objects or {}), defaulted=defaulted)

    def judge_delete(self, obj: Obj, options: Obj | None = None) -> Passage:
        """A team member's DELETE of obj (as it is on the cluster) with `options`, its DeleteOptions ({} for none;
        by default what `kubectl delete` sends): RBAC's `delete`, the policies with obj as `oldObject` and the
        options as `request.options`, then what the garbage collector and Kueue do (apiserver.deletes)."""
        options = admitted_options(obj, {"propagationPolicy": KUBECTL} if options is None else options)
        kind, ns, name = workload_identity(obj)
        if kind in CLUSTER_SCOPED:
            return self._cluster_scoped(obj, kind, name, "delete")
        team = self.team_of(ns)
        if team is None:
            return Passage(kind, ns, name, RBAC, f"namespace {ns} belongs to no team of this stack "
                                                 f"(team namespaces: {', '.join(self.namespaces_of_teams())})")
        layer, reason = self._rbac(team, obj, ns, "delete")
        if layer:
            return Passage(kind, ns, name, layer, reason)
        denied, why, also = self._policy_denial(None, ns, self._member(team), obj, "", options)
        if denied:
            return Passage(kind, ns, name, denied, why, also=also)
        return Passage(kind, ns, name, effect=delete_effect(obj, options), deleted=True)

    def _missing_owner(self, obj: Obj, kind: str, ns: str, objects: Mapping[Key, Obj]) -> str | None:
        """Kueue's mutating webhooks (Default: ApplyDefaultForSuspend -> FindAncestorJobManagedByKueue) look a
        created workload's controller owner up, and refuse it when the owner is missing; mutating webhooks run
        before every validating layer (LimitRanger's and Pod Security's checks, the admission policies, quota),
        so this refusal comes first (the sandbox: `ReplicaSet.apps "real" not found`, from mpod.kb.io)."""
        if kind not in FRAMEWORKS or management_blocker(self.cluster, kind, ns):
            return None
        config = self.cluster.config
        return managed_ancestor(obj, objects, enabled_frameworks(config),
                                bool(config.get("manageJobsWithoutQueueName"))).error

    def _kueue(self, obj: Obj, old: Obj | None, objects: Mapping[Key, Obj]) -> Passage:
        """Kueue's webhooks (on update, then its reconciler), the pod webhook's owner walk, then its decision."""
        kind, ns, name = workload_identity(obj)
        slicing = workload_slicing(self.cluster.config)
        errors = create_errors(obj, slicing) if old is None else [*update_errors(old, obj, slicing),
                                                                    *stateful_set_errors(self.cluster, old, obj)]
        if errors:
            return Passage(kind, ns, name, KUEUE_WEBHOOK, "; ".join(errors))
        effect, afresh = self._update_effect(old, obj, slicing) if old is not None else (None, True)
        if not afresh:
            return Passage(kind, ns, name, effect=effect)
        if kind == "Pod" and not management_blocker(self.cluster, kind, ns):
            config = self.cluster.config
            ancestor = managed_ancestor(obj, objects, enabled_frameworks(config),
                                        bool(config.get("manageJobsWithoutQueueName")))
            if ancestor.error:
                return Passage(kind, ns, name, KUEUE_WEBHOOK, ancestor.error)
            if ancestor.job is not None:
                owner = "/".join(workload_identity(ancestor.job)[1:])
                return Passage(kind, ns, name, note=f"not gated: Kueue leaves it to {ancestor.job['kind']} {owner}, "
                                                    "which it manages, and that job's workload holds its quota")
        result = admit_in(self.cluster, obj, objects)
        if not result.admitted:
            return Passage(kind, ns, name, KUEUE, "; ".join(result.problems), result,
                           created=kind in POD_TEMPLATE_KINDS and old is None, effect=effect)
        return Passage(kind, ns, name, admission=result, effect=effect)

    def _jobs_of(self, cron: Obj, old: Obj | None, objects: Mapping[Key, Obj]) -> Passage:
        """A CronJob passed: it is created (or updated), and each Job its controller creates from the jobTemplate
        passes the mutating and validating policies, ResourceQuota and Kueue as that controller's request
        (apiserver.cron_jobs)."""
        kind, ns, name = workload_identity(cron)
        namespace = self.namespaces.get(ns)
        job = mutate(self.mutating, self.mutating_bindings, job_of(cron), namespace, CRON_JOB_CONTROLLER)
        effect = "its next Jobs are created from the new jobTemplate" if old is not None else None
        denials = evaluate(self.policies, self.bindings, job, namespace, "CREATE", CRON_JOB_CONTROLLER)
        layer, reason = (f"{POLICY} {denials[0].policy}", denials[0].message) if denials else self._quota(job, ns)
        admission = None
        if not layer:
            passage = self._kueue(job, None, {**objects, (kind, ns, name): cron})
            layer, reason, admission = passage.layer, passage.reason, passage.admission
        return Passage(kind, ns, name, layer, reason, admission, effect=effect, created=old is None,
                       children="Jobs")

    def _update_effect(self, old: Obj, obj: Obj, slicing: bool) -> tuple[str | None, bool]:
        """(what Kueue does with an update that passed its webhooks, whether it then judges the workload
        afresh): a StatefulSet's replicas by admission.stateful_sets, the rest by the job reconciler."""
        if obj.get("kind") == "StatefulSet":
            effect, afresh = stateful_set_effect(self.cluster, old, obj)
            if effect:
                return effect, afresh
        if obj.get("kind") == "Deployment" and replicas(old) != replicas(obj):
            return (f"scaled from {replicas(old)} to {replicas(obj)} replicas: its controller adds or removes pods, "
                    "and Kueue gates and admits each new one as on create"), True
        effect = reconciler_effect(old, obj, slicing)
        return effect, effect is None

    def _scale(self, team: str, obj: Obj, old: Obj) -> Passage:
        """`kubectl scale`: an update of `<resource>/scale` (an autoscaling/v1 Scale) carrying only the new
        spec.replicas. Pod Security and Kueue's webhooks do not see it (they are registered for pods and for the
        workloads themselves); the policies do if a rule names the subresource."""
        kind, ns, name = workload_identity(obj)
        resource = f"{resource_name(obj)}/scale"
        # kubectl scale PATCHes <resource>/scale, and the API server authorizes the request before it routes it:
        # RBAC answers first, even for a kind with no such subresource (the sandbox: `cannot patch resource
        # "jobs/scale"`, where this said "no scale subresource").
        if not self.access.may(team, "patch", resource, ns):
            return Passage(kind, ns, name, RBAC, f"team {team} may not patch {resource} in namespace {ns}")
        if kind not in SCALABLE:
            return Passage(kind, ns, name, API_SERVER, f"{resource_name(obj)} has no scale subresource")
        replicas, old_replicas = ((o.get("spec") or {}).get("replicas", 1) for o in (obj, old))
        member = self._member(team)
        scaled = {**old, "spec": {**(old.get("spec") or {}), "replicas": replicas}}
        denials = evaluate(self.policies, self.bindings, _scale_object(scaled), self.namespaces.get(ns), "UPDATE",
                           member, _scale_object(old), (str(obj.get("apiVersion")), resource_of(kind), "scale"))
        if denials:
            return Passage(kind, ns, name, f"{POLICY} {denials[0].policy}", denials[0].message)
        effect = (f"scaled from {old_replicas} to {replicas} replicas through /scale: its controller adds or "
                  "removes pods, and Kueue gates and admits each new one as on create")
        if kind == "StatefulSet":
            held, afresh = stateful_set_scale(self.cluster, old, scaled)
            if held and not afresh:
                return Passage(kind, ns, name, effect=held)
            effect = held or effect
        result = admit_in(self.cluster, scaled)
        if not result.admitted:
            return Passage(kind, ns, name, KUEUE, "; ".join(result.problems), result, effect=effect)
        return Passage(kind, ns, name, admission=result, effect=effect)

    def team_of(self, ns: str) -> str | None:
        return next((team for team, nss in self.access.teams.items() if ns in nss), None)

    def namespaces_of_teams(self) -> list[str]:
        return [ns for nss in self.access.teams.values() for ns in nss] or ["none"]

    def _cluster_scoped(self, obj: Obj, kind: str, name: str, verb: str) -> Passage:
        resource = resource_name(obj)
        if any(self.access.may(team, verb, resource, CLUSTER) for team in self.access.teams):
            return Passage(kind, "", name)
        return Passage(kind, "", name, RBAC, f"no team of this stack may {verb} {resource} (cluster scope)")

    def _rbac(self, team: str, obj: Obj, ns: str, verb: str) -> tuple[str | None, str]:
        resource = resource_name(obj)
        if self.access.may(team, verb, resource, ns):
            return None, ""
        if not self.access.groups(team):
            return RBAC, (f"team {team} names no groups (teams[].groups), so no member of it may {verb} "
                          f"{resource} in namespace {ns}; only cluster administrators can")
        return RBAC, f"team {team} may not {verb} {resource} in namespace {ns}"

    @staticmethod
    def _resources(obj: Obj) -> tuple[str | None, str]:
        """The API server's validation of the resources of every pod the object is or will create: a workload
        whose template asks for more than its limit is refused itself (apiserver.pod_resources)."""
        for pod, _, spec in pod_specs_of(obj):
            found = invalid_resources(spec)
            if found:
                whose = "" if obj.get("kind") == "Pod" else f"the pod template of {pod}: "
                return API_SERVER, whose + found
        return None, ""

    def _pod_security(self, obj: Obj, ns: str) -> tuple[str | None, str]:
        labels = (self.namespaces.get(ns, {}).get("metadata") or {}).get("labels")
        level, version = namespace_policy(labels)
        for pod, meta, spec in pod_specs_of(obj):
            violations = check_pod(spec, meta, level, version)
            if violations:
                whose = "" if obj.get("kind") == "Pod" else f"the pods of {pod} would be refused: "
                return f"Pod Security {level}", whose + forbidden_detail(violations)
        return None, ""

    def _first_refusal(self, team: str, obj: Obj, ns: str, old: Obj | None) -> Layer:
        """The first layer of the admission chain that refuses the request: the API server judges it
        (LimitRanger, Pod Security, the policies, quota, in the chain's order), and a controller's pods when it
        creates them. A later layer is judged only when the earlier ones let the request through, as the chain
        stops at the first refusal."""
        def security() -> Layer:
            return (*self._pod_security(obj, ns), ()) if old is None or pod_security_judges(old, obj) else NO_LAYER

        def limits() -> Layer:
            return (*self._resources(obj), ()) if old is None or new_pods(old, obj) else NO_LAYER

        def quota() -> Layer:
            return (*self._quota(obj, ns, old), ())

        def on_object() -> Layer:
            return self._object_policies(team, obj, ns, old)

        def on_pods() -> Layer:
            return self._pod_policies(obj, ns) if old is None else NO_LAYER

        ordered = ((limits, security, on_object, quota) if obj.get("kind") == "Pod"
                   else (limits, on_object, quota, security, on_pods))
        return next((refusal for refusal in (layer() for layer in ordered) if refusal[0]), NO_LAYER)

    def _object_policies(self, team: str, obj: Obj, ns: str, old: Obj | None) -> Layer:
        """The policies on the object, as a team member sends it."""
        before = as_validated(old, created=False) if old is not None else None
        return self._policy_denial(as_validated(obj, created=old is None), ns, self._member(team), before, "")

    def _pod_policies(self, obj: Obj, ns: str) -> Layer:
        """The policies on each pod a controller creates from the object (an update of a template changes no
        running pod, so only a create's are judged)."""
        maker = pod_maker(str(obj.get("kind")))
        pods = (self._pod(ns, meta, spec, obj) for _, meta, spec in pod_specs_of(obj))
        return next((d for d in (self._policy_denial(p, ns, maker, None, "its pods: ") for p in pods) if d[0]),
                    NO_LAYER)

    def _policy_denial(self, candidate: Obj | None, ns: str, user: Obj | None, before: Obj | None, whose: str,
                       options: Obj | None = None) -> Layer:
        """The first policy that denies the request, and the others that deny it too: the API server evaluates
        them in no fixed order (generic/policy_source.go ranges over a map) and names the first denial only.
        No candidate: a DELETE of `before` with `options`."""
        operation = "DELETE" if candidate is None else "CREATE" if before is None else "UPDATE"
        denials = evaluate(self.policies, self.bindings, candidate, self.namespaces.get(ns), operation, user, before,
                           options=options)
        if not denials:
            return NO_LAYER
        others = tuple(dict.fromkeys(f"{POLICY} {d.policy}" for d in denials[1:] if d.policy != denials[0].policy))
        return f"{POLICY} {denials[0].policy}", whose + denials[0].message, others

    def _member(self, team: str) -> Obj:
        """The requester: a member of the team."""
        return {"username": f"member-of-{team}", "groups": [*sorted(self.access.groups(team)), AUTHENTICATED]}

    def _quota(self, obj: Obj, ns: str, old: Obj | None = None) -> tuple[str | None, str]:
        """The namespace's ResourceQuotas on what the object itself charges, on an update what it grows by
        (apiserver.resource_quotas)."""
        found = exceeded(obj, (q for q in self.quotas if q["metadata"].get("namespace") == ns), old)
        return (f"ResourceQuota {found[0]}", found[1]) if found else (None, "")

    @staticmethod
    def _pod(ns: str, meta: Obj, spec: Obj, owner: Obj) -> dict[str, Any]:
        """A pod the owner's controller creates from its template, owned by it (controllers set ownerReferences)."""
        ref = {"apiVersion": owner.get("apiVersion"), "kind": owner.get("kind"),
               "name": (owner.get("metadata") or {}).get("name") or "", "controller": True}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {**meta, "namespace": ns, "ownerReferences": [ref]},
                "spec": dict(spec)}


def _scale_object(obj: Obj) -> dict[str, Any]:
    """The autoscaling/v1 Scale the API server hands admission for a request to `/scale`."""
    meta = obj.get("metadata") or {}
    return {"apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": {k: meta[k] for k in ("name", "namespace", "labels") if k in meta},
            "spec": {"replicas": (obj.get("spec") or {}).get("replicas", 1)}}
