"""Named errors of the calibration stage: each says what was wrong and what was expected."""


class CalibrationError(ValueError):
    """Base of every error the calibration stage raises on bad input."""


class SpecError(CalibrationError):
    """A table spec that cannot be used."""
