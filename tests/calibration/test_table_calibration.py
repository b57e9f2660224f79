"""Table calibration on synthetic frames with exact ground truth: accuracy, robustness, named errors."""

from __future__ import annotations

import dataclasses
import json

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from calibration.errors import HeightUnavailableError, ImageError, MarkerSpanError, TooFewMarkersError
from calibration.homography import apply_homography
from calibration.markers import detect_markers
from calibration.report import CalibrationReport
from calibration.settings import CalibrationSettings
from calibration.spec import MarkerSpec, TableSpec
from calibration.table import (
    TableCalibration,
    calibrate_table,
    marker_drift_px,
    rectified_to_table,
    table_to_rectified,
)
from tests.calibration.conftest import camera_of, table_frame
from tests.calibration.synthetic_views import View


def table_points(spec: TableSpec, n: int, seed: int) -> NDArray[np.float64]:
    rng = np.random.default_rng(seed)
    return rng.uniform([0.0, 0.0], [spec.width_mm, spec.depth_mm], (n, 2))


def mapping_errors(cal: TableCalibration, view: View, spec: TableSpec, seed: int = 1) -> NDArray[np.float64]:
    """Distances (mm) between random table points and their image -> table mapping."""
    pts = table_points(spec, 400, seed)
    return np.asarray(np.linalg.norm(cal.image_to_table(view.project_table(pts)) - pts, axis=1))


def corner_error(cal: TableCalibration, view: View, spec: TableSpec) -> float:
    """Worst mapping error (mm) at the four table corners: where extrapolation hurts most."""
    corners = np.array([[0.0, 0.0], [spec.width_mm, 0.0], [spec.width_mm, spec.depth_mm], [0.0, spec.depth_mm]])
    return float(np.max(np.linalg.norm(cal.image_to_table(view.project_table(corners)) - corners, axis=1)))


@pytest.mark.parametrize(
    ("marker_ids", "max_error_mm", "max_corner_error_mm"),
    [
        (None, 0.5, 0.5),  # all 8 markers
        ((0, 1, 2, 3, 5, 6, 7), 0.5, 1.5),  # one corner marker missing: its corner is extrapolated
        ((0, 2, 4, 6), 0.5, 0.5),  # the four corners only
        ((0, 2, 6), 1.0, 2.5),  # only 3 markers
        ((1, 3, 5), 1.5, 2.0),  # 3 edge midpoints: the corners lie well outside
    ],
)
def test_mapping_accuracy_with_camera_at_1080p(
    spec: TableSpec,
    settings: CalibrationSettings,
    marker_ids: tuple[int, ...] | None,
    max_error_mm: float,
    max_corner_error_mm: float,
) -> None:
    image, view = table_frame(spec, marker_ids)
    cal = calibrate_table(image, spec, camera_of(view), settings=settings)
    assert cal.markers_used == (marker_ids or spec.marker_ids)
    assert cal.corners_rejected == 0
    assert cal.lens_corrected and cal.heights_corrected
    assert np.percentile(mapping_errors(cal, view, spec), 95) < max_error_mm
    assert corner_error(cal, view, spec) < max_corner_error_mm


def test_reported_numbers_match_truth(spec: TableSpec, settings: CalibrationSettings) -> None:
    image, view = table_frame(spec)
    cal = calibrate_table(image, spec, camera_of(view), settings=settings)
    # Corners are found to ~0.25 px, i.e. ~0.3 mm at this scale; the fit averages 32 of them.
    assert 0.05 < cal.reprojection_rms_mm < 0.6
    assert cal.reprojection_rms_mm <= cal.reprojection_max_mm < 1.5
    # Mean scale over the table, from the true projection of 1 mm steps at the table's centre region.
    pts = table_points(spec, 200, 3)
    step = np.linalg.norm(view.project_table(pts + np.array([1.0, 0.0])) - view.project_table(pts), axis=1)
    assert cal.px_per_mm == pytest.approx(float(np.mean(step)), rel=0.05)
    np.testing.assert_allclose(cal.camera_position_mm, [*view.centre_mm[:2], -view.centre_mm[2]], atol=5.0)
    report = cal.report()
    assert CalibrationReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report
    assert report.markers_used == spec.marker_ids
    assert report.lens_corrected is True and report.notes == ()


