"""The setup screen: rule profile, table spec upload, printable markers, calibration health."""

from __future__ import annotations

from flask import Blueprint

from webui.screens import render_screen

bp = Blueprint("setup", __name__)


@bp.get("/setup")
def page() -> str:
    return render_screen("setup.html", "setup.page")
