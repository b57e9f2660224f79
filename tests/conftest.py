"""Suite-wide set-up: with pytest-xdist every core runs a worker of its own, and OpenCV's own thread pool (a thread a
core by default) in each worker would only make the workers contend for the cores: one thread a worker (on 2 cores,
a tenth off the heaviest modules' time)."""

from __future__ import annotations

import os

import cv2

if os.environ.get("PYTEST_XDIST_WORKER"):
    cv2.setNumThreads(1)
