"""``tableref serve``: the dashboard. Plugged into the command line through the ``tableref.commands`` entry point
(see pyproject.toml), so that the app package never imports this one."""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import secrets
import signal
import socket
from http import HTTPStatus
from pathlib import Path

from werkzeug.serving import WSGIRequestHandler, make_server

import rules
from calibration.camera import load_camera
from calibration.spec import load_table_spec
from tableref.cli.options import add_profile_option, add_table_options
from tableref.config import load_config
from tableref.data import sample_state_path
from tableref.review.store import ReviewStore
from webui import create_app
from webui.blueprints.review import REVIEW_KEY
from webui.errors import ServeError
from webui.feeds import (
    SAMPLE_DIR,
    Feed,
    SampleFeed,
    Scene,
    load_sample_scenes,
    sample_available,
    source_feed,
    state_feed,
)
from webui.live import LiveTable
from webui.roster import roster_from_json
from webui.settings import WebuiSettings, load_webui_settings

EXIT_OK = 0
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
MAX_PORT = 65535
# A source word ending so is a table state file (served without a camera), not a frame source.
STATE_SUFFIX = ".json"


class JsonErrorRequestHandler(WSGIRequestHandler):
    """The server's own refusals, made before the app sees a request (a header or request line too long, a request
    that does not parse), answered as the app answers every error: JSON ``{"error": ..., "status": ...}``, not the
    standard library's HTML page."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        short, _ = self.responses.get(code, ("error", ""))
        body = json.dumps({"error": f"{short}: {message}" if message else short, "status": code}).encode()
        self.log_error("code %d, message %s", code, message)
        self.send_response(code, short)
        self.send_header("Connection", "close")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if getattr(self, "command", None) != "HEAD" and code >= HTTPStatus.OK:
            self.wfile.write(body)


def is_loopback(host: str) -> bool:
    """True when ``host`` is this machine only (127.0.0.1, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _roster(path: str | None) -> rules.TableState | None:
    if path is None:
        return None
    return roster_from_json(rules.state_to_dict(rules.load_state(path)))


def build_feed(args: argparse.Namespace, settings: WebuiSettings) -> tuple[Feed, str]:
    """The feed the arguments ask for, and a line saying what it is. Raises ServeError, SourceError, ..."""
    if args.source is None:
        given = [flag for flag, value in (("--camera", args.camera), ("--roster", args.roster)) if value]
        if given:
            raise ServeError(
                f"{' and '.join(given)} describe a --source; without --source the bundled sample is served"
            )
        if sample_available():
            feed: Feed = SampleFeed(
                load_sample_scenes(), settings.sample_hold_s, settings.sample_move_s, settings.replay_fps
            )
            return feed, f"the bundled sample game: frames of {SAMPLE_DIR}"
        path = sample_state_path()
        feed = state_feed(path, settings.state_px_per_mm, settings.replay_fps)
        return feed, f"the bundled sample table state {path.name} (no sample frames at {SAMPLE_DIR})"
    if args.source.lower().endswith(STATE_SUFFIX):
        if args.camera:
            raise ServeError("--camera has no use with a table state source (there is no camera)")
        feed = state_feed(Path(args.source), settings.state_px_per_mm, settings.replay_fps, _roster(args.roster))
        return feed, f"the table state {args.source}"
    camera = load_camera(args.camera) if args.camera else None
    scene = Scene(key="camera", camera=camera, roster=_roster(args.roster))
    feed = source_feed(args.source, scene, settings.replay_fps, settings.folder_period_s, args.loop)
    return feed, f"{feed.kind} {feed.name}"


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _cmd_serve(args: argparse.Namespace) -> int:
    # Checked before anything starts: the socket call would raise OverflowError, not an OSError.
    if not 0 <= args.port <= MAX_PORT:
        raise ServeError(f"--port {args.port} is not a port; expected 1 to {MAX_PORT} (0: any free one)")
    if args.review:
        # Checked whole before anything starts: a file that is not a review, or a damaged one, is named here
        # rather than met by the Review screen as an error on every request.
        with ReviewStore(args.review, readonly=True) as store:
            store.verify()
    settings = load_webui_settings(args.config)
    config = load_config(args.config)
    profile = rules.load_profile(args.profile)
    spec = load_table_spec(args.table)
    feed, what = build_feed(args, settings)
    live = LiveTable(feed, spec, config, settings, profile)
    local = is_loopback(args.host)
    token = secrets.token_urlsafe(18)
    app = create_app(live, settings, token=token, embed_token=local, local_only=local)
    if args.review:
        app.config[REVIEW_KEY] = args.review
    # One line per request (ten frames a second per viewer) would drown everything else.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    # The socket is opened here rather than by werkzeug, which would print its own error and exit.
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    try:
        listener = socket.create_server((args.host, args.port), family=family)
    except OSError as exc:
        raise ServeError(
            f"cannot listen on {args.host}:{args.port} ({exc.strerror or exc}); expected a free port and an address "
            "of this machine (try --port)"
        ) from None
    server = make_server(
        args.host, args.port, app, threaded=True, fd=listener.fileno(), request_handler=JsonErrorRequestHandler
    )
    # A service manager stops the dashboard with SIGTERM: shut down as on Ctrl+C.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    live.start()
    shown = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{shown}:{server.port}/"
    print(f"tableref dashboard: {url}")
    print(f"Watching {what}; profile {profile.name}.")
    if not local:
        print(f"Serving every machine that can reach {args.host}: screens are open to all, changes need the token.")
        print(f"Open {url}#token={token} to make changes (token: {token}).")
    print("Press Ctrl+C to stop.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.server_close()
        listener.close()
        live.stop()
    return EXIT_OK


def add_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``tableref serve [--source SRC] [--table SPEC] [--camera camera.json] [--profile P] [--roster STATE.json]
    [--host 127.0.0.1] [--port 8000] [--config SETTINGS.toml]``."""
    p = sub.add_parser(
        "serve",
        help="the live dashboard in a web browser",
        description="Serve the dashboard: the table with findings, unit assignment, judge measurements. With no "
        "--source it shows the bundled sample game.",
    )
    p.add_argument(
        "--source",
        help="camera index (0), stream URL, video file, image, folder of images, or a table state .json "
        "(default: the bundled sample game)",
    )
    add_table_options(p)
    add_profile_option(p)
    p.add_argument("--roster", help="table state JSON whose models and units give identities")
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default: {DEFAULT_HOST}, this machine)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT}; 0: any free one)")
    p.add_argument("--config", help="settings TOML overriding tableref/defaults.toml (its [webui] section too)")
    p.add_argument("--review", help="a game reviewed by `tableref review` (GAME.sqlite), shown on the Review screen")
    p.add_argument("--loop", action="store_true", help="play a recorded --source again from its start when it ends")
    p.set_defaults(func=_cmd_serve)
