"""Errors of the app layer."""


class UsageError(ValueError):
    """Bad command-line input that is not a rules, calibration, vision or source error."""


class StoreError(UsageError):
    """A review database that cannot be used: not one, of a newer version, damaged, or on a full disk. The message
    names the file and says what to do."""


class JpegError(ValueError):
    """A frame that cannot be encoded as JPEG (an empty image, or one OpenCV does not encode)."""
