"""Where the bases stand, as a small learned net sees the table.

The hand-made seed searches (:mod:`vision.seeds`) vote for circles from edges, and a base whose rim shows little edge
(black on a black mat, one in the middle of a melee, flock over the rim) gathers too few votes. The finder instead
looks at the whole top-down view, resampled to :data:`FINDER_PX_PER_MM`, and gives per cell of :data:`STRIDE` pixels
the probability that a base's centre lies there, with the centre's offset within the cell and the base's diameter.
It is a fully convolutional net of eight 3x3 layers (about 200 KB), fitted on widely randomised rendered tables
(``python -m synth.train_finder``, which needs PyTorch; the product runs the exported ONNX file with ONNX Runtime
alone, which on a 4K frame's view reads the maps OpenCV's dnn module reads, to 2e-6, in about half its CPU time).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import onnxruntime
from numpy.typing import NDArray

from vision.errors import SettingsError
from vision.weights import weights_loader

FloatArray = NDArray[np.float64]

# The scale the net was fitted at (px per mm of the view it is shown) and its output cell (px at that scale).
FINDER_PX_PER_MM = 1.0
STRIDE = 4
# The diameter channel is the log of the diameter over this many mm.
DIAMETER_UNIT_MM = 32.0


@dataclass(frozen=True, eq=False)
class FinderMaps:
    """The finder's reading of one view: ``probability`` (h, w) float32 per cell of ``STRIDE`` px at
    ``FINDER_PX_PER_MM``, ``offset`` (2, h, w) the centre's place in its cell (x, y in cells), ``log_diameter``
    (h, w), and ``view_px_per_mm``, the scale of the view the maps were read from."""

    probability: NDArray[np.float32]
    offset: NDArray[np.float32]
    log_diameter: NDArray[np.float32]
    view_px_per_mm: float

    def peaks(self, min_probability: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        """The cells that are the most probable of their 3x3 neighbourhood and reach ``min_probability``: their
        centres (K, 2) in the view's pixels, diameters (K,) in mm and probabilities (K,), most probable first."""
        prob = self.probability
        top = cv2.dilate(prob, np.ones((3, 3), np.uint8))
        iy, ix = np.nonzero((prob >= top) & (prob >= min_probability))
        order = np.argsort(-prob[iy, ix], kind="stable")
        iy, ix = iy[order], ix[order]
        cells = np.stack([ix + self.offset[0, iy, ix], iy + self.offset[1, iy, ix]], axis=1).astype(np.float64)
        centre_px = self._to_view((cells + 0.5) * STRIDE - 0.5)
        diameter_mm = DIAMETER_UNIT_MM * np.exp(self.log_diameter[iy, ix].astype(np.float64))
        return centre_px, diameter_mm, prob[iy, ix].astype(np.float64)

    def probability_near(self, center_px: FloatArray, reach_mm: float) -> FloatArray:
        """(N,) the highest probability of a cell whose centre lies within ``reach_mm`` of each of ``center_px``
        (N, 2), view pixels (0 where no cell lies that near)."""
        iy, ix = self._best_cells(center_px, reach_mm)
        found = iy >= 0
        out = np.zeros(len(iy))
        out[found] = self.probability[iy[found], ix[found]]
        return out

    def diameter_near(self, center_px: FloatArray, reach_mm: float) -> FloatArray:
        """(N,) the diameter (mm) the most probable cell within ``reach_mm`` of each of ``center_px`` (N, 2), view
        pixels, gives (NaN where no cell lies that near)."""
        iy, ix = self._best_cells(center_px, reach_mm)
        found = iy >= 0
        out = np.full(len(iy), np.nan)
        out[found] = DIAMETER_UNIT_MM * np.exp(self.log_diameter[iy[found], ix[found]].astype(np.float64))
        return out

    def _best_cells(self, center_px: FloatArray, reach_mm: float) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """Row and column (N,) of the most probable cell within ``reach_mm`` of each of ``center_px`` (N, 2); -1
        where none lies that near."""
        centre = (np.asarray(center_px, np.float64).reshape(-1, 2) + 0.5) / self.view_px_per_mm
        cells = (centre * FINDER_PX_PER_MM + 0.5) / STRIDE - 0.5
        reach = reach_mm * FINDER_PX_PER_MM / STRIDE
        h, w = self.probability.shape
        rows, cols = np.full(len(cells), -1, np.intp), np.full(len(cells), -1, np.intp)
        span = int(np.ceil(reach))
        for k, (cx, cy) in enumerate(cells):
            x0, x1 = max(int(np.floor(cx)) - span, 0), min(int(np.ceil(cx)) + span, w - 1)
            y0, y1 = max(int(np.floor(cy)) - span, 0), min(int(np.ceil(cy)) + span, h - 1)
            if x0 > x1 or y0 > y1:
                continue
            ys, xs = np.mgrid[y0 : y1 + 1, x0 : x1 + 1]
            near = (xs - cx) ** 2 + (ys - cy) ** 2 <= reach * reach
            if np.any(near):
                best = int(np.argmax(np.where(near, self.probability[y0 : y1 + 1, x0 : x1 + 1], -1.0)))
                rows[k], cols[k] = ys.flat[best], xs.flat[best]
        return rows, cols

    def _to_view(self, finder_px: FloatArray) -> FloatArray:
        return (finder_px + 0.5) / FINDER_PX_PER_MM * self.view_px_per_mm - 0.5


