"""Base detection on rectified top-down images of the table. Knows nothing of Flask or the command line.

The verb is :func:`detect_bases`: an image at a known pixel scale in, a :class:`BaseDetections` out. Where what
the bases are is known (a roster declares their sizes and rim heights), :func:`fit_known_bases` fits them again; it
also fits the others again at the sizes they were read at.
"""

from vision.detect import detect_bases, fit_known_bases, snap_diameters
from vision.detections import BaseDetections
from vision.errors import ImageError, MaskError, ScaleError, SettingsError, VisionError
from vision.expected import ExpectedBases
from vision.settings import VisionSettings

__all__ = [
    "BaseDetections",
    "ExpectedBases",
    "ImageError",
    "MaskError",
    "ScaleError",
    "SettingsError",
    "VisionError",
    "VisionSettings",
    "detect_bases",
    "fit_known_bases",
    "snap_diameters",
]
