"""Helpers of the browser tests (Playwright driving Debian's Chromium): a live table served over HTTP on a free port,
screenshots to tests/artifacts/, and waits for the page's first results. The fixtures that launch the browser are
in conftest.py."""

from __future__ import annotations

import json
import logging
import shutil
import threading
import urllib.request
from pathlib import Path
from typing import Any

from tests.webui.conftest import TOKEN
from webui import create_app
from webui.live import LiveTable

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1500, "height": 950}
# Browser waits (ms).
WAIT_MS = 15000


class Served:
    """A live table behind a real HTTP server on a free port of 127.0.0.1."""

    def __init__(self, live: LiveTable) -> None:
        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        self.live = live
        self.server = make_server("127.0.0.1", 0, create_app(live, live.settings, token=TOKEN), threaded=True)
        self.url = f"http://127.0.0.1:{self.server.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=10) as response:
            return json.loads(response.read())

    def post(self, path: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.live.stop()


def shot(pg: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    # The viewport, as a person sees it (the status bar stays at its bottom).
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def wait_results(pg: Any, frames: int = 2) -> None:
    pg.wait_for_function(
        f"window.tableref && window.tableref.results >= 1 && window.tableref.frames >= {frames}", timeout=WAIT_MS
    )


def wait_labels(pg: Any, drawing: str) -> None:
    """Until the labels of ``drawing`` (a selector) stand where the server placed them."""
    pg.wait_for_selector(f'{drawing} .labels[data-placed="yes"]', state="attached", timeout=WAIT_MS)
