"""Bad command-line inputs of `check`, `detect`, `analyze`, `review` and `evaluate`: each gives one line on stderr
naming the problem and exit code 2, never a traceback."""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from tableref import sources
from tableref.review.store import ReviewStore
from tests.tableref.cli.test_frames import FRAME, SAMPLES, run
from tests.tableref.cli.test_melee import STATE as MELEE_STATE

DEEP = 200_000


def _settings(tmp: Path, text: str) -> Path:
    path = tmp / "settings.toml"
    path.write_text(text)
    return path


def _binary(tmp: Path) -> Path:
    path = tmp / "binary.toml"
    path.write_bytes(b"\xff\xfe\x00\x81\xc3(")
    return path


def _nested(tmp: Path) -> Path:
    path = tmp / "deep.json"
    path.write_text("[" * DEEP + "]" * DEEP)
    return path


def _deep_object(tmp: Path) -> Path:
    path = tmp / "deep_object.json"
    path.write_text('{"a": ' * DEEP + "1" + "}" * DEEP)
    return path


def _state_with(tmp: Path, models: list[dict[str, object]]) -> Path:
    path = tmp / "state.json"
    units = [{"id": "a", "player": "p1"}, {"id": "b", "player": "p2"}]
    path.write_text(json.dumps({"table": {"width_mm": 1829, "depth_mm": 1219}, "units": units, "models": models}))
    return path


def _huge_number(tmp: Path) -> Path:
    # 400 digits: valid JSON, but no float holds it
    model = {"id": "m1", "unit": "a", "x_mm": 10**400, "y_mm": 300, "base": {"diameter_mm": 25}}
    return _state_with(tmp, [model])


def _stacked(tmp: Path, count: int = 20_000) -> Path:
    # 20,000 models on one spot: 200 million pairs, far more than memory holds (900: 404,550, each an overlap)
    base = {"diameter_mm": 25}
    return _state_with(
        tmp, [{"id": f"m{k}", "unit": "ab"[k % 2], "x_mm": 500, "y_mm": 500, "base": base} for k in range(count)]
    )


def _deep_toml(tmp: Path) -> Path:
    path = tmp / "deep.toml"
    path.write_text("a = " + "[" * DEEP + "]" * DEEP + "\n")
    return path


def _grey_frame(tmp: Path) -> Path:
    # the frame itself, saved grey: as the empty table it shows no base (compared in colour, every base changed)
    path = tmp / "grey.png"
    cv2.imwrite(str(path), cv2.cvtColor(cv2.imread(str(FRAME)), cv2.COLOR_BGR2GRAY))
    return path


def _profile(tmp: Path, text: str) -> Path:
    path = tmp / "house.toml"
    path.write_text('name = "house"\n' + text)
    return path


def _fifo(tmp: Path) -> Path:
    # a reader of a pipe waits for a writer for ever: it must be refused unopened
    path = tmp / "pipe.json"
    os.mkfifo(path)
    return path


def _device(tmp: Path) -> Path:
    return Path("/dev/zero")


def _foreign_db(tmp: Path) -> Path:
    # another program's SQLite file where the review is to be written (the test gives --out game.sqlite)
    path = tmp / "game.sqlite"
    db = sqlite3.connect(path)
    with db:
        db.execute("CREATE TABLE photos (name TEXT)")
    db.close()
    return path


def _surrogate_ids(tmp: Path) -> Path:
    # a lone surrogate is valid JSON but no terminal encodes it: the engaged finding prints the unit's id
    path = tmp / "state.json"
    units = [{"id": "\ud800", "player": "p1"}, {"id": "b", "player": "p2"}]
    base = {"diameter_mm": 25}
    models = [
        {"id": "m1", "unit": "\ud800", "x_mm": 500, "y_mm": 500, "base": base},
        {"id": "m2", "unit": "b", "x_mm": 526, "y_mm": 500, "base": base},
    ]
    path.write_text(json.dumps({"table": {"width_mm": 1829, "depth_mm": 1219}, "units": units, "models": models}))
    return path