def test_round_trip_table_to_image(spec: TableSpec, settings: CalibrationSettings) -> None:
    image, view = table_frame(spec)
    cal = calibrate_table(image, spec, camera_of(view), settings=settings)
    pts = table_points(spec, 300, 5)
    truth_px = view.project_table(pts)
    assert np.max(np.linalg.norm(cal.table_to_image(pts) - truth_px, axis=1)) < 0.3
    back = cal.image_to_table(cal.table_to_image(pts))
    assert np.max(np.linalg.norm(back - pts, axis=1)) < 1e-6


@pytest.mark.parametrize("height_mm", [4.0, 30.0])
def test_heights_are_corrected_for_parallax(spec: TableSpec, settings: CalibrationSettings, height_mm: float) -> None:
    image, view = table_frame(spec)
    cal = calibrate_table(image, spec, camera_of(view), settings=settings)
    pts = table_points(spec, 300, 7)
    seen_px = view.project_table(pts, height_mm)
    corrected = np.linalg.norm(cal.image_to_table(seen_px, height_mm) - pts, axis=1)
    uncorrected = np.linalg.norm(cal.image_to_table(seen_px) - pts, axis=1)
    assert np.max(uncorrected) > 0.7 * height_mm * 0.5  # the parallax is real at the table's far side
    assert np.percentile(corrected, 95) < 0.5
    # Heights per point, and the way back to pixels.
    per_point = cal.image_to_table(seen_px, np.full(len(pts), height_mm))
    np.testing.assert_allclose(per_point, cal.image_to_table(seen_px, height_mm))
    assert np.max(np.linalg.norm(cal.table_to_image(pts, height_mm) - seen_px, axis=1)) < 0.4


@pytest.mark.parametrize(("estimate", "note"), [(False, "distortion uncorrected"), (True, "distortion estimated")])
def test_without_camera_heights_are_refused_and_the_report_says_so(
    spec: TableSpec, settings: CalibrationSettings, estimate: bool, note: str
) -> None:
    image, _ = table_frame(spec)
    cal = calibrate_table(image, spec, None, settings=dataclasses.replace(settings, estimate_lens=estimate))
    assert not cal.lens_corrected and not cal.heights_corrected and cal.camera_position_mm is None
    assert cal.lens_estimated is estimate and (cal.camera is not None) is estimate
    with pytest.raises(HeightUnavailableError, match="camera model"):
        cal.image_to_table(np.array([[900.0, 500.0]]), height_mm=4.0)
    assert cal.image_to_table(np.array([[900.0, 500.0]]), height_mm=0.0).shape == (1, 2)
    report = cal.report()
    assert report.lens_corrected is False and report.heights_corrected is False
    assert report.lens_estimated is estimate
    assert any(note in text for text in report.notes)


def test_lens_estimated_from_the_markers_beats_no_correction(spec: TableSpec, settings: CalibrationSettings) -> None:
    image, view = table_frame(spec)
    pts = table_points(spec, 300, 11)
    seen = view.project_table(pts)
    errors = {}
    for name, camera, estimate in (
        ("camera", camera_of(view), False),
        ("estimated", None, True),
        ("none", None, False),
    ):
        cal = calibrate_table(image, spec, camera, settings=dataclasses.replace(settings, estimate_lens=estimate))
        err = np.linalg.norm(cal.image_to_table(seen) - pts, axis=1)
        errors[name] = err
        # The mapping sigma is honest within a factor of a few: per-axis sigma against the 2-D rms error / sqrt(2).
        ratio = float(np.sqrt(np.mean(err**2) / 2.0) / np.mean(cal.mapping_sigma_mm(pts)))
        assert 0.25 < ratio < 4.0, name
    assert np.median(errors["none"]) > 2.0  # this lens bends the table by millimetres
    assert np.percentile(errors["estimated"], 95) < 1.0
    assert np.median(errors["camera"]) < np.median(errors["estimated"]) < np.median(errors["none"]) / 10.0


