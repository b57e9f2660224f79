"""What the screens are sent: a measured state as the JSON document they draw, with each model's outline and centre
in frame pixels, and a table state served without a camera as if detected."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

import rules
from tableref.outlines import outlines_mm
from tableref.pipeline.state import DOUBTED
from webui.groups import group_findings
from webui.hub import FrameView

# Base outlines sent to viewers have this many vertices (smooth at screen scale) and 0.1 px precision.
OUTLINE_VERTICES = 48
_PX_DECIMALS = 1

# Table millimetres (N, 2) at a height (mm) to frame pixels (N, 2).
ToPixels = Callable[[NDArray[np.float64], float], NDArray[np.float64]]


def readonly(a: NDArray[np.float64]) -> NDArray[np.float64]:
    a.flags.writeable = False
    return a


# The calibration section of a table state served without a camera: nothing was calibrated, so it is no calibration's
# report (tableref.pipeline.state.CalibrationSection) but the few keys the screens show, saying so.
_STATE_REPORT = {
    "markers_used": [],
    "markers_seen": [],
    "markers_expected": [],
    "reprojection_error_mm": 0.0,
    "lens_corrected": False,
    "notes": ["no camera: a table state file drawn from above, exact positions"],
}


def as_detections(state: rules.TableState, px_per_mm: float) -> rules.TableState:
    """A table state as if detected: its models with no unit (the roster gives units), exact positions, and its
    terrain (a model on a terrain top names its piece); the places its measurement doubted, where it lists them
    (a state ``tableref detect`` wrote)."""
    models = tuple(replace(m, unit=None) for m in state.models)
    report = {**_STATE_REPORT, "px_per_mm": px_per_mm}
    doubted = {DOUBTED: state.extras[DOUBTED]} if DOUBTED in state.extras else {}
    extras = MappingProxyType({"calibration": report, **doubted})
    return rules.TableState(state.table, models=models, terrain=state.terrain, extras=extras)


def in_frame(
    state: rules.TableState, to_px: ToPixels, rim_height_mm: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(N, V, 2) base outlines and (N, 2) centres of the state's models in frame pixels, rims at their height."""
    n = len(state.models)
    if n == 0:
        return readonly(np.empty((0, OUTLINE_VERTICES, 2))), readonly(np.empty((0, 2)))
    rings = outlines_mm(state.models, OUTLINE_VERTICES).reshape(-1, 2)
    centers_mm = np.array([[m.x_mm, m.y_mm] for m in state.models])
    outlines = to_px(rings, rim_height_mm).reshape(n, OUTLINE_VERTICES, 2)
    centers = to_px(centers_mm, rim_height_mm)
    return readonly(np.asarray(outlines, dtype=np.float64)), readonly(np.asarray(centers, dtype=np.float64))


def place_in_frame(
    models: list[dict[str, Any]], outlines_px: NDArray[np.float64], centers_px: NDArray[np.float64]
) -> None:
    """Give each model dict its base outline (V, 2) and centre (2,) in frame pixels, rounded for the viewers."""
    for m, outline, center in zip(models, outlines_px, centers_px, strict=True):
        m["outline_px"] = np.round(outline, _PX_DECIMALS).tolist()
        m["center_px"] = np.round(center, _PX_DECIMALS).tolist()


def place_doubted(doc: dict[str, Any], to_px: ToPixels, rim_height_mm: float) -> None:
    """Give each place the document lists as doubted (``doubted``, see :mod:`vision.doubts`) its outline and centre
    in frame pixels, as :func:`place_in_frame` does for a model."""
    places = doc.get("doubted") or []
    circles = tuple(
        rules.Model(f"doubted{k}", None, p["x_mm"], p["y_mm"], rules.RoundBase(p["diameter_mm"]))
        for k, p in enumerate(places)
    )
    if circles:
        place_in_frame(places, *in_frame(rules.TableState(rules.Table(1.0, 1.0), models=circles), to_px, rim_height_mm))


def result_document(
    seq: int,
    frame: FrameView,
    state: rules.TableState,
    findings: tuple[rules.Finding, ...],
    profile: rules.RuleProfile,
    outlines_px: NDArray[np.float64],
    centers_px: NDArray[np.float64],
    analyzed_at: float,
) -> dict[str, Any]:
    """What the screens draw: the state (rules format) with each model's outline and centre in frame pixels, the
    findings, the profile's lines and the frame it belongs to."""
    doc = rules.state_to_dict(state)
    place_in_frame(doc["models"], outlines_px, centers_px)
    players = list(dict.fromkeys(u.player for u in state.units if u.player))
    doc.update(
        {
            "seq": seq,
            "analyzed_at": analyzed_at,
            "frame": {"seq": frame.seq, "scene": frame.scene, "width_px": frame.width_px, "height_px": frame.height_px},
            "profile": {
                "name": profile.name,
                "title": profile.title,
                "limits_mm": profile.limits(),
                "close_sigmas": profile.calls.close_sigmas,
            },
            "players": players,
            "findings": [f.to_dict() for f in findings],
            "groups": [g.to_dict() for g in group_findings(findings, state)],
        }
    )
    return doc
