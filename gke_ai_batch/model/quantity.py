"""Kubernetes resource quantities ("10Gi", "500m", 24): parsed so quotas can be compared and summed."""
from __future__ import annotations

import re
from decimal import Decimal

_QUANTITY = re.compile(r"^(?P<num>(\d+(\.\d*)?|\.\d+))(?P<suffix>[KMGTPE]i|[mkMGTPE]|[eE][+-]?\d+)?$")
_SUFFIX: dict[str, int | Decimal] = {
    "": 1, "m": Decimal("0.001"), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
    "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}
FORMAT_HELP = "a non-negative Kubernetes quantity such as 24, 500m, 10Gi or 1.5T"


def parse_quantity(value: int | str) -> Decimal:
    """Decimal value of a quantity; ValueError (with FORMAT_HELP) for anything else."""
    if isinstance(value, bool):
        raise ValueError(FORMAT_HELP)
    if isinstance(value, int):
        if value < 0:
            raise ValueError(FORMAT_HELP)
        return Decimal(value)
    m = _QUANTITY.match(str(value).strip())
    if not m:
        raise ValueError(FORMAT_HELP)
    suffix = m.group("suffix") or ""
    if suffix[:1] in ("e", "E"):
        return Decimal(m.group("num")) * Decimal(10) ** int(suffix[1:])
    return Decimal(m.group("num")) * Decimal(_SUFFIX[suffix])


def render_quantity(value: int | str) -> int | str:
    """The form a manifest carries: whole numbers stay integers, everything else a string."""
    return value if isinstance(value, int) else str(value)


def format_quantity(amount: Decimal, unit: str = "") -> str:
    """An exact quantity for a non-negative amount: in `unit` (a suffix above, such as "G") where that keeps it
    whole, else in whole units, else in millis (cpu shares: "500m")."""
    scale = Decimal(_SUFFIX[unit])
    if unit and amount % scale == 0:
        return f"{int(amount / scale)}{unit}"
    return str(int(amount)) if amount == int(amount) else f"{int(amount * 1000)}m"


_BYTE_UNITS = ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki", "E", "P", "T", "G", "M", "k")


def shown_quantity(amount: Decimal, in_bytes: bool = False) -> str:
    """A quantity as the ResourceQuota plugin's message shows it: a whole number of bytes in the largest unit that
    divides it, binary units first (`1948Gi`; 500G, a whole number of Ki too, shows as `488281250Ki`), any other
    amount as a plain number."""
    if in_bytes and amount == amount.to_integral_value() and amount > 0:
        unit = next((u for u in _BYTE_UNITS if amount % _SUFFIX[u] == 0), "")
        return f"{int(amount / _SUFFIX[unit])}{unit}"
    return f"{amount.normalize():f}"
