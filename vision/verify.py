"""Is it a base? A small learned verifier of the circles the detector read.

Hand rules about what a base looks like (a figure on it, a wall of some width, no printed ring) hold on the looks they
were chosen on and fail on others. The verifier instead looks at each circle as a whole: how its inside, its rim
and the mat just outside it differ in lightness and colour, ring by ring, and how sharp and complete its edge is,
all measured relative to the circle's own radius and its own surroundings, so that no colour or size is special.

The model is a one-hidden-layer network whose weights ship in ``vision/data/verifier.npz``; it is fitted on
widely randomised rendered tables (``python -m synth.train_verifier``) and runs in numpy alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from vision.detections import BaseDetections
from vision.errors import SettingsError
from vision.weights import weights_loader

FloatArray = NDArray[np.float64]

# Radii sampled, as fractions of the circle's radius: the inside (figure and top), the rim, the mat outside.
RING_FRACTIONS = (0.0, 0.15, 0.3, 0.45, 0.6, 0.72, 0.82, 0.9, 0.96, 1.02, 1.08, 1.16, 1.25, 1.35, 1.45)
# Rings from this index on are the mat around the circle: every lightness and colour is read against them.
_OUTSIDE_FROM = 12
# The rim: the rings just inside and just outside the circle whose difference is its edge.
_RIM_IN, _RIM_OUT = 7, 10
ANGLES = 36
# An edge across the rim of at least this many lightness levels (OpenCV's 8-bit L) counts on a ray.
_EDGE_LEVELS = 10.0
# A solid base stands up from the mat: its wall shows on the side away from the camera and it casts a shadow away
# from the light, so its rim and the mat just outside are lighter on one side than on the other, where a printed
# circle is the same all round. The first and second angular harmonics of the lightness on these rings tell it.
_SIDED_RINGS = (8, 9, 10, 11, 12, 13)
FEATURE_COUNT = 4 * len(RING_FRACTIONS) + 2 * len(_SIDED_RINGS) + 9


def _lab_samples(image_bgr: NDArray[np.uint8], center_px: FloatArray, radius_px: FloatArray) -> NDArray[np.float32]:
    """:func:`polar_samples` of the Lab image (OpenCV's 8-bit scale) of ``image_bgr`` (H, W, 3) or (H, W) uint8, each
    circle's read from its own patch, turned to Lab alone: a whole 4K frame takes tens of milliseconds to turn, and
    the circles cover a small part of it. The patch holds every pixel a bilinear sample reads, and where a ring
    leaves the image the patch's edge is the image's; the sample points move by whole pixels, exactly in float32: the
    samples are the very same."""
    image = np.asarray(image_bgr)
    if image.ndim == 2:
        image = np.asarray(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR), np.uint8)
    h, w = image.shape[:2]
    map_x, map_y = _sample_maps(center_px, radius_px)
    rings = len(RING_FRACTIONS)
    out = np.empty((len(center_px), rings, ANGLES, 3), np.float32)
    for k in range(len(center_px)):
        mx, my = map_x[k * rings : (k + 1) * rings], map_y[k * rings : (k + 1) * rings]
        x0 = min(max(int(np.floor(mx.min())), 0), w - 1)
        y0 = min(max(int(np.floor(my.min())), 0), h - 1)
        x1 = min(max(int(np.floor(mx.max())) + 2, x0 + 1), w)
        y1 = min(max(int(np.floor(my.max())) + 2, y0 + 1), h)
        patch = cv2.cvtColor(np.ascontiguousarray(image[y0:y1, x0:x1]), cv2.COLOR_BGR2LAB).astype(np.float32)
        out[k] = cv2.remap(
            patch, mx - np.float32(x0), my - np.float32(y0), cv2.INTER_LINEAR, None, cv2.BORDER_REPLICATE
        )
    return out


def _sample_maps(center_px: FloatArray, radius_px: FloatArray) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """(N * R, A) float32 x and y of the sample points of :func:`polar_samples`, R rings of each circle in turn."""
    n = len(center_px)
    angles = np.linspace(0.0, 2 * np.pi, ANGLES, endpoint=False)
    rings = np.asarray(RING_FRACTIONS)
    r = radius_px[:, None, None] * rings[None, :, None]
    x = center_px[:, 0, None, None] + r * np.cos(angles)[None, None, :]
    y = center_px[:, 1, None, None] + r * np.sin(angles)[None, None, :]
    return x.reshape(n * len(rings), ANGLES).astype(np.float32), y.reshape(n * len(rings), ANGLES).astype(np.float32)


def polar_samples(lab: NDArray[np.float32], center_px: FloatArray, radius_px: FloatArray) -> NDArray[np.float32]:
    """(N, R, A, 3) the Lab image (H, W, 3) sampled bilinearly on R rings (:data:`RING_FRACTIONS` of each radius)
    of A rays (:data:`ANGLES`) round each circle (``center_px`` (N, 2), ``radius_px`` (N,)); off the image: the
    nearest edge pixel."""
    map_x, map_y = _sample_maps(center_px, radius_px)
    sampled = cv2.remap(lab, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(sampled, np.float32).reshape(len(center_px), len(RING_FRACTIONS), ANGLES, 3)


def features(image_bgr: NDArray[np.uint8], detections: BaseDetections, px_per_mm: float) -> NDArray[np.float32]:
    """(N, :data:`FEATURE_COUNT`) what the verifier reads of each detected circle in ``image_bgr`` (H, W, 3) or
    (H, W) uint8, the image the detections were found in, at ``px_per_mm``.

    Per ring: the mean lightness and the two mean colour coordinates, each less the mat's around the circle, and
    the lightness's spread round the ring; how much lighter one side of the rim and the mat next to it is than the
    other (the first two angular harmonics on the rings about the rim); then the edge across the rim (its mean, and
    the share of rays where it is clear, of either sign and of the commoner sign), the circle's size (mm) and the
    image's scale, the edge fit's coverage, roundness (px) and score, and the mat's lightness."""
    n = len(detections)
    if n == 0:
        return np.zeros((0, FEATURE_COUNT), np.float32)
    samples = _lab_samples(image_bgr, detections.center_px, detections.radius_px)
    lightness, colour = samples[..., 0], samples[..., 1:]
    mat_l = np.median(lightness[:, _OUTSIDE_FROM:, :].reshape(n, -1), axis=1)
    mat_ab = np.median(colour[:, _OUTSIDE_FROM:, :, :].reshape(n, -1, 2), axis=1)
    ring_l = lightness.mean(axis=2) - mat_l[:, None]
    ring_ab = colour.mean(axis=2) - mat_ab[:, None, :]
    ring_spread = lightness.std(axis=2)
    edge = lightness[:, _RIM_IN, :] - lightness[:, _RIM_OUT, :]
    clear = np.abs(edge) >= _EDGE_LEVELS
    sign = np.sign(np.median(edge, axis=1))
    same_sign = (clear & (np.sign(edge) == sign[:, None])).mean(axis=1)
    harmonics = np.abs(np.fft.rfft(lightness[:, _SIDED_RINGS, :], axis=2))[..., 1:3] / ANGLES
    out = np.concatenate(
        [
            ring_l,
            ring_ab[..., 0],
            ring_ab[..., 1],
            ring_spread,
            harmonics[..., 0],
            harmonics[..., 1],
            np.stack(
                [
                    np.abs(edge).mean(axis=1),
                    clear.mean(axis=1),
                    same_sign,
                    detections.diameter_mm / 50.0,
                    np.full(n, px_per_mm),
                    detections.edge_coverage,
                    np.minimum(detections.fit_rms_px, 5.0),
                    detections.score,
                    mat_l / 100.0,
                ],
                axis=1,
            ),
        ],
        axis=1,
    )
    return np.asarray(out, np.float32)


@dataclass(frozen=True)
class Verifier:
    """A fitted verifier: feature standardisation (``mean`` (F,), ``scale`` (F,)), a hidden layer (``w1`` (F, H),
    ``b1`` (H,)) and the output (``w2`` (H,), ``b2`` ())."""

    mean: NDArray[np.float32]
    scale: NDArray[np.float32]
    w1: NDArray[np.float32]
    b1: NDArray[np.float32]
    w2: NDArray[np.float32]
    b2: float

    def probability(self, feats: NDArray[np.float32]) -> FloatArray:
        """(N,) how likely each circle (features (N, F)) is a base."""
        if len(feats) == 0:
            return np.zeros(0)
        z = (np.asarray(feats, np.float64) - self.mean) / self.scale
        hidden = np.tanh(z @ self.w1 + self.b1)
        logit = hidden @ self.w2 + self.b2
        return np.asarray(1.0 / (1.0 + np.exp(-np.clip(logit, -40.0, 40.0))), np.float64)

    def save(self, path: str | Path) -> None:
        np.savez_compressed(
            path, mean=self.mean, scale=self.scale, w1=self.w1, b1=self.b1, w2=self.w2, b2=np.float32(self.b2)
        )


def load_verifier(path: str | Path | None = None) -> Verifier:
    """The verifier in ``path`` (an .npz as :meth:`Verifier.save` writes), or the one that ships. Raises
    :class:`~vision.errors.SettingsError` when the file is no verifier of today's features."""
    return _load(path)


def _read(path: Path) -> Verifier:
    try:
        with np.load(path) as data:
            parts = {k: np.asarray(data[k], np.float32) for k in ("mean", "scale", "w1", "b1", "w2", "b2")}
    except (OSError, KeyError, ValueError) as exc:
        raise SettingsError(f"{path}: not a verifier file ({exc}); expected an .npz written by Verifier.save") from None
    if parts["mean"].shape != (FEATURE_COUNT,) or parts["w1"].shape[0] != FEATURE_COUNT:
        raise SettingsError(
            f"{path}: a verifier of {parts['mean'].shape[0]} features; this version reads {FEATURE_COUNT}"
        )
    return Verifier(parts["mean"], parts["scale"], parts["w1"], parts["b1"], parts["w2"], float(parts["b2"]))


_load = weights_loader("verifier.npz", _read)
