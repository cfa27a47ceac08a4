"""The fleet block of the stack config: a MultiKueue manager stack that names its worker stacks, or a worker
stack that a manager names. The team blocks are the manager's alone; plan/fleet.py derives what each
worker gets from them (docs/fleet.md)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from gke_ai_batch.model.field_rules import DNS_LABEL, Model, TextRule, text

# pulumi.StackReference names: `stack`, or `organization/project/stack` (Pulumi's "fully qualified" form).
STACK_REFERENCE = TextRule(r"^([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/)?[A-Za-z0-9_.-]+$",
                           "a stack name, or organization/project/stack")
MAX_TOKEN_DAYS = 365
ALL_AT_ONCE, INCREMENTAL = "all-at-once", "incremental"  # fleet.dispatcher: Kueue's dispatchers, by their suffix


def stack_parts(stack: str) -> tuple[str | None, str | None, str]:
    """(organization, project, stack) of a StackReference name; a bare stack name has neither of the first two
    (the engine completes them). The one reading of the form for the program, the planner and the offline plan."""
    parts = stack.split("/")
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 else (None, None, parts[-1])


class FleetWorkerConfig(Model):
    """A worker cluster of the fleet: its name on the manager and the stack that declares it."""

    name: str = text(DNS_LABEL, max_length=63)
    """The worker's name: its MultiKueueCluster, and what `make admit` says a workload goes to."""
    stack: str = text(STACK_REFERENCE)
    """The worker's stack (a pulumi.StackReference): `fleet-east` (a stack of this project and organization), or
    `acme/gke-ai-batch/fleet-east`."""
    state: Literal["active", "draining"] = "active"
    """active, or draining: jobs may no longer name its flavors (the manager's fleet-flavor policy refuses
    them), so it gets no new work while what runs there finishes; everything else stays, and a later change
    may remove it (`make diff` refuses removing a worker that was not draining first)."""


class FleetCredentials(Model):
    """The MultiKueue credentials the manager creates on every worker: a ServiceAccount token Secret
    (`kubernetes.io/service-account-token`), the kind Kueue's own setup script makes. Kueue 0.19 accepts
    only an inline token in a worker's kubeconfig (no exec plugin, so no gcloud credentials), and such a
    token does not expire until its Secret is deleted; the stack states how often it is rotated."""

    generation: int = Field(1, ge=1)
    """The token's generation: raise it by one to rotate every worker's token in one `pulumi up` (the new
    token Secret and the manager's kubeconfig Secrets are replaced before the old token is deleted)."""
    rotate_every_days: int = Field(90, ge=1, le=MAX_TOKEN_DAYS)
    """The longest a generation may live, stated on the manager's kubeconfig Secrets; the fleet-credentials
    policy requires it, and docs/fleet.md has the rotation steps."""


class FleetConfig(Model):
    """A MultiKueue fleet: the manager holds the teams' queues and dispatches their jobs to workers."""

    role: Literal["manager", "worker"]
    """manager: this stack's Kueue dispatches to the workers it names, and declares the teams on them;
    worker: this stack's cluster runs the jobs a manager dispatches (its teams come from the manager)."""
    workers: list[FleetWorkerConfig] = []
    """Manager only: the workers (1 to 20 per ClusterQueue), in the order the incremental dispatcher tries them."""
    dispatcher: Literal["all-at-once", "incremental"] = "all-at-once"
    """Manager only. all-at-once (Kueue's default): Kueue offers a workload to every worker of its queue; a
    job names its flavor, which one worker holds, so that worker takes it. incremental: one worker at a time,
    in the order above, the next after 5 minutes without admission."""
    credentials: FleetCredentials = FleetCredentials()
    """Manager only: the workers' MultiKueue tokens."""
