"""Step 4 of :mod:`vision.detect`, the tests of a base.

Is it a base? Cues, each cheap and each aimed at one kind of impostor:

- edge coverage: at least ``min_edge_coverage`` of the rays found a rim edge on the circle. A square (an
  ArUco marker, a die) meets a circle only near the middle of its sides: well under half of the rays;
- circularity: inlier RMS residual at most ``circle.max_rms_px``;
- a disc, not a ring: a base is a raised disc, so the band just inside its rim (the side wall, then the top)
  is mostly not the mat's colour, while a line printed on the mat has mat on both sides of a thin stroke.
  Measured on every inlier ray against the mat just outside (``verdicts.disc_outer_mm``) over the band
  ``verdicts.disc_inner_mm`` inside: the median absolute grey difference (``min_disc_contrast``) and its ratio to
  the band's 90th percentile difference (``verdicts.min_disc_fill``: a line fills only part of the band);
- size: the footprint radius, measured again, lies within ``snap_tolerance_mm`` of a standard size (tokens,
  dice, pips and most round things are not standard). Measured again how: where the camera's position is
  known and the image resolves the wall and the contact shadow (``outline.min_px_per_mm``), footprint centre
  and radius are fitted to the pixels with a model of the base's whole appearance (:mod:`vision.outline`);
  otherwise the radius is corrected with a model of the mean rim profile (:mod:`vision.profile`; blur pushes
  the gradient peak outward by up to a millimetre at 1 px/mm);
- a figure: the grey level varies around circles inside the rim (``verdicts.min_figure_contrast``); a token or a
  printed circle is the same all the way round;
- not both just: a circle that passes the disc test and the figure test each only just
  (``faint_disc_contrast``, ``faint_figure_contrast``) is the mat's own blotches;
- a contact shadow: a circle that fits no size, whose rim band is darker than both the mat and the top and has
  the mat's colour (``colour.shadow_min_darkness``, ``colour.shadow_max_colour``), is a base of the mat's own colour
  read by the outer edge of the dark ring around it; it is read again at the band's inner edge, and sized from there;
  where figures blur, a circle that fits no size after the rim model's correction, round no such dark band, keeps
  its edges' own size where that lies within ``rim.model_fallback_mm`` of a standard one; so does one whose
  appearance fit fits no size, larger than the edges' circle or smaller by under ``outline.astray_short_mm``;
- the mat inside: where the rim model finds a top of the mat's grey level, the line is a printed one (narrower
  than ``min_wall_mm``) or, in images that resolve a figure, there must be a figure that clearly shows
  (``ring_min_figure_contrast``); and, also where figures blur, it must show in colour
  (``ring_colour_figure_contrast``) or be more than faint in grey (``faint_figure_contrast``); the same where the
  inside has the mat's colour, whatever its grey level (``ring_inside_max_colour``);
- the other edge of a ring: a circle concentric with one taken for a printed ring, its radius within the ring's
  stroke, is the stroke's inner edge (``ring_edge_mm``); a circle around a plain disc (every test passed but
  the figure's) and up to ``token_ring_mm`` larger is a token's printed ring, its figure the ring seen off
  centre;
- not a concentric pattern seen off centre, where figures resolve (at least ``outline.min_px_per_mm``): a
  circle whose inside, looked at from some centre within ``off_centre_reach_mm`` of its own, is the same all the
  way round (spreads by less than ``off_centre_figure_contrast``) is a token or a printed disc whose rings the
  figure test saw off centre; a figure is off centre from every centre;
- not a round end: a circle whose inside runs on, in one direction, between two straight parallel edges about a
  diameter apart is a fingertip or a forearm's end (:mod:`vision.ends`, ``round_end_max_wobble``,
  ``round_end_min_contrast``); it is looked for in the frame's own colours;
- not a die, where figures blur (under ``outline.min_px_per_mm``): a circle whose inside's gradients run along
  two directions at right angles and not along one alone is round a square block (:mod:`vision.squares`,
  ``die_square_agreement``, ``die_line_agreement``).

Where the appearance fit runs, a candidate that failed only the disc test gets a second one at the footprint
the fit finds: edges that ran out into a contact shadow put the band partly on the mat.

Limits, by construction: a filled disc printed on the mat at a standard size passes; a base whose top
matches the mat and whose visible wall is narrower than about the middle of ``verdicts.disc_inner_mm`` is taken for
a printed ring, and so is one without a figure that shows where figures resolve, or whose figure is of one
colour (an unpainted one) and spreads less than ``faint_figure_contrast`` in grey; at about 1 px/mm a printed
line whose inside varies in colour blurs into a wall and passes.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from vision.candidates import Candidates
from vision.cues import (
    RECENTRE_REFINE,
    concentric,
    disc_contrast,
    disc_passes,
    figure_contrast,
    figure_samples,
    figure_spread,
    least_figure,
)
from vision.detections import BaseDetections
from vision.ends import round_ends
from vision.parallax import RimParallax
from vision.refine import rim_coverage, rim_passes
from vision.settings import VisionSettings
from vision.squares import square_insides
from vision.units import anchored

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


def first_tests(
    image: NDArray[np.uint8],
    grey: NDArray[np.uint8],
    found: Candidates,
    min_figure: float,
    anchors: BaseDetections | None,
    scale: float,
    directions: FloatArray,
    settings: VisionSettings,
    parallax: RimParallax | None,
) -> Candidates:
    """``found`` judged by shape and contrast (coverage, roundness, a disc, a figure of ``min_figure`` in ``image``
    and ``grey``), with the readings that are bases only beside their unit's set apart (``kin_only``; those with a
    base of about their size in reach only: this look's, one of ``anchors`` or such a reading) and, where the
    appearance fit runs, those that failed only the disc test marked to be tested again (``retry``)."""
    fit = found.edge_fit
    center, radius = found.center_px, found.radius_px
    coverage = rim_coverage(fit)
    contrast, fill = disc_contrast(image, center, radius, fit.inlier, scale, directions, settings, parallax)
    rms = fit.rms_px
    # the colour contrast's edges scatter more than grey levels' round a rim (most where figures blur, about 1 px/mm,
    # but at 4K too: a brown top with a light wall, on a mat of about its grey level, reads 1.01-1.21 px in colour)
    max_rms = settings.colour.max_fit_rms_px if image is not grey else settings.circle.max_rms_px
    rim_ok = rim_passes(fit, max_rms, settings)
    rim_ok_alone = rim_ok.copy()
    figure = figure_contrast(image, center, radius, directions, settings)
    clear_in_colour = np.zeros(len(radius), np.bool_)
    if image is not grey:
        grey_figure = figure_contrast(grey, center, radius, directions, settings)
        # where figures blur (about 1 px/mm), one painted in its base's grey level fades in grey but not in colour
        if scale < settings.outline.min_px_per_mm:
            clear_in_colour = (figure >= settings.colour.clear_figure_contrast) & (
                grey_figure >= settings.colour.clear_figure_grey
            )
        figure = np.minimum(figure, grey_figure)
    # a disc that passes every test but the figure's: a token's middle, or a printed disc
    plain_disc = rim_ok & disc_passes(contrast, fill, settings) & (figure < min_figure) & ~clear_in_colour
    rim_ok &= (figure >= min_figure) | clear_in_colour
    # the mat's own blotches can pass the disc and the figure tests each, but only just: not both just
    rim_ok &= (contrast >= settings.verdicts.faint_disc_contrast) | (figure >= settings.verdicts.faint_figure_contrast)
    accept = rim_ok & disc_passes(contrast, fill, settings)
    # a base may fail one test and still be a base: a small figure (or one painted like its base) spreads less than
    # the bar on a clear disc; where figures blur, a rim also reads rough or is seen over little of its length (where
    # they resolve, the appearance fit would read such rims astray). Such a reading, up to the kin bars, goes on
    # apart: a base only beside its unit's bases (vision.units.beside_kin)
    kin_only = np.zeros(len(radius), np.bool_)
    if settings.kin.min_bases > 0:
        kin_only = plain_disc & (contrast >= settings.verdicts.faint_disc_contrast)
        if scale < settings.outline.min_px_per_mm:
            loose_rim = fit.ok & (coverage >= settings.kin.min_edge_coverage) & (rms <= settings.kin.max_fit_rms_px)
            has_figure = (figure >= min_figure) | clear_in_colour
            not_faint = (contrast >= settings.verdicts.faint_disc_contrast) | (
                figure >= settings.verdicts.faint_figure_contrast
            )
            kin_only |= loose_rim & ~rim_ok_alone & has_figure & not_faint & disc_passes(contrast, fill, settings)
        kin_only &= ~found.second & ~accept
        # most such readings stand by no unit and would cost the tests below for nothing: only those with a base of
        # about their size in reach go on (this look's, an earlier look's ``anchors``, or a reading so kept)
        kin_only[kin_only] = anchored(center, radius, accept, kin_only, anchors, scale, settings)
        accept |= kin_only
    by_appearance = parallax is not None and scale >= settings.outline.min_px_per_mm
    # edges that ran out into a contact shadow put the disc's band partly on the mat: where the appearance fit runs,
    # a candidate that failed only the disc test is tested again at the footprint the fit finds
    retry = rim_ok & ~accept if by_appearance else np.zeros(len(radius), np.bool_)
    return replace(
        found,
        coverage=coverage,
        contrast=contrast,
        fill=fill,
        figure=figure,
        plain_disc=plain_disc,
        rim_ok=rim_ok,
        accept=accept,
        kin_only=kin_only,
        retry=retry,
        max_rms_px=max_rms,
    )


def printed_rings(
    found: Candidates,
    chroma: NDArray[np.uint8] | None,
    scale: float,
    directions: FloatArray,
    settings: VisionSettings,
) -> Candidates:
    """``found`` with printed rings, and the circles that go with them, no longer accepted: by the rim model (a
    thin stroke, or a wider one with the mat inside and no figure that shows) and by the inside's colour in
    ``chroma`` (H, W) (the colour contrast; None: not looked at); then the inner edge of each such ring's stroke, and
    the circles round a plain disc up to ``token_ring_mm`` larger (a token's printed ring)."""
    live = np.flatnonzero(found.measured)
    accept = found.accept.copy()
    center, radius, figure, kin_only = found.center_px, found.radius_px, found.figure, found.kin_only
    levels, width_px, rim_ok = found.rim_levels[live], found.rim_width_px[live], found.rim_ok_model[live]
    # a printed ring: a thin stroke with the mat's colour inside it too (the model sees through the blur)
    mat, top = levels[:, 0], levels[:, 2]
    like_mat = rim_ok & (np.abs(top - mat) < settings.verdicts.min_disc_contrast)
    line = like_mat & (width_px < settings.verdicts.min_wall_mm * scale)
    # ... or a wider one: then only a figure tells a base whose top is of the mat's colour (where the image resolves
    # a figure: at about 1 px/mm figures blur to spreads under the bar)
    ring = (
        like_mat
        & (figure[live] < settings.verdicts.ring_min_figure_contrast)
        & (scale >= settings.outline.min_px_per_mm)
    )
    # ... and a printed ring's inside is the mat's own texture, faint in grey and in colour, where a figure on a base
    # shows in one of them, also where figures blur. The inside's colour tells it too: next to a bright or dark
    # stroke the mat just outside the rim reads brighter or darker than the mat inside
    judged = np.flatnonzero(accept[live])
    if chroma is not None and judged.size:
        inside = live[judged]
        samples = figure_samples(chroma, center[inside], radius[inside], directions, settings)
        mat_colour = np.median(samples.reshape(len(inside), -1), axis=1) < settings.verdicts.ring_inside_max_colour
        plain = (figure_spread(samples) < settings.verdicts.ring_colour_figure_contrast) & (
            figure[inside] < settings.verdicts.faint_figure_contrast
        )
        ring[judged[(like_mat[judged] | mat_colour) & plain]] = True
    printed = line | ring
    accept[live[printed]] = False
    # a printed ring shows a circle at each edge of its stroke: the inner one has the mat inside and the stroke
    # outside, and passes for a disc; it goes with the ring (one a kin-only reading took for a ring ends none: a
    # base's top read as such a reading would end the base)
    edge_center, edge_radius = found.edge_center_px, found.edge_radius_px
    ringed = printed & ~kin_only[live]
    stroke_px = width_px[ringed]
    slack_px = settings.verdicts.ring_edge_mm * scale
    accept[concentric(edge_center, edge_radius, accept, live[ringed], (-stroke_px, stroke_px), slack_px)] = False
    # a token with a printed ring: its plain middle fails the figure test, but a circle at the ring's outer edge has
    # the ring in its figure band (off centre) and passes; it goes with the middle
    token_px = (0.0, settings.verdicts.token_ring_mm * scale)
    plain_rows = np.flatnonzero(found.plain_disc)
    accept[concentric(edge_center, edge_radius, accept & ~kin_only, plain_rows, token_px, slack_px)] = False
    # ... and so does a kin-only reading at a ring's edge (not the plain disc itself: at least a slack larger)
    outer_px = (2 * slack_px, settings.verdicts.token_ring_mm * scale)
    accept[concentric(edge_center, edge_radius, accept & kin_only, plain_rows, outer_px, slack_px)] = False
    return replace(found, accept=accept)


def other_impostors(
    image: NDArray[np.uint8],
    grey: NDArray[np.uint8],
    bgr: NDArray[np.uint8] | None,
    found: Candidates,
    min_figure: float,
    scale: float,
    directions: FloatArray,
    settings: VisionSettings,
) -> Candidates:
    """``found`` with fingertips, dice and concentric patterns seen off centre no longer accepted (see the
    module's description); ``bgr``, the frame as it was taken (None: ``grey``), tells a round end."""
    accept = found.accept.copy()
    center, radius = found.center_px, found.radius_px
    # a fingertip, or a forearm's end: the round end of a band of its own colour
    ends = np.flatnonzero(accept)
    accept[
        ends[
            round_ends(
                grey if bgr is None else bgr,
                center[ends],
                radius[ends],
                settings.verdicts.round_end_max_wobble,
                settings.verdicts.round_end_min_contrast,
            )
        ]
    ] = False
    # a die: the inside of a square block, where it blurs into a base's size (where figures resolve, so does a die's
    # outline, and the test would only cost bases)
    blocks = np.flatnonzero(accept) if scale < settings.outline.min_px_per_mm else np.zeros(0, np.intp)
    accept[
        blocks[
            square_insides(
                grey,
                center[blocks],
                radius[blocks],
                settings.verdicts.die_square_agreement,
                settings.verdicts.die_line_agreement,
            )
        ]
    ] = False
    # a token's printed rings (or a printed disc's) seen off centre cross the figure's circles on one side and pass
    # for a figure: from the right centre nearby its inside is the same all the way round, where a figure stays
    # off centre from every centre (a refinement of the figure test: none where that test is off, nor where figures
    # blur, at about 1 px/mm, and a faint one's spread drops as low from a centre nearby)
    resolved_figures = scale >= settings.outline.min_px_per_mm
    if settings.verdicts.off_centre_figure_contrast > 0 and min_figure > 0 and resolved_figures:
        figured = np.flatnonzero(accept)
        reach_px = settings.verdicts.off_centre_reach_mm * scale
        bar = settings.verdicts.off_centre_figure_contrast
        # in both looks' images, as the figure test (a circle the first ends needs no second)
        for shown in (image,) if image is grey else (image, grey):
            least = least_figure(
                shown, center[figured], radius[figured], directions, settings, reach_px, RECENTRE_REFINE * bar
            )
            figured = figured[least >= bar]
        accept &= np.isin(np.arange(len(accept)), figured)
    return replace(found, accept=accept)
