"""Issue 49 item 8: what the platform, a change and each team's promise cost at list price, from a dated table of
Google's prices with the page each was read from; a price the table lacks is "no price known", never 0."""
from __future__ import annotations

import copy
from decimal import Decimal

import pytest

from gke_ai_batch.model import prices
from gke_ai_batch.model.prices import PriceTableError, node_hourly, parse_prices, price_table
from gke_ai_batch.model.promises import Res, StackIndex
from gke_ai_batch.offline.engine.runtime import PlanError
from gke_ai_batch.offline.views.price_view import diff_price_lines, price_line, team_price_rows
from gke_ai_batch.offline.views.summary import plan_summary
from policies import stack_rules as sr

from .conftest import planned, platform_of, run_config

HEADER = "item,unit,capacity,region,usd_per_hour,source,read\n"
# Test data, not Google's prices: round numbers that make the arithmetic checkable by hand.
TEST_TABLE = parse_prices(HEADER + "gke-cluster-fee,cluster,any,any,0.10,https://cloud.google.com/kubernetes-engine/"
                          "pricing,2026-11-29\ntpu-v5p,chip,reservation,us-east5,2.00,https://cloud.google.com/tpu/"
                          "pricing,2026-11-29\n")


def _resources(regs):
    return [{"type": r.type, "urn": r.urn, "inputs": r.inputs, "custom": r.custom} for r in regs]


def test_the_package_table_has_a_source_page_and_a_date_on_every_row():
    rows = price_table()
    assert rows and all(r.source.startswith("https://cloud.google.com/") and r.read.year >= 2026 for r in rows)


@pytest.mark.parametrize(("row", "says"), [
    ("tpu-v5p,chip,spot,us-east5,1.00,,2026-11-29",
     "prices.csv row 2: source ''; allowed: the https://cloud.google.com/ page the price was read from"),
    ("tpu-v5p,chip,spot,us-east5,1.00,https://deploybase.ai/articles/google-cloud-tpu-pricing,2026-11-29",
     "prices.csv row 2: source 'https://deploybase.ai/articles/google-cloud-tpu-pricing'; allowed: the "
     "https://cloud.google.com/ page the price was read from"),
    ("tpu-v5p,chip,spot,us-east5,1.00,https://cloud.google.com/tpu/pricing,",
     "prices.csv row 2: read ''; allowed: the day the page was read, YYYY-MM-DD"),
    ("tpu-v5p,chip,spot,us-east5,0,https://cloud.google.com/tpu/pricing,2026-11-29",
     "prices.csv row 2: usd_per_hour '0'; allowed: a price above 0 in USD (a thing without a known price has no row)"),
])
def test_a_row_without_its_source_or_date_or_price_is_refused(row, says):
    with pytest.raises(PriceTableError) as e:
        parse_prices(HEADER + row + "\n")
    assert str(e.value) == says


def test_prods_v5p_slices_are_priced_exactly():
    """Two reserved v5p pools of 16 ct5p-hightpu-4t hosts, 4 chips each: 128 chips at $2.00 = $256 an hour,
    $190,464.00 in a 744-hour month; with the $74.40 fee, and every other pool named as having no price."""
    ix = StackIndex([Res(r.type, r.urn, r.inputs) for r in planned("prod") if r.custom])
    v5p = [f for _, f in ix.pools if f.name.startswith("v5p-res")]
    assert [node_hourly(f, "us-east5", TEST_TABLE) * f.nodes for f in v5p] == [Decimal("128.00")] * 2
    assert price_line(planned("prod"), TEST_TABLE) == [
        "monthly list price (744 h, us-east5, before discounts; docs/cost.md): $190,538.40 at full size, "
        "$190,538.40 guaranteed; no price known, left out of both: h100-dws (a3-highgpu-8g, queued-provisioning), "
        "h200-res (a3-ultragpu-8g, reservation), l4-spot (g2-standard-24, spot), system (n2-standard-8, on-demand) "
        "and 4 more"]


def test_a_type_the_table_lacks_has_no_price_never_zero():
    ix = StackIndex([Res(r.type, r.urn, r.inputs) for r in planned("prod") if r.custom])
    system = next(f for _, f in ix.pools if f.name == "system")
    assert node_hourly(system, "us-east5", TEST_TABLE) is None
    assert node_hourly(system, "us-east5") is None  # the package's table: no Compute Engine price read yet
    research = team_price_rows(planned("prod"))["research"]
    assert research["text"] == "no price known for v5e-spot, v5p-res, v6e-flex"


def test_make_plan_prod_prints_the_monthly_list_price():
    lines = plan_summary(planned("prod")).console().splitlines()
    assert any(ln.startswith("monthly list price (744 h, us-east5, before discounts; docs/cost.md): $74.40 at full "
                             "size, $74.40 guaranteed; no price known, left out of both: ") for ln in lines)


def test_make_diff_after_a_pool_change_prints_the_change():
    old = _resources(planned("prod"))
    new = copy.deepcopy(old)
    pool = next(r for r in new if r["type"] == "gcp:container/nodePool:NodePool" and r["inputs"]["name"] == "v5p-res-1")
    pool["inputs"]["nodeCount"] = 8  # a slice of 8 hosts instead of 16
    assert diff_price_lines(old, new, TEST_TABLE) == [
        "monthly list price (744 h, us-east5), BASE -> working tree: at full size $190,538.40 -> $142,922.40 "
        "(-$47,616.00), guaranteed $190,538.40 -> $142,922.40 (-$47,616.00)"]


@pytest.mark.parametrize("budget", [-5, "lots", True, float("nan")])
def test_a_negative_or_non_numeric_budget_is_refused_at_its_path(budget):
    cfg = platform_of("dev")
    cfg["teams"][0]["budget"] = budget
    with pytest.raises(PlanError) as e:
        run_config(cfg, "dev")
    assert "invalid stack config at platform.teams[0].budget: " in str(e.value)
    assert str(e.value).endswith(": allowed: US dollars a month, a number 0 or more (such as 25000)")


def test_a_team_promised_more_than_its_budget_is_advised(monkeypatch):
    monkeypatch.setattr(prices, "price_table", lambda: TEST_TABLE)
    cfg = platform_of("prod")
    training = next(t for t in cfg["teams"] if t["name"] == "training")
    training["budget"] = 50000
    res = [Res(r.type, r.urn, r.inputs) for r in run_config(cfg, "prod") if r.custom]
    found = sr.team_over_budget(res)
    assert [m for _, m in found] == [
        "team training: its promised quota costs $95,232.00 a month at list price (no price known for h100-dws, "
        "h200-res, v6e-flex, left out), above its budget of $50,000.00; lower its nominal quotas or raise "
        "teams[].budget"]
    assert team_price_rows([r for r in run_config(cfg, "prod")], TEST_TABLE)["training"]["over"] is True
