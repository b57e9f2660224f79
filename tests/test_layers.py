"""The folders are the concepts and imports run one way: ``rules`` needs only numpy and shapely, ``calibration`` and
``vision`` know nothing of Flask, nothing imports ``webui``, and no product module imports the test renderer."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("rules", "calibration", "vision", "tableref", "webui")


def _imports(path: Path) -> set[str]:
    """The top two levels of every module ``path`` imports ("tableref.synth", "numpy", ...)."""
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
    files = sorted((ROOT / package).rglob("*.py"))
    return [p for p in files if "synth" not in p.relative_to(ROOT).parts]


def _third_party(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names} - set(sys.stdlib_module_names) - set(PACKAGES)


@pytest.mark.parametrize(
    ("package", "allowed", "forbidden"),
    [
        ("rules", {"numpy", "shapely"}, {"calibration", "vision", "tableref", "webui", "cv2", "flask"}),
        ("calibration", None, {"vision", "tableref", "webui", "flask", "rules"}),
        ("vision", None, {"calibration", "tableref", "webui", "flask", "rules"}),
        ("tableref", None, {"webui", "flask", "tableref.synth"}),
        ("webui", None, {"tableref.synth"}),
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
