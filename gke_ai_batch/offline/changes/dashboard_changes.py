"""A Cloud Monitoring dashboard's change as `make diff` prints it: its panels added, removed and changed, by
title, where the plain input line would show two JSON strings cut to nothing ((+10045 characters) ->
(+13545 characters)).

The dashboard is the Monitoring API's Dashboard in a string (plan.dashboard): a mosaicLayout of tiles, each a
widget at a place. A panel is named by its title, and a panel inside a group by the group's title too
(`Team research (research) / Wait for admission, p50`: every team's section repeats the same chart titles). A
collapsibleGroup's members are the tiles "within the area spanned by the grouping widget" (Monitoring API
v1, google.monitoring.dashboard.v1.CollapsibleGroup). A panel whose widget is the same at another place is
moved, and counted, not listed: a team added above shifts every panel below it. Other keys of the document
(its displayName, labels) are compared as inputs are."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from gke_ai_batch.model.words import plural

from .inputs import changes

DASHBOARD_JSON = "dashboardJson"  # the pulumi-gcp Dashboard input that holds the document
PLACE = ("xPos", "yPos", "width", "height")  # a tile's place; absent is 0, as proto3 JSON leaves zeros out
Panel = tuple[tuple[int, ...], dict[str, Any]]  # place, widget


def _place(tile: dict[str, Any]) -> tuple[int, ...]:
    return tuple(int(tile.get(k) or 0) for k in PLACE)


def _within(inner: tuple[int, ...], outer: tuple[int, ...]) -> bool:
    x, y, w, h = inner
    ox, oy, ow, oh = outer
    return ox <= x and x + w <= ox + ow and oy <= y and y + h <= oy + oh


def panels(doc: dict[str, Any]) -> dict[str, Panel] | None:
    """Each tile's widget and place by its name (`group / title`); None for a document without a mosaic layout
    (then the line stays the input's own)."""
    tiles = (doc.get("mosaicLayout") or {}).get("tiles")
    if not isinstance(tiles, list):
        return None
    groups = [(_place(t), t["widget"].get("title", "")) for t in tiles if "collapsibleGroup" in t.get("widget", {})]
    out: dict[str, Panel] = {}
    seen: Counter[str] = Counter()
    for tile in tiles:
        widget, place = tile.get("widget") or {}, _place(tile)
        title = widget.get("title") or "(untitled)"
        group = next((g for at, g in groups if at != place and _within(place, at)), None)
        name = f"{group} / {title}" if group and "collapsibleGroup" not in widget else title
        seen[name] += 1
        out[name if seen[name] == 1 else f"{name} #{seen[name]}"] = (place, widget)
    return out


def dashboard_lines(old: Any, new: Any, show: Callable[[Any], str]) -> list[str] | None:
    """The change of a dashboard document, panel by panel (`show` prints a value as every diff line does);
    None when either side is no dashboard this module reads."""
    try:
        docs = json.loads(old), json.loads(new)
    except (TypeError, ValueError):
        return None
    if not all(isinstance(d, dict) for d in docs):
        return None
    was, now = panels(docs[0]), panels(docs[1])
    if was is None or now is None:
        return None
    lines = [f"{DASHBOARD_JSON}: panel removed: {json.dumps(n)}" for n in was if n not in now]
    lines += [f"{DASHBOARD_JSON}: panel added: {json.dumps(n)}" for n in now if n not in was]
    for name in (n for n in was if n in now):
        lines += [f"{DASHBOARD_JSON}: panel changed: {json.dumps(name)}: {path}: {show(a)} -> {show(b)}"
                  for path, a, b in changes(was[name][1], now[name][1])]
    moved = sum(1 for n in was if n in now and was[n][1] == now[n][1] and was[n][0] != now[n][0])
    lines += [f"{DASHBOARD_JSON}: {plural(moved, 'panel')} moved (the same widget in a new place)"] if moved else []
    rest = [{**d, "mosaicLayout": {k: v for k, v in d["mosaicLayout"].items() if k != "tiles"}} for d in docs]
    return lines + [f"{path}: {show(a)} -> {show(b)}" for path, a, b in changes(rest[0], rest[1], DASHBOARD_JSON)]
