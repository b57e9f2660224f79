"""Table calibration: speed and accuracy on synthetic 1080p and 4K frames of the default 6'x4' table.

Run by hand from the repository root: ``.venv/bin/python bench/bench_calibration.py``. For each size it renders a
frame (a tilted camera with a webcam-like lens, exact ground truth), then reports

- marker corner error (px) of this stage's detection (search on a copy scaled to at most 1920 px, cornerSubPix at
  full size) and of OpenCV's own SUBPIX refinement on the full frame, and the time of each;
- ``calibrate_table`` time (median of repeats) with and without the camera model;
- the table mapping error at random table points (mm), and the reported reprojection error;
- the same mapping error without camera.json (lens distortion estimated from the markers);
- ``rectify`` time (first call builds the maps, later calls reuse them).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import _root  # noqa: F401  (the repository root on sys.path: synth, tests)
import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.markers import detect_markers
from calibration.spec import load_table_spec
from calibration.table import calibrate_table
from tableref.config import load_config
from tests.calibration.synthetic_views import LENS_DIST, camera_matrix, framing_view, render_table

SIZES = {"1080p": (1920, 1080, 1350.0), "4K": (3840, 2160, 2700.0)}
REPEATS = 15


def median_ms(func: Callable[[], object], repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return 1000.0 * statistics.median(times)


def corner_errors(ids: np.ndarray, corners: np.ndarray, truth: dict[int, np.ndarray]) -> np.ndarray:
    return np.concatenate(
        [np.linalg.norm(c.reshape(4, 2) - truth[int(i)], axis=1) for i, c in zip(ids, corners, strict=True)]
    )


def main() -> None:
    spec = load_table_spec()
    settings = load_config().calibration
    dictionary = spec.aruco_dictionary()
    rng = np.random.default_rng(0)
    points = rng.uniform([0.0, 0.0], [spec.width_mm, spec.depth_mm], (2000, 2))
    print(
        f"{'':6} {'corner err px':>22} {'detect ms':>16} {'calibrate ms':>16} {'map err mm':>20} {'reproj':>7} "
        f"{'rectify ms':>12} {'no camera.json':>13}"
    )
    print(f"{'':6} {'mean/max ours':>11} {'OpenCV':>10} {'ours':>7} {'OpenCV':>8} {'camera':>7} {'none':>8} "
          f"{'mean':>6} {'p95':>6} {'max':>6} {'rms mm':>7} {'1st':>5} {'next':>6} {'mean':>6} {'p95':>6}")  # fmt: skip
    for name, (width, height, focal) in SIZES.items():
        k = camera_matrix(width, height, focal)
        view = framing_view(spec, k, LENS_DIST, width, height)
        frame = cv2.cvtColor(render_table(spec, view, supersample=2, seed=1), cv2.COLOR_GRAY2BGR)
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        camera = CameraModel(width, height, k, LENS_DIST)
        truth = {m.id: view.project_table(m.corners_mm()) for m in spec.markers}

        ours = detect_markers(gray, dictionary, settings)
        ours_err = corner_errors(ours.ids, ours.corners_px, truth)
        params = cv2.aruco.DetectorParameters()
        params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
        opencv = cv2.aruco.ArucoDetector(dictionary, params)
        cv_corners, cv_ids, _ = opencv.detectMarkers(gray)
        cv_err = corner_errors(cv_ids.reshape(-1), np.asarray(cv_corners), truth)
        t_ours = median_ms(lambda: detect_markers(gray, dictionary, settings))  # noqa: B023
        t_cv = median_ms(lambda: opencv.detectMarkers(gray))  # noqa: B023

        t_cam = median_ms(lambda: calibrate_table(frame, spec, camera, settings=settings))  # noqa: B023
        t_none = median_ms(lambda: calibrate_table(frame, spec, None, settings=settings))  # noqa: B023
        cal = calibrate_table(frame, spec, camera, settings=settings)
        err = np.linalg.norm(cal.image_to_table(view.project_table(points)) - points, axis=1)
        no_camera = calibrate_table(frame, spec, None, settings=settings)
        err_none = np.linalg.norm(no_camera.image_to_table(view.project_table(points)) - points, axis=1)

        start = time.perf_counter()
        cal.rectify(frame, cal.px_per_mm)
        t_first = 1000.0 * (time.perf_counter() - start)
        t_next = median_ms(lambda: cal.rectify(frame, cal.px_per_mm))  # noqa: B023
        print(
            f"{name:6} {ours_err.mean():5.3f}/{ours_err.max():5.3f} {cv_err.mean():4.3f}/{cv_err.max():4.3f} "
            f"{t_ours:7.1f} {t_cv:8.1f} {t_cam:7.1f} {t_none:8.1f} {err.mean():6.3f} {np.percentile(err, 95):6.3f} "
            f"{err.max():6.3f} {cal.reprojection_rms_mm:7.3f} {t_first:5.0f} {t_next:6.1f} "
            f"{err_none.mean():6.3f} {np.percentile(err_none, 95):6.3f}"
        )
    print(f"\nmedian of {REPEATS} runs; mapping error (mm) over {len(points)} random table points")


if __name__ == "__main__":
    main()
