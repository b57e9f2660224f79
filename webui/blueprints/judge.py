"""The judge screen: measure two models, freeze the frame, export a report."""

from __future__ import annotations

from flask import Blueprint

from webui.screens import render_screen

bp = Blueprint("judge", __name__)


@bp.get("/judge")
def page() -> str:
    return render_screen("judge.html", "judge.page")