def _line_break_ids(tmp: Path) -> Path:
    # the error lists the units known: one whose id holds a line break and a NUL must not break the error in two
    path = tmp / "state.json"
    units = [{"id": "a\nb\u0000\u2028", "player": "p1"}]
    models = [{"id": "m1", "unit": "nobody", "x_mm": 500, "y_mm": 500, "base": {"diameter_mm": 25}}]
    path.write_text(json.dumps({"table": {"width_mm": 1829, "depth_mm": 1219}, "units": units, "models": models}))
    return path


def assert_one_line_error(code: int | str | None, err: str, command: str, words: str) -> None:
    assert code == 2
    assert err.startswith(f"{f'tableref {command}'.strip()}: error:"), err
    assert err.count("\n") == 1, err
    assert words in err
    assert "Traceback" not in err


SMALL = SAMPLES / "small_table_720p.jpg"
# two frames (a progress bar is drawn for more than one) of the small table, two models of its first unit
SMALL_MEASURE = [
    "measure",
    str(SMALL),
    str(SMALL),
    "u1m1",
    "u1m2",
    "--table",
    str(SAMPLES / "small_table.toml"),
    "--roster",
    str(SMALL.with_suffix(".truth.json")),
]


# Each case: the arguments (PATH is replaced by the file the maker writes in tmp_path) and the words the error holds.
Maker = Callable[[Path], Path]
CONFIG_CASES: list[tuple[list[str], Maker, str]] = [
    (["detect", str(FRAME), "--config", "PATH"], lambda t: t, "is a folder; expected a settings TOML file"),
    (["detect", str(FRAME), "--config", "PATH"], _binary, "not text (not UTF-8)"),
    (["review", "SRC", "--config", "PATH"], lambda t: t, "is a folder; expected a settings TOML file"),
    (["review", "SRC", "--config", "PATH"], _binary, "not text (not UTF-8)"),
    (
        ["review", "SRC", "--config", "PATH"],
        lambda t: _settings(t, "[review]\nmotion_thumb_px = 0\n"),
        "[review] motion_thumb_px must be at least 1, got 0",
    ),
    (
        ["review", "SRC", "--config", "PATH"],
        lambda t: _settings(t, "[review]\nstored_frame_jpeg_quality = 101\n"),
        "[review] stored_frame_jpeg_quality must be from 1 to 100, got 101",
    ),
    (
        ["review", "SRC", "--config", "PATH"],
        lambda t: _settings(t, "[review]\nsettle_s = nan\n"),
        "[review] settle_s must be a finite number, got nan",
    ),
    (
        ["review", "SRC", "--config", "PATH"],
        lambda t: _settings(t, "[review]\nsample_interval_s = 0\n"),
        "[review] sample_interval_s must be more than 0, got 0.0",
    ),
    (
        ["check", "--profile", "PATH"],
        lambda t: _profile(t, "[cohesion]\nneighbours = -5\n"),
        "[cohesion] neighbours must be at least 1, got -5",
    ),
    (
        ["check", "--profile", "PATH"],
        lambda t: _profile(t, "[cohesion]\nrange_mm = nan\n"),
        "[cohesion] range_mm must be a finite number, got nan",
    ),
    (
        ["check", "--profile", "PATH"],
        lambda t: _profile(t, "[calls]\nclose_sigmas = inf\n"),
        "[calls] close_sigmas must be a finite number, got inf",
    ),
    # found only once the frames are measured, after the progress bar: the error still stands alone
    (
        [*SMALL_MEASURE, "--config", "PATH"],
        lambda t: _settings(t, "[pipeline]\nroster_gate_mm = 0\n"),
        "model 'u1m1' is not seen in this state",
    ),
    (["detect", str(FRAME), "--empty", "PATH"], _grey_frame, "found the table (markers"),
    (["check", "PATH"], _nested, "JSON nested too deep to read"),
    (["check", "PATH"], _line_break_ids, "(known units: a\\nb\\x00\\u2028)"),
    (["check", "PATH"], _deep_object, "JSON nested too deep to read"),
    (["analyze", str(FRAME), "--roster", "PATH"], _nested, "JSON nested too deep to read"),
    (["review", "SRC", "--roster", "PATH"], _nested, "JSON nested too deep to read"),
    (["detect", str(FRAME), "--config", "PATH"], _deep_toml, "TOML nested too deep to read; expected a settings"),
    (["detect", str(FRAME), "--table", "PATH"], _deep_toml, "TOML nested too deep to read; expected a table spec"),
    (["check", "--profile", "PATH"], _deep_toml, "TOML nested too deep to read; expected a rule profile"),
    (["check", "--profile", "PATH"], lambda t: t, "is a folder; expected a rule profile"),
    (["check", "PATH"], _huge_number, "models[0] (id 'm1'): 'x_mm' must be a finite number"),
    (["analyze", str(FRAME), "--roster", "PATH"], _huge_number, "'x_mm' must be a finite number"),
    (["check", "PATH", "--profile", "skirmish"], _stacked, "20000 models with more than 500,000 pairs"),
    (["check", "PATH", "--profile", "legion"], _stacked, "models stacked around (500, 500) mm"),
    (
        ["check", "PATH", "--json", "--profile", "legion"],
        lambda t: _stacked(t, 900),
        "900 models with more than 5,000 pairs standing on one another (models stacked around (500, 500) mm)",
    ),
    # a table where a value belongs, or a value where a [section] does
    (
        ["detect", str(FRAME), "--config", "PATH"],
        lambda t: _settings(t, "[vision.rim]\nrays = {a=1}\n"),
        "[vision.rim] rays must be a value, not a table",
    ),
    # a stage's settings in groups: a setting outside its group's table says where it belongs
    (
        ["detect", str(FRAME), "--config", "PATH"],
        lambda t: _settings(t, "[vision]\nfinder_reach_mm = 6.0\n"),
        "unknown setting [vision] finder_reach_mm; settings of this kind are in a table of their own: [vision.finder] "
        "reach_mm",
    ),
    (
        ["detect", str(FRAME), "--config", "PATH"],
        lambda t: _settings(t, "rim_height_mm = 3.0\n"),
        "unknown setting [rim_height_mm]; settings of this kind are in a table of their own: [pipeline] rim_height_mm",
    ),
    (
        ["detect", str(FRAME), "--config", "PATH"],
        lambda t: _settings(t, "[vision.finder]\nreach = 6.0\n"),
        "unknown setting [vision.finder] reach; known: ['band_margin'",
    ),
    (
        ["detect", str(FRAME), "--config", "PATH"],
        lambda t: _settings(t, "[calibration.min_markers]\na=1\n"),
        "[calibration] min_markers must be a value, not a table",
    ),
    (
        ["detect", str(FRAME), "--config", "PATH"],
        lambda t: _settings(t, "vision = 3\n"),
        "[vision] must be a table of settings, got 3",
    ),
    # what is no regular file: read for ever, or never ending
    (["check", "PATH"], _device, "/dev/zero: not a regular file; expected a table state JSON file"),
    (["check", "PATH"], _fifo, "not a regular file; expected a table state JSON file"),
    (["check", "--profile", "PATH"], _device, "not a regular file; expected a rule profile TOML file"),
    (["check", "--profile", "PATH"], _fifo, "not a regular file; expected a rule profile TOML file"),
    (["detect", str(FRAME), "--config", "PATH"], _fifo, "not a regular file; expected a settings TOML file"),
    (["detect", str(FRAME), "--table", "PATH"], _fifo, "not a regular file; expected a table spec TOML file"),
    (["detect", str(FRAME), "--camera", "PATH"], _device, "not a regular file; expected a camera.json"),
    (["detect", "PATH"], _device, "not a regular file; expected an image file"),
    (["analyze", str(FRAME), "--roster", "PATH"], _fifo, "not a regular file; expected a table state JSON file"),
    (["review", "SRC", "--actions", "PATH"], _fifo, "not a regular file; expected an actions JSON file"),
    (["review", "SRC", "--dask", "foo"], lambda t: t, "--dask 'foo' is no scheduler address; expected one like tcp://"),
    (["review", "SRC", "--dask", "tcp://host:99999"], lambda t: t, "is no scheduler address"),
    (["check", "--profile", "PATH"], lambda t: _profile(t, "title = [1]\n"), "title must be a string, got [1]"),
    (["review", "SRC"], _foreign_db, "not a review database (it holds the tables photos); expected a file made by"),
]


