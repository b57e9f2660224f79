"""The dashboard's cases of bench/bad_inputs.py: `tableref serve` started with bad arguments (each a process of its
own, through the entry point), and the JSON API given bad requests (Flask's test client, in a forked process)."""

from __future__ import annotations

import http.client
import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bad_inputs import EITHER, FAIL, OK, TABLEREF, TABLEREF_ENV, Outcome
from bad_inputs_make import (
    DEEP,
    JSON_VALUES,
    SAMPLES,
    TOML_VALUES,
    Fixtures,
    json_text,
    mutations,
    rich_state,
    toml_expect,
)

# `serve` prints this last once it listens; a frame and a result are waited for this long after it.
READY = "Press Ctrl+C to stop."
START_S = 60.0
FRAME_S = 40.0
STOP_S = 15.0
# Pictures that decode but hold no table to measure: the dashboard watches them as a camera's frames, saying what
# it cannot measure in them (a source or an uploaded photo alike), where `detect` refuses them.
_DECODES = {"1 x 1 PNG", "100 x 100 PNG", "black", "white", "a tall strip 8 x 20000"}


@dataclass
class ServeCase:
    label: str
    argv: list[str]
    expect: str
    words: str = ""
    # a frame must be served; and a result measured (no result: a source of no table, say)
    result: bool = True


class _Reader(threading.Thread):
    def __init__(self, stream: Any) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.text = ""

    def run(self) -> None:
        for line in iter(self.stream.readline, b""):
            self.text += line.decode("utf-8", "replace")


