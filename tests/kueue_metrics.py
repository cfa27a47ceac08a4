"""The metrics Kueue's controller exports, read from Kueue's own reference page (vendored unmodified in
upstream_metrics/ beside this file), and the labels a series carries once Managed Service for Prometheus has
scraped it: what the tests hold every PromQL expression the platform writes to (test_observability). The
platform itself writes queries (plan.queries) and reads no metric, so this lives with the tests.

GMP's PodMonitoring writes the target labels `namespace` (the scraped pod's) and `job` (the PodMonitoring's
name), and `project_id`, `location`, `cluster` and `instance` (prometheus-engine v0.17.2,
pkg/operator/apis/monitoring/v1/pod_config.go; export.KeyProjectID...). It does not honor the scraped
labels, so a metric's own `namespace` label (a LocalQueue's) is kept as `exported_namespace`: Prometheus'
honor_labels false "renames conflicting labels in the scraped data to exported_<original-label>"
(prometheus.io/docs/prometheus/latest/configuration/configuration/#scrape_config)."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

REFERENCE = Path(__file__).parent / "upstream_metrics" / "kueue-v0.19.2-metrics.md"
TARGET_LABELS = frozenset({"project_id", "location", "cluster", "namespace", "job", "instance"})
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
ROW = re.compile(r"^\| `(?P<name>[a-z_]+)` \| (?P<type>Counter|Gauge|Histogram) \| .* \| (?P<labels>[^|]*) \|$")
LABEL = re.compile(r"`([a-z_]+)`:")


@dataclass(frozen=True)
class Metric:
    name: str
    type: str
    labels: frozenset[str]

    @property
    def scraped_labels(self) -> frozenset[str]:
        """Its labels as stored: a clash with a target label is kept as exported_<label>."""
        own = {f"exported_{label}" if label in TARGET_LABELS else label for label in self.labels}
        return frozenset(own) | TARGET_LABELS | ({"le"} if self.type == "Histogram" else set())


@functools.cache
def kueue_metrics() -> dict[str, Metric]:
    """Every metric of Kueue's reference page, by name."""
    text = REFERENCE.read_text()
    rows = (ROW.match(line) for line in text.splitlines())
    return {m["name"]: Metric(m["name"], m["type"], frozenset(LABEL.findall(m["labels"]))) for m in rows if m}


def series_metric(series: str) -> Metric | None:
    """The metric a series name belongs to (a histogram's _bucket, _sum and _count are its own)."""
    known = kueue_metrics()
    if series in known:
        return known[series]
    for suffix in HISTOGRAM_SUFFIXES:
        base = known.get(series.removesuffix(suffix)) if series.endswith(suffix) else None
        if base is not None and base.type == "Histogram":
            return base
    return None
