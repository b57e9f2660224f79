"""PDF printouts: page sizes in points at true size, and markers / board that OpenCV reads back at true size."""

from __future__ import annotations

import dataclasses
import re
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from calibration.errors import PrintError
from calibration.lens import board_image, board_size_mm, charuco_board
from calibration.markers import detect_markers
from calibration.printing import board_pdf, board_rects, marker_rects, markers_pdf
from calibration.settings import CalibrationSettings
from calibration.spec import MarkerSpec, TableSpec

PT_PER_MM = 72.0 / 25.4
A4_PT = (595.276, 841.89)


def read_pages(path: Path) -> list[tuple[tuple[float, float], str]]:
    """(width, height) in points and the decompressed content of each page, in order."""
    data = path.read_bytes()
    assert data.startswith(b"%PDF-1.4") and data.rstrip().endswith(b"%%EOF")
    boxes = [(float(w), float(h)) for w, h in re.findall(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", data)]
    streams = [
        zlib.decompress(m).decode("ascii")
        for m in re.findall(rb"/FlateDecode >>\nstream\n(.*?)\nendstream", data, re.S)
    ]
    assert len(boxes) == len(streams)
    # The xref table must point at each object.
    xref = int(re.findall(rb"startxref\n(\d+)", data)[-1])
    assert data[xref : xref + 4] == b"xref"
    return list(zip(boxes, streams, strict=True))


def rasterize(page: tuple[tuple[float, float], str], px_per_mm: float) -> NDArray[np.uint8]:
    """The filled rectangles of a page, drawn on white at ``px_per_mm``: enough to read markers back."""
    (w_pt, h_pt), content = page
    scale = px_per_mm / PT_PER_MM
    image = np.full((round(h_pt * scale), round(w_pt * scale)), 255, np.uint8)
    gray = 0.0
    for line in content.splitlines():
        fill = re.fullmatch(r"([\d.]+) g", line)
        if fill:
            gray = float(fill.group(1))
        rect = re.fullmatch(r"([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+) re", line)
        if rect:
            x, y, w, h = (float(v) for v in rect.groups())
            x0, x1 = x * scale, (x + w) * scale
            y0, y1 = (h_pt - y - h) * scale, (h_pt - y) * scale
            image[round(y0) : round(y1), round(x0) : round(x1)] = round(gray * 255)
    return image


def test_markers_pdf_pages_and_true_size(tmp_path: Path, spec: TableSpec, settings: CalibrationSettings) -> None:
    out = tmp_path / "markers.pdf"
    count = markers_pdf(spec, out, settings=settings)
    pages = read_pages(out)
    assert count == len(pages) == len(spec.markers) + 1  # 100 mm markers: one per A4 page, then the placement sheet
    for (w, h), _ in pages[:-1]:
        assert (w, h) == pytest.approx(A4_PT, abs=0.01)
    assert pages[-1][0] == pytest.approx(A4_PT[::-1], abs=0.01)  # the placement sheet is landscape
    px_per_mm = 4.0
    for marker, page in zip(spec.markers, pages, strict=False):
        found = detect_markers(rasterize(page, px_per_mm), spec.aruco_dictionary(), settings)
        assert found.ids.tolist() == [marker.id]
        side_mm = np.linalg.norm(np.diff(found.corners_px[0], axis=0, append=found.corners_px[0][:1]), axis=1)
        np.testing.assert_allclose(side_mm / px_per_mm, marker.size_mm, atol=0.5)
        assert f"id {marker.id}: centre at x = {marker.x_mm:g} mm" in page[1]
    assert "100 mm" in pages[0][1] and "Marker placement" in pages[-1][1]


def test_scale_bar_is_100_mm(tmp_path: Path, spec: TableSpec, settings: CalibrationSettings) -> None:
    out = tmp_path / "markers.pdf"
    markers_pdf(spec, out, settings=settings)
    (_, content) = read_pages(out)[0]
    # The bar's outline: a closed path whose x span is 100 mm.
    outline = re.search(r"([\d.]+) [\d.]+ m ([\d.]+) [\d.]+ l [\d.]+ [\d.]+ l [\d.]+ [\d.]+ l h S", content)
    assert outline is not None
    assert (float(outline.group(2)) - float(outline.group(1))) / PT_PER_MM == pytest.approx(100.0, abs=1e-3)


@pytest.mark.parametrize("size_mm", [50.0, 150.0, 300.0])
def test_marker_sizes_including_larger_than_the_paper(
    tmp_path: Path, spec: TableSpec, settings: CalibrationSettings, size_mm: float
) -> None:
    big = dataclasses.replace(spec, markers=tuple(dataclasses.replace(m, size_mm=size_mm) for m in spec.markers[:3]))
    out = tmp_path / "markers.pdf"
    markers_pdf(big, out, settings=settings)
    pages = read_pages(out)
    (w_pt, _), _ = pages[0]
    quiet = size_mm * (1 + 2 * settings.marker_quiet_zone_fraction)
    assert w_pt / PT_PER_MM >= quiet + 2 * settings.page_margin_mm - 0.01
    found = detect_markers(rasterize(pages[0], 2.0), big.aruco_dictionary(), settings)
    assert big.markers[0].id in found.ids.tolist()
    for corners in found.corners_px:
        assert np.linalg.norm(corners[1] - corners[0]) / 2.0 == pytest.approx(size_mm, abs=1.0)


def test_marker_rects_redraw_the_dictionary_marker(spec: TableSpec) -> None:
    dictionary = spec.aruco_dictionary()
    cells = dictionary.markerSize + 2
    for marker_id in (0, 7, 49):
        drawn = np.ones((cells, cells), bool)
        for x, y, w, h in marker_rects(dictionary, marker_id, float(cells)):
            drawn[round(y) : round(y + h), round(x) : round(x + w)] = False
        reference = cv2.aruco.generateImageMarker(dictionary, marker_id, cells) > 127
        np.testing.assert_array_equal(drawn, reference)


def test_board_rects_match_opencv_board_image(settings: CalibrationSettings) -> None:
    px_per_mm = 10.0
    reference = board_image(settings, px_per_mm)
    drawn = np.full_like(reference, 255)
    for x, y, w, h in board_rects(settings):
        drawn[round(y * px_per_mm) : round((y + h) * px_per_mm), round(x * px_per_mm) : round((x + w) * px_per_mm)] = 0
    differ = drawn != reference
    # Only pixels on an edge of OpenCV's drawing may differ (it rounds cell edges its own way).
    edges = cv2.morphologyEx(reference, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)) > 0
    assert np.all(edges[differ])
    assert np.mean(differ) < 0.005


def test_board_pdf_reads_back_as_the_board(tmp_path: Path, settings: CalibrationSettings) -> None:
    out = tmp_path / "board.pdf"
    assert board_pdf(out, settings=settings) == 1
    (page,) = read_pages(out)
    assert page[0] == pytest.approx(A4_PT[::-1], abs=0.01)  # the default board fits A4 landscape
    px_per_mm = 4.0
    image = rasterize(page, px_per_mm)
    board = charuco_board(settings)
    corners, ids, _, _ = cv2.aruco.CharucoDetector(board).detectBoard(image)
    expected = (settings.board_squares_x - 1) * (settings.board_squares_y - 1)
    assert ids is not None and len(ids) == expected
    spacing = np.diff(np.asarray(corners).reshape(-1, 2)[: settings.board_squares_x - 1, 0])
    np.testing.assert_allclose(spacing / px_per_mm, settings.board_square_mm, atol=0.3)
    assert f"{settings.board_dictionary}" in page[1]


def test_board_larger_than_the_paper_gets_a_page_of_its_size(tmp_path: Path, settings: CalibrationSettings) -> None:
    large = dataclasses.replace(
        settings, board_squares_x=12, board_squares_y=9, board_square_mm=40.0, board_marker_mm=30.0
    )
    out = tmp_path / "board.pdf"
    board_pdf(out, settings=large)
    ((w_pt, h_pt), _) = read_pages(out)[0]
    width_mm, height_mm = board_size_mm(large)
    assert w_pt / PT_PER_MM >= width_mm and h_pt / PT_PER_MM >= height_mm


def test_placement_sheet_draws_every_marker(tmp_path: Path, settings: CalibrationSettings) -> None:
    spec = TableSpec(
        900,
        600,
        "DICT_4X4_50",
        tuple(MarkerSpec(i, 60, x, y, r) for i, (x, y, r) in enumerate([(45, 45, 0), (855, 45, 90), (450, 555, 30)])),
    )
    out = tmp_path / "markers.pdf"
    markers_pdf(spec, out, settings=settings)
    content = read_pages(out)[-1][1]
    for m in spec.markers:
        # Parentheses are escaped in PDF strings.
        assert f"{m.id}: \\({m.x_mm:g}, {m.y_mm:g}\\) {m.rotation_deg:g} deg" in content
    assert "table 900 x 600 mm" in content


def test_unwritable_output_is_a_named_error(tmp_path: Path, spec: TableSpec, settings: CalibrationSettings) -> None:
    with pytest.raises(PrintError, match="cannot write the PDF"):
        markers_pdf(spec, tmp_path / "missing" / "markers.pdf", settings=settings)
    with pytest.raises(PrintError, match="cannot write the PDF"):
        board_pdf(tmp_path / "missing" / "board.pdf", settings=settings)
