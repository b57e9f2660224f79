"""Shared fixtures of the dashboard tests: fast settings, known table states, a running live table and its app."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

import rules
from calibration.spec import load_table_spec
from tableref.config import load_config
from webui import create_app
from webui.feeds import StateFeed
from webui.live import LiveTable
from webui.settings import WebuiSettings, load_webui_settings

TOKEN = "test-token"
AUTH = {"X-Tableref-Token": TOKEN}
# Every wait in these tests gives up after this long (s): a result takes milliseconds for a table state.
WAIT_S = 10.0


def fast_settings(**changes: Any) -> WebuiSettings:
    """The defaults, quickened so that tests settle and reconnect in tenths of a second."""
    base = {
        "max_process_fps": 40.0,
        "replay_fps": 40.0,
        "settle_s": 0.1,
        "reconnect_initial_s": 0.05,
        "reconnect_max_s": 0.4,
        "sample_hold_s": 60.0,
        "sample_move_s": 0.3,
    }
    base.update(changes)
    return dataclasses.replace(load_webui_settings(), **base)


def two_sides() -> dict[str, Any]:
    """Red's unit r (r1, r2) and blue's unit b (b1, b2) far apart, and x1, of no unit, 10 mm from red's r2.

    No findings until x1 joins blue: then blue is engaged with red (x1 within 2" of r2) and out of cohesion (x1
    is far from b1 and b2).
    """
    base = {"diameter_mm": 25.0}
    return {
        "table": {"width_mm": 1200.0, "depth_mm": 800.0},
        "units": [
            {"id": "r", "player": "red", "name": "Red squad", "leader": "r1"},
            {"id": "b", "player": "blue", "name": "Blue squad", "leader": "b1"},
        ],
        "models": [
            {"id": "r1", "unit": "r", "x_mm": 300.0, "y_mm": 300.0, "base": base},
            {"id": "r2", "unit": "r", "x_mm": 330.0, "y_mm": 300.0, "base": base},
            {"id": "x1", "unit": None, "x_mm": 365.0, "y_mm": 300.0, "base": base},
            {"id": "b1", "unit": "b", "x_mm": 900.0, "y_mm": 500.0, "base": base},
            {"id": "b2", "unit": "b", "x_mm": 930.0, "y_mm": 500.0, "base": base},
        ],
    }


def wait_for(predicate: Any, timeout_s: float = WAIT_S, what: str = "the condition") -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def start_live(feed: Any, settings: WebuiSettings, profile: str = "skirmish") -> LiveTable:
    live = LiveTable(feed, load_table_spec(), load_config(), settings, rules.load_profile(profile))
    live.start()
    return live


def state_live(state: dict[str, Any], settings: WebuiSettings | None = None, name: str = "test") -> LiveTable:
    """A started live table watching a table state (no camera), once its first result is out."""
    settings = settings or fast_settings()
    feed = StateFeed(rules.state_from_dict(state), name, settings.state_px_per_mm, settings.replay_fps)
    live = start_live(feed, settings)
    wait_for(lambda: live.hub.snapshot().result is not None, what="the first result")
    return live


def sample_state_dict() -> dict[str, Any]:
    import json

    from tableref.data import sample_state_path

    data: dict[str, Any] = json.loads(Path(sample_state_path()).read_text("utf-8"))
    return data


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright (skips where either is missing), one per test module."""
    from tests.webui.browser import BROWSER_ARGS, CHROMIUM

    playwright_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=BROWSER_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page; a script error on it fails the test."""
    from tests.webui.browser import VIEWPORT

    # Playwright evaluates its wait conditions as strings, which the dashboard's policy (no eval) would refuse.
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True, bypass_csp=True)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    context.close()
    assert errors == [], errors


@pytest.fixture
def live() -> Iterator[LiveTable]:
    """A live table of the bundled sample state (every kind of finding)."""
    lt = state_live(sample_state_dict(), name="sample_state.json")
    yield lt
    lt.stop()


@pytest.fixture
def app(live: LiveTable) -> Flask:
    return create_app(live, live.settings, token=TOKEN)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
