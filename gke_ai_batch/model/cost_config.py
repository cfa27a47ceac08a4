"""The stack's per-team cost view: where Cloud Billing's detailed export lands, and where the view goes.

GKE cost allocation (on for every cluster, plan.gke_inputs) labels the cluster's line items in the detailed
usage cost export with `goog-k8s-cluster-name` and `k8s-namespace` (GKE, "View detailed breakdown of cluster
costs"). The export itself is turned on in the Cloud Billing console, into a dataset the stack may declare."""
from __future__ import annotations

from pydantic import Field

from gke_ai_batch.model.field_rules import BILLING_EXPORT_TABLE, BQ_DATASET, Model, text


class CostConfig(Model):
    """Per-team spend from GKE cost allocation in the detailed billing export (docs/observability.md)."""

    billing_export_table: str = text(BILLING_EXPORT_TABLE)
    """The detailed usage cost export's table: PROJECT_ID.DATASET.gcp_billing_export_resource_v1_ACCOUNT."""
    create_export_dataset: bool = False
    """Declare the export's dataset (it must be in this stack's project), then point Cloud Billing's detailed
    export at it in the console; false: the dataset exists (the view reads it; the stack does not manage it)."""
    dataset: str = text(BQ_DATASET, "gke_ai_batch_cost")
    """The dataset, in this stack's project, that holds the per-team view."""
    location: str = Field("US", pattern=r"^([A-Z]{2}|[a-z]+-[a-z]+\d+)$")
    """The datasets' BigQuery location (US, EU, or a region): a view must live where the table it reads is."""
