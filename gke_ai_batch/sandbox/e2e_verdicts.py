"""The terms in which an offline verdict (`make admit`'s Passage) and the real cluster's answer are compared: the
layer that refused the request, or, once the API server accepted it, what became of the workload. Phrasing is not
compared (the offline words are the project's, the real ones Kubernetes' and Kueue's), only layer and outcome.

The real layer is read from the API server's error text, in the formats of Kubernetes v1.33 (k8s.io/apiserver
v0.33.13 and the plugins):
- RBAC: responsewriters/errors.go `forbiddenMessage`, `User "u" cannot VERB resource "r" in API group "g" ...`;
- Pod Security: pod-security-admission admission.go, `violates PodSecurity "baseline:latest": ...`;
- LimitRanger: plugin/pkg/admission/limitranger, `maximum cpu usage per Container is ...`, `... max limit to request
  ratio per Container is ...` (a request above its container's limit is the pod's own validation: `must be less than
  or equal to cpu limit of 2`);
- ResourceQuota: plugin/resourcequota/controller.go, `exceeded quota: NAME, requested: ...`;
- ValidatingAdmissionPolicy: plugin/policy/validating/dispatcher.go, `ValidatingAdmissionPolicy 'NAME' with binding
  'B' denied request: ...`;
- a webhook (Kueue's, JobSet's): plugin/webhook/errors/statuserror.go, `admission webhook "vjob.kb.io" denied the
  request: ...` (Kueue and JobSet both name theirs `vjobset.kb.io`, `vpod.kb.io`: the name does not tell whose);
- DenyServiceExternalIPs: `Use of external IPs is denied by admission control`;
- validation, the built-in kinds' and the CRDs' (schema, CEL rules): `Kind "name" is invalid: field: ...`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from gke_ai_batch.apiserver.cron_jobs import CRON_JOB
from gke_ai_batch.apiserver.tenant_path import API_SERVER, KUEUE, KUEUE_WEBHOOK, Passage

ACCEPTED, PENDING = "accepted", "pending"
RBAC, POD_SECURITY, LIMIT_RANGE, QUOTA, POLICY = "RBAC", "Pod Security", "LimitRange", "ResourceQuota", \
    "ValidatingAdmissionPolicy"
WEBHOOK, VALIDATION, EXTERNAL_IPS = "webhook", "validation", "DenyServiceExternalIPs"
CHILDREN = ("the pods of ", "its pods: ")  # how `make admit` says a layer refuses the pods a controller creates


@dataclass(frozen=True)
class Verdict:
    """One side's answer about one object: `api`, what the API server does with the request ("accepted" or
    "refused by LAYER"); `then`, once accepted, what becomes of it ("quota reserved in ClusterQueue CQ", "pending",
    "its pods refused by LAYER"), "" where that side says nothing to compare."""

    api: str
    then: str = ""
    or_else: tuple[str, ...] = ()  # the other answers, in place of `api` or `then`, that say the same refusal

    def says(self, api: str, then: str) -> bool:
        """Whether the real answer is this one: where several policies deny, the API server names any of them."""
        return (api == self.api or api in self.or_else) and \
            (not then or not self.then or then == self.then or then in self.or_else)

    def __str__(self) -> str:
        return self.api + (f"; {self.then}" if self.then else "")


def refused(layer: str) -> str:
    return f"refused by {layer}"


def pods_refused(layer: str) -> str:
    return f"its pods refused by {layer}"


def reserved(cluster_queue: str) -> str:
    return f"quota reserved in ClusterQueue {cluster_queue}"


_LAYERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"is forbidden: User \".*\" cannot \S+ resource"), RBAC),
    (re.compile(r"violates PodSecurity \"(\w+):"), POD_SECURITY + " {0}"),
    (re.compile(r"ValidatingAdmissionPolicy '([^']+)'"), POLICY + " {0}"),
    (re.compile(r"exceeded quota: ([^,]+),"), QUOTA + " {0}"),
    (re.compile(r"admission webhook \"[^\"]+\" denied the request"), WEBHOOK),
    (re.compile(r"Use of external IPs is denied by admission control"), EXTERNAL_IPS),
    (re.compile(r"usage per (Container|Pod) is|limit to request ratio per (Container|Pod)"), LIMIT_RANGE),
    (re.compile(r"is invalid|unknown field|strict decoding error"), VALIDATION),
)


def layer_of(text: str) -> str:
    """The layer an API server error names (first match in the order above), else `other: <its first words>`."""
    for pattern, layer in _LAYERS:
        found = pattern.search(text)
        if found:
            return layer.format(*(g for g in found.groups() if g))
    return "other: " + " ".join(text.split())[:100]


def offline_layer(layer: str) -> str:
    """A Passage's layer in the shared terms: a LimitRange is not named by the real error, Kueue's webhook is a
    webhook, the API server's own checks are validation."""
    if layer.startswith(LIMIT_RANGE):
        return LIMIT_RANGE
    if layer == KUEUE_WEBHOOK:
        return WEBHOOK
    if layer == API_SERVER:
        return VALIDATION
    if layer.startswith(API_SERVER):  # `API server (DenyServiceExternalIPs)`
        return layer[len(API_SERVER):].strip(" ()")
    return layer


def offline(p: Passage) -> Verdict:
    """`make admit`'s verdict in the shared terms. A refusal of the pods a Job, JobSet, Deployment or StatefulSet
    creates is met by its controller, after the API server accepted the object; a CronJob's Jobs are created only at
    its schedule, so what becomes of them is not compared; an update Kueue does not judge afresh (`effect`) has
    nothing to compare after the API server's answer."""
    if p.kind == CRON_JOB and (p.created or not p.refused):
        return Verdict(ACCEPTED)
    if p.refused and p.layer:
        if p.layer == KUEUE and p.admission is not None and p.admission.quota_reserved:
            # Kueue reserves the quota; what `make admit` refuses is physical (its pods never schedule, a slice that
            # cannot fit), after Kueue: compared as Kueue's part (the sandbox reserved quota where this said pending)
            return Verdict(ACCEPTED, reserved(p.admission.cluster_queue or ""))
        if p.layer == KUEUE:
            return Verdict(ACCEPTED, PENDING)
        layer, others = offline_layer(p.layer), tuple(offline_layer(a) for a in p.also)
        if p.reason.startswith(CHILDREN) or (p.created and p.layer.startswith(POD_SECURITY)):
            return Verdict(ACCEPTED, pods_refused(layer), tuple(map(pods_refused, others)))
        return Verdict(refused(layer), or_else=tuple(map(refused, others)))
    if p.admission is None or p.note:
        return Verdict(ACCEPTED)
    return Verdict(ACCEPTED, reserved(p.admission.cluster_queue or ""))


def disagreement(mine: Verdict, real: Verdict) -> bool:
    """Layer or outcome differ: the API server's answer, and then, where both sides say, what became of it."""
    return not mine.says(real.api, real.then)