@pytest.mark.parametrize(("marker_ids", "estimated"), [(None, True), ((0, 1, 2, 4, 5, 6), True), ((0, 2, 4, 6), False)])
def test_lens_is_estimated_only_from_enough_markers(
    spec: TableSpec, settings: CalibrationSettings, marker_ids: tuple[int, ...] | None, estimated: bool
) -> None:
    image, view = table_frame(spec, marker_ids)
    cal = calibrate_table(image, spec, None, settings=settings)
    assert cal.lens_estimated is estimated
    if estimated:
        assert np.percentile(mapping_errors(cal, view, spec), 95) < 1.0


def test_mapping_sigma_grows_where_markers_are_missing(spec: TableSpec, settings: CalibrationSettings) -> None:
    full_image, view = table_frame(spec)
    part_image, _ = table_frame(spec, (0, 1, 2, 3, 5, 6, 7))
    full = calibrate_table(full_image, spec, camera_of(view), settings=settings)
    part = calibrate_table(part_image, spec, camera_of(view), settings=settings)
    far_corner = np.array([[spec.width_mm, spec.depth_mm]])  # marker 4's corner
    assert part.mapping_sigma_mm(far_corner)[0] > 1.5 * full.mapping_sigma_mm(far_corner)[0]


def _blob_on_corner(image: NDArray[np.uint8], view: View, marker: MarkerSpec, corner: int) -> NDArray[np.uint8]:
    """A dark blob (a fingertip, a model's base) just outside one corner of a marker."""
    truth = view.project_table(marker.corners_mm())
    out = image.copy()
    direction = truth[corner] - truth.mean(axis=0)
    centre = truth[corner] + 4.0 * direction / np.linalg.norm(direction)
    cv2.circle(out, (round(centre[0]), round(centre[1])), 4, 30, -1, lineType=cv2.LINE_AA)
    return out


@pytest.mark.parametrize(("occluded", "max_error_mm"), [([(3, 0)], 0.5), ([(3, 2)], 0.5), ([(1, 1), (6, 3)], 0.5)])
def test_an_occluded_corner_does_not_bend_the_fit(
    spec: TableSpec, settings: CalibrationSettings, occluded: list[tuple[int, int]], max_error_mm: float
) -> None:
    clean, view = table_frame(spec)
    image = clean
    for marker_id, corner in occluded:
        image = _blob_on_corner(image, view, spec.marker(marker_id), corner)
    camera = camera_of(view)
    # The blob leaves each marker detected but drags the touched corner by several pixels.
    found = detect_markers(image, spec.aruco_dictionary(), settings)
    for marker_id, corner in occluded:
        corners = found.corners_px[list(found.ids).index(marker_id)]
        truth = view.project_table(spec.marker(marker_id).corners_mm())
        assert np.linalg.norm(corners[corner] - truth[corner]) > 5.0
    cal = calibrate_table(image, spec, camera, settings=settings)
    assert cal.markers_used == spec.marker_ids
    assert cal.corners_rejected == len(occluded)
    for marker_id, corner in occluded:
        assert not cal.inliers[list(cal.detections.ids).index(marker_id), corner]
    robust = mapping_errors(cal, view, spec)
    assert np.max(robust) < max_error_mm
    # A plain least-squares fit of every corner is bent by the dragged ones.
    table = np.concatenate([spec.marker(int(i)).corners_mm() for i in found.ids])
    pixels = camera.undistort_points(found.corners_px.reshape(-1, 2))
    plain, _ = cv2.findHomography(pixels, table, 0)
    pts = table_points(spec, 400, 1)
    plain_err = np.linalg.norm(apply_homography(plain, camera.undistort_points(view.project_table(pts))) - pts, axis=1)
    assert np.max(plain_err) > 2.0 * np.max(robust)


