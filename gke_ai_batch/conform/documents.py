"""The documents to check: every YAML or JSON file under the paths given (a List's items one by one), each
judged against the schema of its kind."""
from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gke_ai_batch.conform import builtin_kinds, crds, object_meta
from gke_ai_batch.conform.structural import Findings, check

_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass
class Document:
    """One object of a file, and what is wrong with it."""

    where: str  # file#index
    body: Any
    findings: Findings = field(default_factory=Findings)

    @property
    def label(self) -> str:
        if not isinstance(self.body, dict):
            return self.where
        return f"{self.where} {self.body.get('kind', '?')}/{(self.body.get('metadata') or {}).get('name', '?')}"


def files(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in _SUFFIXES and p.is_file())
        else:
            yield path


def documents(paths: list[Path]) -> Iterator[Document]:
    """Every object in the files, a file that does not parse as one document with its error."""
    for path in files(paths):
        text = path.read_text()
        try:
            bodies = [json.loads(text)] if path.suffix == ".json" else list(yaml.safe_load_all(text))
        except (ValueError, yaml.YAMLError) as err:
            bad = Document(f"{path}#0", None)
            bad.findings.add("(file)", f"does not parse: {str(err).splitlines()[0]}")
            yield bad
            continue
        for i, body in enumerate(b for b in bodies if b is not None):
            if isinstance(body, dict) and body.get("kind") == "List" and isinstance(body.get("items"), list):
                yield from (Document(f"{path}#{i}.items[{j}]", item) for j, item in enumerate(body["items"]))
            else:
                yield Document(f"{path}#{i}", body)


def _custom(doc: Document, crd: crds.Crd, version: str) -> None:
    served = crd.versions.get(version)
    api = doc.body["apiVersion"]
    if served is None or not served.served:
        doc.findings.add("apiVersion", f"{api} is not served by {crd.source} (served: {', '.join(crd.served())})")
        return
    if served.deprecated:
        doc.findings.add("apiVersion", f"{api} {crd.kind} is deprecated upstream; use "
                                       f"{', '.join(f'{crd.group}/{v}' for v in crd.served())}")
    if not crd.namespaced and "namespace" in (doc.body.get("metadata") or {}):
        doc.findings.add("metadata.namespace", f"{crd.kind} is cluster-scoped: it has no namespace")
    schema = dict(served.schema)
    schema["properties"] = {**schema.get("properties", {}), "metadata": {"type": "object",
                                                                          "x-kubernetes-preserve-unknown-fields": True}}
    check(schema, doc.body, "", doc.findings)


def judge(doc: Document) -> Document:
    """Fill in the document's findings: metadata, then its kind's schema (a CRD of its group, else built-in)."""
    body = doc.body
    if not isinstance(body, dict) or not body.get("apiVersion") or not body.get("kind"):
        doc.findings.add("(root)", "not a Kubernetes object: apiVersion and kind are required")
        return doc
    for path, message in object_meta.problems(body.get("metadata")):
        doc.findings.add(path, message)
    group, _, version = str(body["apiVersion"]).rpartition("/")
    crd = crds.vendored().get((group, str(body["kind"])))
    if crd is not None:
        _custom(doc, crd, version)
    elif group in crds.groups() or ("." in group and not group.endswith(".k8s.io")):
        doc.findings.add("kind", f"no schema for {body['apiVersion']} {body['kind']}: not a kind of the vendored "
                                 "CRDs (gke_ai_batch/conform/schemas) nor a built-in kind")
    else:
        for path, message in builtin_kinds.problems(body):
            doc.findings.add(path, message)
    return doc