@pytest.mark.parametrize(("args", "make", "words"), CONFIG_CASES)
def test_bad_file_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], make: Maker, words: str
) -> None:
    made = make(tmp_path)
    source = tmp_path / "photos"
    source.mkdir()
    shutil.copy(FRAME, source / FRAME.name)
    args = [str(made) if a == "PATH" else str(source) if a == "SRC" else a for a in args]
    if args[0] == "review":
        args += ["--out", str(tmp_path / "game.sqlite"), "--quiet"]
    code, _, err = run(capsys, *args)
    assert_one_line_error(code, err, args[0], words)


@pytest.mark.parametrize(
    ("argv", "command", "words"),
    [
        # argparse's own refusals, in one line as every other error
        (["check", "--nosuch"], "check", "unrecognized arguments: --nosuch (usage: tableref check --help)"),
        (["review", "x", "--workers", "abc"], "review", "argument --workers: invalid int value: 'abc'"),
        (["measure"], "measure", "the following arguments are required"),
        ([], "", "the following arguments are required: COMMAND (usage: tableref --help)"),
        # an empty word is not an option left out: the sample checked, the lens uncorrected without a word
        (["check", ""], "check", "an empty argument; expected a name or a value"),
        (["detect", str(FRAME), "--camera", ""], "detect", "an empty argument after --camera"),
        (["detect", str(FRAME), "--table", " "], "detect", "an empty argument after --table"),
    ],
)
def test_a_malformed_command_line_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], argv: list[str], command: str, words: str
) -> None:
    try:
        code, _, err = run(capsys, *argv)
    except SystemExit as exc:
        code, err = exc.code, capsys.readouterr().err
    assert_one_line_error(code, err, command, words)


