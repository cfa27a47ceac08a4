"""What a node of each machine type offers pods: vCPUs and memory, less what GKE reserves.

Machine shapes come from machine_series.py: every predefined type of the series GKE nodes use, by each
series' documented memory-per-vCPU rule or its table, and custom types (`n2-custom-8-32768`, `-ext` for
extended memory) checked against their series' custom machine type rules. GKE's reservations are the
documented brackets of "Plan GKE Standard node sizes" (memory and CPU reservations, plus 100 MiB for kubelet
eviction).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal
from functools import cache

from gke_ai_batch.model.machine_series import CUSTOM, EXCEPTIONS, MEMORY_STEP_MIB, SERIES, CustomRule
from gke_ai_batch.model.words import close

_PREDEFINED = re.compile(r"^([a-z0-9]+)-([a-z]+)-(\d+)$")
_CUSTOM = re.compile(r"^((?:[a-z0-9]+-)?custom)-(\d+)-(\d+)(-ext)?$")


@cache
def predefined_types() -> tuple[str, ...]:
    """Every predefined machine type the catalog knows, for the nearest names of a typo."""
    derived = (f"{series}-{cls}-{n}" for series, classes in SERIES.items() for cls, mc in classes.items()
               for n in mc.vcpus)
    return tuple(sorted({*derived, *EXCEPTIONS}))


def _predefined_shape(machine_type: str) -> tuple[int, Decimal] | None:
    if machine_type in EXCEPTIONS:
        return EXCEPTIONS[machine_type]
    m = _PREDEFINED.match(machine_type)
    mc = SERIES.get(m.group(1), {}).get(m.group(2)) if m else None
    if m is None or mc is None or int(m.group(3)) not in mc.vcpus:
        return None
    vcpus = int(m.group(3))
    return vcpus, vcpus * mc.gib_per_vcpu


def _custom_rule(machine_type: str) -> tuple[CustomRule, int, int, bool] | None:
    """The custom rule a custom machine type falls under, with its vCPUs, MiB and -ext; None if not custom."""
    m = _CUSTOM.match(machine_type)
    if m is None:
        return None
    rule = next((r for r in CUSTOM.values() if r.prefix == m.group(1)), None)
    if rule is None:
        return None
    return rule, int(m.group(2)), int(m.group(3)), bool(m.group(4))


def custom_problem(rule: CustomRule, vcpus: int, mib: int, extended: bool) -> str | None:
    """What breaks the series' custom machine type rule, or None."""
    name = f"{rule.prefix}-{vcpus}-{mib}{'-ext' if extended else ''}"
    if vcpus not in rule.vcpus:
        return f"{name}: {rule.prefix} types have {rule.vcpus_in_words()} vCPUs"
    if mib % MEMORY_STEP_MIB:
        return f"{name}: custom memory is a multiple of {MEMORY_STEP_MIB} MB"
    low, high = vcpus * rule.min_mib_per_vcpu, vcpus * rule.max_mib_per_vcpu
    if mib < low:
        return f"{name}: {rule.prefix} takes at least {rule.min_mib_per_vcpu} MB per vCPU ({low} MB for {vcpus})"
    if extended and rule.extended_max_mib is None:
        return f"{name}: {rule.prefix} has no extended memory (-ext): at most {rule.max_mib_per_vcpu} MB per vCPU"
    if not extended and mib > high:
        more = (f"; more needs extended memory, {name}-ext, up to {rule.extended_max_mib} MB in all"
                if rule.extended_max_mib else "")
        return f"{name}: {rule.prefix} takes at most {rule.max_mib_per_vcpu} MB per vCPU ({high} MB for {vcpus}){more}"
    if extended and rule.extended_max_mib is not None and mib > rule.extended_max_mib:
        return f"{name}: {rule.prefix} takes at most {rule.extended_max_mib} MB with extended memory"
    return None


def shape(machine_type: str) -> tuple[int, Decimal] | None:
    """(vCPUs, memory GiB) of a machine type; None for one the catalog does not know or a custom type that
    breaks its series' rule."""
    known = _predefined_shape(machine_type)
    if known is not None:
        return known
    custom = _custom_rule(machine_type)
    if custom is None or custom_problem(*custom) is not None:
        return None
    _, vcpus, mib, _ = custom
    return vcpus, Decimal(mib) / 1024


def unknown_machine(machine_type: str) -> str | None:
    """Why a machine type is refused: the platform cannot judge the cpu and memory of one it does not know,
    and would otherwise count it as none, silently skipping every capacity check on its pools."""
    custom = _custom_rule(machine_type)
    if custom is not None:
        return custom_problem(*custom)
    if _predefined_shape(machine_type) is not None:
        return None
    nearest = close(machine_type, predefined_types())
    custom_forms = ", ".join(f"{r.prefix}-<vCPUs>-<MB>[-ext]" for r in CUSTOM.values())
    return ("a machine type not in the catalog, whose cpu and memory the platform cannot judge; "
            + (f"nearest: {', '.join(nearest)}" if nearest else f"series known: {', '.join(sorted(SERIES))}")
            + f" (custom types: {custom_forms})")


_CPU_RESERVED = ((1, Decimal("0.06")), (1, Decimal("0.01")), (2, Decimal("0.005")), (None, Decimal("0.0025")))
_MEMORY_RESERVED = ((4, Decimal("0.25")), (4, Decimal("0.20")), (8, Decimal("0.10")), (112, Decimal("0.06")),
                    (None, Decimal("0.02")))
EVICTION_MIB = 100


def _bracketed(amount: Decimal, brackets: Iterable[tuple[int | None, Decimal]]) -> Decimal:
    reserved, left = Decimal(0), amount
    for width, rate in brackets:
        take = left if width is None else min(left, Decimal(width))
        reserved, left = reserved + take * rate, left - take
        if left <= 0:
            break
    return reserved


def allocatable(machine_type: str) -> dict[str, Decimal] | None:
    """{"cpu": cores, "memory": bytes} a pod can ask for on one node; None for an unknown machine."""
    known = shape(machine_type)
    if known is None:
        return None
    cpus, gib = Decimal(known[0]), known[1]
    memory_mib = gib * 1024 - _bracketed(gib, _MEMORY_RESERVED) * 1024 - EVICTION_MIB
    return {"cpu": cpus - _bracketed(cpus, _CPU_RESERVED), "memory": memory_mib * 2**20}
