"""State removals for `make diff`: what the engine stops managing and leaves in the cloud, shown as `< forget`,
never as a delete or an update.

Three ways a resource leaves the state without being deleted (pulumi/pulumi v3.215.0 pkg/resource/deploy):
- relinquished: the program now reads (`Resource.get`) a resource it created, under the ID it created it with.
  GenerateReadSteps (step_generator.go) then issues a plain read step: the engine marks it external and stops
  managing it, and the provider changes nothing. Read under another ID, the old one is replaced (a read
  replacement: the engine deletes the one it created), which the diff shows as a replacement.
- retained: a deletion of what BASE's state marks `retainOnDelete`. DeleteStep.Apply (step.go) skips the
  provider's Delete when the old state has it ("the resource will not be deleted from the backing cloud provider,
  but will be removed from the Pulumi state": Pulumi docs, Resource option: retainOnDelete). Only BASE's option
  counts: setting it in the change that removes the resource deletes it.
- handed over: a created network object (VPC, subnet, Cloud Router) the stack stops declaring while the network
  it now adopts names it. `pulumi up` alone would delete it, and a router's deletion takes its NATs with it (a
  RouterNat is written into its router: terraform-provider-google-beta resource_compute_router_nat.go creates
  and deletes it by PATCHing projects/P/regions/R/routers/ROUTER). The hand-over is `pulumi state delete
  '<urn>'` before the change (Pulumi docs, "Removing resources without deleting them"); the diff refuses it
  unless the stack file records that decision, as it refuses a BigQuery dataset the stack stops declaring.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gke_ai_batch.plan.network import nat_id
from gke_ai_batch.vocabulary import CLUSTER, NETWORK, ROUTER, ROUTER_NAT, SUBNETWORK

from .inputs import READ

Resource = dict[str, Any]
Step = tuple[str, Resource, list[str]]
FORGET = "forget"
FORGOTTEN = "forgotten"  # on a forget step's resource: relinquished, retained or handed over
HANDED_OVER = "handed over"
PULUMI = "pulumi v3.215.0 pkg/resource/deploy"
NATS = " with its NATs (a Cloud Router's deletion deletes the NATs written into it)"
RETAINED = (f"retainOnDelete at BASE: the engine removes it from the state and leaves it in the cloud ({PULUMI}/"
            "step.go DeleteStep)")


def forgotten(steps: list[Step], old: list[Resource], new: list[Resource]) -> list[Step]:
    """The steps, with each state removal shown as one and a read under another ID as the replacement it is."""
    before = {r["urn"]: r for r in old}
    in_use = _adopted_names(new)
    out: list[Step] = []
    for op, r, lines in steps:
        was = before.get(r["urn"])
        read = _options(r).get(READ)
        if op != "delete" and was is not None and read and not _options(was).get(READ):
            out.append(_read(r, was, str(read)))
        elif op == "delete" and _options(r).get("retainOnDelete") and not _options(r).get("protect"):
            out.append((FORGET, {**r, FORGOTTEN: "retained"}, [RETAINED, *lines]))
        elif op == "delete" and r["type"] in (NETWORK, SUBNETWORK, ROUTER) and _identity(r) in in_use:
            out.append((FORGET, {**r, FORGOTTEN: HANDED_OVER}, [_handover_line(r), *lines]))
        else:
            out.append((op, r, lines))
    return out


def _read(r: Resource, was: Resource, read: str) -> Step:
    """A created resource the program now reads: relinquished under the same ID, else replaced by the read."""
    created = _created_id(was)
    if created == read:
        return FORGET, {**r, FORGOTTEN: "relinquished"}, [
            f"read as {read}, the ID the stack created it with: the engine stops managing it and changes nothing in "
            f"the cloud, its settings stay as they are ({PULUMI}/step_generator.go GenerateReadSteps, relinquish)"]
    return "replace", r, [
        f"read as {read}, not as the ID the stack created it with ({created or 'unknown'}): the engine reads that one "
        f"and deletes the one it created (a read replacement: {PULUMI}/step_generator.go GenerateReadSteps)"]


def _created_id(r: Resource) -> str | None:
    """The provider's ID of a resource the stack created, where the diff knows its format (the NATs it reads)."""
    inputs = r.get("inputs") or {}
    if r["type"] == ROUTER_NAT and all(inputs.get(k) for k in ("project", "region", "router", "name")):
        return nat_id(*(str(inputs[k]) for k in ("project", "region", "router", "name")))
    return None


def _adopted_names(new: list[Resource]) -> set[tuple[str, str, str]]:
    """(type, project, name) of the network, subnet and router the working tree's cluster and read NATs name."""
    out: set[tuple[str, str, str]] = set()
    for r in new:
        inputs = r.get("inputs") or {}
        if r["type"] == CLUSTER:
            project = str(inputs.get("project"))
            out |= {(t, *_split(str(inputs[k]), project)) for t, k in ((NETWORK, "network"), (SUBNETWORK, "subnetwork"))
                    if inputs.get(k)}
        elif r["type"] == ROUTER_NAT and _options(r).get(READ) and inputs.get("router"):
            out.add((ROUTER, str(inputs.get("project")), str(inputs["router"]).rpartition("/")[2]))
    return out


def _split(ref: str, project: str) -> tuple[str, str]:
    """(project, name) of a network or subnet reference: a name, or a projects/P/.../NAME path."""
    parts = ref.split("/")
    return (parts[1], parts[-1]) if len(parts) > 2 and parts[0] == "projects" else (project, parts[-1])


def _identity(r: Resource) -> tuple[str, str, str]:
    inputs = r.get("inputs") or {}
    return r["type"], str(inputs.get("project")), str(inputs.get("name", r["name"]))


def _options(r: Resource) -> dict[str, Any]:
    return r.get("options") or {}


def _handover_line(r: Resource) -> str:
    return (f"handed over: the network the stack now adopts names it; the engine must only stop managing it: "
            f"`pulumi state delete '{r['urn']}'` before `pulumi up` (without it `pulumi up` deletes it)")


def refused(steps: Iterable[tuple[str, Resource]], acknowledged: tuple[tuple[str, str], ...]) -> list[str]:
    """One line per network object handed over without the stack file's decision that it left the state."""
    out = []
    for op, r in steps:
        name = str((r.get("inputs") or {}).get("name", r["name"]))
        if op != FORGET or r.get(FORGOTTEN) != HANDED_OVER or ("network", name) in acknowledged:
            continue
        out.append(f"hand over network object {name} ({r['type']} {r['name']}) to the adopted network: `pulumi up` "
                   f"would delete it, and the adopted network loses it{NATS if r['type'] == ROUTER else ''}; "
                   f"take it out of the state before this change: `pulumi state delete '{r['urn']}'` (the engine "
                   f"then only stops managing it), and add `acknowledge: [{{network: {name}, reason: ...}}]` to the "
                   "stack file, with why")
    return out
