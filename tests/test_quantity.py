"""Quantities written into quotas and fleet facts: exact, in the unit asked for where that keeps them whole."""
from decimal import Decimal

import pytest

from gke_ai_batch.model.quantity import format_quantity, parse_quantity, shown_quantity


@pytest.mark.parametrize("amount,unit,text", [
    (Decimal(48), "", "48"),
    (Decimal("0.5"), "", "500m"),  # a cpu share per accelerator
    (Decimal("446.625"), "", "446625m"),
    (Decimal(264 * 10**9), "G", "264G"),  # two Pathways heads' memory, as xpk writes it
    (Decimal(132 * 10**9 + 64 * 2**30), "G", str(132 * 10**9 + 64 * 2**30)),  # 132G plus 64Gi: bytes
    (Decimal(0), "G", "0G"),
])
def test_format_quantity(amount, unit, text):
    assert format_quantity(amount, unit) == text
    assert parse_quantity(text) == amount


@pytest.mark.parametrize("written, shown", [
    ("500G", "500G"), ("1Ti", "1Ti"), ("1024Gi", "1Ti"), ("1000Mi", "1000Mi"), ("1.5T", "1500G"),
    ("1.5Gi", "1536Mi"), ("512", "512"), ("1000Ki", "1000Ki"), ("0.5Ki", "512"), ("1e3", "1e3"), ("2E", "2E"),
    ("1.5", "1500m"), (12, "12"), ("0", "0"),
])
def test_a_quantity_is_shown_as_string_prints_it_in_its_written_format(written, shown):
    """resource.Quantity.String(): the canonical form in the parsed format (BinarySI below 1024 prints as
    DecimalSI; a lone E is exa, not an exponent)."""
    assert shown_quantity(parse_quantity(written), written) == shown


def test_a_lone_e_is_exa_and_e_with_digits_an_exponent():
    """ParseQuantity reads `E` as the exa suffix and `e3`/`E3` as a power of ten (suffix.go)."""
    assert (parse_quantity("2E"), parse_quantity("2E3"), parse_quantity("2e-3")) == (
        2 * 10**18, 2000, Decimal("0.002"))