# Every setting has a largest value, by its kind (the end of its name), and some a least one of their own; each row
# one kind, or a value that once crashed or hung a stage.
SETTINGS_BOUND_CASES: list[tuple[str, str]] = [
    ("[vision.seeds]\nblur_px = 1e300", "[vision.seeds] blur_px must be at most 100 px, got 1e+300"),
    ("[vision.seeds]\nvote_blur_px = 1e300", "[vision.seeds] vote_blur_px must be at most 100 px, got 1e+300"),
    ("[vision.rim]\nprofile_blur_px = 1e300", "[vision.rim] profile_blur_px must be at most 100 px, got 1e+300"),
    ("[vision.circle]\nedge_bias_px = 1e300", "[vision.circle] edge_bias_px must be at most 10000 px, got 1e+300"),
    ("[vision.seeds]\nradius_px = 1e-300", "seeds.radius_px must be at least 1 (px), got 1e-300"),
    ("[vision.seeds]\nradius_margin = 1e300", "[vision.seeds] radius_margin must be at most 10000, got 1e+300"),
    ("[vision.seeds]\nradius_margin = -1", "seeds.radius_margin must be from 0 to less than 1, got -1.0"),
    ("[vision.finder]\nsize_weight = 1.5", "finder.size_weight must be from 0 to 1, got 1.5"),
    ("[vision.rim]\nseed_search_mm = 1e300", "[vision.rim] seed_search_mm must be at most 1000 mm, got 1e+300"),
    ("[vision.rim]\nrefine_search_mm = 1e300", "[vision.rim] refine_search_mm must be at most 1000 mm, got 1e+300"),
    ("[vision.circle]\nmodel_sigma_mm = 1e300", "[vision.circle] model_sigma_mm must be at most 1000 mm, got 1e+300"),
    ("[vision]\nbase_sizes_mm = [25, 1e9]", "[vision] base_sizes_mm must be at most 1000 mm, got 1000000000.0"),
    ("[vision.rim]\nsearch_rays = 100000000000000000000", "[vision.rim] search_rays must be at most 720 rays"),
    ("[vision.rim]\nrefine_passes = 100000000000000000000", "[vision.rim] refine_passes must be at most 100 passes"),
    (
        "[vision.circle]\niterations = 100000000000000000000",
        "[vision.circle] iterations must be at most 100 iterations",
    ),
    ("[vision.colour]\ngain = 1e300", "[vision.colour] gain must be at most 10000, got 1e+300"),
    (
        "[vision.rim]\ntop_read_max_darkness = -1e300",
        "[vision.rim] top_read_max_darkness must be at least -10000, got -1e+300",
    ),
    (
        "[calibration]\ncorner_refine_iterations = 100000000000000000000",
        "[calibration] corner_refine_iterations must be at most 100 iterations",
    ),
    ("[calibration]\nlens_min_views = 1000000", "[calibration] lens_min_views must be at most 1000, got 1000000"),
    ("[pipeline]\nmax_rectified_px_per_mm = 1e6", "[pipeline] max_rectified_px_per_mm must be at most 1000 px per mm"),
    ("[pipeline]\nchange_thumb_px = 1000000", "[pipeline] change_thumb_px must be at most 10000 px, got 1000000"),
    ("[review]\nstored_frame_max_side_px = 10000000", "[review] stored_frame_max_side_px must be at most 100000 px"),
    ("[review]\ntrack_gate_mm = 1e300", "[review] track_gate_mm must be at most 10000 mm, got 1e+300"),
    ("[review]\nsettle_s = 1e300", "[review] settle_s must be at most 86400 s, got 1e+300"),
    ("[evaluate]\nmatch_gate_mm = 1e300", "[evaluate] match_gate_mm must be at most 10000 mm, got 1e+300"),
    # divided by: 0 crashed analyze (rim heights declared by the roster) and warned of a division by zero
    ("[pipeline]\nrim_height_mm = 0", "[pipeline] rim_height_mm must be more than 0, got 0.0"),
    ("[vision.verdicts]\nmin_disc_contrast = 0", "verdicts.min_disc_contrast must be positive, got 0"),
]


