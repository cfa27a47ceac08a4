"""Google's list prices as data: prices.csv, one row per thing billed by the hour, each with the page it was read
from and the day it was read (docs/cost.md says how the table is kept current and what list prices leave out).

A row prices one `item` per `unit` and hour, in one capacity mode (or `any`) and one region (or `any`):
- `cluster`: GKE's cluster management fee, per cluster ("a flat cluster management fee of $0.10 per cluster per
  hour ... applies to all GKE clusters irrespective of the mode of operation, cluster size, or topology", GKE
  pricing, https://cloud.google.com/kubernetes-engine/pricing); on Standard the nodes are Compute Engine VMs,
  billed at Compute Engine's prices besides it (same page).
- `vm`: a machine type, per VM, as the page lists the machine type.
- `chip`: a TPU generation (`tpu-v5p`), per chip: Cloud TPU prices TPU VMs by the chip-hour, so a node costs
  its chips per VM times the row.
- `gpu`: a GPU type priced apart from the VM it is attached to (N1 with T4s), per GPU.

A thing with no row has no price: callers say "no price known" and leave it out of a total, never count it as 0.
Queued provisioning runs on flex-start VMs (Compute Engine "GPU machine types"; catalog.NOT_ON_DEMAND), so its
pools take the flex-start rows. A month is 744 hours, 31 days: the month GKE's free tier credit is sized for
("$74.40 in monthly credits ..., equivalent to one free Autopilot or zonal Standard cluster per month", the
pricing page above, at $0.10 an hour), so a monthly figure is the most any month costs.
"""
from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import cache
from pathlib import Path

from gke_ai_batch.model import catalog
from gke_ai_batch.model.pool_facts import PoolFacts
from gke_ai_batch.vocabulary import Capacity, PoolKind

PRICES_FILE = Path(__file__).with_name("prices.csv")
COLUMNS = ("item", "unit", "capacity", "region", "usd_per_hour", "source", "read")
UNITS = ("cluster", "vm", "chip", "gpu")
ANY = "any"
HOURS_PER_MONTH = 744
CLUSTER_FEE = "gke-cluster-fee"
SOURCE = re.compile(r"^https://cloud\.google\.com/\S+$")  # Google's own pages: a list price is Google's to state


class PriceTableError(ValueError):
    """A row of the price table that cannot be used: the row, the column, the value and what is allowed."""


@dataclass(frozen=True)
class PriceRow:
    item: str
    unit: str
    capacity: str
    region: str
    usd_per_hour: Decimal
    source: str
    read: date


def _row(n: int, raw: dict[str, str]) -> PriceRow:
    def bad(column: str, allowed: str) -> PriceTableError:
        return PriceTableError(f"prices.csv row {n}: {column} {raw.get(column)!r}; allowed: {allowed}")
    cells = {c: (raw.get(c) or "").strip() for c in COLUMNS}
    for column in ("item", "region"):
        if not cells[column]:
            raise bad(column, "a name (`any` for every region)" if column == "region" else "a name")
    if cells["unit"] not in UNITS:
        raise bad("unit", ", ".join(UNITS))
    modes = [ANY, *(str(c) for c in Capacity if c != Capacity.QUEUED)]
    if cells["capacity"] not in modes:
        raise bad("capacity", ", ".join(modes) + " (queued provisioning takes flex-start's)")
    try:
        price = Decimal(cells["usd_per_hour"])
    except InvalidOperation:
        price = Decimal(-1)
    if not price.is_finite() or price <= 0:
        raise bad("usd_per_hour", "a price above 0 in USD (a thing without a known price has no row)")
    if not SOURCE.match(cells["source"]):
        raise bad("source", "the https://cloud.google.com/ page the price was read from")
    try:
        read = date.fromisoformat(cells["read"])
    except ValueError:
        raise bad("read", "the day the page was read, YYYY-MM-DD") from None
    return PriceRow(cells["item"], cells["unit"], cells["capacity"], cells["region"], price, cells["source"], read)


def parse_prices(text: str) -> tuple[PriceRow, ...]:
    """Every row of a price table, each checked: a row without its source page or its date is refused."""
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise PriceTableError(f"prices.csv columns {reader.fieldnames}; allowed: {', '.join(COLUMNS)}")
    rows = tuple(_row(n, raw) for n, raw in enumerate(reader, start=2))  # row 1 is the header
    seen: set[tuple[str, str, str, str]] = set()
    for n, r in enumerate(rows, start=2):
        key = (r.item, r.unit, r.capacity, r.region)
        if key in seen:
            raise PriceTableError(f"prices.csv row {n}: {r.item} ({r.unit}, {r.capacity}, {r.region}) is priced twice")
        seen.add(key)
    return rows


@cache
def price_table() -> tuple[PriceRow, ...]:
    return parse_prices(PRICES_FILE.read_text())


def lookup(item: str, unit: str, capacity: str, region: str,
           rows: Sequence[PriceRow] | None = None) -> PriceRow | None:
    """The row for the item in this capacity mode and region: the region's own before `any`, the mode's own
    before `any`; None where the table has none."""
    mode = Capacity.FLEX_START if capacity == Capacity.QUEUED else capacity
    table = price_table() if rows is None else rows
    for want_region in (region, ANY):
        for want_mode in (mode, ANY):
            found = next((r for r in table if (r.item, r.unit, r.capacity, r.region) ==
                          (item, unit, want_mode, want_region)), None)
            if found is not None:
                return found
    return None


def node_hourly(f: PoolFacts, region: str, rows: Sequence[PriceRow] | None = None) -> Decimal | None:
    """One node's list price an hour in its pool's capacity mode: a TPU host's chips at its generation's chip
    price; any other machine at its own price, plus its GPUs where they are priced apart. None: no price known."""
    gen = catalog.tpu_machine_generation(f.machine_type)
    if gen is not None:
        chip = lookup(f"tpu-{gen.name}", "chip", f.capacity, region, rows)
        return None if chip is None else chip.usd_per_hour * f.per_node
    vm = lookup(f.machine_type, "vm", f.capacity, region, rows)
    if vm is None:
        return None
    if f.kind != PoolKind.GPU or not f.gpus or not f.accelerator:
        return vm.usd_per_hour
    gpu = lookup(f.accelerator, "gpu", f.capacity, region, rows)
    if gpu is not None:
        return vm.usd_per_hour + gpu.usd_per_hour * f.gpus
    # a machine whose GPUs the table prices with the VM (an accelerator-optimized type) has no gpu row to add
    attached = f.machine_type in catalog.GPU_TYPES.get(f.accelerator, catalog.GpuType("", {})).counts
    return None if attached else vm.usd_per_hour


def monthly(hourly: Decimal) -> Decimal:
    return hourly * HOURS_PER_MONTH


def usd(amount: Decimal) -> str:
    """$1,234.56: to the cent, as a bill shows it; a negative change as -$12.00."""
    cents = amount.quantize(Decimal("0.01"))
    return f"{'-' if cents < 0 else ''}${abs(cents):,.2f}"
