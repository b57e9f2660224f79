"""Dashboard benchmark: how fast the live loop runs and how often a page updates, with and without idle viewers.

Serves the bundled sample game (the frames of sample_images/, as `tableref serve` does with no arguments) from a
real HTTP server on 127.0.0.1, then for each case measures, over --seconds of wall clock:

- loop rate: frames the live loop handled per second (new snapshots with a new frame);
- event rate: `status` events per second that one measuring client receives over server-sent events;
- page rate: frames a real browser page (Playwright, Debian's Chromium) downloaded and showed per second;
- still->result: from the last frame of a move (the table still from then on) to the new result being out.

Cases: the default frame rate (what `tableref serve` does), and an uncapped one (--fast-fps) that shows the
loop's headroom; each with 0 and with --viewers idle viewers (connected event streams that only read).

    .venv/bin/python bench/bench_webui.py [--seconds 20] [--viewers 20] [--fast-fps 60] [--no-browser]
"""

from __future__ import annotations

import argparse
import dataclasses
import http.client
import logging
import shutil
import sys
import threading
import time

import rules
from calibration.spec import load_table_spec
from tableref.config import load_config
from webui import create_app
from webui.feeds import SampleFeed, load_sample_scenes
from webui.live import LiveTable
from webui.settings import WebuiSettings, load_webui_settings

BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class TimedSample(SampleFeed):
    """The sample game, noting when each still spell begins (the last frame of a move: the table settles)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.still_since: list[float] = []
        self._pure = {id(s.image_bgr) for s in self.scenes}

    def frames(self):  # type: ignore[no-untyped-def]
        moving = True
        for frame in super().frames():
            pure = id(frame.image_bgr) in self._pure
            if pure and moving:
                self.still_since.append(time.monotonic())
            moving = not pure
            yield frame


class Viewer(threading.Thread):
    """An idle viewer: one event stream, read and thrown away; counts the status events it got."""

    def __init__(self, port: int, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.stop_event = stop
        self.status_events = 0
        self.connected = threading.Event()

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request("GET", "/api/events")
        response = conn.getresponse()
        self.connected.set()
        while not self.stop_event.is_set():
            line = response.readline()
            if not line:
                break
            if line.startswith(b"event: status"):
                self.status_events += 1
        conn.close()


@dataclasses.dataclass
class Case:
    name: str
    viewers: int
    fps: float


@dataclasses.dataclass
class Measured:
    loop_fps: float
    event_rate: float
    page_rate: float | None
    results: int
    latencies_s: list[float]


def run_case(case: Case, settings: WebuiSettings, seconds: float, browser: object | None) -> Measured:
    from werkzeug.serving import make_server

    s = dataclasses.replace(settings, max_process_fps=case.fps, replay_fps=case.fps, max_viewers=case.viewers + 8)
    feed = TimedSample(load_sample_scenes(), s.sample_hold_s, s.sample_move_s, s.replay_fps)
    live = LiveTable(feed, load_table_spec(), load_config(), s, rules.load_profile("skirmish"))
    live.start()
    server = make_server("127.0.0.1", 0, create_app(live, s), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    stop = threading.Event()
    try:
        # Warm up: the first frame calibrated and measured.
        end = time.monotonic() + 30
        while live.hub.snapshot().result is None and time.monotonic() < end:
            time.sleep(0.1)
        idle = [Viewer(server.port, stop) for _ in range(case.viewers)]
        for v in idle:
            v.start()
        for v in idle:
            v.connected.wait(10)
        probe = Viewer(server.port, stop)
        probe.start()
        probe.connected.wait(10)
        page = None
        if browser is not None:
            # Playwright's wait conditions are evaluated strings, which the dashboard's policy (no eval) refuses.
            page = browser.new_page(bypass_csp=True)  # type: ignore[attr-defined]
            page.goto(f"http://127.0.0.1:{server.port}/")
            page.wait_for_function("window.tableref && window.tableref.frames >= 2", timeout=20000)
        start_snap = live.hub.snapshot()
        start_events = probe.status_events
        start_frames = page.evaluate("window.tableref.frames") if page else 0
        t0 = time.monotonic()
        # The time each new result is out, to match with the moment the table became still before it.
        published: list[float] = []
        seq = start_snap.status.result_seq
        while time.monotonic() - t0 < seconds:
            now_seq = live.hub.snapshot().status.result_seq
            if now_seq != seq:
                published.append(time.monotonic())
                seq = now_seq
            time.sleep(0.005)
        elapsed = time.monotonic() - t0
        latencies = []
        for t in published:
            still = [x for x in feed.still_since if x < t]
            if still and still[-1] >= t0 - 10:
                latencies.append(t - still[-1])
        end_snap = live.hub.snapshot()
        frames = end_snap.status.frame_seq - start_snap.status.frame_seq
        page_rate = (page.evaluate("window.tableref.frames") - start_frames) / elapsed if page else None
        if page:
            page.close()
        return Measured(
            loop_fps=frames / elapsed,
            event_rate=(probe.status_events - start_events) / elapsed,
            page_rate=page_rate,
            results=end_snap.status.result_seq - start_snap.status.result_seq,
            latencies_s=latencies,
        )
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        live.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0, help="measuring time per case (default 20)")
    parser.add_argument("--viewers", type=int, default=20, help="idle viewers (default 20)")
    parser.add_argument("--fast-fps", type=float, default=60.0, help="frame rate of the headroom cases (default 60)")
    parser.add_argument("--no-browser", action="store_true", help="skip the page rate (no Playwright)")
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    settings = load_webui_settings()
    cases = [
        Case("sample, default rate, no viewers", 0, settings.max_process_fps),
        Case(f"sample, default rate, {args.viewers} idle viewers", args.viewers, settings.max_process_fps),
        Case("sample, uncapped, no viewers", 0, args.fast_fps),
        Case(f"sample, uncapped, {args.viewers} idle viewers", args.viewers, args.fast_fps),
    ]
    chromium = shutil.which("chromium")
    playwright = None
    browser = None
    if not args.no_browser and chromium:
        from playwright.sync_api import sync_playwright

        playwright = sync_playwright().start()
        browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=BROWSER_ARGS)
    print(f"{args.seconds:g} s per case; the sample holds each frame {settings.sample_hold_s:g} s, then moves.")
    print(
        f"{'case':44} {'cap fps':>8} {'loop fps':>9} {'events/s':>9} {'page fps':>9} {'results':>8} "
        f"{'still->result s':>16}"
    )
    try:
        for case in cases:
            m = run_case(case, settings, args.seconds, browser)
            page = f"{m.page_rate:9.1f}" if m.page_rate is not None else f"{'-':>9}"
            lat = ", ".join(f"{x:.2f}" for x in m.latencies_s) or "-"
            print(
                f"{case.name:44} {case.fps:8.0f} {m.loop_fps:9.1f} {m.event_rate:9.1f} {page} {m.results:8d} {lat:>16}"
            )
    finally:
        if browser is not None:
            browser.close()  # type: ignore[attr-defined]
        if playwright is not None:
            playwright.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
