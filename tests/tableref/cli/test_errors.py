"""Bad command-line inputs of `check`, `detect`, `analyze`, `review` and `evaluate`: each gives one line on stderr
naming the problem and exit code 2, never a traceback."""

from __future__ import annotations

import json
import shutil
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


def _stacked(tmp: Path) -> Path:
    # 20,000 models on one spot: 200 million pairs, far more than memory holds
    base = {"diameter_mm": 25}
    return _state_with(
        tmp, [{"id": f"m{k}", "unit": "ab"[k % 2], "x_mm": 500, "y_mm": 500, "base": base} for k in range(20_000)]
    )


def _deep_toml(tmp: Path) -> Path:
    path = tmp / "deep.toml"
    path.write_text("a = " + "[" * DEEP + "]" * DEEP + "\n")
    return path


def _profile(tmp: Path, text: str) -> Path:
    path = tmp / "house.toml"
    path.write_text('name = "house"\n' + text)
    return path


def assert_one_line_error(code: int, err: str, command: str, words: str) -> None:
    assert code == 2
    assert err.startswith(f"tableref {command}: error:") and err.count("\n") == 1, err
    assert words in err
    assert "Traceback" not in err


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
    (["check", "PATH"], _nested, "JSON nested too deep to read"),
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
    ("annotate", "words"),
    [
        ("out.txt", "expected a file ending .png, .jpg, .jpeg"),
        ("out", "expected a file ending .png, .jpg, .jpeg"),
        ("missing/out.png", "no folder"),
        ("folder.png", "is a folder; expected a picture file to write"),
    ],
)
def test_annotate_path_is_checked_before_the_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, annotate: str, words: str
) -> None:
    (tmp_path / "folder.png").mkdir()
    code, out, err = run(capsys, "detect", "no-such-frame.jpg", "--annotate", tmp_path / annotate)
    # The frame is never read: the output is refused first.
    assert_one_line_error(code, err, "detect", words)
    assert out == ""


def test_annotate_that_cannot_be_written_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A read-only folder or a full disk: OpenCV returns False and writes nothing.
    monkeypatch.setattr("tableref.cli.frames.cv2.imwrite", lambda path, image: False)
    code, out, err = run(capsys, "detect", FRAME, "--annotate", tmp_path / "out.png")
    assert_one_line_error(code, err, "detect", "could not be written")
    assert "Annotated frame written" not in out


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"table": ', "not valid JSON (line 1"),
        ("[" * DEEP + "]" * DEEP, "JSON nested too deep to read"),
        ("[1, 2]", "expected a table state JSON object with the frame's camera and render, got a JSON list"),
    ],
)
def test_evaluate_names_a_bad_truth_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, words: str
) -> None:
    shutil.copy(FRAME, tmp_path / FRAME.name)
    truth = tmp_path / FRAME.with_suffix(".truth.json").name
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
def test_a_picture_claiming_a_huge_size_is_refused_before_decoding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    photos = tmp_path / "photos"
    photos.mkdir()
    huge = _png_claiming(photos / "huge.png", 60_000, 60_000)

    def no_decode(*_: object) -> None:
        raise AssertionError("the image was decoded before its size was checked")

    monkeypatch.setattr(sources.cv2, "imdecode", no_decode)
    named = {"PATH": str(huge), "SRC": str(photos), "OUT": str(tmp_path / "out")}
    code, _, err = run(capsys, *[named.get(a, a) for a in args])
    assert_one_line_error(code, err, args[0], "the image header says 60000 x 60000 pixels; expected at most")
    assert "huge.png" in err


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
