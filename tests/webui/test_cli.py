"""`tableref serve`: registered through the entry point, one-line errors, and a real server end to end."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from tableref.cli import build_parser, main
from tableref.data import sample_state_path
from tests.webui.test_review import make_review_db
from webui.cli import JsonErrorRequestHandler, is_loopback
from webui.feeds import SampleFeed, StateFeed, sample_available

REPO = Path(__file__).resolve().parents[2]


def test_serve_is_a_tableref_command(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "--source" in out and "--roster" in out and "127.0.0.1" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--camera", "x.json"], "--camera describe a --source"),
        (["--roster", "r.json"], "--roster describe a --source"),
        (["--source", "STATE", "--camera", "c.json"], "--camera has no use with a table state"),
        (["--source", "no/such/video.mp4"], "no such file or folder"),
        (["--source", "STATE", "--profile", "chess"], "unknown profile 'chess'"),
        (["--source", "missing.json"], "no such file"),
        # a pipe would be read for ever
        (["--source", "FIFO.mp4"], "not a regular file; expected a video file"),
        (["--source", "FIFO.json"], "not a regular file; expected a table state JSON file"),
        (["--source", "HUGE"], "table: width_mm and depth_mm must be at most 100000 mm, got 1e+300 x 1e+300"),
        # the socket would take an empty address for every address: the dashboard open to the network
        (["--source", "STATE", "--host", ""], "an empty argument after --host"),
        (["--source", "STATE", "--host", " "], "an empty argument after --host"),
    ],
)
def test_bad_arguments_give_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], message: str
):
    os.mkfifo(tmp_path / "pipe.mp4")
    os.mkfifo(tmp_path / "pipe.json")
    huge = tmp_path / "huge.json"
    huge.write_text(json.dumps({"table": {"width_mm": 1e300, "depth_mm": 1e300}, "units": [], "models": []}))
    named = {
        "STATE": str(sample_state_path()),
        "FIFO.mp4": str(tmp_path / "pipe.mp4"),
        "FIFO.json": str(tmp_path / "pipe.json"),
        "HUGE": str(huge),
    }
    args = [named.get(a, a) for a in args]
    assert main(["serve", *args, "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("tableref serve: error:") and err.count("\n") == 1


def _settings_file(tmp: Path, text: str | bytes | None) -> Path:
    if text is None:
        return tmp
    path = tmp / "settings.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("port", "settings", "message"),
    [
        ("-5", "", "--port -5 is not a port; expected 1 to 65535"),
        ("70000", "", "--port 70000 is not a port; expected 1 to 65535"),
        ("0", None, "is a folder; expected a settings TOML file"),
        ("0", b"\xff\xfe\x00\x81", "not text (not UTF-8)"),
        ("0", "[webui]\nmax_viewers = -1\n", "[webui] max_viewers must be at least 1, got -1"),
        ("0", "[webui]\nmax_process_fps = 0\n", "[webui] max_process_fps must be more than 0, got 0.0"),
        ("0", "[webui]\njpeg_quality = 0\n", "[webui] jpeg_quality must be from 1 to 100, got 0"),
        ("0", "[webui]\nreplay_fps = inf\n", "[webui] replay_fps must be a finite number, got inf"),
        ("0", "[webui]\nmax_viewers_per_client = 0\n", "[webui] max_viewers_per_client must be at least 1, got 0"),
        # no setting is unbounded: each kind has a largest value
        ("0", "[webui]\nmax_upload_bytes = 10000000000000\n", "[webui] max_upload_bytes must be at most 2e+09 bytes"),
        ("0", "[webui]\nmax_image_pixels = 10000000000000\n", "[webui] max_image_pixels must be at most 1e+09 pixels"),
        ("0", "[webui]\nreplay_fps = 1e300\n", "[webui] replay_fps must be at most 1000 frames per second, got 1e+300"),
        ("0", "[webui]\nsettle_s = 1e300\n", "[webui] settle_s must be at most 86400 s, got 1e+300"),
        ("0", "[webui]\nmax_viewers = 100000\n", "[webui] max_viewers must be at most 1000, got 100000"),
        ("0", "[webui]\nrays = 3\n", "unknown setting [webui] rays"),
        ("0", "[webui]\nsettle_s = {a = 1}\n", "[webui] settle_s must be a value, not a table"),
    ],
)
def test_bad_port_or_settings_give_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, port: str, settings: str | bytes | None, message: str
):
    config = _settings_file(tmp_path, settings)
    code = main(["serve", "--source", str(sample_state_path()), "--port", port, "--config", str(config)])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and err.startswith("tableref serve: error:") and err.count("\n") == 1


def test_a_taken_port_is_a_one_line_error(capsys: pytest.CaptureFixture[str]):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["serve", "--source", str(sample_state_path()), "--port", str(port)])
    assert code == 2
    assert "cannot listen on 127.0.0.1" in capsys.readouterr().err


def test_feeds_from_arguments():
    from webui.cli import build_feed
    from webui.settings import load_webui_settings

    settings = load_webui_settings()
    parse = build_parser().parse_args
    feed, what = build_feed(parse(["serve"]), settings)
    assert isinstance(feed, SampleFeed if sample_available() else StateFeed), what
    feed, what = build_feed(parse(["serve", "--source", str(sample_state_path())]), settings)
    assert isinstance(feed, StateFeed) and "sample_state.json" in what


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("127.0.0.2", True),
        ("0.0.0.0", False),
        ("192.168.1.20", False),
        ("table.local", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool):
    assert is_loopback(host) is loopback


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_serve_end_to_end(stop: signal.Signals):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "tableref.cli", "serve", "--source", str(sample_state_path()), "--port", "0"]
    # a suite run as a background job hands its children SIGINT ignored (a shell's rule for background jobs): the
    # dashboard is started as from a terminal, where Ctrl+C reaches it
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("tableref dashboard: http://127.0.0.1:"), first
        url = first.split(": ", 1)[1].strip()
        end = time.monotonic() + 20
        status = _get(url + "api/status")
        while status["result_seq"] == 0 and time.monotonic() < end:
            time.sleep(0.1)
            status = _get(url + "api/status")
        assert status["result_seq"] >= 1 and status["source_kind"] == "table state"
        assert _get(url + "api/findings")["findings"]
    finally:
        proc.send_signal(stop)
        _, err = proc.communicate(timeout=15)
    assert proc.returncode == 0, err
    assert "Traceback" not in err


# Reviews edited in place (with the sqlite3 tool, say) past every page and frame check.
_EDITS = {
    "findings object": """UPDATE states SET findings = '{"a": 1}'""",
    "index": "UPDATE states SET idx = 9223372036854775807 WHERE idx = (SELECT max(idx) FROM states)",
    "time text": "UPDATE states SET time_s = 'abc'",
    "actions": "INSERT OR REPLACE INTO meta VALUES ('declared_actions', '{bad')",
    "move text": "UPDATE moves SET distance_mm = 'far'",
}


def _not_a_review(tmp: Path, kind: str) -> Path:
    """A file given as --review that is not a review database (or a damaged one) of kind ``kind``."""
    path = tmp / "game.sqlite"
    if kind == "text":
        path.write_text("notes of the game\n")
    elif kind == "random":
        path.write_bytes(bytes(range(256)) * 64)
    elif kind == "other sqlite":
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE photos (name TEXT)")
        db.commit()
        db.close()
    else:
        make_review_db(path)
        db = sqlite3.connect(path)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        if kind == "newer":
            with db:
                db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', '99')")
        db.close()
        if kind in _EDITS:
            db = sqlite3.connect(path)
            with db:
                db.execute(_EDITS[kind])
            db.close()
        if kind == "damaged frame":
            data = bytearray(path.read_bytes())
            at = data.find(b"\xff\xd8jpeg\x01")
            data[at + 2 : at + 6] = b"JPEG"
            path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("missing", "no such review database; expected a file made by `tableref review`"),
        ("text", "not a review database, or a damaged one (file is not a database)"),
        ("random", "not a review database, or a damaged one"),
        ("other sqlite", "not a review database (it has no meta, states, moves, placements, events table)"),
        ("damaged frame", "the review database is damaged: the frame of settled state 1 does not match its checksum"),
        ("newer", "a review database of schema '99', which this tableref does not read"),
        (
            "findings object",
            "the review database is damaged: a stored state does not read back (ValueError: the findings of",
        ),
        ("index", "settled state 2 is numbered 9223372036854775807"),
        ("time text", "settled state 0: frame 0 and time 'abc' are not numbers"),
        ("actions", "the review database is damaged: the declared actions do not read back (Expecting"),
        ("move text", "a move of settled state 1 holds values of the wrong kind"),
    ],
)
def test_a_review_that_cannot_be_shown_is_refused_at_start(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, kind: str, words: str
):
    review = tmp_path / "missing.sqlite" if kind == "missing" else _not_a_review(tmp_path, kind)

    def no_server(*_: object, **__: object) -> None:
        raise AssertionError("the dashboard started with a review it cannot show")

    monkeypatch.setattr("webui.cli.make_server", no_server)
    code = main(["serve", "--source", str(sample_state_path()), "--port", "0", "--review", str(review)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"tableref serve: error: {review}: ") and err.count("\n") == 1, err
    assert words in err


def test_a_good_review_passes_the_start_up_check(tmp_path: Path):
    from tableref.review.store import ReviewStore

    with ReviewStore(make_review_db(tmp_path / "game.sqlite"), readonly=True) as store:
        store.verify()


def test_a_header_the_server_refuses_before_the_app_is_answered_as_json():
    server = make_server("127.0.0.1", 0, lambda environ, start: [], request_handler=JsonErrorRequestHandler)
    thread = threading.Thread(target=server.handle_request)
    thread.start()
    reply = b""
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
            # a token of 100,000 characters: past the longest header line the HTTP server reads
            conn.sendall(b"GET /api/status HTTP/1.1\r\nX-Tableref-Token: " + b"a" * 100_000 + b"\r\n\r\n")
            while chunk := conn.recv(65536):
                reply += chunk
    finally:
        thread.join(10)
        server.server_close()
    head, body = reply.split(b"\r\n\r\n", 1)
    assert head.split(b" ")[1] == b"431" and b"Content-Type: application/json" in head
    assert json.loads(body) == {"error": "Request Header Fields Too Large: Line too long", "status": 431}