@pytest.mark.parametrize(("text", "words"), SETTINGS_BOUND_CASES)
def test_a_setting_beyond_its_range_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, words: str
) -> None:
    code, _, err = run(capsys, "detect", FRAME, "--config", _settings(tmp_path, text + "\n"))
    assert_one_line_error(code, err, "detect", words)


@pytest.mark.parametrize(
    ("annotate", "words"),
    [
        ("out.txt", "expected a file ending .png, .jpg, .jpeg"),
        ("out", "expected a file ending .png, .jpg, .jpeg"),
        ("missing/out.png", "no folder"),
        ("folder.png", "is a folder; expected a picture file to write"),
        ("pipe.png", "not a regular file; expected a picture file to write"),
        ("a" * 300 + ".png", "cannot write there (File name too long)"),
    ],
)
def test_annotate_path_is_checked_before_the_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, annotate: str, words: str
) -> None:
    (tmp_path / "folder.png").mkdir()
    os.mkfifo(tmp_path / "pipe.png")
    code, out, err = run(capsys, "detect", "no-such-frame.jpg", "--annotate", tmp_path / annotate)
    # The frame is never read: the output is refused first.
    assert_one_line_error(code, err, "detect", words)
    assert out == ""


# Every command that writes a file, its inputs missing: the output is refused before any input is read.
WRITERS: list[list[str]] = [
    ["detect", "no-such-frame.jpg", "--annotate", "OUT.png"],
    ["board", "--out", "OUT.pdf"],
    ["markers", "--table", "no-such.toml", "--out", "OUT.pdf"],
    ["calibrate-camera", "no-such-photo.png", "--out", "OUT.json"],
    ["melee", "no-such-state.json", "u1", "--out", "OUT.json"],
    ["review", "no-such-folder", "--out", "OUT.sqlite"],
]


@pytest.mark.parametrize("argv", WRITERS, ids=[a[0] for a in WRITERS])
@pytest.mark.parametrize(
    ("place", "words"),
    [
        ("folder", "is a folder; expected a"),
        ("pipe", "not a regular file; expected a"),
        ("/dev/full", "not a regular file; expected a"),
        ("missing/out", "no folder"),
        ("file/out", "no folder"),
        ("", "an empty argument after --"),
    ],
)
def test_where_a_command_writes_is_checked_before_the_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], place: str, words: str
) -> None:
    out = next(a for a in argv if a.startswith("OUT"))
    suffix = Path(out).suffix
    (tmp_path / f"folder{suffix}").mkdir()
    os.mkfifo(tmp_path / f"pipe{suffix}")
    (tmp_path / "file").write_text("a file, not a folder")
    target = place if place in ("", "/dev/full") else f"{tmp_path / place}{suffix}"
    if argv[0] == "detect" and place == "/dev/full":
        # --annotate takes a picture's name: what ends otherwise is refused for that first
        words = "expected a file ending .png, .jpg, .jpeg"
    code, stdout, err = run(capsys, *[target if a == out else a for a in argv])
    assert_one_line_error(code, err, argv[0], words)
    assert stdout == ""