@pytest.mark.parametrize("stray", [MarkerSpec(3, 100, 900, 600, 0), MarkerSpec(0, 100, 1500, 300, 45)])
def test_a_stray_copy_of_a_marker_on_the_table_is_rejected(
    spec: TableSpec, settings: CalibrationSettings, stray: MarkerSpec
) -> None:
    printed = dataclasses.replace(spec, markers=(*spec.markers, stray))
    image, view = table_frame(printed)
    cal = calibrate_table(image, spec, camera_of(view), settings=settings)
    assert list(cal.detections.ids).count(stray.id) == 2
    assert cal.markers_used == spec.marker_ids
    assert cal.corners_rejected == 4
    assert np.percentile(mapping_errors(cal, view, spec), 95) < 0.5


def _spec(width: float, depth: float, markers: list[tuple[int, float, float, float, float]]) -> TableSpec:
    return TableSpec(width, depth, "DICT_4X4_50", tuple(MarkerSpec(*m) for m in markers))


ROTATED = _spec(
    1829,
    1219,
    [(0, 100, 65, 65, 30), (1, 100, 914.5, 65, 90), (2, 100, 1764, 65, 180), (3, 100, 1764, 609.5, -45),
     (4, 100, 1764, 1154, 270), (5, 100, 914.5, 1154, 12.5), (6, 100, 65, 1154, -90), (7, 100, 65, 609.5, 135)],
)  # fmt: skip
SMALL_TABLE = _spec(
    900,
    600,
    [(10, 60, 45, 45, 0), (11, 60, 855, 45, 0), (12, 60, 855, 555, 0), (13, 60, 45, 555, 0)],
)  # fmt: skip
LONG_TABLE = _spec(
    2400,
    1200,
    [(20, 120, 80, 80, 0), (21, 120, 1200, 80, 45), (22, 120, 2320, 80, 0), (23, 120, 2320, 1120, 0),
     (24, 120, 1200, 1120, -45), (25, 120, 80, 1120, 0)],
)  # fmt: skip


@pytest.mark.parametrize(
    ("table", "size", "max_error_mm"),
    [(ROTATED, (1920, 1080), 0.5), (SMALL_TABLE, (1280, 720), 0.5), (LONG_TABLE, (1920, 1080), 0.8)],
    ids=["rotated-markers", "small-table-720p", "long-table"],
)
def test_any_table_and_marker_layout_from_the_spec(
    settings: CalibrationSettings, table: TableSpec, size: tuple[int, int], max_error_mm: float
) -> None:
    image, view = table_frame(table, None, size)
    cal = calibrate_table(image, table, camera_of(view), settings=settings)
    assert cal.markers_used == tuple(sorted(table.marker_ids))
    assert np.percentile(mapping_errors(cal, view, table), 95) < max_error_mm


def test_a_camera_calibrated_at_another_size_is_scaled(spec: TableSpec, settings: CalibrationSettings) -> None:
    image, view = table_frame(spec)
    camera = camera_of(view)
    # The same lens calibrated on 4K frames (pixel centres at integers: the edge at -0.5 scales about itself).
    k4 = camera.camera_matrix.copy()
    k4[:2, :] *= 2.0
    k4[0, 2] = (camera.camera_matrix[0, 2] + 0.5) * 2 - 0.5
    k4[1, 2] = (camera.camera_matrix[1, 2] + 0.5) * 2 - 0.5
    camera_4k = dataclasses.replace(camera, image_width=3840, image_height=2160, camera_matrix=k4)
    cal = calibrate_table(image, spec, camera_4k, settings=settings)
    assert cal.camera is not None
    np.testing.assert_allclose(cal.camera.camera_matrix, camera.camera_matrix, atol=1e-9)
    assert np.percentile(mapping_errors(cal, view, spec), 95) < 0.5


