"""A minimal PDF writer: pages at true physical size with filled rectangles, polygons, lines and Helvetica text.

Drawing coordinates are millimetres from the page's top-left corner, y down (as on the printed sheet); the
writer converts to PDF points (1/72 inch) with y up. Content streams are compressed with zlib (FlateDecode).
Only ASCII text is written: the standard Helvetica font needs no embedding.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

MM_PER_INCH = 25.4
POINTS_PER_INCH = 72.0
PT_PER_MM = POINTS_PER_INCH / MM_PER_INCH

# Helvetica's average glyph width as a fraction of the font size (for a character it has no width for).
HELVETICA_MEAN_WIDTH = 0.55
# Helvetica's glyph widths (thousandths of the font size) of the printable ASCII characters, space to tilde, from
# its Adobe font metrics: text is measured, centred and kept clear of drawings with these.
_HELVETICA_WIDTHS = (
    [278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278]
    + [556] * 10
    + [278, 278, 584, 584, 584, 556, 1015]
    + [667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833]
    + [722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611]
    + [278, 278, 278, 469, 556, 333]
    + [556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833]
    + [556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500]
    + [334, 260, 334, 584]
)


def text_width_mm(text: str, size_pt: float) -> float:
    """The width of ``text`` set in Helvetica at ``size_pt``, in mm."""
    thousandths = sum(
        _HELVETICA_WIDTHS[ord(c) - 32] if 32 <= ord(c) < 127 else HELVETICA_MEAN_WIDTH * 1000 for c in text
    )
    return thousandths / 1000.0 * size_pt / PT_PER_MM


def _num(value: float) -> str:
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _pdf_string(text: str) -> str:
    ascii_text = text.encode("ascii", "replace").decode("ascii")
    return "(" + ascii_text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


@dataclass
class Page:
    """One page being drawn: ``width_mm`` x ``height_mm`` and its content operators."""

    width_mm: float
    height_mm: float
    ops: list[str] = field(default_factory=list)

    def _xy(self, x_mm: float, y_mm: float) -> str:
        return f"{_num(x_mm * PT_PER_MM)} {_num((self.height_mm - y_mm) * PT_PER_MM)}"

    def rects(self, rects_mm: Iterable[tuple[float, float, float, float]], gray: float = 0.0) -> None:
        """Fill rectangles (x, y, w, h) in mm, (x, y) the top-left corner, with a grey level (0 black, 1 white)."""
        body = [
            f"{self._xy(x, y + h)} {_num(w * PT_PER_MM)} {_num(h * PT_PER_MM)} re" for x, y, w, h in rects_mm if w and h
        ]
        if body:
            self.ops.append(f"{_num(gray)} g\n" + "\n".join(body) + "\nf")

    def polygon(
        self,
        points_mm: Sequence[tuple[float, float]],
        fill: float | None = None,
        stroke: float | None = None,
        line_mm: float = 0.3,
    ) -> None:
        """A closed polygon, filled and/or stroked with grey levels."""
        path = " ".join(f"{self._xy(x, y)} {'m' if n == 0 else 'l'}" for n, (x, y) in enumerate(points_mm)) + " h"
        if fill is not None and stroke is not None:
            self.ops.append(f"{_num(fill)} g {_num(stroke)} G {_num(line_mm * PT_PER_MM)} w {path} B")
        elif fill is not None:
            self.ops.append(f"{_num(fill)} g {path} f")
        elif stroke is not None:
            self.ops.append(f"{_num(stroke)} G {_num(line_mm * PT_PER_MM)} w {path} S")

    def line(
        self,
        x0_mm: float,
        y0_mm: float,
        x1_mm: float,
        y1_mm: float,
        line_mm: float = 0.3,
        gray: float = 0.0,
        dash_mm: float | None = None,
    ) -> None:
        """A straight line; ``dash_mm`` gives a dashed line of that dash length."""
        dash = f"[{_num(dash_mm * PT_PER_MM)}] 0 d" if dash_mm else "[] 0 d"
        path = f"{self._xy(x0_mm, y0_mm)} m {self._xy(x1_mm, y1_mm)} l S"
        self.ops.append(f"{_num(gray)} G {_num(line_mm * PT_PER_MM)} w {dash} {path}")

    def text(self, x_mm: float, y_mm: float, text: str, size_pt: float, centre: bool = False) -> None:
        """Helvetica text with its baseline starting at (x, y) mm, or centred on x."""
        if centre:
            x_mm -= text_width_mm(text, size_pt) / 2.0
        self.ops.append(f"0 g BT /F1 {_num(size_pt)} Tf {self._xy(x_mm, y_mm)} Td {_pdf_string(text)} Tj ET")


def pdf_bytes(pages: Sequence[Page]) -> bytes:
    """The PDF document of ``pages``."""
    objects: list[bytes] = []
    page_ids = [4 + 2 * n for n in range(len(pages))]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{i} 0 R" for i in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    for page, page_id in zip(pages, page_ids, strict=True):
        box = f"[0 0 {_num(page.width_mm * PT_PER_MM)} {_num(page.height_mm * PT_PER_MM)}]"
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox {box} /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {page_id + 1} 0 R >>".encode()
        )
        stream = zlib.compress("\n".join(page.ops).encode("ascii"))
        objects.append(f"<< /Length {len(stream)} /Filter /FlateDecode >>\nstream\n".encode() + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def write_pdf(pages: Sequence[Page], path: str | Path) -> None:
    """Write ``pages`` as a PDF file."""
    Path(path).write_bytes(pdf_bytes(pages))