@pytest.mark.parametrize(
    ("error", "begun", "words"),
    [
        # the disk fills midway: OpenCV's PNG writer printed a line of its own before the error
        (errno.ENOSPC, True, "could not be written (No space left on device); expected a writable folder with room"),
        # refused at opening; removing the file not made is refused too, as a read-only file system does
        (errno.EROFS, False, "could not be written (Read-only file system)"),
        (errno.EACCES, False, "could not be written (Permission denied)"),
    ],
)
def test_annotate_that_cannot_be_written_is_an_error(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    error: int,
    begun: bool,
    words: str,
) -> None:
    write_bytes = Path.write_bytes

    def fails(self: Path, data: bytes) -> int:
        if begun:
            write_bytes(self, data[:100])
        raise OSError(error, os.strerror(error))

    def refused(self: Path, missing_ok: bool = False) -> None:
        raise OSError(error, os.strerror(error))

    monkeypatch.setattr(Path, "write_bytes", fails)
    if not begun:
        monkeypatch.setattr(Path, "unlink", refused)
    out_png = tmp_path / "out.png"
    code, out, err = run(capsys, "detect", FRAME, "--annotate", out_png)
    assert_one_line_error(code, err, "detect", words)
    assert "Annotated frame written" not in out
    # a file begun is not left behind
    assert not out_png.exists()


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["board", "--out", "OUT.pdf"], "cannot write the PDF (No space left on device)"),
        (["markers", "--out", "OUT.pdf"], "cannot write the PDF (No space left on device)"),
        (
            ["melee", "STATE", "clones", "--out", "OUT.json"],
            "cannot write the proposed state (No space left on device)",
        ),
    ],
)
def test_an_output_the_disk_fills_under_is_not_left_behind(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], words: str
) -> None:
    write_bytes, write_text = Path.write_bytes, Path.write_text

    def half_bytes(self: Path, data: bytes) -> int:
        if self.stem != "OUT":
            return write_bytes(self, data)
        write_bytes(self, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def half_text(self: Path, data: str, *args: object, **kwargs: object) -> int:
        if self.stem != "OUT":
            return write_text(self, data, *args, **kwargs)  # type: ignore[arg-type]
        write_text(self, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    state = tmp_path / "state.json"
    state.write_text(json.dumps(MELEE_STATE))
    monkeypatch.setattr(Path, "write_bytes", half_bytes)
    monkeypatch.setattr(Path, "write_text", half_text)
    out = tmp_path / next(a for a in argv if a.startswith("OUT"))
    code, stdout, err = run(
        capsys, *[str(out) if a.startswith("OUT") else str(state) if a == "STATE" else a for a in argv]
    )
    assert_one_line_error(code, err, argv[0], words)
    assert "Wrote" not in stdout and "written to" not in stdout
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"table": ', "not valid JSON (line 1"),
        ("[" * DEEP + "]" * DEEP, "JSON nested too deep to read"),
        ("[1, 2]", "expected a table state JSON object with the frame's camera and render, got a JSON list"),
        # a section of a truth that is read, of the wrong kind: named with the file, before any frame is measured
        ({"render": [1]}, "'render' must be an object"),
        ({"render": {"look": {"px_per_mm": "x"}}}, "its 'look' one with a number px_per_mm"),
        ({"render": {"look": {"px_per_mm": float("nan")}}}, "its 'look' one with a number px_per_mm"),
        ({"render": {"models": 5}}, "'render.models' must be a list of objects"),
        ({"render": {"models": [{"look": {"rim_height_mm": "x"}}]}}, "a 'look' object whose rim_height_mm is a number"),
        ({"render": {"models": [{"id": ["m1"]}]}}, "each with a string id"),
        ({"render": {"table": "x"}}, "missing [table] with width_mm and depth_mm"),
        ({"visibility": [1]}, "'visibility' must map model ids to fractions from 0 to 1"),
        ({"visibility": {"m1": "x"}}, "'visibility' must map model ids to fractions from 0 to 1"),
        ({"camera": [1]}, "camera: expected a JSON object"),
        ({"units": "x"}, "'units' must be a list"),
    ],
)
def test_evaluate_names_a_bad_truth_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str | dict[str, object], words: str
) -> None:
    shutil.copy(FRAME, tmp_path / FRAME.name)
    truth = tmp_path / FRAME.with_suffix(".truth.json").name
    if isinstance(text, dict):
        # the sample's own truth with one section changed
        text = json.dumps({**json.loads(FRAME.with_suffix(".truth.json").read_text()), **text})
    truth.write_text(text)
    code, _, err = run(capsys, "evaluate", tmp_path)
    assert_one_line_error(code, err, "evaluate", words)
    assert str(truth) in err


