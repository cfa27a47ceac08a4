"""Kubernetes resource quantities ("10Gi", "500m", 24): parsed so quotas can be compared and summed."""
from __future__ import annotations

import math
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
    if _is_exponent(suffix):
        return Decimal(m.group("num")) * Decimal(10) ** int(suffix[1:])
    return Decimal(m.group("num")) * Decimal(_SUFFIX[suffix])


def _is_exponent(suffix: str) -> bool:
    """`e3`, `E-2`: a DecimalExponent; a lone `E` is exa."""
    return len(suffix) > 1 and suffix[0] in "eE"


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


_DECIMAL_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIX = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def shown_quantity(amount: Decimal, written: int | str) -> str:
    """`amount` as resource.Quantity's String() prints it in the format of the quantity `written` (which the
    ResourceQuota plugin's messages show, and which a sum or difference keeps from its first operand:
    Quantity.Add/Sub in k8s.io/apimachinery pkg/api/resource/quantity.go): BinarySI (a `Ki`..`Ei` suffix) in the
    largest binary unit that divides it (`1024Gi` shows as `1Ti`), except below 1024 or when not whole;
    otherwise in the largest power-of-1000 unit that keeps the number whole (`500G`, `1500G` for `1.5T`), as an
    exponent (`1e3`) if it was written as one (CanonicalizeBytes)."""
    if amount == 0:
        return "0"
    suffix = _suffix(written)
    if suffix.endswith("i") and abs(amount) >= 1024 and amount == amount.to_integral_value():
        number, power = int(amount), 0
        while number % 1024 == 0 and power < len(_BINARY_SUFFIX) - 1:
            number, power = number // 1024, power + 1
        return f"{number}{_BINARY_SUFFIX[power]}"
    number, exponent = _thousands(amount)
    return f"{number}e{exponent}" if _is_exponent(suffix) and exponent else f"{number}{_DECIMAL_SUFFIX[exponent]}"


def _suffix(written: int | str) -> str:
    match = _QUANTITY.match(str(written).strip())
    return (match.group("suffix") or "") if match else ""


def _thousands(amount: Decimal) -> tuple[int, int]:
    """(whole number, exponent) with the exponent a multiple of 3, as large as keeps the number whole (at most E,
    at least n: ParseQuantity rounds up to nano)."""
    sign, digits, exponent = amount.normalize().as_tuple()
    if int(exponent) < -9:
        return math.ceil(amount * 10**9), -9
    number, exponent = int("".join(map(str, digits))) * (-1 if sign else 1), int(exponent)
    while exponent % 3 or exponent > 18:
        number, exponent = number * 10, exponent - 1
    return number, exponent
