"""Settings of the dashboard ([webui] in ``tableref/defaults.toml``, the one place their defaults live).

The dashboard sits above the app package (nothing imports ``webui``), so its settings are not a field of
``tableref.config.Config``: they are read on their own with :func:`tableref.config.load_section`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tableref.config import load_section

SECTION = "webui"


@dataclass(frozen=True)
class WebuiSettings:
    """Tunables of the live loop, the uploads and the screens (see defaults.toml for what each one does)."""

    # Frame loop: frames handled per second at most, and the JPEG sent to viewers.
    max_process_fps: float
    display_max_side_px: int
    jpeg_quality: int
    # Change detection on small grey copies of the frames.
    motion_thumb_px: int
    motion_pixel_delta: int
    motion_fraction: float
    motion_min_region_px: int
    settle_s: float
    # After a frame measured in part (only what changed), the next settled frame is measured whole.
    whole_after_part: bool
    # A settled frame is not measured while something reaches in over the picture's edge: a region changed by
    # more than covered_pixel_delta since the frame measured last, touching the border, covering at least
    # covered_fraction of the picture.
    covered_pixel_delta: int
    covered_fraction: float
    # Reconnecting a live camera that dropped: first wait and longest wait (s).
    reconnect_initial_s: float
    reconnect_max_s: float
    # Recorded sources streamed as a camera would: frames per second, time each image of a folder is held (s).
    replay_fps: float
    folder_period_s: float
    # The bundled sample game.
    sample_hold_s: float
    sample_move_s: float
    # Uploads.
    max_upload_bytes: int
    max_image_pixels: int
    # Viewers.
    sse_keepalive_s: float
    max_viewers: int
    poll_interval_s: float
    # Units screen: suggested groupings.
    group_gap_mm: float
    # A table state served without a camera, drawn top-down.
    state_px_per_mm: float


def load_webui_settings(path: str | Path | None = None) -> WebuiSettings:
    """The [webui] defaults, overridden by the [webui] section of the settings file at ``path`` if given.
    Raises ``tableref.config.ConfigError`` naming a bad key."""
    return load_section(WebuiSettings, SECTION, path)