def test_samples_folder_still_has_good_truths() -> None:
    assert list(SAMPLES.glob("*.truth.json"))


def _png_claiming(path: Path, width: int, height: int) -> Path:
    """A PNG of a few bytes whose header claims ``width`` x ``height`` pixels (3 bytes each)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = zlib.compress(b"\x00" * (1 + 3 * width) * 4)
    header = chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + header + chunk(b"IDAT", rows) + chunk(b"IEND", b""))
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["detect", "PATH"],
        ["analyze", "PATH", "--roster", str(SAMPLES / "skirmish_1080p.truth.json")],
        ["calibrate-camera", "PATH", "--out", "OUT"],
        ["review", "SRC", "--out", "OUT", "--quiet"],
    ],
)
# 14000 x 14000: a real picture of 196 MP took a minute and more than a gigabyte to measure
@pytest.mark.parametrize("side", [60_000, 14_000])
def test_a_picture_claiming_a_huge_size_is_refused_before_decoding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], side: int
) -> None:
    photos = tmp_path / "photos"
    photos.mkdir()
    huge = _png_claiming(photos / "huge.png", side, side)

    def no_decode(*_: object) -> None:
        raise AssertionError("the image was decoded before its size was checked")

    monkeypatch.setattr(sources.cv2, "imdecode", no_decode)
    named = {"PATH": str(huge), "SRC": str(photos), "OUT": str(tmp_path / "out")}
    code, _, err = run(capsys, *[named.get(a, a) for a in args])
    words = f"the image header says {side} x {side} pixels; expected at most {sources.MAX_IMAGE_PIXELS} pixels"
    assert_one_line_error(code, err, args[0], words)
    assert "huge.png" in err


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: p.mkdir(), "shot.jpg: is a folder; expected a video file or a photo"),
        # a pipe would be read for ever when the recording is told apart from others by its content
        (os.mkfifo, "shot.jpg: not a regular file; expected a video file or a photo"),
    ],
)
def test_a_photo_folder_holding_what_is_no_photo_is_refused_by_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, make: Callable[[Path], None], words: str
) -> None:
    photos = tmp_path / "photos"
    photos.mkdir()
    shutil.copy(FRAME, photos / "a.jpg")
    make(photos / "shot.jpg")
    code, _, err = run(capsys, "review", photos, "--out", tmp_path / "game.sqlite", "--quiet")
    assert_one_line_error(code, err, "review", words)


def test_a_review_whose_only_photo_cannot_be_calibrated_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    photos = tmp_path / "photos"
    photos.mkdir()
    # a photo of no table: noise, no marker in it
    noise = np.random.default_rng(0).integers(0, 255, (720, 1280, 3), dtype=np.uint8)
    cv2.imwrite(str(photos / "shot.jpg"), noise)
    out = tmp_path / "game.sqlite"
    code, stdout, err = run(capsys, "review", photos, "--out", out, "--quiet")
    assert_one_line_error(code, err, "review", "none of its 1 settled frames could be measured; photo 0: found 0 of")
    assert stdout == ""
    # not marked done: run again with a spec that fits, it starts over
    with ReviewStore(out, readonly=True) as store:
        assert store.count() == 0 and "complete" not in store.meta()


def test_an_id_the_terminal_cannot_encode_is_printed_escaped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, "check", _surrogate_ids(tmp_path))
    assert code == 0, err
    assert "\\ud800 and b" in out