class Finder:
    """The net, ready to read views (one at a time: a session's run is not meant to be entered twice at once)."""

    def __init__(self, session: onnxruntime.InferenceSession) -> None:
        self._session = session
        self._input = session.get_inputs()[0].name
        self._lock = threading.Lock()

    def read(self, topdown_bgr: NDArray[np.uint8], px_per_mm: float) -> FinderMaps:
        """The maps of ``topdown_bgr`` (H, W, 3) uint8 (or (H, W) grey), a top-down view at ``px_per_mm``."""
        view = np.asarray(topdown_bgr)
        if view.ndim == 2:
            view = np.asarray(cv2.cvtColor(view, cv2.COLOR_GRAY2BGR), np.uint8)
        factor = FINDER_PX_PER_MM / px_per_mm
        h, w = view.shape[:2]
        size = (max(STRIDE, round(w * factor)), max(STRIDE, round(h * factor)))
        shrink = factor < 1
        small = cv2.resize(view, size, interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
        blob = (small.astype(np.float32) / 255.0 - 0.5).transpose(2, 0, 1)[None]
        with self._lock:
            maps = np.asarray(self._session.run(None, {self._input: np.ascontiguousarray(blob)})[0])[0]
        probability = 1.0 / (1.0 + np.exp(-maps[0]))
        return FinderMaps(probability.astype(np.float32), maps[1:3].copy(), maps[3].copy(), float(px_per_mm))


def load_finder(path: str | Path | None = None) -> Finder:
    """The finder in ``path`` (an ONNX file as ``python -m synth.train_finder`` exports), or the one that ships.
    Raises :class:`~vision.errors.SettingsError` when the file cannot be read as such a net."""
    return _load(path)


def _read(path: Path) -> Finder:
    if not path.is_file():
        raise SettingsError(f"{path}: no such file; expected the base finder's ONNX file")
    options = onnxruntime.SessionOptions()
    # one thread: the net reads the view beside the detector's looks, which keep the other cores busy (more threads
    # only spin while they wait)
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's own error types are not part of its public interface
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else "unreadable"
        raise SettingsError(f"{path}: not a base finder ({first}); expected an ONNX file of the finder net") from None
    inputs, outputs = session.get_inputs(), session.get_outputs()
    if len(inputs) != 1 or len(inputs[0].shape) != 4 or len(outputs) != 1:
        raise SettingsError(
            f"{path}: not a base finder (inputs {[i.shape for i in inputs]}, {len(outputs)} outputs); expected one "
            "input of shape (1, 3, h, w) and one output of the four maps"
        )
    return Finder(session)


_load = weights_loader("finder.onnx", _read)
