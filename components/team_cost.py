"""TeamCost: the per-team cost view over the detailed billing export, as plan.cost derived it, and the
export's dataset when the stack declares it (kept in BigQuery when the stack stops declaring it)."""
from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from gke_ai_batch.plan import lifecycle
from gke_ai_batch.plan.cost import CostPlan
from gke_ai_batch.vocabulary import component_type


@dataclass
class TeamCostArgs:
    plan: CostPlan
    project: str
    labels: dict[str, str]


class TeamCost(pulumi.ComponentResource):
    def __init__(self, name: str, args: TeamCostArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(component_type("TeamCost"), name, None, opts)
        p, child = args.plan, pulumi.ResourceOptions(parent=self)
        if p.create_export_dataset:
            gcp.bigquery.Dataset(f"{name}-export", dataset_id=p.export_dataset, project=p.export_project,
                                 location=p.location, labels=args.labels,
                                 opts=pulumi.ResourceOptions(parent=self, **lifecycle.EXPORT_DATASET.options()))
        dataset = gcp.bigquery.Dataset(f"{name}-dataset", dataset_id=p.dataset, project=args.project,
                                       location=p.location, labels=args.labels, opts=child)
        # A view holds no data: it may be replaced or deleted with the stack (the provider protects tables by default).
        self.view = gcp.bigquery.Table(
            f"{name}-view", dataset_id=dataset.dataset_id, table_id=p.view, project=args.project,
            view=gcp.bigquery.TableViewArgs(query=p.query, use_legacy_sql=False), deletion_protection=False,
            labels=args.labels, opts=child)
        self.register_outputs({"view": self.view.id})
