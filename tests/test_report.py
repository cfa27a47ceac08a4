"""The plan report in a real browser: Debian's chromium, headless, driven by Selenium through the system
chromedriver. The page loads from a file with no network, logs no console error, and shows the plan's
numbers: what each flavor holds and what each team is promised, each team's queues, and quotas before
and after a change."""
from __future__ import annotations

import copy
import os
import shutil
from decimal import Decimal

import pytest

from gke_ai_batch.model.promises import show_amount
from gke_ai_batch.offline.report import render_report, write_report
from gke_ai_batch.offline.views.report_data import report_data
from gke_ai_batch.offline.views.summary import guaranteed_text, promised_text
from gke_ai_batch.offline.views.view import stack_view

from .forked_cli import run_module

DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(DRIVER is None and not os.environ.get("CI"),
                                reason="chromium and chromedriver not installed (Debian: apt-get install chromium "
                                       "chromium-driver); CI installs them")


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    assert DRIVER is not None, "CI installs chromium-driver (.ci/run)"
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


def open_page(browser, path):
    from selenium.webdriver.common.by import By
    browser.get(path.as_uri())
    assert browser.find_element(By.TAG_NAME, "body").get_attribute("data-rendered") == "true"
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    return By


def cells(browser, By, selector: str) -> dict[str, str]:
    row = browser.find_element(By.CSS_SELECTOR, selector)
    return {c.get_attribute("data-cell"): c.text for c in row.find_elements(By.CSS_SELECTOR, "td[data-cell]")}


def test_the_report_shows_each_flavors_capacity_and_promises(browser, plan, tmp_path):
    regs = plan("prod")
    path = write_report(tmp_path, "prod", regs)
    By = open_page(browser, path)
    view = stack_view(regs)
    shown = 0
    for flavor in view.flavors.values():
        for resource, cap in flavor.capacity.items():
            promised = sum((q.nominal for t in view.teams for cq in t.cluster_queues
                            for q in view.cluster_queues[cq].quotas
                            if q.flavor == flavor.name and q.resource == resource), Decimal(0))
            if not cap.total and not promised:
                continue
            got = cells(browser, By, f'tr[data-flavor="{flavor.name}"][data-resource="{resource}"]')
            assert got == {"full": show_amount(resource, cap.total), "guaranteed": guaranteed_text(resource, cap),
                           "promised": promised_text(resource, promised, cap)}, (flavor.name, resource)
            shown += 1
    assert shown >= 20
    v5e = cells(browser, By, 'tr[data-flavor="v5e-spot"][data-resource="google.com/tpu"]')
    assert v5e == {"full": "16", "guaranteed": "0 *", "promised": "32 !"}  # over-promised on spot: shown in red
    assert "over" in browser.find_element(
        By.CSS_SELECTOR, 'tr[data-flavor="v5e-spot"][data-resource="google.com/tpu"] td[data-cell="promised"]'
    ).get_attribute("class")


def test_the_report_shows_each_team(browser, plan, tmp_path):
    By = open_page(browser, write_report(tmp_path, "prod", plan("prod")))
    research = browser.find_element(By.CSS_SELECTOR, 'div[data-team="research"]').text
    assert "research/research-queue → research" in research and "research-sandbox" in research
    assert "acme-ml-prod-research-checkpoints" in research
    assert "ml-prod/research: workloads pending 120m with none admitted" in research
    graph = browser.find_element(By.CSS_SELECTOR, "#graph svg").text
    assert "training-gpudirect/training-queue" in graph and "cohort ml-prod" in graph


def test_each_queue_graph_edge_runs_from_its_own_label_to_its_own_label(browser, plan, tmp_path):
    """Issue 49: the ClusterQueue -> flavor edges started about 230 px right of their labels, a fixed 300 px from
    the column's start whatever the label's width. Checked on the positions Chromium drew."""
    open_page(browser, write_report(tmp_path, "prod", plan("prod")))
    drawn = browser.execute_script("""
        const box = n => document.querySelector(`#graph text[data-node="${CSS.escape(n)}"]`).getBBox();
        return [...document.querySelectorAll('#graph line')].map(l => {
          const a = box(l.dataset.from), b = box(l.dataset.to);
          return {edge: l.dataset.from + ' -> ' + l.dataset.to, x1: +l.getAttribute('x1'), x2: +l.getAttribute('x2'),
                  y1: +l.getAttribute('y1'), y2: +l.getAttribute('y2'), fromEnd: a.x + a.width, toStart: b.x,
                  fromTop: a.y, fromBottom: a.y + a.height, toTop: b.y, toBottom: b.y + b.height};
        });""")
    assert len(drawn) >= 10
    for e in drawn:
        assert 0 < e["x1"] - e["fromEnd"] <= 10 and 0 < e["toStart"] - e["x2"] <= 10, e
        assert e["fromTop"] <= e["y1"] <= e["fromBottom"] and e["toTop"] <= e["y2"] <= e["toBottom"], e
        assert e["x1"] < e["x2"], e


def test_the_report_shows_quotas_before_and_after(browser, plan, tmp_path):
    regs = plan("prod")
    old = copy.deepcopy([r.as_json() for r in regs])
    for r in old:  # BASE: research had 32 TPUs of v5p-res, now 48
        if r["type"].endswith(":ClusterQueue") and r["inputs"]["metadata"]["name"] == "research":
            for group in r["inputs"]["spec"]["resourceGroups"]:
                for flavor in group["flavors"]:
                    for res in flavor["resources"]:
                        if flavor["name"] == "v5p-res" and res["name"] == "google.com/tpu":
                            res["nominalQuota"] = 32
    By = open_page(browser, write_report(tmp_path, "prod", regs, "main", old))
    changed = cells(browser, By, 'tr[data-change="research/research/v5p-res/google.com/tpu"]')
    assert changed == {"before": "32", "after": "48"}
    same = cells(browser, By, 'tr[data-change="training/training/v5p-res/google.com/tpu"]')
    assert same == {"before": "64", "after": "64"}


def test_a_script_breaking_value_stays_data(browser, plan, tmp_path):
    """A name that could close the page's script is escaped: the page still renders, with the text as written."""
    data = report_data("x</script><script>alert(1)</script>", plan("dev"))
    path = tmp_path / "report.html"
    path.write_text(render_report(data))
    By = open_page(browser, path)
    title = browser.find_element(By.ID, "title").text
    assert title == "Plan of stack x</script><script>alert(1)</script> (cluster ml-dev)"


def test_make_report_with_a_base_plans_it_with_its_own_code(tmp_path):
    """`make report STACK=dev BASE=HEAD`: BASE planned as `make diff` plans it, the page carrying both sides."""

    out = tmp_path / "out"
    done = run_module("gke_ai_batch.offline.report", "dev", "--base", "HEAD", "--out", str(out))
    assert done.returncode == 0, done.stderr
    page = (out / "report.html").read_text()
    assert '"base": "HEAD"' in page and '"quotaChanges": [{' in page
