"""Errors of the app layer."""


class UsageError(ValueError):
    """Bad command-line input that is not a rules, calibration, vision or source error."""
