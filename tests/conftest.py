"""Suite-wide set-up: with pytest-xdist each worker (a core's worth, and one more) runs OpenCV on one thread, since
OpenCV's own thread pool (a thread a core by default) in each worker would only make the workers contend for the
cores (on 2 cores, a tenth off the heaviest modules' time); and the heaviest modules are handed out first."""

from __future__ import annotations

import os

import cv2
import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    cv2.setNumThreads(1)

# The modules with the most work (about a minute or more each on 2 cores) are handed out first, most first:
# pytest-xdist gives a worker a whole module at a time in collection order, and one of these started last would leave
# the other workers idle.
_HEAVIEST_FIRST = (
    "tests/vision/test_rendered.py",
    "tests/vision/test_finder.py",
    "tests/tableref/review/test_run.py",
    "tests/tableref/test_calls.py",
    "tests/webui/test_browser_glance.py",
    "tests/tableref/cli/test_frames.py",
    "tests/synth/test_wide.py",
    "tests/webui/test_live.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return _HEAVIEST_FIRST.index(path) if path in _HEAVIEST_FIRST else len(_HEAVIEST_FIRST)

    items.sort(key=rank)  # stable: the order within a module and among the rest stays as collected
