"""Label syntax of the two label systems the platform writes to, and label-safe values derived from
names that are not (a shared reservation's path).

Kubernetes labels (node labels, ResourceFlavor nodeLabels): "Syntax and character set", kubernetes.io/
docs/concepts/overview/working-with-objects/labels. GCP resource labels (cluster and node resource
labels): "Requirements for labels", cloud.google.com/compute/docs/labeling-resources.
"""
from __future__ import annotations

import hashlib
import re

_K8S_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_GCP_KEY = re.compile(r"^[a-z][-_a-z0-9]*$")
_GCP_VALUE = re.compile(r"^[-_a-z0-9]*$")
MAX_LABEL = 63
MAX_GCP_LABELS = 64

K8S_VALUE_RULE = ("at most 63 characters of letters, digits, '-', '_' and '.', beginning and ending "
                  "with a letter or digit")
GCP_KEY_RULE = "1 to 63 lowercase letters, digits, '-' and '_', beginning with a lowercase letter"
GCP_VALUE_RULE = "at most 63 lowercase letters, digits, '-' and '_'"


def k8s_value_ok(value: str) -> bool:
    return value == "" or (len(value) <= MAX_LABEL and bool(_K8S_NAME.match(value)))


def k8s_key_ok(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    return (bool(name) and len(name) <= MAX_LABEL and bool(_K8S_NAME.match(name))
            and (not prefix or (len(prefix) <= 253 and bool(_DNS_SUBDOMAIN.match(prefix)))))


def k8s_label_problem(key: str, value: str) -> str | None:
    if not k8s_key_ok(key):
        return (f"label key {key!r} is not a Kubernetes label key "
                f"(an optional DNS prefix and '/', then {K8S_VALUE_RULE})")
    if not k8s_value_ok(value):
        return f"label {key}={value!r}: a Kubernetes label value is {K8S_VALUE_RULE}"
    return None


def gcp_label_problem(key: str, value: str) -> str | None:
    if not (len(key) <= MAX_LABEL and _GCP_KEY.match(key)):
        return f"label key {key!r}: a GCP label key is {GCP_KEY_RULE}"
    if not (len(value) <= MAX_LABEL and _GCP_VALUE.match(value)):
        return f"label {key}={value!r}: a GCP label value is {GCP_VALUE_RULE}"
    return None


def gcp_labels_problem(labels: dict[str, str]) -> str | None:
    if len(labels) > MAX_GCP_LABELS:
        return f"{len(labels)} labels: a GCP resource takes at most {MAX_GCP_LABELS}"
    return next((p for k, v in labels.items() if (p := gcp_label_problem(k, str(v)))), None)


def label_safe(name: str) -> str:
    """A Kubernetes label value naming `name`: path separators become '.', and a value over 63
    characters keeps its end (the most specific part) behind a short hash of the whole."""
    value = re.sub(r"[^A-Za-z0-9_.-]", ".", name).strip("-_.")
    if len(value) <= MAX_LABEL:
        return value
    digest = hashlib.sha256(name.encode()).hexdigest()[:10]
    return f"{digest}.{value[-(MAX_LABEL - len(digest) - 1):].lstrip('-_.')}"
