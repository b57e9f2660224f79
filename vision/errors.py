"""Named errors of the vision stage: each says what was wrong and what was expected."""


class VisionError(ValueError):
    """Base of every error the vision stage raises on bad input."""


class ImageError(VisionError):
    """An image that cannot be searched: wrong type, shape or size."""


class ScaleError(VisionError):
    """A pixel scale that is not a positive number, or at which bases are too small to measure."""


class MaskError(VisionError):
    """An ignore-mask that does not match its image."""


class SettingsError(VisionError):
    """Vision settings that contradict themselves or are out of range."""
