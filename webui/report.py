"""The judge report: one self-contained HTML page (the frame as a data URL with the overlays drawn over it in SVG,
the measurements, the findings, the time and the calibration quality) that can be mailed, archived or printed."""

from __future__ import annotations

import base64
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import rules
from tableref.labels import LINE_HEIGHT, Circle, label_for, place_labels, table_labels
from tableref.pipeline.state import doubted_of
from tableref.report import describe_finding, finding_measure, finding_note, finding_title, format_length
from webui.hub import Result, Status

# Players' colours (the screens use the same ones, in the same order); models of no unit are grey.
PLAYER_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf")
NO_PLAYER_COLOUR = "#9e9e9e"

# The text over the frame: a share of its width, at least this many pixels (as the Judge screen draws it).
FRAME_FONT_SHARE = 1 / 75
FRAME_FONT_MIN_PX = 12.0
# A measured pair's number is written this much larger than a unit's name.
NUMBER_SHARE = 1.3

LINE_TITLES = {"engagement": "engagement range", "base_contact": "base contact", "cohesion": "cohesion range"}


# A player named after a colour is drawn in it (the screens do the same).
COLOUR_WORDS = {
    "red": "#d62728",
    "blue": "#1f77b4",
    "green": "#2ca02c",
    "purple": "#9467bd",
    "orange": "#ff7f0e",
    "yellow": "#e6c229",
    "black": "#333333",
    "white": "#f5f5f5",
}


def player_colour(players: list[str], player: str | None) -> str:
    """A player's colour: the colour it is named after, else the next of PLAYER_COLOURS; grey for no player."""
    if not player:
        return NO_PLAYER_COLOUR
    return COLOUR_WORDS.get(player.strip().lower()) or PLAYER_COLOURS[players.index(player) % len(PLAYER_COLOURS)]


def player_colours(state: rules.TableState) -> dict[str, str]:
    """Colour of each model id: its unit's player's colour, grey without a player."""
    players = list(dict.fromkeys(u.player for u in state.units if u.player))
    by_unit = {u.id: player_colour(players, u.player) for u in state.units}
    return {m.id: by_unit.get(m.unit, NO_PLAYER_COLOUR) if m.unit else NO_PLAYER_COLOUR for m in state.models}


def _stamp(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) if t else "-"


def frame_labels(res: Result, numbers: Sequence[tuple[str, float, float]] = ()) -> list[dict[str, Any]]:
    """The labels over the frame, as the Judge screen places them: the measured pairs' ``numbers`` (text, and the
    middle of the pair in frame pixels) first, then each unit's name above it and each model's id on its base, none
    over another (:mod:`tableref.labels`), in frame pixels. ``kind`` says which (``number``, ``unit``, ``id``);
    ``leader`` joins a label moved off its place to its anchor."""
    state = res.state
    circles = [
        Circle(m.id, float(c[0]), float(c[1]), float(np.max(np.hypot(*(o - c).T))))
        for m, c, o in zip(state.models, res.centers_px, res.outlines_px, strict=True)
    ]
    font = max(FRAME_FONT_MIN_PX, res.frame.width_px * FRAME_FONT_SHARE)
    names = {u.id: u.name or u.id for u in state.units}
    marks = [label_for(text, x, y, font * NUMBER_SHARE) for text, x, y in numbers]
    labels = [*marks, *table_labels(circles, {m.id: m.unit for m in state.models}, names, font)]
    kinds = ["number"] * len(marks) + ["unit" if label.above else "id" for label in labels[len(marks) :]]
    placed = place_labels(labels, (0.0, 0.0, float(res.frame.width_px), float(res.frame.height_px)), circles)
    return [
        {"text": label.text, "kind": kind, "font": label.height / LINE_HEIGHT, **p.to_dict()}
        for label, kind, p in zip(labels, kinds, placed, strict=True)
        if p is not None
    ]


def report_context(res: Result, measurements: list[rules.Measurement], status: Status) -> dict[str, Any]:
    """Values for ``templates/report.html``."""
    state = res.state
    colours = player_colours(state)
    index = {m.id: k for k, m in enumerate(state.models)}
    outlines = [
        {
            "id": m.id,
            "points": " ".join(f"{x:.1f},{y:.1f}" for x, y in res.outlines_px[k]),
            "colour": colours[m.id],
        }
        for k, m in enumerate(state.models)
    ]
    rows = []
    # each measured pair's number, half way between its two models
    numbers = []
    for n, m in enumerate(measurements, start=1):
        a, b = res.centers_px[index[m.a]], res.centers_px[index[m.b]]
        numbers.append((str(n), float(a[0] + b[0]) / 2, float(a[1] + b[1]) / 2))
        rows.append(
            {
                "n": n,
                "a": m.a,
                "b": m.b,
                "gap": format_length(m.gap_mm, m.sigma_mm),
                "verdicts": [
                    {
                        "line": LINE_TITLES.get(v.line, v.line),
                        "limit": format_length(v.limit_mm),
                        "within": v.within,
                        "call": v.call,
                    }
                    for v in m.verdicts
                ],
                "x1": float(a[0]),
                "y1": float(a[1]),
                "x2": float(b[0]),
                "y2": float(b[1]),
            }
        )
    findings = [
        {
            "title": finding_title(f),
            "text": describe_finding(state, f),
            "measure": "; ".join(x for x in (finding_measure(f), finding_note(f)) if x),
            "call": f.call or "",
        }
        for f in res.findings
    ]
    return {
        "labels": frame_labels(res, numbers),
        "frame_src": "data:image/jpeg;base64," + base64.b64encode(res.frame.jpeg).decode("ascii"),
        "width": res.frame.width_px,
        "height": res.frame.height_px,
        "outlines": outlines,
        "measurements": rows,
        "findings": findings,
        "doubted": [
            f"({p.x_mm:.0f}, {p.y_mm:.0f}) mm, about {p.diameter_mm:.0f} mm across (finder {p.probability:.2f})"
            for p in doubted_of(state)
        ],
        "profile": res.profile,
        "analyzed_at": _stamp(res.analyzed_at),
        "frame_time": _stamp(res.frame.wall_time),
        "made_at": _stamp(time.time()),
        "frozen": status.frozen,
        "source": status.source,
        "models": len(state.models),
        "units": len(state.units),
        "calibration": dict(res.calibration),
    }
