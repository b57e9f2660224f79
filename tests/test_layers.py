"""The folders are the concepts and imports run one way: ``rules`` needs only numpy and shapely, ``calibration`` and
``vision`` know nothing of Flask, nothing imports ``webui``, and no product module imports the test renderer
(``synth``, kept out of the wheel)."""

from __future__ import annotations

import ast
import sys
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("rules", "calibration", "vision", "tableref", "webui")
# The test renderer: it may import the product, the product never imports it.
RENDERER = "synth"


def _imports(path: Path) -> set[str]:
    """The top two levels of every module ``path`` imports ("tableref.pipeline", "numpy", ...)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        found |= {".".join(n.split(".")[:2]) for n in names}
    return found


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _third_party(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names} - set(sys.stdlib_module_names) - set(PACKAGES) - {RENDERER}


@pytest.mark.parametrize(
    ("package", "allowed", "forbidden"),
    [
        ("rules", {"numpy", "shapely"}, {"calibration", "vision", "tableref", "webui", "cv2", "flask", RENDERER}),
        ("calibration", None, {"vision", "tableref", "webui", "flask", "rules", RENDERER}),
        ("vision", None, {"calibration", "tableref", "webui", "flask", "rules", RENDERER}),
        ("tableref", None, {"webui", "flask", RENDERER}),
        ("webui", None, {RENDERER}),
        (RENDERER, None, {"webui", "flask"}),
    ],
)
def test_imports_run_one_way(package: str, allowed: set[str] | None, forbidden: set[str]) -> None:
    for path in _modules(package):
        names = _imports(path)
        where = path.relative_to(ROOT)
        assert not names & forbidden, f"{where} imports {sorted(names & forbidden)}"
        assert not {n.split(".")[0] for n in names} & forbidden, f"{where} imports {sorted(forbidden)}"
        if allowed is not None:
            assert _third_party(names) <= allowed, f"{where} imports {sorted(_third_party(names) - allowed)}"


def test_renderer_stays_out_of_the_wheel() -> None:
    found = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["packages"]["find"]
    shipped = [p for p in found["include"] if fnmatch(RENDERER, p) or fnmatch(f"{RENDERER}.wide", p)]
    assert not shipped, f"the wheel's packages {shipped} take in the test renderer"
