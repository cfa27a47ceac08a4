"""Quantities in Kueue's integer units (cpu in millicores), and formatted as Kueue's messages print them."""
from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import Decimal

from gke_ai_batch.model.quantity import parse_quantity

BINARY_RESOURCES = ("memory", "ephemeral-storage")
_DECIMAL_SUFFIX = {-3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIX = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]


def amount(resource: str, quantity: int | str) -> int:
    """Kueue's integer value: millicores for cpu, whole units rounded up otherwise
    (`ResourceValue` in pkg/resources/requests.go)."""
    return kueue_units(resource, parse_quantity(quantity))


def kueue_units(resource: str, value: Decimal) -> int:
    scaled = value * 1000 if resource == "cpu" else value
    return max(0, math.ceil(scaled))


def _decimal_si(value: int, exponent: int) -> str:
    """k8s Quantity's canonical DecimalSI form: the largest power-of-1000 suffix that keeps an integer."""
    if value == 0:
        return "0"
    while value % 1000 == 0 and exponent < 18:
        value, exponent = value // 1000, exponent + 3
    return f"{value}{_DECIMAL_SUFFIX[exponent]}"


def _binary_si(value: int) -> str:
    """BinarySI for whole multiples of 1024, else DecimalSI, as Kueue's newCanonicalQuantity re-parses it."""
    power = 0
    while abs(value) >= 1024 and value % 1024 == 0 and power < len(_BINARY_SUFFIX) - 1:
        value, power = value // 1024, power + 1
    return f"{value}{_BINARY_SUFFIX[power]}" if power else _decimal_si(value, 0)


def format_amount(resource: str, value: int) -> str:
    """How Kueue prints a quantity in messages (pkg/resources/resource_formatter.go)."""
    if resource == "cpu":
        return _decimal_si(value, -3)
    if resource in BINARY_RESOURCES or resource.startswith("hugepages-"):
        return _binary_si(value)
    return _decimal_si(value, 0)


def resource_order(names: Iterable[str]) -> list[str]:
    """The order Kueue iterates a pod set's requests in v0.19.2: VectorizedResourceRequests (Beta, on)
    keeps them sorted by 64-bit FNV-1a hash of the name, then by name (pkg/resources/slice_requests.go).
    It decides which undeclared resource is named first: memory (hash 0x2e78...) before cpu (0xf5a8...)."""
    return sorted(names, key=lambda n: (_fnv1a64(n), n))


def _fnv1a64(text: str) -> int:
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h
