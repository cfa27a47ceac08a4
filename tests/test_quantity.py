"""Quantities written into quotas and fleet facts: exact, in the unit asked for where that keeps them whole."""
from decimal import Decimal

import pytest

from gke_ai_batch.model.quantity import format_quantity, parse_quantity


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
