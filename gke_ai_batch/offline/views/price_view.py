"""The list price of a plan as people read it: `make plan`'s monthly line, `make diff`'s change in it, and
report.html's price of each team's promised quota. The numbers are model.quota_prices' (what the team-over-budget
policy judges), from the price table model.prices reads; a pool with no price is named, never counted as 0."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from gke_ai_batch.model.prices import HOURS_PER_MONTH, PriceRow, monthly, usd
from gke_ai_batch.model.promises import Res, StackIndex
from gke_ai_batch.model.quota_prices import PlatformPrice, TeamPrice, platform_price, team_prices
from gke_ai_batch.model.words import name_list

from ..engine.runtime import Registration

LISTED = 4  # unpriced pools named on the line; the rest counted
NO_PRICE = "no price known"


def _index(regs: Sequence[Registration]) -> StackIndex:
    return StackIndex([Res(r.type, r.urn, r.inputs) for r in regs if r.custom])


def _resources(resources: Sequence[Mapping[str, Any]]) -> StackIndex:
    """make diff's resources (dicts with type, urn, inputs) indexed as the policies index a stack."""
    return StackIndex([Res(r["type"], r["urn"], r.get("inputs") or {}) for r in resources if r.get("custom", True)])


def _unpriced(p: PlatformPrice) -> str:
    if not p.unpriced:
        return ""
    return f"; {NO_PRICE}, left out of both: {name_list(p.unpriced, LISTED)}"


def price_line(regs: Sequence[Registration], rows: Sequence[PriceRow] | None = None) -> list[str]:
    """`monthly list price (...): $X at full size, $Y guaranteed`, then what has no price; none without a cluster."""
    p = platform_price(_index(regs), rows)
    if p is None:
        return []
    return [f"monthly list price ({HOURS_PER_MONTH} h, {p.region}, before discounts; docs/cost.md): "
            f"{usd(monthly(p.full))} at full size, {usd(monthly(p.guaranteed))} guaranteed{_unpriced(p)}"]


def _change(before: Decimal, after: Decimal) -> str:
    delta = monthly(after - before)
    return f"{usd(monthly(before))} -> {usd(monthly(after))} ({'+' if delta >= 0 else ''}{usd(delta)})"


def diff_price_lines(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]],
                     rows: Sequence[PriceRow] | None = None) -> list[str]:
    """The monthly list price on both sides and its change, at full size and guaranteed; what gains or loses a
    price is named, since a total without it says nothing of it."""
    before, after = platform_price(_resources(old), rows), platform_price(_resources(new), rows)
    if before is None and after is None:
        return ["monthly list price: no GKE cluster on either side"]
    region = (after or before or PlatformPrice("")).region
    was, now = before or PlatformPrice(region), after or PlatformPrice(region)  # a side without a cluster costs $0
    lines = [f"monthly list price ({HOURS_PER_MONTH} h, {region}), BASE -> working tree: at full size "
             f"{_change(was.full, now.full)}, guaranteed {_change(was.guaranteed, now.guaranteed)}"]
    gone, came = sorted(set(was.unpriced) - set(now.unpriced)), sorted(set(now.unpriced) - set(was.unpriced))
    lines += [f"  {NO_PRICE}, left out of the working tree's total: {', '.join(came)}"] if came else []
    lines += [f"  {NO_PRICE} at BASE, left out of its total: {', '.join(gone)}"] if gone else []
    return lines


def team_price_rows(regs: Sequence[Registration], rows: Sequence[PriceRow] | None = None) -> dict[str, dict[str, Any]]:
    """team -> its promised quota's monthly list price for report.html: the amount, its text, the flavors with no
    price, and its budget."""
    def row(t: TeamPrice) -> dict[str, Any]:
        unpriced = f"{NO_PRICE} for {', '.join(t.unpriced)}" if t.unpriced else ""
        text = unpriced if unpriced and not t.hourly else " + ".join(filter(None, (usd(monthly(t.hourly)), unpriced)))
        return {"monthly": float(monthly(t.hourly)), "text": text, "unpriced": t.unpriced,
                "budget": None if t.budget is None else float(t.budget),
                "budgetText": None if t.budget is None else usd(t.budget),
                "over": t.budget is not None and monthly(t.hourly) > t.budget}
    return {t.team: row(t) for t in team_prices(_index(regs), rows)}
