"""Maintenance windows as GKE counts them: the hours of maintenance a recurring window leaves in the
worst 32-day stretch, counting only contiguous windows of at least 4 hours.

GKE refuses a maintenance policy that leaves less than 48 hours in any rolling 32-day period (see
gke_rules). The arithmetic lives here, apart from the rule, so that it can be tested on its own.
"""
from __future__ import annotations

from datetime import datetime, timedelta

DAY = timedelta(days=1)
ROLLING = timedelta(days=32)
MIN_CONTIGUOUS = timedelta(hours=4)
WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")


class WindowError(ValueError):
    """A window GKE would not parse, or that this project cannot evaluate; the text says which."""


def parse_time(text: str) -> datetime:
    """An RFC 3339 date-time with an explicit offset (`2025-01-04T02:00:00Z`)."""
    try:
        value = datetime.fromisoformat(str(text).replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        value = None
    if value is None or "T" not in str(text).upper() or value.tzinfo is None:
        raise WindowError(f"{text!r} is not an RFC 3339 date-time with an offset, such as 2025-01-04T02:00:00Z")
    return value


def _rrule(recurrence: str) -> dict[str, str]:
    parts = dict(p.split("=", 1) for p in recurrence.split(";") if "=" in p)
    if not parts or any("=" not in p for p in recurrence.split(";")):
        raise WindowError(f"{recurrence!r} is not an RFC 5545 RRULE such as FREQ=WEEKLY;BYDAY=SA,SU")
    return parts


def weekdays(recurrence: str) -> frozenset[int]:
    """The weekdays (0 = Monday) a window starts on; every day for FREQ=DAILY."""
    parts = _rrule(recurrence)
    freq, byday = parts.get("FREQ"), parts.get("BYDAY")
    extra = set(parts) - {"FREQ", "BYDAY"}
    if freq == "DAILY" and not byday and not extra:
        return frozenset(range(7))
    if freq == "WEEKLY" and byday and not extra:
        days = byday.split(",")
        unknown = [d for d in days if d not in WEEKDAYS]
        if unknown:
            raise WindowError(f"{recurrence!r}: unknown day {unknown[0]!r}; days are {', '.join(WEEKDAYS)}")
        return frozenset(WEEKDAYS.index(d) for d in days)
    raise WindowError(f"{recurrence!r}: use FREQ=DAILY or FREQ=WEEKLY;BYDAY=<days> (the forms whose "
                      "maintenance availability this project can compute)")


def _occurrences(start: datetime, length: timedelta, days: frozenset[int],
                 horizon: int) -> list[tuple[datetime, datetime]]:
    return [(start + n * DAY, start + n * DAY + length) for n in range(horizon)
            if (start + n * DAY).weekday() in days]


def _merge(spans: list[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    merged: list[list[datetime]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def _covered(spans: list[tuple[datetime, datetime]], a: datetime, b: datetime) -> timedelta:
    return sum((min(b, y) - max(a, x) for x, y in spans if y > a and x < b), timedelta())


def worst_case_hours(start: str, end: str, recurrence: str) -> float:
    """Fewest maintenance hours in any 32-day period, counting contiguous windows of 4 hours or more.

    The pattern repeats every 7 days, so the minimum over all periods is the minimum over periods
    that begin or end at a window edge within one week; windows are expanded far enough around it.
    """
    t0, t1 = parse_time(start), parse_time(end)
    if t1 <= t0:
        raise WindowError(f"end {end!r} is not after start {start!r}")
    if t1 - t0 > DAY:
        raise WindowError(f"{start!r} to {end!r} is longer than a day; a recurring window's occurrence "
                          "is the time from start to end, so keep it within 24 hours")
    spans = [s for s in _merge(_occurrences(t0, t1 - t0, weekdays(recurrence), 7 + 32 + 8))
             if s[1] - s[0] >= MIN_CONTIGUOUS]
    week_end = t0 + 7 * DAY
    edges = [e for s in spans for e in s]
    candidates = [c for c in edges + [e - ROLLING for e in edges] if t0 <= c < week_end] or [t0]
    worst = min(_covered(spans, c, c + ROLLING) for c in candidates)
    return worst.total_seconds() / 3600
