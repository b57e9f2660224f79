"""Settings of the dashboard ([webui] in ``tableref/defaults.toml``, the one place their defaults live).

The dashboard sits above the app package (nothing imports ``webui``), so its settings are not a field of
``tableref.settings.Settings``: they are read on their own with :func:`tableref.config.load_section`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tableref.config import load_section
from tableref.settings import at_least, positive

SECTION = "webui"


@dataclass(frozen=True)
class WebuiSettings:
    """Tunables of the live loop, the uploads and the screens (see defaults.toml for what each one does)."""

    # Frame loop: frames handled per second at most, and the JPEG sent to viewers.
    max_process_fps: float = field(metadata=positive())
    display_max_side_px: int = field(metadata=at_least(1))
    jpeg_quality: int = field(metadata=at_least(1, 100))
    # Change detection on small grey copies of the frames.
    motion_thumb_px: int = field(metadata=at_least(1))
    motion_pixel_delta: int = field(metadata=at_least(0, 255))
    motion_fraction: float = field(metadata=at_least(0, 1))
    motion_min_region_px: int = field(metadata=at_least(0))
    settle_s: float = field(metadata=at_least(0))
    # After a frame measured in part (only what changed), the next settled frame is measured whole.
    whole_after_part: bool
    # A settled frame is not measured while something reaches in over the picture's edge: a region changed by
    # more than covered_pixel_delta since the frame measured last, touching the border, covering at least
    # covered_fraction of the picture.
    covered_pixel_delta: int = field(metadata=at_least(0, 255))
    covered_fraction: float = field(metadata=at_least(0, 1))
    # Reconnecting a live camera that dropped: first wait and longest wait (s).
    reconnect_initial_s: float = field(metadata=positive())
    reconnect_max_s: float = field(metadata=positive())
    # Recorded sources streamed as a camera would: frames per second, time each image of a folder is held (s).
    replay_fps: float = field(metadata=positive())
    folder_period_s: float = field(metadata=at_least(0))
    # The bundled sample game.
    sample_hold_s: float = field(metadata=at_least(0))
    sample_move_s: float = field(metadata=at_least(0))
    # Uploads.
    max_upload_bytes: int = field(metadata=at_least(1))
    max_image_pixels: int = field(metadata=at_least(1))
    # Viewers.
    sse_keepalive_s: float = field(metadata=positive())
    max_viewers: int = field(metadata=at_least(1))
    max_viewers_per_client: int = field(metadata=at_least(1))
    poll_interval_s: float = field(metadata=positive())
    # Units screen: suggested groupings.
    group_gap_mm: float = field(metadata=at_least(0))
    # Setup warns that the table on screen is not the roster's when fewer than this share of its models match.
    roster_mismatch_share: float = field(metadata=at_least(0, 1))
    # A table state served without a camera, drawn top-down.
    state_px_per_mm: float = field(metadata=positive())


def load_webui_settings(path: str | Path | None = None) -> WebuiSettings:
    """The [webui] defaults, overridden by the [webui] section of the settings file at ``path`` if given.
    Raises ``tableref.config.ConfigError`` naming a bad key."""
    return load_section(WebuiSettings, SECTION, path)
