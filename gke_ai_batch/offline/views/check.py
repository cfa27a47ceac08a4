"""The offline policy check: every registered resource through the same CrossGuard policies that
`pulumi preview --policy-pack policies` runs, as ResourceValidationArgs and StackValidationArgs."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import unknown_checking_proxy

from gke_ai_batch.model.words import closest, shorten
from gke_ai_batch.policies.pack import StackResources, policies

from ..engine.heap import long_lived_heap
from ..engine.runtime import Registration
from ..engine.stackfile import StackFile

LEVELS = tuple(level.value for level in EnforcementLevel)
ALL = "all"  # Pulumi's key for every policy of the pack (docs: Configuring policy packs, Enforcement Level)


def load_levels(path: str | None) -> dict[str, EnforcementLevel]:
    """Pack config in Pulumi's shape: {"policy": "advisory"} or {"policy": {"enforcementLevel": ...}},
    and `all` for every policy (a policy's own entry wins). SystemExit naming the file, the policy and
    what is allowed for anything else: a bad level must not leave the check silently at its default."""
    if not path:
        return {}
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise SystemExit(f"policy config {path}: not a readable JSON file ({e})") from None
    if not isinstance(doc, dict):
        raise SystemExit(f"policy config {path}: should be a JSON object of policy name to enforcement level")
    names = [p.name for p in policies()]
    levels = {name: _level(path, name, v, names) for name, v in doc.items()}
    every = levels.pop(ALL, None)
    return {**({n: every for n in names} if every else {}), **{n: lv for n, lv in levels.items() if lv}}


def _level(path: str, name: str, value: Any, names: list[str]) -> EnforcementLevel | None:
    if name != ALL and name not in names:
        guess = closest(name, names)
        raise SystemExit(f"policy config {path}: unknown policy `{shorten(name)}`"
                         + (f"; did you mean `{guess}`?" if guess else f"; policies: {', '.join(names)}"))
    level = value.get("enforcementLevel") if isinstance(value, dict) else value
    if level is None:
        return None
    if level not in LEVELS:
        raise SystemExit(f"policy config {path}: `{name}`: enforcement level {shorten(repr(level))} is not one of "
                         f"{', '.join(LEVELS)}")
    return EnforcementLevel(level)


def _options(r: Registration) -> PolicyResourceOptions:
    """The options the program declared, as the engine hands them to a policy."""
    o = r.options
    return PolicyResourceOptions(protect=o.get("protect", False), ignore_changes=o.get("ignoreChanges", []),
                                 delete_before_replace=o.get("deleteBeforeReplace"), aliases=o.get("aliases", []),
                                 additional_secret_outputs=[],
                                 custom_timeouts=None,  # type: ignore[arg-type]  # none; the SDK's hint has no None
                                 parent=r.parent)


def _props(r: Registration) -> dict[str, Any]:
    """r's inputs as pulumi_policy's analyzer server hands them to a policy (its Analyze and AnalyzeStack
    do the same to request.properties): deserialized from the form the engine sends, so numbers are floats
    and secrets unwrapped, behind the proxy that raises on unknowns. From `r.wire`, not `r.inputs` (which
    has ints): the check must fail where `pulumi preview --policy-pack` fails."""
    return unknown_checking_proxy(deserialize_properties(r.wire))


def violations(regs: list[Registration],
               levels: dict[str, EnforcementLevel] | None = None) -> list[dict[str, Any]]:
    """[{policy, level, urn, message}] for the stack; levels override the pack's defaults."""
    with long_lived_heap():
        return _violations(regs, levels or {})


def _violations(regs: list[Registration], levels: dict[str, EnforcementLevel]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    custom = [r for r in regs if r.custom and not r.type.startswith("pulumi:providers:")]
    props = {r.urn: _props(r) for r in custom}
    options = {r.urn: _options(r) for r in custom}
    stack = _stack_resources(custom, props, options)
    for policy in policies():
        level = levels.get(policy.name, policy.enforcement_level)
        assert level is not None  # the pack gives every policy a default level
        if level == EnforcementLevel.DISABLED:
            continue

        def report(message: str, urn: str | None = None, _urn: str | None = None, _p: Policy = policy,
                   _l: EnforcementLevel = level) -> None:
            found.append({"policy": _p.name, "level": _l.value, "urn": urn or _urn, "message": message})

        if isinstance(policy, ResourceValidationPolicy):
            for r in custom:
                args = ResourceValidationArgs(r.type, props[r.urn], r.urn, r.name, options[r.urn], None)

                def report_on(m: str, u: str | None = None, r: Registration = r) -> None:
                    report(m, None, r.urn)

                policy.validate(args, report_on)
        else:
            assert isinstance(policy, StackValidationPolicy)  # the pack's only other kind
            policy.validate(StackValidationArgs(stack), report)
    return found


def _stack_resources(custom: list[Registration], props: dict[str, Any],
                     options: dict[str, PolicyResourceOptions]) -> StackResources:
    """The stack as every stack policy gets it, with its dependencies as resource objects. The engine's analyzer
    builds it again for each policy from the same request; here the policies share it (they only read it), and
    the pack's stack index is built once for all of them (policies.pack)."""
    by_urn = {r.urn: PolicyResource(r.type, props[r.urn], r.urn, r.name, options[r.urn], None, None, [], {})
              for r in custom}
    for r in custom:
        by_urn[r.urn].dependencies = [by_urn[d] for d in r.dependencies if d in by_urn]
    return StackResources(by_urn.values())


def table(found: list[dict[str, Any]]) -> str:
    if not found:
        return "policy check: no violations"
    rows = [("policy", "level", "resource", "message")] + [
        (v["policy"], v["level"], (v["urn"] or "(stack)").split("::")[-1], v["message"]) for v in found]
    widths = [max(len(r[c]) for r in rows) for c in range(3)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r[:3], widths, strict=True)) + "  " + r[3]
                     for r in rows)


def run_checks(regs: list[Registration], stack: StackFile, out: Path,
               levels: dict[str, EnforcementLevel] | None = None) -> int:
    found = violations(regs, levels)
    (out / "violations.json").write_text(json.dumps(found, indent=2) + "\n")
    print(table(found))
    mandatory = [v for v in found if v["level"] == "mandatory"]
    print(f"policy check of {stack.name}: {len(mandatory)} mandatory, {len(found) - len(mandatory)} advisory "
          f"violation(s); wrote {out}/violations.json")
    return 1 if mandatory else 0
