"""The review screen: a place for looking back over a game (not built yet)."""

from __future__ import annotations

from flask import Blueprint

from webui.screens import render_screen

bp = Blueprint("review", __name__)


@bp.get("/review")
def page() -> str:
    return render_screen("review.html", "review.page")
