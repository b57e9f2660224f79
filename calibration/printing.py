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
from calibration.pdf import PT_PER_MM, Page, text_width_mm, write_pdf
from calibration.settings import CalibrationSettings
from calibration.spec import MarkerSpec, TableSpec

Rect = tuple[float, float, float, float]

# Text sizes (pt): 12 pt capitals are 3 mm tall printed, readable at arm's length beside the table; titles larger.
TEXT_PT = 12.0
TITLE_PT = 16.0
# Baseline to baseline of text lines (mm).
LINE_MM = TEXT_PT / PT_PER_MM * 1.25
# Page furniture in mm: the band for the scale bar at the foot of each page, the gap between markers on a page, and
# the room kept round each label of the placement sheet. Layout only, not measurements.
FOOTER_MM = 3.0 * LINE_MM + 4.0
GAP_MM = 6.0
LABEL_CLEAR_MM = 1.0
SCALE_BAR_MM = 100.0
SCALE_TICK_MM = 10.0


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


def wrap(text: str, width_mm: float, size_pt: float = TEXT_PT) -> list[str]:
    """``text`` broken at spaces into lines at most ``width_mm`` wide (a word wider than that has a line of its
    own)."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and text_width_mm(f"{lines[-1]} {word}", size_pt) <= width_mm:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines


def _lines(page: Page, x_mm: float, y_mm: float, lines: list[str], size_pt: float = TEXT_PT) -> float:
    """Text lines with the first baseline at ``y_mm``; returns the baseline after the last one."""
    for line in lines:
        page.text(x_mm, y_mm, line, size_pt)
        y_mm += size_pt / PT_PER_MM * 1.25
    return y_mm


def _scale_bar(page: Page, x_mm: float, y_mm: float, margin_mm: float) -> None:
    """A 100 mm bar of alternating 10 mm blocks, its top-left at (x, y), its ends named under it and what to do
    with it to its right."""
    height = 3.0
    ticks = int(SCALE_BAR_MM / SCALE_TICK_MM)
    page.rects([(x_mm + n * SCALE_TICK_MM, y_mm, SCALE_TICK_MM, height) for n in range(0, ticks, 2)])
    page.polygon(
        [(x_mm, y_mm), (x_mm + SCALE_BAR_MM, y_mm), (x_mm + SCALE_BAR_MM, y_mm + height), (x_mm, y_mm + height)],
        stroke=0.0,
        line_mm=0.2,
    )
    below = y_mm + height + LINE_MM
    page.text(x_mm, below, "0", TEXT_PT)
    page.text(x_mm + SCALE_BAR_MM - text_width_mm("100 mm", TEXT_PT), below, "100 mm", TEXT_PT)
    note = "Measure this bar: it must be 100 mm. Print at 100 % (no 'fit to page')."
    left = x_mm + SCALE_BAR_MM + 5.0
    _lines(page, left, y_mm + height, wrap(note, page.width_mm - margin_mm - left))


def _footer(page: Page, margin_mm: float) -> None:
    _scale_bar(page, margin_mm, page.height_mm - margin_mm - FOOTER_MM + 2.0, margin_mm)


def _quiet_mm(marker: MarkerSpec, settings: CalibrationSettings) -> float:
    return marker.size_mm * settings.marker_quiet_zone_fraction


def _marker_texts(spec: TableSpec, marker: MarkerSpec, width_mm: float) -> tuple[list[str], list[str]]:
    """The lines above a marker (its top edge) and under it (its place, its size, where to cut), each at most
    ``width_mm`` wide."""
    title = wrap(f"^ top edge of marker {marker.id} ^", width_mm)
    caption = [
        f"id {marker.id}: centre at x = {marker.x_mm:g} mm, y = {marker.y_mm:g} mm,",
        f"rotation {marker.rotation_deg:g} deg; {spec.dictionary}, black square {marker.size_mm:g} mm;",
        "cut on the dashed line",
    ]
    return title, [line for text in caption for line in wrap(text, width_mm)]


def _draw_marker(
    page: Page,
    spec: TableSpec,
    marker: MarkerSpec,
    settings: CalibrationSettings,
    at: tuple[float, float],
    block: tuple[float, float],
) -> None:
    """The marker's cut square, the lines above it in a band ``block`` = (width, title band) mm from ``at`` (the
    block's top-left), and the lines under it."""
    x, y = at
    width, title_mm = block
    quiet = _quiet_mm(marker, settings)
    cut = marker.size_mm + 2.0 * quiet
    title, caption = _marker_texts(spec, marker, width)
    top = y + title_mm
    corners = [(x, top), (x + cut, top), (x + cut, top + cut), (x, top + cut)]
    for (x0, y0), (x1, y1) in zip(corners, corners[1:] + corners[:1], strict=True):
        page.line(x0, y0, x1, y1, line_mm=0.2, gray=0.6, dash_mm=2.0)
    page.rects(
        (x + quiet + rx, top + quiet + ry, w, h)
        for rx, ry, w, h in marker_rects(spec.aruco_dictionary(), marker.id, marker.size_mm)
    )
    baseline = top - 2.0 - (len(title) - 1) * LINE_MM
    for line in title:
        page.text(x + cut / 2.0, baseline, line, TEXT_PT, centre=True)
        baseline += LINE_MM
    _lines(page, x, top + cut + LINE_MM, caption)


