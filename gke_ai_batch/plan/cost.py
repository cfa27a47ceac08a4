"""Per-team spend: a BigQuery view over the detailed billing export that gives each line item of this
stack's cluster to the team whose namespace GKE cost allocation names (labels `goog-k8s-cluster-name` and
`k8s-namespace`; queries as in GoogleCloudPlatform's gke-cost-analysis billing-queries.md), and the rest of
the cluster's spend (nodes no pod requested, SKUs cost allocation does not split) to `(unallocated)`.

The namespace, not a pod label, decides the team: team members write their pods' labels, not the
platform's namespaces. Budgets are not declared: a Cloud Billing budget filters on "a single label and
value pair" (budgets API, Filter.labels), so it cannot hold a team of several namespaces."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gke_ai_batch.model.config import PlatformConfig
from gke_ai_batch.model.errors import ConfigError, path_of
from gke_ai_batch.plan.team_namespaces import TeamPlan

UNALLOCATED = "(unallocated)"
VIEW = "team_cost"


@dataclass(frozen=True)
class CostPlan:
    export_project: str
    export_dataset: str
    create_export_dataset: bool
    dataset: str
    location: str
    view: str
    query: str


def plan_cost(cfg: PlatformConfig, teams: Sequence[TeamPlan]) -> CostPlan | None:
    if cfg.cost is None:
        return None
    project, dataset, _ = cfg.cost.billing_export_table.split(".")
    if cfg.cost.create_export_dataset and project != cfg.project:
        raise ConfigError(path_of("cost", "create_export_dataset"), f"the export's dataset is in project {project!r}, "
                          f"not this stack's ({cfg.project}): declare it in that project's stack, or set false")
    return CostPlan(project, dataset, cfg.cost.create_export_dataset, cfg.cost.dataset, cfg.cost.location,
                    f"{VIEW}_{cfg.environment.replace('-', '_')}", team_cost_query(cfg, teams))


def _quoted(value: str) -> str:
    """A BigQuery string literal of a name (DNS labels and project IDs hold no quote or backslash)."""
    return '"' + value + '"'


def team_cost_query(cfg: PlatformConfig, teams: Sequence[TeamPlan]) -> str:
    """Daily cost per team, namespace, service and SKU of this stack's cluster, with and without credits."""
    assert cfg.cost is not None
    pairs = ",\n    ".join(f"STRUCT({_quoted(ns)} AS namespace, {_quoted(t.name)} AS team)"
                           for t in teams for ns in t.namespaces)
    teams_cte = f"SELECT * FROM UNNEST([\n    {pairs}])" if pairs else \
        'SELECT * FROM UNNEST(ARRAY<STRUCT<namespace STRING, team STRING>>[])'
    label = "(SELECT l.value FROM UNNEST(bqe.labels) AS l WHERE l.key = {} LIMIT 1)"
    return f"""WITH teams AS (
  {teams_cte}
)
SELECT
  DATE(bqe.usage_start_time) AS day,
  bqe.invoice.month AS invoice_month,
  IFNULL(teams.team, {_quoted(UNALLOCATED)}) AS team,
  {label.format('"k8s-namespace"')} AS namespace,
  bqe.service.description AS service,
  bqe.sku.description AS sku,
  bqe.currency AS currency,
  SUM(bqe.cost) AS cost_before_credits,
  SUM(bqe.cost) + SUM(IFNULL((SELECT SUM(c.amount) FROM UNNEST(bqe.credits) AS c), 0)) AS cost
FROM `{cfg.cost.billing_export_table}` AS bqe
LEFT JOIN teams ON teams.namespace = {label.format('"k8s-namespace"')}
WHERE bqe.project.id = {_quoted(cfg.project)}
  AND {label.format('"goog-k8s-cluster-name"')} = {_quoted(cfg.cluster.name)}
GROUP BY day, invoice_month, team, namespace, service, sku, currency
"""
