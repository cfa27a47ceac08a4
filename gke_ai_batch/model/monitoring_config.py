"""The stack's dashboard and alerts: where alerts go, and when they fire. A team's own thresholds and
channels live in its team block (`alerts`), so an alert can only ever name a team the stack has.

Channels are Cloud Monitoring notification channels the project already has, named once in
`monitoring.channels` and referred to by that name everywhere else; a name nothing declares is refused
where it is used (plan.alerts)."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from gke_ai_batch.model.field_rules import DNS_LABEL, NOTIFICATION_CHANNEL, Model

ChannelName = Annotated[str, StringConstraints(pattern=DNS_LABEL.pattern, max_length=63)]
ChannelId = Annotated[str, StringConstraints(pattern=NOTIFICATION_CHANNEL.pattern)]
MINUTES_IN_A_WEEK = 10080


class AlertThresholds(Model):
    """When a team's alerts fire. Each default is when a platform team would rather hear it from an alert
    than from a user."""

    pending_minutes: int = Field(60, gt=0, le=MINUTES_IN_A_WEEK)
    """A team's LocalQueue has had workloads waiting, and admitted none, for this long (default an hour: a
    slice that scales from zero is admitted well within it when the capacity exists)."""
    at_quota_minutes: int = Field(240, gt=0, le=MINUTES_IN_A_WEEK)
    """A team has used all of its nominal quota of a flavor's resource for this long (default four hours:
    a training run at the quota is normal, a queue pinned there for half a working day is worth a look)."""
    evictions_per_hour: int = Field(10, gt=0, le=100000)
    """More evictions (preemptions included) than this in an hour, in one ClusterQueue, is a burst."""


class MonitoringConfig(Model):
    """The stack's Cloud Monitoring dashboard and alert policies, built from the plan (docs/observability.md)."""

    dashboard: bool = True
    """Declare the stack's dashboard: a platform section and one section per team."""
    alerts: bool = True
    """Declare the alert policies: the platform's, and the teams' (one of each for every team that keeps these
    settings, and three of its own for a team whose block sets `alerts`)."""
    channels: dict[ChannelName, ChannelId] = {}
    """Notification channels under a short name of yours: `oncall: projects/p/notificationChannels/123`."""
    notify: list[str] = []
    """The channels (names from `channels`) the platform's alerts go to; a team's go there too unless
    its block names its own."""
    thresholds: AlertThresholds = AlertThresholds()
    """The thresholds of every team's alerts, unless its block overrides them."""


class TeamAlerts(Model):
    """A team's own alert routing and thresholds; what it leaves unset comes from the stack's `monitoring`."""

    channels: list[str] = []
    """Channels (names from monitoring.channels) the team's alerts go to, instead of monitoring.notify."""
    pending_minutes: int | None = Field(None, gt=0, le=MINUTES_IN_A_WEEK)
    """This team's monitoring.thresholds.pending_minutes."""
    at_quota_minutes: int | None = Field(None, gt=0, le=MINUTES_IN_A_WEEK)
    """This team's monitoring.thresholds.at_quota_minutes."""
    evictions_per_hour: int | None = Field(None, gt=0, le=100000)
    """This team's monitoring.thresholds.evictions_per_hour."""
