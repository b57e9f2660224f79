"""Settings of the app layer, and :class:`Settings`, every stage's (values in ``tableref/defaults.toml``, read by
:mod:`tableref.config`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from calibration.settings import CalibrationSettings
from vision.settings import VisionSettings


def at_least(low: float, high: float | None = None) -> dict[str, Any]:
    """Field metadata: the setting lies in [low, high] (no upper end when ``high`` is None). Checked by
    ``tableref.config`` when the settings are loaded, so that a bad value is named there, not met deep in a stage."""
    return {"low": low, "high": high, "above": False}


def positive() -> dict[str, Any]:
    """Field metadata: the setting is more than 0 (a rate, a period or a scale that is divided by)."""
    return {"low": 0, "high": None, "above": True}


@dataclass(frozen=True)
class PipelineSettings:
    """Settings of the wiring between stages ([pipeline] in defaults.toml)."""

    # The top-down view is made at the frame's own scale, clamped to this range (px per mm): finer adds no
    # detail, coarser loses it.
    min_rectified_px_per_mm: float = field(metadata=positive())
    max_rectified_px_per_mm: float = field(metadata=positive())
    # A frame that sees the table coarser than this (px per mm) says so in its notes: there bases are missed, and
    # other round things taken for bases, far more often.
    coarse_px_per_mm: float = field(metadata=at_least(0))
    # Markers are masked out of the top-down view with this margin around their black square (mm).
    marker_mask_margin_mm: float = field(metadata=at_least(0))
    # What stands over a marker is let through its mask: pixels of its zone unlike its print there (dark where it
    # is white, light where it is black), further than marker_print_share of its black-to-white span from both, or
    # coloured unlike its paper and its ink by more than marker_print_chroma (Lab levels), in patches wider than
    # marker_uncover_mm that reach over the print itself (0: the whole zone stays masked); not where the zone's black
    # and white differ by fewer than marker_min_contrast levels.
    marker_uncover_mm: float = field(metadata=at_least(0))
    marker_print_share: float = field(metadata=at_least(0, 0.5))
    marker_print_chroma: float = field(metadata=at_least(0))
    marker_min_contrast: float = field(metadata=at_least(0))
    # The top-down view of a frame at least deblock_min_blockiness blocky (its compression's 8 px blocks; 0: never)
    # is smoothed by a Gaussian of deblock_blur_px (px of that view) before the bases are looked for.
    deblock_min_blockiness: float = field(metadata=at_least(0))
    deblock_blur_px: float = field(metadata=at_least(0))
    # Base rims stand this high above the table (mm), give or take rim_height_sigma_mm (bases are 3-5 mm).
    rim_height_mm: float = field(metadata=positive())
    rim_height_sigma_mm: float = field(metadata=at_least(0))
    # Without a camera model the lens is uncorrected: this is added (in quadrature) to every position's sigma.
    uncorrected_lens_sigma_mm: float = field(metadata=at_least(0))
    # A detection takes the identity of a roster model whose centre is within this distance (mm).
    roster_gate_mm: float = field(metadata=at_least(0))
    # ... and the roster model's round base when its diameter is within this distance (mm) of the size measured.
    roster_size_tolerance_mm: float = field(metadata=at_least(0))
    # Where the roster lists every model, one not found may stand up to expected_reach_moves times its unit's Move
    # plus expected_reach_margin_mm from where it was last seen (the margin alone where its unit's Move is not known).
    expected_reach_moves: float = field(metadata=at_least(0))
    expected_reach_margin_mm: float = field(metadata=at_least(0))
    # Given the frame measured before, only what changed is measured again: frames are compared as blurred copies
    # at most change_thumb_px wide; a pixel changed by more than change_noise_sigmas times the difference's
    # noise and at least change_min_delta levels counts, in regions of at least change_min_pixels (where the grey
    # copies show it; where only a colour channel does, by change_colour_min_delta levels in regions of
    # change_colour_min_pixels); each changed region, cut along a grid of change_cell_mm on the table (0: not
    # cut), is grown by change_margin_mm. More than max_changed_share of the view to measure again: the whole frame is.
    change_thumb_px: int = field(metadata=at_least(1))
    change_min_delta: int = field(metadata=at_least(0, 255))
    change_noise_sigmas: float = field(metadata=at_least(0))
    change_min_pixels: int = field(metadata=at_least(0))
    change_colour_min_pixels: int = field(metadata=at_least(0))
    change_colour_min_delta: int = field(metadata=at_least(0, 255))
    change_margin_mm: float = field(metadata=at_least(0))
    change_cell_mm: float = field(metadata=at_least(0))
    max_changed_share: float = field(metadata=at_least(0, 1))
    # A base kept from the frame before may have moved by a little less than a change that shows: its sigma widens
    # by this (px of the top-down view, per axis).
    kept_sigma_px: float = field(metadata=at_least(0))


@dataclass(frozen=True)
class EvaluateSettings:
    """Settings of scoring against ground truth ([evaluate] in defaults.toml)."""

    # A detection counts as a truth model when their centres are within this distance (mm); farther is a miss
    # and a false detection.
    match_gate_mm: float = field(metadata=at_least(0))
    # Recall is taken over the bases with at least this fraction of their rim visible.
    min_visibility: float = field(metadata=at_least(0, 1))


@dataclass(frozen=True)
class ReviewSettings:
    """Settings of the review of a recorded game ([review] in defaults.toml)."""

    # Change detection runs on one frame every sample_interval_s of video; the others are only decoded.
    sample_interval_s: float = field(metadata=positive())
    # The recording is read in a thread of its own, at most this many still frames ahead of their measurement.
    still_frames_ahead: int = field(metadata=at_least(1))
    # Frames are compared as copies in colour this wide: a pixel changed by more than motion_pixel_delta levels (in
    # the channel that changed most) counts, and more than motion_fraction of the pixels changed is movement, as is a
    # region of at least motion_min_region_px such pixels side by side (0: only the share counts).
    motion_thumb_px: int = field(metadata=at_least(1))
    motion_pixel_delta: int = field(metadata=at_least(0, 255))
    # Photos of a folder are compared so, with this delta instead: nothing flickers between them, and each was taken
    # for something (a dark unit moved on a dark mat changes a 1080p photo's copy by under 10 grey levels).
    photo_pixel_delta: int = field(metadata=at_least(0, 255))
    motion_fraction: float = field(metadata=at_least(0, 1))
    motion_min_region_px: int = field(metadata=at_least(0))
    # A still frame is covered (not settled) when a region changed (by more than covered_pixel_delta levels)
    # since the last measured state touches the frame's border and covers at least covered_fraction of it: an arm
    # reaching in.
    covered_pixel_delta: int = field(metadata=at_least(0, 255))
    covered_fraction: float = field(metadata=at_least(0, 1))
    # ... unless at least covered_base_share of that region lies on the bases of the state before and of the frame
    # (each grown by covered_base_grow of its size): models moved at the picture's edge.
    covered_base_share: float = field(metadata=at_least(0, 1))
    covered_base_grow: float = field(metadata=at_least(0, 10))
    # A region as large changed inside the picture, not on the bases, may be something held over the table too (an
    # arm the picture does not show up to its edge): the spell is a state only if at least covered_stayed_share of
    # that region's part off the bases is still changed at the next settled spell (the table's own change).
    covered_stayed_share: float = field(metadata=at_least(0, 1))
    # ... or, held back when the recording ends, where nothing moved from its start to the end, covered_last_s or
    # more.
    covered_last_s: float = field(metadata=at_least(0))
    # The table is settled when nothing moved for this long (s); a folder of still photos counts each photo as
    # settled.
    settle_s: float = field(metadata=at_least(0))
    # Still photos of a folder are this far apart in time (s).
    photo_period_s: float = field(metadata=positive())
    # A model of one settled state is the same model in the next when its centre moved at most this far (mm)
    # and its base size changed by at most size_tolerance_mm.
    track_gate_mm: float = field(metadata=at_least(0))
    # The first settled state takes the roster's identities only within this distance (mm) of the roster's places,
    # as `tableref analyze` does: a roster model not there is unseen, not a base across the table.
    roster_gate_mm: float = field(metadata=at_least(0))
    size_tolerance_mm: float = field(metadata=at_least(0))
    # A base read up to size_confusion_mm more off may be the same model read a size off; such a pairing costs as
    # much as a displacement of size_miss_cost_mm.
    size_confusion_mm: float = field(metadata=at_least(0))
    size_miss_cost_mm: float = field(metadata=at_least(0))
    # A model of a unit whose Move is known is paired only within its reach (Move, Advance and Charge) plus
    # reach_margin_mm; one whose place did not change (less than changed_share of it) only within still_reach_mm.
    reach_margin_mm: float = field(metadata=at_least(0))
    changed_share: float = field(metadata=at_least(0, 1))
    still_reach_mm: float = field(metadata=at_least(0))
    # A model unseen since an earlier state is taken off only where more than this share of its place changed and no
    # base stands there now (1: never judged again).
    unseen_gone_share: float = field(metadata=at_least(0, 1))
    # A model not found is taken off only where the detector's finder gives a base at its place less than this
    # probability in the state's picture (a place seen empty); 1: never asked.
    gone_max_probability: float = field(metadata=at_least(0, 1))
    # ... a base it reads within this share of the model's diameter: farther off, it is another base there.
    gone_size_share: float = field(metadata=at_least(0))
    # A model whose place did not change, read again farther off than its picture's change allows and than
    # still_misread_sigmas of the two readings' combined sigma, was misread: it keeps its place.
    still_misread_sigmas: float = field(metadata=at_least(0))
    # A unit's models moved alike land within group_fit_mm of where the unit's displacement takes them; once it is
    # known, each of them is paired only within group_reach_mm of that place.
    group_fit_mm: float = field(metadata=positive())
    group_reach_mm: float = field(metadata=positive())
    # A unit's move may turn it by up to this much (degrees) about its centre as well; 0: displacements only.
    group_turn_max_deg: float = field(metadata=at_least(0, 180))
    # Models whose pictures did not change move with their unit only under a move that lands at least this share of
    # the unit's models on bases (a unit moved along itself); 0: never more than still_reach_mm.
    group_still_share: float = field(metadata=at_least(0, 1))
    # A turn that lands as many of a unit's models as a displacement alone is taken where it lands them closer by
    # this much a model (mm, on average).
    group_turn_closer_mm: float = field(metadata=at_least(0))
    # Without a roster, models of one base size whose bases are at most this far apart (mm, edge to edge) are
    # suggested as one unit.
    group_gap_mm: float = field(metadata=at_least(0))
    # The recording's first settled state, where at most this many bases are found in it, is the table seen empty
    # (before the models are deployed): the states after it are measured against it. -1: never.
    empty_max_bases: int = field(metadata=at_least(-1))
    # Each settled frame is kept for the dashboard as a JPEG at most this long, at this quality (1-100).
    stored_frame_max_side_px: int = field(metadata=at_least(1))
    stored_frame_jpeg_quality: int = field(metadata=at_least(1, 100))
    # `--dask ADDRESS`: how long to wait for the scheduler (s) before saying it cannot be reached.
    dask_connect_timeout_s: float = field(metadata=positive())


@dataclass(frozen=True)
class Settings:
    """Settings of every stage: one field per stage, filled from the [section] of the same name by
        :func:`tableref.config.load_config`.

        A stage that gains settings adds a field here (its settings dataclass) and its section to its defaults file
    (``<stage>/defaults.toml`` for the stages in :data:`tableref.config.STAGES_WITH_DEFAULTS`, else
    ``tableref/defaults.toml``).
    """

    calibration: CalibrationSettings
    vision: VisionSettings
    pipeline: PipelineSettings
    evaluate: EvaluateSettings
    review: ReviewSettings
