"""The calibration sub-commands: files written, exit codes, one-line errors on bad input."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import load_camera
from tableref.cli import EXIT_BAD_INPUT, EXIT_OK, main
from tests.calibration.test_lens import LENSES, board_photos


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_markers_writes_a_pdf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "markers.pdf"
    code, text, _ = run(["markers", "--out", str(out)], capsys)
    assert code == EXIT_OK
    assert out.read_bytes().startswith(b"%PDF")
    assert "8 markers of the bundled default table" in text and "100 mm scale bar" in text


def test_markers_with_a_spec_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "table.toml"
    spec.write_text(
        "[table]\nwidth_mm = 900\ndepth_mm = 600\n[markers]\ndictionary = 'DICT_4X4_50'\n"
        + "".join(f"[[markers.marker]]\nid = {i}\nsize_mm = 60\nx_mm = {x}\ny_mm = {y}\n" for i, (x, y) in
                  enumerate([(45, 45), (855, 45), (855, 555), (45, 555)]))
    )  # fmt: skip
    out = tmp_path / "markers.pdf"
    code, text, _ = run(["markers", "--table", str(spec), "--out", str(out)], capsys)
    assert code == EXIT_OK and out.is_file()
    assert f"4 markers of {spec}" in text


def test_board_writes_a_pdf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "board.pdf"
    code, text, _ = run(["board", "--out", str(out)], capsys)
    assert code == EXIT_OK and out.read_bytes().startswith(b"%PDF")
    assert "ChArUco board of 9 x 6 squares" in text


def test_calibrate_camera_writes_camera_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = []
    for n, photo in enumerate(board_photos("barrel")):
        path = tmp_path / f"board{n}.png"
        cv2.imwrite(str(path), photo)
        paths.append(str(path))
    out = tmp_path / "camera.json"
    code, text, _ = run(["calibrate-camera", *paths, "--out", str(out)], capsys)
    assert code == EXIT_OK
    camera = load_camera(out)
    assert camera.camera_matrix[0, 0] == pytest.approx(LENSES["barrel"][0], rel=0.01)
    assert "Reprojection error:" in text and "px rms over 8 of 8 photos" in text
    assert text.count("corners, reprojection error") == 8


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["markers", "--table", "{tmp}/missing.toml", "--out", "{tmp}/m.pdf"], "missing.toml: no such file"),
        (["markers", "--table", "{tmp}/bad.toml", "--out", "{tmp}/m.pdf"], "not valid TOML"),
        (["markers", "--out", "{tmp}/no/dir/m.pdf"], "/no/dir to write it into"),
        (["board", "--out", "{tmp}/b.pdf", "--config", "{tmp}/missing.toml"], "no such file; expected a settings"),
        (["board", "--out", "{tmp}/b.pdf", "--config", "{tmp}/negative.toml"], "board_square_mm must be a positive"),
        (["calibrate-camera", "{tmp}/missing.png", "--out", "{tmp}/c.json"], "missing.png: no such image file"),
        (["calibrate-camera", "{tmp}/bad.toml", "--out", "{tmp}/c.json"], "not an image OpenCV can decode"),
        (["calibrate-camera", "{tmp}/grey.png", "--out", "{tmp}/c.json"], "0 usable views of the ChArUco board"),
    ],
    ids=["missing-spec", "bad-spec", "unwritable", "missing-config", "bad-config", "missing-image", "not-image",
         "no-board"],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    (tmp_path / "bad.toml").write_text("[table\n")
    (tmp_path / "negative.toml").write_text("[calibration]\nboard_square_mm = -1.0\n")
    cv2.imwrite(str(tmp_path / "grey.png"), np.full((480, 640), 128, np.uint8))
    code, out, err = run([a.format(tmp=tmp_path) for a in argv], capsys)
    assert code == EXIT_BAD_INPUT
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(f"tableref {argv[0]}: error: ")
    assert message in err
