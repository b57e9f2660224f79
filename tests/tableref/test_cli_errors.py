"""Bad command-line inputs of `check`, `detect`, `analyze`, `review` and `evaluate`: each gives one line on stderr
naming the problem and exit code 2, never a traceback."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.tableref.test_cli_pipeline import FRAME, SAMPLES, run

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
    monkeypatch.setattr("tableref.cli_pipeline.cv2.imwrite", lambda path, image: False)
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
