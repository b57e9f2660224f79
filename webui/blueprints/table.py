"""The table screen: the camera frame with overlays, the top-down map and the findings."""

from __future__ import annotations

from flask import Blueprint

from webui.screens import render_screen

bp = Blueprint("table", __name__)


@bp.get("/")
def page() -> str:
    return render_screen("table.html", "table.page")