def _marker_pages(spec: TableSpec, settings: CalibrationSettings) -> list[Page]:
    margin = settings.page_margin_mm
    block_w = max(m.size_mm + 2.0 * _quiet_mm(m, settings) for m in spec.markers)
    texts = [_marker_texts(spec, m, block_w) for m in spec.markers]
    title_mm = max(len(t) for t, _ in texts) * LINE_MM + 2.0
    block_h = block_w + title_mm + max(len(c) for _, c in texts) * LINE_MM + 2.0
    width, height = settings.page_width_mm, settings.page_height_mm
    usable_w = width - 2 * margin
    usable_h = height - 2 * margin - FOOTER_MM
    cols = int((usable_w + GAP_MM) // (block_w + GAP_MM))
    rows = int((usable_h + GAP_MM) // (block_h + GAP_MM))
    if cols < 1 or rows < 1:
        # The markers are larger than the paper: a page of their size keeps them at true size.
        width = max(block_w, SCALE_BAR_MM * 2.5) + 2 * margin
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
        _draw_marker(pages[-1], spec, marker, settings, (x, y), (block_w, title_mm))
    return pages


Box = tuple[float, float, float, float]


def text_box(x_mm: float, y_mm: float, text: str, size_pt: float = TEXT_PT) -> Box:
    """(x0, y0, x1, y1) mm that Helvetica ``text`` with its baseline starting at (x, y) covers (ascent and
    descent of its letters)."""
    em = size_pt / PT_PER_MM
    return (x_mm, y_mm - 0.75 * em, x_mm + text_width_mm(text, size_pt), y_mm + 0.22 * em)


def _hits(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _inside(a: Box, bounds: Box) -> bool:
    return a[0] >= bounds[0] and a[1] >= bounds[1] and a[2] <= bounds[2] and a[3] <= bounds[3]


def _label_place(text: str, marker: Box, toward: tuple[float, float], taken: list[Box], bounds: Box) -> Box:
    """Where a marker's label goes: beside the marker's box, on the side towards ``toward`` first, as close as it
    fits with no other box of ``taken`` under it, inside ``bounds``; its text box."""
    w = text_width_mm(text, TEXT_PT)
    h = TEXT_PT / PT_PER_MM * 0.97
    cx, cy = (marker[0] + marker[2]) / 2.0, (marker[1] + marker[3]) / 2.0
    half_w, half_h = (marker[2] - marker[0]) / 2.0, (marker[3] - marker[1]) / 2.0
    sides = [(math.cos(a), math.sin(a)) for a in (k * math.pi / 4.0 for k in range(8))]
    sides.sort(key=lambda d: -(d[0] * toward[0] + d[1] * toward[1]))
    first: Box | None = None
    for step in np.arange(0.0, 60.0, 2.0):
        for dx, dy in sides:
            x = cx + dx * (half_w + w / 2.0 + LABEL_CLEAR_MM + step) - w / 2.0
            y = cy + dy * (half_h + h / 2.0 + LABEL_CLEAR_MM + step) + h / 2.0 - 0.22 * TEXT_PT / PT_PER_MM
            box = text_box(x, y, text)
            if not _inside(box, bounds):
                continue
            first = first or box
            room = (box[0] - LABEL_CLEAR_MM, box[1], box[2] + LABEL_CLEAR_MM, box[3])
            if not any(_hits(room, t) for t in taken):
                return box
    return first or text_box(cx - w / 2.0, cy, text)


def _placement_page(spec: TableSpec, settings: CalibrationSettings) -> Page:
    """The table seen from above, to scale, with every marker at its place and turn; top edges drawn thick. Each
    marker's label stands beside it, clear of every marker and of the other labels."""
    long_side = max(settings.page_width_mm, settings.page_height_mm)
    short_side = min(settings.page_width_mm, settings.page_height_mm)
    landscape = spec.width_mm >= spec.depth_mm
    page = Page(long_side, short_side) if landscape else Page(short_side, long_side)
    margin = settings.page_margin_mm
    width = page.width_mm - 2 * margin
    title = f"Marker placement: table {spec.width_mm:g} x {spec.depth_mm:g} mm, {spec.dictionary}"
    y = _lines(page, margin, margin + TITLE_PT / PT_PER_MM, wrap(title, width, TITLE_PT), TITLE_PT)
    about = (
        "Seen from above, origin at the top-left corner, x to the right, y down. Each marker's thick edge is its "
        "top edge (the edge marked ^ on its sheet)."
    )
    y = _lines(page, margin, y, wrap(about, width))
    header_mm = y - LINE_MM + 2.0
    axis_mm = LINE_MM + 2.0
    bounds = (margin, header_mm, page.width_mm - margin, page.height_mm - margin - FOOTER_MM)
    area = (margin + axis_mm, header_mm + axis_mm, bounds[2], bounds[3] - LINE_MM - 2.0)
    scale = min((area[2] - area[0]) / spec.width_mm, (area[3] - area[1]) / spec.depth_mm)
    ox = area[0] + (area[2] - area[0] - spec.width_mm * scale) / 2.0
    oy = area[1]

    def at(x_mm: float, y_mm: float) -> tuple[float, float]:
        return (ox + x_mm * scale, oy + y_mm * scale)

    page.text(margin, bounds[3] - 1.0, f"Drawn at 1:{1 / scale:.1f}.", TEXT_PT)
    page.polygon([at(0, 0), at(spec.width_mm, 0), at(spec.width_mm, spec.depth_mm), at(0, spec.depth_mm)], stroke=0.0)
    # The axes outside the table's edges, so that no marker in a corner hides them.
    arrow = min(spec.width_mm, spec.depth_mm) * 0.12 * scale
    page.line(ox, oy - 1.5, ox + arrow, oy - 1.5, line_mm=0.8)
    page.line(ox - 1.5, oy, ox - 1.5, oy + arrow, line_mm=0.8)
    x_label = text_box(ox + arrow + 1.0, oy - 0.5, "x")
    y_label = text_box(ox - 1.5 - text_width_mm("y", TEXT_PT) / 2.0, oy + arrow + LINE_MM, "y")
    page.text(x_label[0], oy - 0.5, "x", TEXT_PT)
    page.text(y_label[0], oy + arrow + LINE_MM, "y", TEXT_PT)
    # the table's edges: no label is written across one
    x1, y1 = at(spec.width_mm, spec.depth_mm)
    edge = 0.3
    taken = [x_label, y_label]
    taken += [(ox - edge, oy - edge, x1 + edge, oy + edge), (ox - edge, y1 - edge, x1 + edge, y1 + edge)]
    taken += [(ox - edge, oy - edge, ox + edge, y1 + edge), (x1 - edge, oy - edge, x1 + edge, y1 + edge)]
    boxes = []
    for marker in spec.markers:
        corners = [at(float(px), float(py)) for px, py in marker.corners_mm()]
        page.polygon(corners, fill=0.75, stroke=0.3, line_mm=0.2)
        page.line(*corners[0], *corners[1], line_mm=1.0)
        xs, ys = [c[0] for c in corners], [c[1] for c in corners]
        c = LABEL_CLEAR_MM
        boxes.append((min(xs) - c, min(ys) - c, max(xs) + c, max(ys) + c))
    taken += boxes
    cx, cy = spec.width_mm / 2.0, spec.depth_mm / 2.0
    for marker, box in zip(spec.markers, boxes, strict=True):
        # Beside the marker, towards the table's middle where there is room.
        dx, dy = cx - marker.x_mm, cy - marker.y_mm
        norm = math.hypot(dx, dy) or 1.0
        text = f"{marker.id}: ({marker.x_mm:g}, {marker.y_mm:g}) {marker.rotation_deg:g} deg"
        label = _label_place(text, box, (dx / norm, dy / norm), taken, bounds)
        taken.append(label)
        page.text(label[0], label[3] - 0.22 * TEXT_PT / PT_PER_MM, text, TEXT_PT)
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
    caption = [
        f"ChArUco board: {settings.board_squares_x} x {settings.board_squares_y} squares of "
        f"{settings.board_square_mm:g} mm, markers {settings.board_marker_mm:g} mm, {settings.board_dictionary}.",
        "Keep it flat (glue it to card) and photograph it from many angles.",
    ]
    need_w = width_mm + 2 * margin
    lines = [line for text in caption for line in wrap(text, max(page_w, need_w) - 2 * margin)]
    need_h = height_mm + 2 * margin + FOOTER_MM + len(lines) * LINE_MM + 4.0
    if need_w > page_w or need_h > page_h:
        page_w, page_h = max(need_w, SCALE_BAR_MM * 2.5 + 2 * margin), need_h
    page = Page(page_w, page_h)
    left = (page_w - width_mm) / 2.0
    top = margin
    page.rects((left + x, top + y, w, h) for x, y, w, h in board_rects(settings))
    page.polygon(
        [(left, top), (left + width_mm, top), (left + width_mm, top + height_mm), (left, top + height_mm)],
        stroke=0.0,
        line_mm=0.1,
    )
    _lines(page, margin, top + height_mm + LINE_MM + 1.0, lines)
    _footer(page, margin)
    _write([page], out_path)
    return 1


def _write(pages: list[Page], out_path: str | Path) -> None:
    try:
        write_pdf(pages, out_path)
    except OSError as exc:
        raise PrintError(f"{out_path}: cannot write the PDF ({exc.strerror or exc})") from None