@pytest.mark.parametrize(
    ("marker_ids", "error", "message"),
    [
        ((), TooFewMarkersError, r"found 0 of the table's markers \(ids none\).*seen ids none.*expected ids 0, 1, 2"),
        ((3, 4), TooFewMarkersError, r"found 2 of the table's markers \(ids 3, 4\).*at least 3"),
        ((0, 1, 2), MarkerSpanError, r"ids 0, 1, 2\) span only 0% of the table"),
        ((0, 1, 7), MarkerSpanError, r"span only 1\d% of the table.*expected ids"),
    ],
    ids=["no-markers", "two-markers", "one-edge", "one-corner-region"],
)
def test_too_few_or_badly_spread_markers_are_named_errors(
    spec: TableSpec, settings: CalibrationSettings, marker_ids: tuple[int, ...], error: type, message: str
) -> None:
    image, view = table_frame(spec, marker_ids, (1280, 720))
    with pytest.raises(error, match=message):
        calibrate_table(image, spec, camera_of(view), settings=settings)


def test_markers_of_another_dictionary_are_pointed_out(spec: TableSpec, settings: CalibrationSettings) -> None:
    printed = dataclasses.replace(spec, dictionary="DICT_5X5_50")
    image, _ = table_frame(printed, None, (1280, 720))
    with pytest.raises(TooFewMarkersError, match=r"found 0 .*DICT_4X4_50.*markers of DICT_5X5_1000 are in view"):
        calibrate_table(image, spec, None, settings=settings)


def test_markers_not_in_the_spec_are_seen_but_not_used(spec: TableSpec, settings: CalibrationSettings) -> None:
    image, view = table_frame(spec)
    smaller = dataclasses.replace(spec, markers=tuple(m for m in spec.markers if m.id != 5))
    cal = calibrate_table(image, smaller, camera_of(view), settings=settings)
    assert 5 in cal.markers_seen and 5 not in cal.markers_used
    assert cal.report().markers_expected == (0, 1, 2, 3, 4, 6, 7)


@pytest.mark.parametrize(
    ("image", "message"),
    [
        (None, "got None"),
        (np.zeros((0, 0, 3), np.uint8), "empty"),
        (np.zeros((100, 80, 3), np.uint8), "too small"),
        (np.zeros((480, 640, 3), np.float32), "8-bit"),
        (np.zeros((480, 640, 2), np.uint8), "grey, BGR or BGRA"),
        ("frame.png", "numpy array"),
    ],
)
def test_unusable_images_are_named_errors(
    spec: TableSpec, settings: CalibrationSettings, image: object, message: str
) -> None:
    with pytest.raises(ImageError, match=message):
        calibrate_table(image, spec, None, settings=settings)  # type: ignore[arg-type]


