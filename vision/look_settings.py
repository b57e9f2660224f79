"""The groups of the vision stage's settings (:class:`vision.settings.VisionSettings`) for the steps that look
again once the circles are read (steps 7-14 of :mod:`vision.detect`): sizes voted by unit, kin, the verifier, the
finder, a roster's bases, the empty table and the look in colour; those of the reading steps are in
:mod:`vision.setting_groups`. Each is a table of ``[vision]`` in the settings file. Lengths in mm scale with the
image; lengths in px do not. A name of another group is written ``group.name``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SizeVoteSettings:
    """A unit's models stand on one size: the size vote among a base's unit.

    reach_mm, window_mm, colour, ring, hops, min_bases: a unit's models stand on one size and are based alike: two
        bases are of one unit where they stand
        within reach_mm of each other (edge to edge), their fitted diameters lie within
        window_mm and their tops' colours (CIE Lab, 8-bit OpenCV scale, of the medians of the colour
        channels over the ring between the fractions ring of the fitted radius) within
        colour (0: colour not compared); each base's size is the standard size nearest the median
        fitted diameter of the bases reached within hops such steps whose fitted diameters lie within
        window_mm of its own, itself included, where there are at least min_bases of them (reach
        0: no vote).
    lone_doubt_mm: a base the vote leaves alone (fewer than min_bases bases fitted about its size
        in reach) whose diameter doubt is at least this much takes the size that at least min_bases - 1
        bases of its top's colour in direct reach, each voting, all voted (0: never). A reading of part of a
        rim, or of more than it, stands out so; a hero on a larger base among its unit is fitted sure.
    lone_ratio: such a base takes its neighbours' size only where its reading lies within this ratio of it, either
        way: a part of a rim, or a rim with its shadow, reads a fraction off, a hero's base among its unit reads
        half again its unit's size or more.
    """

    reach_mm: float
    window_mm: float
    colour: float
    ring: tuple[float, ...]
    hops: int
    min_bases: int
    lone_doubt_mm: float
    lone_ratio: float


@dataclass(frozen=True)
class KinSettings:
    """A reading that fails one test of a base stands beside its unit (its kin).

    min_bases, max_fit_rms_px, min_edge_coverage, reach_mm: a reading that fails one test of a
        base is a base where it overlaps no base and at least min_bases bases (or readings that stand so)
        within reach_mm of it edge to edge would be one unit's with it as the size vote links them
        (size_vote.window_mm, size_vote.colour; 0: never): a clear disc (disc contrast at least
        verdicts.faint_disc_contrast) that fails only the figure test or, where figures blur (under
        outline.min_px_per_mm), a rim rougher than the roundness bar up to max_fit_rms_px, or seen over
        less of its length than verdicts.min_edge_coverage down to min_edge_coverage, that passes every other
        test.
    group_min: such readings stand without a base beside them where at least this many, linked as kin
        (as above), form a group: a unit on plain bases, no figure on any; 0: never. Each of them must score
        at least group_min_score. Within such a group, bases are linked within group_reach_mm edge to edge.
    lost_overlap_mm: a base's reading that lost to a better scored base only by overlapping it by up to this
        much more than the overlap allowed (overlaps.max_mm, overlaps.coarse_max_mm) stands by its unit as well,
        where it overlaps none of the bases at the sizes their units vote (one read a size too large keeps its
        neighbour out); 0: never.
    """

    min_bases: int
    group_min: int
    group_min_score: float
    group_reach_mm: float
    max_fit_rms_px: float
    reach_mm: float
    min_edge_coverage: float
    lost_overlap_mm: float


@dataclass(frozen=True)
class VerifierSettings:
    """The learned verifier (see :mod:`vision.verify`).

    min_probability: a circle read is a base where the verifier gives it at least this probability
        (0: no verifier).
    file: the verifier's weights (.npz); empty: the one that ships in vision/data.
    """

    min_probability: float
    file: str


@dataclass(frozen=True)
class FinderSettings:
    """The learned finder (see :mod:`vision.finder`).

    seed_probability: where the finder gives a base's centre at least this probability and no base was
        found, its rim is looked for there (0: no finder).
    keep_probability: a base found stands only where the finder gives at least this probability within
        ``reach_mm`` of its centre (0: every base stands).
    reach_mm: how far from the finder's centre a base's may lie and still be its.
    max_diameter_mm: the largest base the finder was fitted on: larger bases found stand whatever it says.
    band_margin: the rim is looked for from (1 - this) to (1 + this) of the radius the finder gives.
    sure_probability: where the finder gives at least this and no rim is read there, the finder's own
        centre and size stand, with ``centre_sigma_mm`` and ``diameter_sigma_mm`` as their sigmas
        (above 1: never).
    verifier_probability: what only the finder sees (a rim read at its peak, or its own base) stands
        where the verifier gives it at least this (0: whatever the verifier says).
    unit_probability: what only the finder sees at least this stands whatever the verifier says where at
        least two such bases stand as one unit's (``kin.group_min`` in all with the bases found; 0: never); where
        no rim is read, the finder's own base below ``sure_probability`` stands only so.
    trust_probability: a circle read (of a size up to ``max_diameter_mm``) stands whatever the
        verifier says where the finder gives at least this within ``reach_mm`` of its centre (0: never).
    pack_probability, pack_min_bases, pack_gap_mm, pack_move_mm: where the finder
        gives at least ``pack_probability`` at a place no base found explains, and a base there would
        touch (within ``pack_gap_mm`` edge to edge) at least ``pack_min_bases`` bases found of
        about its size (``size_vote.window_mm``), a base of their size stands there, moved out of them (at most
        ``pack_move_mm``; bases are solid) (0: never).
    size_weight: each base's size is voted (see :class:`SizeVoteSettings`) again once the finder has looked, on a
        reading that blends this share of the finder's diameter there with (1 - this) of the rim's fitted one
        (0: the rim's alone; bases over ``max_diameter_mm`` keep the rim's).
    doubt_probability: a place where the finder gives at least this and no base found explains it is reported as
        doubted: a base may stand there that the detector did not accept (see :mod:`vision.doubts`; 0: none).
    file: the finder's net (.onnx); empty: the one that ships in vision/data.
    """

    seed_probability: float
    keep_probability: float
    reach_mm: float
    max_diameter_mm: float
    band_margin: float
    sure_probability: float
    verifier_probability: float
    unit_probability: float
    trust_probability: float
    pack_probability: float
    pack_min_bases: int
    pack_gap_mm: float
    pack_move_mm: float
    centre_sigma_mm: float
    diameter_sigma_mm: float
    size_weight: float
    doubt_probability: float
    file: str


@dataclass(frozen=True)
class ExpectedSettings:
    """The bases a roster expects (see :mod:`vision.expected`; only where one is given).

    min_probability: where fewer bases of a size were found than the roster lists, the finder's peaks
        of at least this probability that nothing found explains stand for the missing ones (0: never).
    size_share: such a peak's diameter is within this share of the missing size.
    keep_mm: a base found within this distance of where a listed model of its size (within size_share) was last
        seen stands whatever the finder says of it (0: the finder's doubt drops it as any other).
    """

    min_probability: float
    size_share: float
    keep_mm: float


@dataclass(frozen=True)
class ReferenceSettings:
    """The empty table (see :mod:`vision.reference`; only where a reference is given).

    blur_mm: both images are smoothed by this much before they are compared.
    light_cell_mm, light_reach_cells: the light's slow change between the two is read per
        cell of this side, as the median over this many cells square (odd, at least 3).
    min_change: a pixel whose colour moved by at least this many grey levels changed.
    min_changed_share: a base changed at least this share of its inside since the table was empty,
    outline_share: ... or the empty table showed less than this share of its outline's edges (a dark
        base on a dark mat changes its inside little, but its wall, rim and shadow are new; a printed ring's
        outline was there).
    """

    blur_mm: float
    light_cell_mm: float
    light_reach_cells: int
    min_change: float
    min_changed_share: float
    outline_share: float


@dataclass(frozen=True)
class ColourSettings:
    """The second look, in colour (see :mod:`vision.colour`).

    gain: grey levels of the colour-contrast image per unit of chromaticity distance from the mat
        (0: no second look).
    blur_px: Gaussian smoothing of that image (px).
    mask_margin_mm: the first look's bases, grown by this much, are left out of the second.
    min_figure_contrast: the figure test of the second look, in grey and in colour alike.
    clear_figure_contrast, clear_figure_grey: in images under outline.min_px_per_mm, where
        figures blur, a figure that spreads by the first in colour passes with the second in grey.
    max_fit_rms_px: the second look's circle.max_rms_px (its edges scatter more round a rim than grey
        levels' do); a base's score takes its roundness against it.
    shadow_min_darkness, shadow_max_colour: a circle whose size fits no standard one is read again at the
        inner edge of its rim band where that band is darker than both the mat and the top by at least
        shadow_min_darkness grey levels and of the mat's colour (at most shadow_max_colour in the colour-contrast
        image): a contact shadow around a base of the mat's own colour.
    """

    gain: float
    blur_px: float
    mask_margin_mm: float
    min_figure_contrast: float
    clear_figure_contrast: float
    clear_figure_grey: float
    max_fit_rms_px: float
    shadow_min_darkness: float
    shadow_max_colour: float
