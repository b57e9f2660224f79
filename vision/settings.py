"""Settings of the vision stage, in groups by step (seeds, rim edges, circle fit, appearance fit, ...). Every value
comes from the ``[vision]`` section of ``vision/defaults.toml`` beside this file and its tables (``[vision.seeds]``,
...), or a user's settings file; the dataclasses hold no defaults of their own."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

from vision.errors import SettingsError
from vision.look_settings import (
    ColourSettings,
    ExpectedSettings,
    FinderSettings,
    KinSettings,
    ReferenceSettings,
    SizeVoteSettings,
    VerifierSettings,
)
from vision.setting_groups import (
    CircleFitSettings,
    KnownSizeSettings,
    OtherReadingSettings,
    OutlineSettings,
    OverlapSettings,
    RimSettings,
    SeedSettings,
    VerdictSettings,
)

# Settings that must be positive, in (0, 1], and not negative (the rest are checked one by one).
_POSITIVE = (
    "finder.max_diameter_mm",
    "finder.centre_sigma_mm",
    "finder.diameter_sigma_mm",
    "finder.reach_mm",
    "finder.pack_min_bases",
    "finder.pack_gap_mm",
    "finder.pack_move_mm",
    "known.edge_limit_mm",
    "snap_tolerance_mm",
    "seeds.radius_px",
    "seeds.canny_high",
    "seeds.vote_canny_low",
    "seeds.vote_canny_high",
    "seeds.vote_blur_px",
    "seeds.vote_cell_mm",
    "rim.sample_step_px",
    "rim.search_step_mm",
    "rim.seed_search_mm",
    "rim.refine_search_mm",
    "circle.outlier_sigmas",
    "circle.max_rms_px",
    "colour.max_fit_rms_px",
    "circle.edge_correlation_px",
    "verdicts.min_wall_mm",
    "verdicts.min_disc_contrast",
    "outline.step_px",
    "circle.diameter_sigma_mm",
    "outline.diameter_sigma_mm",
    "circle.model_sigma_mm",
    "outline.model_sigma_mm",
    "other_readings.max_rms_px",
    "outline.height_sigma",
    "known.read_height_sigma",
)
_FRACTIONS = (
    "seeds.hough_vote_fraction",
    "seeds.vote_fraction",
    "rim.edge_peak_fraction",
    "rim.ring_support_fraction",
    "outline.start_margin",
    "verdicts.min_edge_coverage",
    "kin.min_edge_coverage",
    "other_readings.unseen_rim_coverage",
    "verdicts.min_disc_fill",
)
_NON_NEGATIVE = (
    "expected.min_probability",
    "expected.size_share",
    "expected.keep_mm",
    "finder.verifier_probability",
    "finder.doubt_probability",
    "finder.unit_probability",
    "finder.trust_probability",
    "finder.pack_probability",
    "finder.sure_probability",
    "finder.seed_probability",
    "finder.keep_probability",
    "finder.band_margin",
    "finder.size_weight",
    "known.astray_misfit_mm",
    "known.bevel_check_mm",
    "rim.second_ring_mm",
    "rim.inner_ring_fraction",
    "overlaps.max_mm",
    "overlaps.coarse_max_mm",
    "rim.model_fallback_mm",
    "outline.astray_short_mm",
    "other_readings.reach_mm",
    "other_readings.unseen_rim_sigma_share",
    "other_readings.shifts",
    "verdicts.min_figure_contrast",
    "verdicts.faint_disc_contrast",
    "verdicts.faint_figure_contrast",
    "verdicts.ring_min_figure_contrast",
    "verdicts.ring_colour_figure_contrast",
    "verdicts.ring_inside_max_colour",
    "verdicts.ring_edge_mm",
    "verdicts.token_ring_mm",
    "verdicts.off_centre_reach_mm",
    "verdicts.off_centre_figure_contrast",
    "verdicts.round_end_max_wobble",
    "overlaps.nest_top_mm",
    "overlaps.nest_score_share",
    "verdicts.round_end_min_contrast",
    "verdicts.die_square_agreement",
    "verdicts.die_line_agreement",
    "size_vote.reach_mm",
    "size_vote.window_mm",
    "size_vote.colour",
    "size_vote.min_bases",
    "size_vote.lone_doubt_mm",
    "size_vote.lone_ratio",
    "outline.size_min_px_per_mm",
    "kin.min_bases",
    "kin.group_min",
    "kin.group_min_score",
    "kin.group_reach_mm",
    "kin.max_fit_rms_px",
    "kin.reach_mm",
    "kin.lost_overlap_mm",
    "known.height_pool_min",
    "known.height_pool_gain",
    "colour.gain",
    "colour.blur_px",
    "colour.mask_margin_mm",
    "verifier.min_probability",
    "reference.blur_mm",
    "reference.light_cell_mm",
    "reference.light_reach_cells",
    "reference.min_change",
    "reference.min_changed_share",
    "reference.outline_share",
    "colour.min_figure_contrast",
    "colour.clear_figure_contrast",
    "colour.clear_figure_grey",
    "colour.shadow_min_darkness",
    "colour.shadow_max_colour",
    "seeds.blur_px",
    "rim.profile_blur_px",
    "rim.min_edge_gradient",
    "circle.edge_bias_px",
)


@dataclass(frozen=True)
class VisionSettings:
    """Tunable numbers of base detection, one group per step. Lengths in mm scale with the image; lengths in px do
    not. A setting is named by its group and its name, as in its table of the TOML file: ``finder.reach_mm`` is
    ``reach_mm`` in ``[vision.finder]``.

    base_sizes_mm: the standard round base diameters a detection may snap to.
    snap_tolerance_mm: largest difference between a fitted diameter and the size it snaps to.
    """

    base_sizes_mm: tuple[float, ...]
    snap_tolerance_mm: float
    seeds: SeedSettings
    rim: RimSettings
    circle: CircleFitSettings
    outline: OutlineSettings
    known: KnownSizeSettings
    verdicts: VerdictSettings
    overlaps: OverlapSettings
    other_readings: OtherReadingSettings
    size_vote: SizeVoteSettings
    kin: KinSettings
    verifier: VerifierSettings
    finder: FinderSettings
    expected: ExpectedSettings
    reference: ReferenceSettings
    colour: ColourSettings

    def replaced(self, changes: Mapping[str, Any]) -> VisionSettings:
        """These settings with ``changes`` (by name, ``group.name``: ``{"finder.reach_mm": 6.0}``) made; checked
        again. Raises :class:`~vision.errors.SettingsError` for a name that is no setting."""
        by_group: dict[str, dict[str, Any]] = {}
        top: dict[str, Any] = {}
        for name, value in changes.items():
            group, _, item = name.rpartition(".")
            if not group:
                top[name] = value
            else:
                by_group.setdefault(group, {})[item] = value
        try:
            for group, items in by_group.items():
                top[group] = replace(getattr(self, group), **items)
            return replace(self, **top)
        except (AttributeError, TypeError) as exc:
            raise SettingsError(f"no such vision setting among {sorted(changes)} ({exc})") from None

    def value(self, name: str) -> Any:
        """The setting called ``name`` (``group.name``, or a top-level name)."""
        group, _, item = name.rpartition(".")
        return getattr(getattr(self, group) if group else self, item)

    def __post_init__(self) -> None:
        self._check_numbers()
        self._check_seeds_and_votes()
        self._check_outline()
        self._check_walls_and_bands()

    def _check_numbers(self) -> None:
        """Every value a finite number (the verifier's file a path), and the ranges of :data:`_POSITIVE`,
        :data:`_FRACTIONS` and :data:`_NON_NEGATIVE`."""
        for name, value in _named_values(self):
            if name in ("verifier.file", "finder.file"):
                if not isinstance(value, str):
                    raise SettingsError(f"{name} must be a path (a string), got {value!r}")
                continue
            values = value if isinstance(value, tuple) else (value,)
            if not all(isinstance(v, int | float) and math.isfinite(v) for v in values):
                raise SettingsError(f"vision setting {name} must be finite numbers, got {value!r}")
        for name in _POSITIVE:
            if self.value(name) <= 0:
                raise SettingsError(f"{name} must be positive, got {self.value(name)!r}")
        for name in _FRACTIONS:
            if not 0 < self.value(name) <= 1:
                raise SettingsError(f"{name} must be in (0, 1], got {self.value(name)!r}")
        for name in _NON_NEGATIVE:
            if self.value(name) < 0:
                raise SettingsError(f"{name} must not be negative, got {self.value(name)!r}")

    def _check_seeds_and_votes(self) -> None:
        """Sizes, seeds, rays, the size vote and the pack's look."""
        seeds, rim, vote = self.seeds, self.rim, self.size_vote
        if not self.base_sizes_mm or min(self.base_sizes_mm) <= 0:
            raise SettingsError(f"base_sizes_mm must list positive diameters, got {self.base_sizes_mm!r}")
        if seeds.band_ratio < 1:
            raise SettingsError(f"seeds.band_ratio must be at least 1, got {seeds.band_ratio}")
        # a copy is reduced until its smallest base is about this radius: under a pixel it would be enlarged instead
        if seeds.radius_px < 1:
            raise SettingsError(f"seeds.radius_px must be at least 1 (px), got {seeds.radius_px!r}")
        # the radius range searched is widened by (1 - margin) to (1 + margin): from 1 on it would reach 0
        if not 0 <= seeds.radius_margin < 1:
            raise SettingsError(f"seeds.radius_margin must be from 0 to less than 1, got {seeds.radius_margin!r}")
        if min(rim.rays, rim.search_rays) < 16:
            raise SettingsError(
                f"rim.rays and rim.search_rays must be at least 16 to see a rim, got {rim.rays}, {rim.search_rays}"
            )
        if rim.refine_passes < 1 or self.circle.iterations < 1:
            raise SettingsError("rim.refine_passes and circle.iterations must be at least 1")
        if self.finder.size_weight > 1:
            raise SettingsError(f"finder.size_weight must be from 0 to 1, got {self.finder.size_weight!r}")
        if len(vote.ring) != 2 or not 0 <= vote.ring[0] < vote.ring[1] <= 1:
            raise SettingsError(
                "size_vote.ring must be [inner, outer] fractions of the radius, 0 <= inner < outer <= 1, got "
                f"{list(vote.ring)}"
            )
        if (
            not 0 <= seeds.pack_vote_fraction <= 1
            or not 0 <= seeds.pack_min_apart <= 2
            or not 0 <= seeds.pack_min_score <= 1
        ):
            raise SettingsError(
                "seeds.pack_vote_fraction must be in [0, 1] (0: off), seeds.pack_min_apart in [0, 2] (radii) and "
                f"seeds.pack_min_score in [0, 1], got {seeds.pack_vote_fraction!r}, {seeds.pack_min_apart!r} and "
                f"{seeds.pack_min_score!r}"
            )
        if vote.hops < 1:
            raise SettingsError(f"size_vote.hops must be at least 1, got {vote.hops!r}")

    def _check_outline(self) -> None:
        """The rim model and the appearance fit: windows, sectors, starts and misfit scales."""
        rim, fit, known = self.rim, self.outline, self.known
        pairs = (
            ("rim.model_mm", rim.model_mm, "[inward, outward]"),
            ("rim.wall_width_mm", rim.wall_width_mm, "[mean, sd]"),
            ("outline.window_mm", fit.window_mm, "[inward, outward]"),
        )
        for name, pair, meaning in pairs:
            if len(pair) != 2 or min(pair) <= 0:
                raise SettingsError(f"{name} must be {meaning}, both positive (mm), got {list(pair)}")
        if fit.sectors < 1 or fit.iterations < 0:
            raise SettingsError("outline.sectors must be at least 1 and outline.iterations not negative")
        if fit.misfit_rays < 1 or rim.rays % fit.misfit_rays:
            raise SettingsError(f"outline.misfit_rays must divide rim.rays, got {fit.misfit_rays} of {rim.rays} rays")
        if rim.rays % fit.sectors:
            raise SettingsError(
                f"outline.sectors must divide rim.rays (each sector the same number of rays), got {fit.sectors} "
                f"sectors of {rim.rays} rays"
            )
        for name in ("outline.misfit_scale", "known.misfit_scale", "known.edge_share"):
            if self.value(name) < 0:
                raise SettingsError(f"{name} must not be negative, got {self.value(name)}")
        if len(fit.height_ratio) != 2 or not 0 < fit.height_ratio[0] <= 1 <= fit.height_ratio[1]:
            raise SettingsError(
                f"outline.height_ratio must be [low, high] with 0 < low <= 1 <= high, got {list(fit.height_ratio)}"
            )
        starts = (
            ("outline.starts", "where the edges put the base"),
            ("known.starts", "where the base was detected"),
            ("known.read_starts", "where the base was detected"),
            ("known.height_pool_starts", "where the fit put the base"),
        )
        for name, zero in starts:
            if not self.value(name):
                raise SettingsError(f"{name} must list at least one start (0: {zero})")
        if any(step <= 0 for step in known.misread_start_steps) or known.misread_start_directions < 1:
            raise SettingsError(
                "known.misread_start_steps must be positive and known.misread_start_directions at least 1, got "
                f"{list(known.misread_start_steps)} and {known.misread_start_directions}"
            )
        if min(known.misread_share, known.misread_margin, fit.other_start_share) < 0:
            raise SettingsError(
                "known.misread_share, known.misread_margin and outline.other_start_share must not be negative, got "
                f"{known.misread_share}, {known.misread_margin} and {fit.other_start_share}"
            )

    def _check_walls_and_bands(self) -> None:
        """Cast shadows, blur, the wall's bounds and doubts, and the bands of the disc and figure tests."""
        fit = self.outline
        if fit.cast_shadow_mm < 0 or fit.cast_min_z < 0 or fit.cast_min_bases < 2:
            raise SettingsError(
                "outline.cast_shadow_mm and cast_min_z must not be negative and cast_min_bases must be at least 2, "
                f"got {fit.cast_shadow_mm}, {fit.cast_min_z} and {fit.cast_min_bases}"
            )
        if fit.excess_blur_free < 1 or fit.excess_blur_scale < 0 or fit.excess_blur_min_bases < 1:
            raise SettingsError(
                "outline.excess_blur_free must be at least 1, excess_blur_scale not negative and excess_blur_min_bases "
                f"at least 1, got {fit.excess_blur_free}, {fit.excess_blur_scale} and {fit.excess_blur_min_bases}"
            )
        if not fit.wall_dark_far >= fit.wall_dark_max or not fit.wall_light_far <= fit.wall_light_min:
            raise SettingsError(
                "outline.wall_dark_far must be at least wall_dark_max and outline.wall_light_far at most "
                f"wall_light_min (a wall farther out than the first bound), got {fit.wall_dark_far} and "
                f"{fit.wall_light_far}"
            )
        if fit.wall_misplaced_doubt < 0 or fit.wall_far_doubt < fit.wall_misplaced_doubt:
            raise SettingsError(
                "outline.wall_misplaced_doubt must not be negative and outline.wall_far_doubt not below it, got "
                f"{fit.wall_misplaced_doubt} and {fit.wall_far_doubt}"
            )
        if fit.bevel_mm < 0:
            raise SettingsError(f"outline.bevel_mm must not be negative, got {fit.bevel_mm}")
        if fit.contact_shadow_mm <= 0 or fit.ray_reject <= 1:
            raise SettingsError("outline.contact_shadow_mm must be positive and outline.ray_reject more than 1")
        if self.rim.wall_prior_grey <= 0:
            raise SettingsError(f"rim.wall_prior_grey must be positive, got {self.rim.wall_prior_grey}")
        for name in ("verdicts.disc_inner_mm", "verdicts.disc_outer_mm"):
            band = self.value(name)
            if len(band) != 2 or not 0 <= band[0] < band[1]:
                raise SettingsError(f"{name} must be [start, end] with 0 <= start < end (mm), got {list(band)}")
        figure = self.verdicts.figure_band
        if len(figure) != 2 or not 0 <= figure[0] < figure[1] <= 1:
            raise SettingsError(
                f"verdicts.figure_band must be [start, end] with 0 <= start < end <= 1 (radius fractions), got "
                f"{list(figure)}"
            )


def _named_values(settings: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Every setting's name (``group.name``) and value, groups opened."""
    named: list[tuple[str, Any]] = []
    for f in fields(settings):
        value = getattr(settings, f.name)
        if is_dataclass(value):
            named += _named_values(value, f"{prefix}{f.name}.")
        else:
            named.append((f"{prefix}{f.name}", value))
    return named