@pytest.mark.parametrize("channels", [None, 3, 4])
def test_grey_bgr_and_bgra_frames_give_the_same_fit(
    spec: TableSpec, settings: CalibrationSettings, channels: int | None
) -> None:
    grey, view = table_frame(spec, None, (1280, 720))
    if channels == 3:
        image = cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR)
    elif channels == 4:
        image = cv2.cvtColor(grey, cv2.COLOR_GRAY2BGRA)
    else:
        image = grey
    cal = calibrate_table(image, spec, camera_of(view), settings=settings)
    reference = calibrate_table(grey, spec, camera_of(view), settings=settings)
    np.testing.assert_allclose(cal.homography, reference.homography, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("px_per_mm", [0.5, 1.0])
def test_rectified_view_puts_table_points_where_the_convention_says(
    spec: TableSpec, settings: CalibrationSettings, px_per_mm: float
) -> None:
    image, view = table_frame(spec)
    cal = calibrate_table(image, spec, camera_of(view), settings=settings)
    top_down = cal.rectify(image, px_per_mm)
    assert top_down.shape == (int(np.ceil(spec.depth_mm * px_per_mm)), int(np.ceil(spec.width_mm * px_per_mm)))
    assert cal.rectify_maps(px_per_mm)[0].base is cal.rectify_maps(px_per_mm)[0].base  # cached
    found = detect_markers(top_down, spec.aruco_dictionary(), settings)
    assert sorted(found.ids.tolist()) == list(spec.marker_ids)
    offsets = []
    for marker_id, corners in zip(found.ids, found.corners_px, strict=True):
        expected = table_to_rectified(spec.marker(int(marker_id)).corners_mm(), px_per_mm)
        offsets.append(corners - expected)
        np.testing.assert_allclose(rectified_to_table(expected, px_per_mm), spec.marker(int(marker_id)).corners_mm())
    # Corners found again in the resampled view, in its pixels: sub-pixel noise plus resampling blur. A convention
    # off by half a pixel would show as a 0.5 px bias.
    offsets_px = np.concatenate(offsets)
    assert np.mean(np.linalg.norm(offsets_px, axis=1)) < 0.4
    assert np.max(np.linalg.norm(offsets_px, axis=1)) < 1.0
    assert np.all(np.abs(offsets_px.mean(axis=0)) < 0.15)


def test_rectify_refuses_a_frame_of_another_size(spec: TableSpec, settings: CalibrationSettings) -> None:
    image, view = table_frame(spec, None, (1280, 720))
    cal = calibrate_table(image, spec, camera_of(view), settings=settings)
    with pytest.raises(ImageError, match="1280x720 frames"):
        cal.rectify(np.zeros((1080, 1920), np.uint8), 1.0)
    with pytest.raises(ValueError, match="px_per_mm"):
        cal.rectify(image, 0.0)


def _shifted(image: NDArray[np.uint8], dx_px: float) -> NDArray[np.uint8]:
    m = np.array([[1.0, 0.0, dx_px], [0.0, 1.0, 0.0]])
    return np.asarray(cv2.warpAffine(image, m, (image.shape[1], image.shape[0]), flags=cv2.INTER_LINEAR))


@pytest.mark.parametrize(
    ("frame", "k1_off", "low_px", "high_px"),
    [
        ("same camera, new noise", 0.0, 0.0, 0.3),
        # the camera.json's lens a little off: its fit puts the corners half a pixel and more from where they are
        ("same camera, new noise", 0.05, 0.0, 0.3),
        ("knocked 1.5 px", 0.0, 1.2, 1.8),
        ("knocked 1.5 px", 0.05, 1.2, 1.8),
        ("knocked 4 px", 0.0, 3.7, 4.3),
    ],
)
def test_marker_drift_tells_a_moved_camera(
    spec: TableSpec, settings: CalibrationSettings, frame: str, k1_off: float, low_px: float, high_px: float
) -> None:
    image, view = table_frame(spec)
    camera = camera_of(view)
    lens = camera.dist_coeffs + np.array([k1_off, 0.0, 0.0, 0.0, 0.0])
    cal = calibrate_table(image, spec, dataclasses.replace(camera, dist_coeffs=lens), settings=settings)
    other, _ = table_frame(spec, seed=1)
    if frame.startswith("knocked"):
        other = _shifted(other, float(frame.split()[1]))
    drift = marker_drift_px(other, cal, settings=settings)
    assert drift is not None and low_px <= drift <= high_px
    assert (drift > settings.moved_drift_px) == frame.startswith("knocked")


def test_marker_drift_without_markers_or_of_another_frame_size(spec: TableSpec, settings: CalibrationSettings) -> None:
    image, view = table_frame(spec)
    cal = calibrate_table(image, spec, camera_of(view), settings=settings)
    blank = np.full_like(image, 128)
    assert marker_drift_px(blank, cal, settings=settings) is None
    small = np.ascontiguousarray(image[::2, ::2])
    assert marker_drift_px(small, cal, settings=settings) == float("inf")
