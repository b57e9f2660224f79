"""Printouts at true size: the table's markers with a placement sheet, and the ChArUco board for lens calibration.

Everything is drawn as vector shapes (each black marker cell is an exact rectangle), so a printer at 100 % gives
the sizes of the spec to the printer's own accuracy; a 100 mm scale bar on every page checks that.
"""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np

from calibration.errors import PrintError
from calibration.lens import board_size_mm, charuco_board
from calibration.pdf import Page, write_pdf
from calibration.settings import CalibrationSettings
from calibration.spec import MarkerSpec, TableSpec

Rect = tuple[float, float, float, float]

# Page furniture in mm: the band for the scale bar at the foot of each page, label lines above and below a
# marker, and the gap between markers on a page. Layout only, not measurements.
FOOTER_MM = 16.0
TITLE_MM = 6.0
CAPTION_MM = 11.0
GAP_MM = 6.0
SCALE_BAR_MM = 100.0
SCALE_TICK_MM = 10.0
# Band above the drawing of the placement sheet for its title and legend.
PLACEMENT_HEADER_MM = 22.0


def marker_rects(dictionary: cv2.aruco.Dictionary, marker_id: int, size_mm: float) -> list[Rect]:
    """Black rectangles (x, y, w, h) mm of a marker whose black square is ``size_mm``, (0, 0) its top-left corner.
    Runs of black cells along a row are merged into one rectangle."""
    cells = int(dictionary.markerSize) + 2
    bits = cv2.aruco.generateImageMarker(dictionary, marker_id, cells) < 128
    cell_mm = size_mm / cells
    rects: list[Rect] = []
    for row in range(cells):
        col = 0
        while col < cells:
            if not bits[row, col]:
                col += 1
                continue
            start = col
            while col < cells and bits[row, col]:
                col += 1
            rects.append((start * cell_mm, row * cell_mm, (col - start) * cell_mm, cell_mm))
    return rects


