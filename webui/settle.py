"""Change detection of the live loop: it lives in the app package, shared with the review of recorded games."""

from tableref.pipeline.motion import SettleWatch, changed_fraction, reaching_in, thumbnail

__all__ = ["SettleWatch", "changed_fraction", "reaching_in", "thumbnail"]
