"""Screenshots of every screen of the dashboard, for docs/screens.md: the demo's sample game (as `make demo` makes
and serves it) in Chromium at 1280 px wide.

Renders the sample game (synth.make_game) and reviews it as the Makefile's demo target does, serves it with
`tableref serve --loop`, and waits on each live screen for the moment of the game it shows (after the Commandos'
Advance: the melee of the Clone Troopers and Battle Droids, and the trooper taken off, not seen). Also reviews the
game without its roster (suggested units, no Move known) for the Review screen's "Move unknown", and uploads a photo
of another table on the Setup screen. Run by hand, never in the test suite:

    .venv/bin/python bench/screens.py [--game sample_game] [--out docs/screens]

The PNGs are written small (a palette of 256 colours where that keeps them readable), each well under 300 KB.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import _root
import cv2
import numpy as np

ROOT = _root.ROOT
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WIDTH_PX = 1280
HEIGHT_PX = 820
# A screen waits this long (s) for the moment of the game it shows; the game loops every 20 s or so.
MOMENT_S = 90.0
# The photo of another table uploaded on the Setup screen: the 30" x 22" board, other models.
OTHER_TABLE = ROOT / "sample_images" / "small_table_720p.jpg"


def tableref(*args: str) -> list[str]:
    return [sys.executable, "-m", "tableref.cli", *args]


def make_game(folder: Path) -> None:
    """The sample game in ``folder`` with its reviews: with its roster (the demo's) and without one."""
    if not (folder / "game.avi").is_file():
        subprocess.run([sys.executable, "-m", "synth.make_game", "--out", str(folder)], check=True, cwd=ROOT)
    common = ["--table", str(folder / "table.toml"), "--camera", str(folder / "camera.json"), "--quiet"]
    for out, roster in (("review.sqlite", ["--roster", str(folder / "roster.json")]), ("no-roster.sqlite", [])):
        if not (folder / out).is_file():
            run = ["review", str(folder / "game.avi"), *roster, *common, "--out", str(folder / out)]
            subprocess.run(tableref(*run), check=True, cwd=ROOT)


@contextmanager
def serving(*args: str) -> Iterator[str]:
    """`tableref serve ARGS` on a free port; yields its address."""
    proc = subprocess.Popen(
        tableref("serve", "--port", "0", *args), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"(http://\S+)/", line)
        if not found:
            raise RuntimeError(f"tableref serve did not start: {line}{proc.stdout.read()}")
        yield found.group(1)
    finally:
        proc.terminate()
        proc.wait(10)


class Dashboard:
    """The dashboard's JSON API, with the change token its pages carry."""

    def __init__(self, url: str) -> None:
        self.url = url
        page = urllib.request.urlopen(url + "/setup", timeout=10).read().decode()
        self.token = re.search(r'name="tableref-token" content="([^"]*)"', page).group(1)  # type: ignore[union-attr]

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"X-Tableref-Token": self.token, "Content-Type": "application/json"}
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        with urllib.request.urlopen(request, timeout=20) as answer:
            return json.loads(answer.read())

    def text(self, path: str) -> str:
        with urllib.request.urlopen(self.url + path, timeout=20) as answer:
            return str(answer.read().decode())

    def wait(self, what: str, ready: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The result, once the table is settled and ``ready`` says it shows the moment wanted."""
        end = time.monotonic() + MOMENT_S
        while time.monotonic() < end:
            status = self.call("GET", "/api/status")
            if status["settled"] and status["result_seq"]:
                result = self.call("GET", "/api/result")
                if ready(result):
                    return result
            time.sleep(0.2)
        raise RuntimeError(f"the demo never showed {what} in {MOMENT_S:.0f} s")


def after_the_advance(result: dict[str, Any]) -> bool:
    """The last state of the game: the Commandos advanced 8" (to the left), the melee, the casualty not seen."""
    commando = next((m for m in result["models"] if m["id"] == "k1"), None)
    engaged = any(f["kind"] == "engaged" for f in result["findings"])
    return commando is not None and commando["x_mm"] < 450.0 and engaged


def save(page: Any, out: Path, name: str, full: bool = False, element: str | None = None) -> None:
    """A screenshot of the page (``full``: all of it; ``element``: that element only) as ``out/name.png``, its
    palette cut to 256 colours, which keeps it small."""
    path = out / f"{name}.png"
    if full:
        # the whole page in one viewport: the status bar at its foot, not across the middle
        height = page.evaluate("document.documentElement.scrollHeight")
        page.set_viewport_size({"width": WIDTH_PX, "height": height})
    if element:
        page.locator(element).screenshot(path=str(path))
    else:
        page.screenshot(path=str(path))
    page.set_viewport_size({"width": WIDTH_PX, "height": HEIGHT_PX})
    shrink(path)
    print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {path.stat().st_size // 1024} KB")


def shrink(path: Path) -> None:
    """Write the PNG again at 256 colours (k-means on a sample of its pixels), which keeps text and marks sharp."""
    image = cv2.imread(str(path))
    pixels = image.reshape(-1, 3).astype(np.float32)
    rng = np.random.default_rng(0)
    sample = pixels[rng.choice(len(pixels), min(len(pixels), 60000), replace=False)]
    cv2.setRNGSeed(0)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 12, 1.0)
    _, _, centres = cv2.kmeans(sample, 256, None, criteria, 1, cv2.KMEANS_PP_CENTERS)
    centres = centres.astype(np.float32)
    nearest = np.empty(len(pixels), dtype=np.int64)
    for start in range(0, len(pixels), 200000):
        chunk = pixels[start : start + 200000]
        nearest[start : start + 200000] = ((chunk[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)
    quantised = np.clip(np.round(centres[nearest]), 0, 255).astype(np.uint8).reshape(image.shape)
    cv2.imwrite(str(path), quantised, [cv2.IMWRITE_PNG_COMPRESSION, 9])


def new_page(browser: Any) -> Any:
    # Playwright's waits evaluate strings, which the dashboard's policy (no eval) refuses
    return browser.new_context(viewport={"width": WIDTH_PX, "height": HEIGHT_PX}, bypass_csp=True).new_page()


def live_screens(browser: Any, url: str, out: Path) -> None:
    api = Dashboard(url)
    page = new_page(browser)

    def capture(path: str, drawings: tuple[str, ...], act: Callable[[], None], name: str, full: bool = False) -> None:
        """The screen at ``path`` at the moment after the Advance, ``act`` done on it, still settled when shot."""
        for _ in range(5):
            page.goto(url + path)
            seq = api.wait("the Commandos' Advance", after_the_advance)["seq"]
            page.wait_for_function(f"typeof TR !== 'undefined' && TR.result && TR.result.seq >= {seq}", timeout=20000)
            for drawing in drawings:
                page.wait_for_selector(f'{drawing} .labels[data-placed="yes"]', state="attached", timeout=20000)
            act()
            page.wait_for_timeout(300)
            settled = "TR.status.settled && TR.result.seq === {seq} && document.getElementById('hold').hidden"
            if page.evaluate(settled.format(seq=seq)):
                save(page, out, name, full=full)
                return
        raise RuntimeError(f"{path}: the table moved under every screenshot")

    capture("/", ("#overlay", "#map"), lambda: page.click("#findings .group summary"), "table")
    capture("/units", ("#umap",), lambda: page.click("#unit-list li:first-child button"), "units")

    report: dict[str, str] = {}

    def measure_and_propose() -> None:
        page.click('#map .base[data-model="c2"]')
        page.click('#map .base[data-model="d1"]')
        page.wait_for_selector("#measure-result .gap", timeout=20000)
        page.select_option("#melee-unit", "droids")
        page.click("#melee-propose")
        page.wait_for_selector("#melee-steps li", timeout=20000)
        # the report of the result on screen (kept only if the table is still settled on it after)
        report["html"] = api.text("/api/report?pair=c2,d1")

    # the melee procedure is legion's: chosen on the Setup screen
    api.call("PUT", "/api/profile", {"profile": "legion"})
    capture("/judge", ("#overlay", "#map"), measure_and_propose, "judge", full=True)
    api.call("PUT", "/api/profile", {"profile": "skirmish"})
    capture("/setup", (), lambda: None, "setup")
    page.set_input_files("#photo-file", str(OTHER_TABLE))
    page.wait_for_selector("#undo-roster", state="visible", timeout=60000)
    save(page, out, "setup-photo")
    page.click("#back-to-source")
    page.wait_for_selector("#back-to-source", state="hidden", timeout=20000)
    page.goto(url + "/review?state=2")
    save(page, out, "review", full=True)
    report_page = new_page(browser)
    report_page.set_content(report["html"])
    save(report_page, out, "judge-report", full=True)
    report_page.set_content(api.text("/review/report.html"))
    # the charge: the state with the most moves
    save(report_page, out, "game-report", element="section:nth-of-type(3)")


def review_without_roster(browser: Any, game: Path, out: Path) -> None:
    with serving("--source", str(game / "roster.json"), "--review", str(game / "no-roster.sqlite")) as url:
        page = new_page(browser)
        page.goto(url + "/review?state=4")
        page.evaluate("document.querySelector('.side-col').scrollIntoView()")
        save(page, out, "review-move-unknown")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default=str(ROOT / "sample_game"), help="the sample game's folder, made if missing")
    parser.add_argument("--out", default=str(ROOT / "docs" / "screens"), help="folder of the PNGs")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    game = Path(args.game).resolve()
    # named from the repository, as `make demo` names them (the Review screen shows the recording's name)
    if game.is_relative_to(ROOT):
        game = game.relative_to(ROOT)
    make_game(game)
    files = {name: str(game / name) for name in ("game.avi", "roster.json", "table.toml", "camera.json")}
    demo = ["--source", files["game.avi"], "--loop", "--roster", files["roster.json"], "--table", files["table.toml"]]
    demo += ["--camera", files["camera.json"], "--review", str(game / "review.sqlite")]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=BROWSER_ARGS)
        with serving(*demo) as url:
            live_screens(browser, url, out)
        review_without_roster(browser, game, out)
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