def board_rects(settings: CalibrationSettings) -> list[Rect]:
    """Black rectangles (x, y, w, h) mm of the ChArUco board, (0, 0) its top-left outer corner: the black squares
    and every marker, placed where OpenCV's board object says they are."""
    board = charuco_board(settings)
    dictionary = board.getDictionary()
    square = settings.board_square_mm
    with_marker: set[tuple[int, int]] = set()
    rects: list[Rect] = []
    for marker_id, corners in zip(np.asarray(board.getIds()).reshape(-1), board.getObjPoints(), strict=True):
        pts = np.asarray(corners, dtype=np.float64).reshape(4, 3)
        left, top = float(pts[:, 0].min()), float(pts[:, 1].min())
        centre = pts[:, :2].mean(axis=0)
        with_marker.add((int(centre[0] // square), int(centre[1] // square)))
        rects += [
            (left + x, top + y, w, h) for x, y, w, h in marker_rects(dictionary, int(marker_id), pts[1, 0] - pts[0, 0])
        ]
    for j in range(settings.board_squares_y):
        for i in range(settings.board_squares_x):
            if (i, j) not in with_marker:
                rects.append((i * square, j * square, square, square))
    return rects


def _scale_bar(page: Page, x_mm: float, y_mm: float) -> None:
    """A 100 mm bar of alternating 10 mm blocks, its top-left at (x, y), with its label to the right."""
    height = 3.0
    ticks = int(SCALE_BAR_MM / SCALE_TICK_MM)
    page.rects([(x_mm + n * SCALE_TICK_MM, y_mm, SCALE_TICK_MM, height) for n in range(0, ticks, 2)])
    page.polygon(
        [(x_mm, y_mm), (x_mm + SCALE_BAR_MM, y_mm), (x_mm + SCALE_BAR_MM, y_mm + height), (x_mm, y_mm + height)],
        stroke=0.0,
        line_mm=0.2,
    )
    page.text(x_mm, y_mm + height + 4.0, "0", 7)
    page.text(x_mm + SCALE_BAR_MM - 10.0, y_mm + height + 4.0, "100 mm", 7)
    page.text(
        x_mm + SCALE_BAR_MM + 4.0,
        y_mm + height,
        "Measure this bar: it must be 100 mm. Print at 100 % (no 'fit to page').",
        7,
    )


def _footer(page: Page, margin_mm: float) -> None:
    _scale_bar(page, margin_mm, page.height_mm - margin_mm - FOOTER_MM + 4.0)


def _quiet_mm(marker: MarkerSpec, settings: CalibrationSettings) -> float:
    return marker.size_mm * settings.marker_quiet_zone_fraction


def _draw_marker(
    page: Page, spec: TableSpec, marker: MarkerSpec, settings: CalibrationSettings, x: float, y: float
) -> None:
    """The marker's cut square with its top-left at (x, y) mm, the labels above and below it."""
    quiet = _quiet_mm(marker, settings)
    cut = marker.size_mm + 2.0 * quiet
    top = y + TITLE_MM
    corners = [(x, top), (x + cut, top), (x + cut, top + cut), (x, top + cut)]
    for (x0, y0), (x1, y1) in zip(corners, corners[1:] + corners[:1], strict=True):
        page.line(x0, y0, x1, y1, line_mm=0.2, gray=0.6, dash_mm=2.0)
    page.rects(
        (x + quiet + rx, top + quiet + ry, w, h)
        for rx, ry, w, h in marker_rects(spec.aruco_dictionary(), marker.id, marker.size_mm)
    )
    page.text(x + cut / 2.0, y + TITLE_MM - 1.5, f"^ top edge of marker {marker.id} ^", 8, centre=True)
    page.text(
        x,
        top + cut + 4.0,
        f"id {marker.id}: centre at x = {marker.x_mm:g} mm, y = {marker.y_mm:g} mm, "
        f"rotation {marker.rotation_deg:g} deg",
        7,
    )
    page.text(x, top + cut + 8.0, f"{spec.dictionary}, black square {marker.size_mm:g} mm; cut on the dashed line", 7)


def _marker_pages(spec: TableSpec, settings: CalibrationSettings) -> list[Page]:
    margin = settings.page_margin_mm
    block_w = max(m.size_mm + 2.0 * _quiet_mm(m, settings) for m in spec.markers)
    block_h = block_w + TITLE_MM + CAPTION_MM
    width, height = settings.page_width_mm, settings.page_height_mm
    usable_w = width - 2 * margin
    usable_h = height - 2 * margin - FOOTER_MM
    cols = int((usable_w + GAP_MM) // (block_w + GAP_MM))
    rows = int((usable_h + GAP_MM) // (block_h + GAP_MM))
    if cols < 1 or rows < 1:
        # The markers are larger than the paper: a page of their size keeps them at true size.
        width = max(block_w, SCALE_BAR_MM * 2.0) + 2 * margin
        height = block_h + 2 * margin + FOOTER_MM
        cols = rows = 1
    pages: list[Page] = []
    per_page = cols * rows
    for n, marker in enumerate(spec.markers):
        if n % per_page == 0:
            pages.append(Page(width, height))
            _footer(pages[-1], margin)
        slot = n % per_page
        x = margin + (slot % cols) * (block_w + GAP_MM)
        y = margin + (slot // cols) * (block_h + GAP_MM)
        _draw_marker(pages[-1], spec, marker, settings, x, y)
    return pages


def _placement_page(spec: TableSpec, settings: CalibrationSettings) -> Page:
    """The table seen from above, to scale, with every marker at its place and turn; top edges drawn thick."""
    long_side = max(settings.page_width_mm, settings.page_height_mm)
    short_side = min(settings.page_width_mm, settings.page_height_mm)
    landscape = spec.width_mm >= spec.depth_mm
    page = Page(long_side, short_side) if landscape else Page(short_side, long_side)
    margin = settings.page_margin_mm
    area_w = page.width_mm - 2 * margin
    area_h = page.height_mm - 2 * margin - PLACEMENT_HEADER_MM - FOOTER_MM
    scale = min(area_w / spec.width_mm, area_h / spec.depth_mm)
    ox = margin + (area_w - spec.width_mm * scale) / 2.0
    oy = margin + PLACEMENT_HEADER_MM

    def at(x_mm: float, y_mm: float) -> tuple[float, float]:
        return (ox + x_mm * scale, oy + y_mm * scale)

    page.text(
        margin, margin + 5.0, f"Marker placement: table {spec.width_mm:g} x {spec.depth_mm:g} mm, {spec.dictionary}", 11
    )
    page.text(
        margin,
        margin + 11.0,
        f"Seen from above, origin at the top-left corner, x to the right, y down; drawn at 1:{1 / scale:.1f}.",
        8,
    )
    page.text(margin, margin + 16.0, "Each marker's thick edge is its top edge (the edge marked ^ on its sheet).", 8)
    page.polygon([at(0, 0), at(spec.width_mm, 0), at(spec.width_mm, spec.depth_mm), at(0, spec.depth_mm)], stroke=0.0)
    arrow = min(spec.width_mm, spec.depth_mm) * 0.12
    page.line(*at(0, 0), *at(arrow, 0), line_mm=0.8)
    page.line(*at(0, 0), *at(0, arrow), line_mm=0.8)
    page.text(*at(arrow, 0), " x", 8)
    page.text(*at(0, arrow + 8.0 / scale), " y", 8)
    cx, cy = spec.width_mm / 2.0, spec.depth_mm / 2.0
    for marker in spec.markers:
        corners = [at(float(px), float(py)) for px, py in marker.corners_mm()]
        page.polygon(corners, fill=0.75, stroke=0.3, line_mm=0.2)
        page.line(*corners[0], *corners[1], line_mm=1.0)
        # Label towards the table's middle, so labels of edge markers stay on the sheet.
        dx, dy = cx - marker.x_mm, cy - marker.y_mm
        norm = math.hypot(dx, dy) or 1.0
        reach = marker.size_mm * 0.9 + 4.0 / scale
        lx, ly = at(marker.x_mm + dx / norm * reach, marker.y_mm + dy / norm * reach)
        page.text(
            lx, ly, f"{marker.id}: ({marker.x_mm:g}, {marker.y_mm:g}) {marker.rotation_deg:g} deg", 6, centre=True
        )
    _footer(page, margin)
    return page


def markers_pdf(spec: TableSpec, out_path: str | Path, *, settings: CalibrationSettings) -> int:
    """Write the spec's markers at true size (with cut lines, ids and places) and a placement sheet as a PDF.
    Returns the number of pages. Raises :class:`PrintError` when the file cannot be written."""
    pages = [*_marker_pages(spec, settings), _placement_page(spec, settings)]
    _write(pages, out_path)
    return len(pages)


def board_pdf(out_path: str | Path, *, settings: CalibrationSettings) -> int:
    """Write the ChArUco board of the settings at true size as a one-page PDF. Returns the number of pages."""
    width_mm, height_mm = board_size_mm(settings)
    margin = settings.page_margin_mm
    long_side = max(settings.page_width_mm, settings.page_height_mm)
    short_side = min(settings.page_width_mm, settings.page_height_mm)
    page_w, page_h = (long_side, short_side) if width_mm >= height_mm else (short_side, long_side)
    need_w = width_mm + 2 * margin
    need_h = height_mm + 2 * margin + FOOTER_MM + CAPTION_MM
    if need_w > page_w or need_h > page_h:
        page_w, page_h = max(need_w, SCALE_BAR_MM * 2.0 + 2 * margin), need_h
    page = Page(page_w, page_h)
    left = (page_w - width_mm) / 2.0
    top = margin
    page.rects((left + x, top + y, w, h) for x, y, w, h in board_rects(settings))
    page.polygon(
        [(left, top), (left + width_mm, top), (left + width_mm, top + height_mm), (left, top + height_mm)],
        stroke=0.0,
        line_mm=0.1,
    )
    page.text(
        margin,
        top + height_mm + 6.0,
        f"ChArUco board: {settings.board_squares_x} x {settings.board_squares_y} squares of "
        f"{settings.board_square_mm:g} mm, markers {settings.board_marker_mm:g} mm, {settings.board_dictionary}.",
        8,
    )
    page.text(margin, top + height_mm + 10.0, "Keep it flat (glue it to card) and photograph it from many angles.", 8)
    _footer(page, margin)
    _write([page], out_path)
    return 1


def _write(pages: list[Page], out_path: str | Path) -> None:
    try:
        write_pdf(pages, out_path)
    except OSError as exc:
        raise PrintError(f"{out_path}: cannot write the PDF ({exc.strerror or exc})") from None
