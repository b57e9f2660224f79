"""The units screen: assign detected models to units and players, save and load the roster."""

from __future__ import annotations

from flask import Blueprint

from webui.screens import render_screen

bp = Blueprint("units", __name__)


@bp.get("/units")
def page() -> str:
    return render_screen("units.html", "units.page")