def _get(host: str, port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _serving(host: str, port: int, want_result: bool) -> str | None:
    """None once the dashboard on ``port`` serves a frame (and a result); else what it did not do."""
    end = time.monotonic() + FRAME_S
    frame = result = False
    status: dict[str, Any] = {}
    while time.monotonic() < end:
        try:
            code, body = _get(host, port, "/api/status")
            if code >= 500:
                return f"/api/status answered {code}"
            status = json.loads(body)
            frame = frame or _get(host, port, "/api/frame.jpg")[0] == 200
            result = result or _get(host, port, "/api/result")[0] == 200
        except (OSError, ValueError) as exc:
            return f"the server stopped answering ({exc})"
        if frame and (result or not want_result):
            return None
        time.sleep(0.3)
    shown = {k: status.get(k) for k in ("camera", "error", "message", "settled", "fps") if k in status}
    return f"up but {'no result' if frame else 'no frame'} after {FRAME_S:.0f} s; status {shown}"


def run_serve(case: ServeCase) -> Outcome:
    start = time.monotonic()
    proc = subprocess.Popen(
        [*TABLEREF, "serve", *case.argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=TABLEREF_ENV,
    )
    out, err = _Reader(proc.stdout), _Reader(proc.stderr)
    out.start()
    err.start()
    problem: str | None = None
    code: int | None = None
    while time.monotonic() - start < START_S and proc.poll() is None and READY not in out.text:
        time.sleep(0.05)
    if proc.poll() is None and READY in out.text:
        host, port = out.text.split("http://")[1].split("/")[0].rsplit(":", 1)
        # a dashboard on every address is reached on this machine's
        host = {"0.0.0.0": "127.0.0.1", "[::]": "::1"}.get(host, host.strip("[]"))
        problem = _serving(host, int(port), case.result)
        if problem is None and case.expect == FAIL:
            problem = "served a bad input"
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(STOP_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
            problem = problem or "did not stop on SIGTERM"
        if problem is None and code != 0:
            problem = f"stopped with exit {code}"
    elif proc.poll() is None:
        proc.kill()
        proc.wait()
        problem = f"neither served nor exited in {START_S:.0f} s"
    else:
        code = proc.returncode
    out.join(5)
    err.join(5)
    stderr = err.text
    if problem is None and "Traceback" in stderr:
        problem = f"traceback: {stderr.strip().splitlines()[-1][:160]}"
    if problem is None and code == 2:
        lines = stderr.splitlines()
        if len(lines) != 1 or not lines[0].startswith("tableref serve: error:"):
            problem = f"exit 2 but not one line: {stderr[:200]!r}"
        elif case.expect == OK:
            problem = f"refused a good input: {stderr.strip()[:160]}"
        elif case.words and case.words not in stderr:
            problem = f"error does not name {case.words!r}: {stderr.strip()[:160]}"
    elif problem is None and code not in (0, 2):
        problem = f"exit {code}: {stderr.strip()[-200:]!r}"
    return Outcome("serve", case.label, case.argv, code, stderr[-2000:], time.monotonic() - start, problem)


def _free_port_taken() -> tuple[socket.socket, int]:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    return taken, taken.getsockname()[1]


def serve_cases(fx: Fixtures) -> Iterator[ServeCase]:
    from tableref.config import default_settings

    image = ["--source", str(fx.frame), "--table", str(fx.spec), "--port", "0"]
    yield ServeCase("the frame (good)", image, OK)
    yield ServeCase(
        "the video (good)", ["--source", str(fx.video), "--table", str(fx.spec), "--port", "0", "--loop"], OK
    )
    yield ServeCase("the state (good)", ["--source", str(fx.state), "--port", "0"], OK)
    for port in ("-5", "70000", "1" + "0" * 25, "abc", ""):
        yield ServeCase(f"--port {port!r}", [*image[:4], "--port", port], FAIL)
    yield ServeCase("--port in use", [*image[:4], "--port", "TAKEN"], FAIL)
    for host, expect in (
        ("999.1.1.1", FAIL),
        ("nonexistent.invalid", FAIL),
        ("", FAIL),
        ("8.8.8.8", FAIL),
        ("::1", EITHER),
        ("localhost", OK),
        ("0.0.0.0", OK),
    ):
        yield ServeCase(f"--host {host!r}", [*image, "--host", host], expect)
    sources: list[tuple[str, str, str]] = [
        ("no such file", str(fx.path("serve/missing.jpg")), FAIL),
        ("an empty folder", str(fx.path("serve/empty")), FAIL),
        ("camera 99", "99", FAIL),
        ("an unreachable stream", "rtsp://127.0.0.1:1/x", FAIL),
        ("an unreachable http stream", "http://127.0.0.1:1/x.mjpg", FAIL),
        ("a text file", str(fx.write("serve/notes.txt", "hello")), FAIL),
    ]
    fx.path("serve/empty").mkdir(exist_ok=True)
    listed = json.loads(fx.path("images/list.json").read_text())
    sources += [(f"image: {label}", path, EITHER if label in _DECODES else expect) for label, path, expect in listed]
    for name in ("zero.avi", "t2k.avi", "half.avi", "flip.avi", "mid.avi", "huge.avi", "jpeg.avi", "noise.mp4"):
        sources.append((f"video: {name}", str(fx.path(f"videos/{name}")), EITHER))
    for name in ("folder", "pipe"):
        for suffix in (".jpg", ".avi", ".json"):
            sources.append((f"{name}{suffix}", str(fx.path(f"special/{name}{suffix}")), FAIL))
    sources.append(("/dev/zero", "/dev/zero", FAIL))
    for n in (0, 3, 6, 9, 10, 11, 13):
        sources.append((f"state raw{n}", str(fx.path(f"state/raw{n}.json")), EITHER))
    for label, doc in (
        ("x = nan", {"x_mm": JSON_VALUES["nan"]}),
        ("x = huge", {"x_mm": JSON_VALUES["huge_int"]}),
        ("deep", {"x_mm": JSON_VALUES["deep"]}),
    ):
        state = rich_state()
        state["models"][0].update(doc)
        sources.append((f"state {label}", str(fx.write(f"serve/state_{len(sources)}.json", json_text(state))), FAIL))
    for label, source, expect in sources:
        table = [] if source.endswith(".json") else ["--table", str(fx.spec)]
        # a source that is in fact usable must show its frame; one of no table shows it unmeasured
        yield ServeCase(f"--source {label}", ["--source", source, *table, "--port", "0"], expect, result=False)
    for label, path in _review_files(fx):
        expect = OK if label == "good" else FAIL
        yield ServeCase(f"--review {label}", [*image, "--review", path], expect)
    for option, paths in (
        ("--roster", [fx.path("state/raw9.json"), fx.path("state/raw10.json"), "/dev/zero", fx.path("serve/empty")]),
        ("--camera", ["/dev/zero", fx.path("state/raw0.json"), fx.state]),
        ("--table", ["/dev/zero", fx.path("spec/1.toml"), fx.state]),
        ("--profile", ["/dev/zero", "nosuch", fx.state]),
        ("--config", ["/dev/zero", fx.state, fx.path("serve/empty")]),
    ):
        for path in paths:
            yield ServeCase(f"{option} {Path(str(path)).name}", [*image, option, str(path)], FAIL)
    yield ServeCase("--camera without --source", ["--camera", str(fx.camera), "--port", "0"], FAIL)
    for key, default in default_settings()["webui"].items():
        for name, lit in TOML_VALUES.items():
            config = fx.write(f"serve/webui.{key}.{name}.toml", f"[webui]\n{key} = {lit}\n")
            yield ServeCase(
                f"[webui] {key} = {name}", [*image, "--config", str(config)], toml_expect(name, default), key
            )


def _review_files(fx: Fixtures) -> Iterator[tuple[str, str]]:
    """Review databases of every kind of damage (and the good one)."""
    import random
    import sqlite3

    yield "good", str(fx.review_db)
    data = fx.review_db.read_bytes() if fx.review_db.exists() else b""
    rng = random.Random(3)
    for label, raw in (
        ("empty", b""),
        ("text", b"not a database\n"),
        ("truncated to half", data[: len(data) // 2]),
        ("4 KB of zeros in the middle", data[: len(data) // 2] + bytes(4096) + data[len(data) // 2 + 4096 :]),
        ("4 KB of noise at the end", data[:-8192] + bytes(rng.randrange(256) for _ in range(4096)) + data[-4096:]),
        ("header overwritten", bytes(100) + data[100:]),
    ):
        yield label, str(fx.write(f"serve/review_{label.replace(' ', '_')}.sqlite", raw))
    foreign = fx.path("serve/foreign.sqlite")
    if not foreign.exists():
        db = sqlite3.connect(foreign)
        with db:
            db.execute("CREATE TABLE photos (name TEXT)")
        db.close()
    yield "another program's database", str(foreign)
    yield "no such file", str(fx.path("serve/missing.sqlite"))
    yield "a folder", str(fx.path("serve/empty"))
    yield "a FIFO", str(fx.path("special/pipe.json"))
    yield "/dev/zero", "/dev/zero"


def run_serve_cases(fx: Fixtures) -> Callable[[int | None], list[Outcome]]:
    def run(limit: int | None) -> list[Outcome]:
        taken, port = _free_port_taken()
        outcomes = []
        try:
            for n, case in enumerate(serve_cases(fx)):
                if limit is not None and n >= limit:
                    break
                case.argv = [str(port) if a == "TAKEN" else a for a in case.argv]
                outcomes.append(run_serve(case))
        finally:
            taken.close()
        return outcomes

    return run


# ---------------------------------------------------------------------------------------------------------------
# The JSON API through Flask's test client

TOKEN = "sweep-token"
AUTH = {"X-Tableref-Token": TOKEN}


@dataclass
class Request:
    label: str
    method: str
    path: str
    body: bytes | None = None
    content_type: str | None = "application/json"
    token: bool = True
    files: dict[str, Any] | None = None
    host: str = "127.0.0.1"


JSON_ROUTES: list[tuple[str, str, Any]] = [
    ("POST", "/api/measure", {"a": "r1", "b": "b1"}),
    ("PUT", "/api/roster", rich_state()),
    ("PUT", "/api/profile", {"profile": "legion"}),
    ("POST", "/api/freeze", {"frozen": False}),
    ("POST", "/api/melee", {"unit": "u1"}),
    ("POST", "/review/units", {"units": [{"id": "a", "player": "red", "move_in": 6}], "membership": {"u1m1": "a"}}),
]
TOKEN_ROUTES = [
    ("PUT", "/api/roster"),
    ("DELETE", "/api/roster"),
    ("PUT", "/api/profile"),
    ("POST", "/api/freeze"),
    ("PUT", "/api/spec"),
    ("POST", "/api/calibrate"),
    ("POST", "/api/empty"),
    ("DELETE", "/api/empty"),
    ("POST", "/api/photo"),
    ("POST", "/review/units"),
]
RAW_BODIES: list[tuple[str, bytes, str | None]] = [
    ("no body", b"", "application/json"),
    ("not JSON", b"{not json", "application/json"),
    ("JSON null", b"null", "application/json"),
    ("a list", b"[]", "application/json"),
    ("a string", b'"x"', "application/json"),
    ("a number", b"1", "application/json"),
    ("deep list", b"[" * DEEP + b"]" * DEEP, "application/json"),
    ("deep object", b'{"a": ' * DEEP + b"1" + b"}" * DEEP, "application/json"),
    ("huge number", b"9" * 5000, "application/json"),
    ("not UTF-8", b'{"a": "\xff\xfe"}', "application/json"),
    ("17 MB", b'{"a": "' + b"x" * 17_000_000 + b'"}', "application/json"),
    ("form data", b"a=r1&b=b1", "application/x-www-form-urlencoded"),
    ("no content type", b'{"a": "r1"}', None),
    ("text/plain", b'{"a": "r1"}', "text/plain"),
]


def api_requests(fx: Fixtures) -> Iterator[tuple[Request, str]]:
    """Every request and what it expects (EITHER: any answer but a 5xx; FAIL: a 4xx)."""
    for method, path, body in JSON_ROUTES:
        for label, doc in mutations(body, 1):
            body_bytes = json_text(doc).encode("utf-8", "surrogatepass")
            yield Request(f"{method} {path}: {label}", method, path, body_bytes), EITHER
        for label, raw, kind in RAW_BODIES:
            yield Request(f"{method} {path}: {label}", method, path, raw, kind), FAIL
    for method, path in TOKEN_ROUTES:
        yield Request(f"{method} {path}: no token", method, path, b"{}", token=False), FAIL
        yield Request(f"{method} {path}: foreign host", method, path, b"{}", host="evil.example"), FAIL
    for label, path, expect in json.loads(fx.path("images/list.json").read_text()):
        expect = EITHER if label in _DECODES else expect
        data = Path(path).read_bytes()
        yield Request(f"POST /api/photo: {label}", "POST", "/api/photo", data, "application/octet-stream"), expect
        files = {"file": (path, Path(path).name)}
        yield Request(f"POST /api/photo (form): {label}", "POST", "/api/photo", files=files, content_type=None), expect
    yield (
        Request(
            "POST /api/photo: a form without its field",
            "POST",
            "/api/photo",
            files={"other": (str(fx.frame), "x.jpg")},
            content_type=None,
        ),
        FAIL,
    )
    for n in range(60):
        path = fx.path(f"spec/{n}.toml")
        if path.exists():
            yield Request(f"PUT /api/spec: spec/{n}.toml", "PUT", "/api/spec", path.read_bytes(), "text/plain"), EITHER
    for label, raw, kind in RAW_BODIES:
        yield Request(f"PUT /api/spec: {label}", "PUT", "/api/spec", raw, kind), FAIL
    for n in range(14):
        path = fx.path(f"state/raw{n}.json")
        yield (
            Request(
                f"PUT /api/roster (upload): raw{n}", "PUT", "/api/roster", path.read_bytes(), "application/octet-stream"
            ),
            EITHER,
        )
    gets = [
        "/",
        "/setup",
        "/units",
        "/judge",
        "/review",
        "/review?state=-1",
        "/review?state=abc",
        "/review?state=99999999999999999999999",
        "/review/frame/0.jpg",
        "/review/frame/1.jpg",
        "/review/frame/99.jpg",
        "/review/frame/99999999999999999999999.jpg",
        "/review/frame/-1.jpg",
        "/review/report.html",
        "/api/status",
        "/api/result",
        "/api/state",
        "/api/findings",
        "/api/frame.jpg",
        "/api/roster",
        "/api/roster?download=1",
        "/api/roster/suggestions",
        "/api/profile",
        "/api/spec",
        "/api/markers.pdf",
        "/api/empty",
        "/api/melee/units",
        "/api/report",
        "/api/report?pair=r1,b1",
        "/api/report?pair=r1",
        "/api/report?pair=r1,b1,x1",
        "/api/report?pair=,",
        "/api/report?pair=r1,nobody",
        "/api/report?" + "&".join(["pair=r1,b1"] * 51),
        "/api/report?pair=" + "9" * 400 + ",r1",
        "/static/../../../etc/passwd",
        "/static/%2e%2e/%2e%2e/etc/passwd",
        "/nosuch",
        "/api/nosuch",
    ]
    for path in gets:
        yield Request(f"GET {path[:80]}", "GET", path, None, None), EITHER
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        yield Request(f"{method} /api/status", method, "/api/status", b"{}"), FAIL
    yield Request("GET with a foreign host", "GET", "/api/status", None, None, host="evil.example"), FAIL


def _answer(client: Any, request: Request) -> tuple[int, str, bytes]:
    headers = {"Host": request.host, **(AUTH if request.token else {})}
    kwargs: dict[str, Any] = {"headers": headers}
    if request.files:
        kwargs["data"] = {k: (io.BytesIO(Path(path).read_bytes()), name) for k, (path, name) in request.files.items()}
    elif request.body is not None:
        kwargs["data"] = request.body
        if request.content_type:
            kwargs["content_type"] = request.content_type
    response = client.open(request.path, method=request.method, **kwargs)
    return response.status_code, response.content_type or "", response.get_data()


def _judge_answer(status: int, kind: str, body: bytes, expect: str) -> str | None:
    if status >= 500:
        return f"answered {status}: {body[:160]!r}"
    if status >= 400:
        if not kind.startswith("application/json"):
            return f"answered {status} as {kind}, not JSON"
        if "error" not in json.loads(body):
            return f"answered {status} without an error"
        return None
    if expect == FAIL:
        return f"accepted a bad request ({status})"
    return None


def _api_child(fx: Fixtures, limit: int | None, out: Path) -> None:
    import logging
    import shutil

    sys.path.insert(0, str(SAMPLES.parent))
    from tests.webui.conftest import state_live
    from webui import create_app
    from webui.blueprints.review import REVIEW_KEY

    logging.disable(logging.CRITICAL)
    review = fx.path("api/review.sqlite")
    shutil.copy(fx.review_db, review)
    live = state_live(rich_state(), name="sweep")
    results = []
    try:
        app = create_app(live, live.settings, token=TOKEN, local_only=True)
        app.config[REVIEW_KEY] = str(review)
        client = app.test_client()
        for n, (request, expect) in enumerate(api_requests(fx)):
            if limit is not None and n >= limit:
                break
            start = time.monotonic()
            try:
                status, kind, body = _answer(client, request)
                problem = _judge_answer(status, kind, body, expect)
            except Exception:
                status, problem = -1, f"the test client raised: {traceback.format_exc().splitlines()[-1][:160]}"
            results.append(
                {
                    "label": request.label,
                    "code": status,
                    "seconds": time.monotonic() - start,
                    "problem": problem,
                    "argv": [request.method, request.path],
                }
            )
    finally:
        live.stop()
        out.write_text(json.dumps(results))


def run_api_cases(fx: Fixtures) -> Callable[[int | None], list[Outcome]]:
    def run(limit: int | None) -> list[Outcome]:
        out = fx.path("api/outcomes.json")
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                _api_child(fx, limit, out)
            except BaseException:
                traceback.print_exc()
                code = 1
            os._exit(code)
        os.waitpid(pid, 0)
        found = json.loads(out.read_text()) if out.exists() else []
        return [Outcome("api", r["label"], r["argv"], r["code"], "", r["seconds"], r["problem"]) for r in found]

    return run


CATEGORIES: dict[str, tuple[str, Any]] = {
    "serve": ("web", run_serve_cases),
    "api": ("web", run_api_cases),
}
