"""Named errors of the calibration stage: each says what was wrong and what was expected."""


class CalibrationError(ValueError):
    """Base of every error the calibration stage raises on bad input."""


class SpecError(CalibrationError):
    """A table spec that cannot be used."""


class SettingsError(CalibrationError):
    """Calibration settings out of their valid range."""


class CameraFileError(CalibrationError):
    """A camera.json that cannot be read or does not describe a camera."""


class CameraMismatchError(CalibrationError):
    """A camera model that does not fit the frame (another aspect ratio)."""


class ImageError(CalibrationError):
    """A frame that cannot be used: missing, empty, too small, or of an unsupported pixel type."""


class TooFewMarkersError(CalibrationError):
    """Fewer usable table markers than a calibration needs."""


class MarkerSpanError(CalibrationError):
    """Markers found, but they do not span the table (all along one edge, say)."""


class HeightUnavailableError(CalibrationError):
    """A height above the table was asked for, but without a camera model heights cannot be corrected."""


class LensCalibrationError(CalibrationError):
    """Too few usable ChArUco views, or views of different sizes, to calibrate a lens."""


class PrintError(CalibrationError):
    """A printout that cannot be laid out (a marker larger than the page, say) or written."""


class ReportError(CalibrationError):
    """A calibration report read back (from a state file, a review database) that is not one."""
