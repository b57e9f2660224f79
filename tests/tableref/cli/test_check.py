"""`tableref check`: readable and JSON output, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tableref.cli import main
from tableref.data import sample_state_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_check_sample_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--json", "--profile", "legion")
    assert code == 0
    doc = json.loads(out)
    assert doc["profile"] == "legion"
    kinds = {f["kind"] for f in doc["findings"]}
    assert kinds == {"engaged", "cohesion", "overlap", "multi_contact", "off_table", "in_terrain"}


def test_check_readable_report_gives_inches_then_millimetres(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", str(sample_state_path()))
    assert code == 0
    assert "Profile: skirmish" in out
    assert "Engaged (2)" in out
    assert "(3.00 mm) deep" in out
    assert '2.00" (50.80 mm)' in out


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        (None, [], "no such file"),
        ("{not json", [], "not valid JSON"),
        (
            '{"table": {"width_mm": 10, "depth_mm": 10}, '
            '"models": [{"id": "a", "unit": "x", "x_mm": 1, "y_mm": 1, "base": {"diameter_mm": 2}}]}',
            [],
            "unit 'x' is not defined",
        ),
        ('{"table": {"width_mm": 10, "depth_mm": 10}}', ["--profile", "chess"], "unknown profile 'chess'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, extra: list[str], message: str
) -> None:
    path = tmp_path / "state.json"
    if content is not None:
        path.write_text(content)
    code, out, err = run(capsys, "check", str(path), *extra)
    assert code == 2
    assert out == ""
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_console_script_runs_as_a_program() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tableref.cli", "check", "--json"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["profile"] == "skirmish"
