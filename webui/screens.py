"""Rendering a screen: every page shares the navigation, the status bar and the client settings."""

from __future__ import annotations

from typing import Any

from flask import render_template

from webui.http import app_state

# The screens, in the order of the navigation bar: (endpoint, title).
SCREENS = (
    ("table.page", "Table"),
    ("units.page", "Units"),
    ("judge.page", "Judge"),
    ("setup.page", "Setup"),
    ("review.page", "Review"),
)


def render_screen(template: str, active: str, **context: Any) -> str:
    """A screen's page (``context``: the template's own values). The change token is written into the page only
    when the dashboard serves this machine alone; otherwise the browser takes it from the address printed at
    start-up."""
    state = app_state()
    return render_template(
        template,
        screens=SCREENS,
        active=active,
        token=state.token if state.embed_token else "",
        poll_interval_ms=round(state.settings.poll_interval_s * 1000),
        **context,
    )
