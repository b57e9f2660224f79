"""The groups of the vision stage's settings (:class:`vision.settings.VisionSettings`) for the steps that read the
circles (steps 1-6 of :mod:`vision.detect`), one per step, each a table of ``[vision]`` in the settings file
(``[vision.seeds]``, ``[vision.rim]``, ...); those of the later looks are in :mod:`vision.look_settings`. Lengths in
mm scale with the image; lengths in px do not. A name of another group is written ``group.name``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SeedSettings:
    """Seeds: ``cv2.HoughCircles`` on reduced copies of the image, and gradient-direction voting at the standard
    radii on the same copies; the pack's look's seeds beside the bases found.

    hough_circles: whether ``cv2.HoughCircles`` adds seeds to the voted ones (the size bands and reduced
        copies below serve the voting too).
    radius_px: each size band is searched on a copy reduced (by a whole factor, never enlarged) until
        its smallest base is about this radius in px.
    blur_px: Gaussian smoothing of a reduced copy before the circle search (px at its scale).
    band_ratio: largest ratio of radii searched in one pass; the sizes are split into such bands.
    radius_margin: relative widening of each band's radius range (seed radii are only roughly right).
    canny_high: upper Canny threshold of the circle search (grey levels); the lower one is half.
    hough_vote_fraction: accumulator votes needed, as a fraction of the smallest rim length of the band in px.
    vote_canny_low, vote_canny_high: Canny thresholds (grey levels) of the voting edges: low, so that a base
        of the mat's colour still shows by its wall and shadow.
    vote_blur_px: Gaussian smoothing of the vote accumulator (px at its scale).
    vote_fraction: votes needed, as a fraction of the band's smallest rim length in px.
    vote_cell_mm: side of an accumulator cell (mm, at least one px of the reduced copy): a seed lands within
        about a cell of its base's centre.
    pack_vote_fraction: votes needed (as vote_fraction) by the seeds of the pack's look, only beside the bases
        found: a base touching one found, its rim shown by the seams (0, or no verifier: no pack's look).
    pack_min_apart: such a seed lies at least this share of a found base's radius from its centre.
    pack_min_score: a reading of the pack's look stands only with at least this score (edge coverage, disc
        contrast and roundness, each 0-1, multiplied).
    """

    hough_circles: bool
    radius_px: float
    blur_px: float
    band_ratio: float
    radius_margin: float
    canny_high: float
    hough_vote_fraction: float
    vote_canny_low: float
    vote_canny_high: float
    vote_blur_px: float
    vote_fraction: float
    vote_cell_mm: float
    pack_vote_fraction: float
    pack_min_apart: float
    pack_min_score: float


@dataclass(frozen=True)
class RimSettings:
    """Rim edges: intensity profiles along rays from each candidate's centre, and the rim model that corrects
    their radius.

    search_rays, search_step_mm: rays per candidate and sample spacing along them (mm, at least
        sample_step_px) while the footprint is looked for (a wide search that needs no sub-pixel precision).
    rays, sample_step_px: the same for the refinement around the nominal radius.
    profile_blur_px: Gaussian smoothing of each profile along its ray before differentiating.
    seed_search_mm: how far (mm) a seed centre may be off: the first edge search looks that far beyond the
        seed's radius range, and first finds the centre with rings that wide.
    ring_support_fraction: of the circles about a first centre, the outermost one supported by at least this
        fraction of the best-supported one's rays is the footprint (inside it: side wall and top).
    second_ring_mm: where the best-supported ring lies more than this (mm, in radius) inside or outside the
        outermost one, it is read as a base too, taken only where no other reading found one (the outermost
        ring may be a figure's outline round its base); 0 reads no second rings.
    inner_ring_fraction: in images under outline.min_px_per_mm, the outermost ring of the other polarity more
        than second_ring_mm inside the outermost one, supported by at least this fraction of the best ring's
        rays, is read as well, the same way (a contact shadow's outer edge read as the footprint, the base's
        own rim inside it); 0 reads none.
    refine_search_mm: half-width of the second search around the snapped nominal radius.
    refine_passes: edge searches around the nominal radius (each restarts from the previous fit).
    min_edge_gradient: weakest edge accepted on a ray (grey levels per px along the ray).
    edge_peak_fraction: on each ray the outermost edge at least this fraction of the ray's strongest edge of
        the base's polarity is the rim (a base's side wall can add a second, inner edge).
    model_mm: (inward, outward) extent of the mean rim profile whose wall-and-top model corrects the
        radius for blur (see :mod:`vision.profile`).
    wall_width_mm: (mean, sd) of the visible width of a base's side wall seen from above; the rim model
        leans on it where the image is too coarse to measure the width.
    wall_prior_grey: how firmly: a width one sd off costs as much as one profile sample this many grey
        levels off the model.
    model_fallback_mm: in images under outline.min_px_per_mm, a circle whose size, corrected by the rim
        model, fits no standard one keeps the size of its edges' own circle where that lies within this of a
        standard size (mm, in diameter; 0: never); where the appearance fit runs, a footprint that fits no
        standard size and is larger than the edges' circle, which lies within this of one, is a fit gone astray
        (a contact shadow taken in), and the base is read as where that fit fails.
    top_read_max_darkness: in images under outline.min_px_per_mm, a base the grey look's edges read whose top the
        rim model finds lighter than the mat, or darker by at most this (grey levels), is read by its top disc:
        its wall, facing sideways and less lit, is darker than its top, and the rim edge on the side facing the
        camera is the top's. Its radius gets back the stretch the stadium fit allowed its rays (the top is a
        circle; not round a shadow's dark band), its centre is moved back half a parallax shift (to where the
        outline's middle would be) and a rim height error shows in full (rim_height_share 2). Negative: never.
    """

    search_rays: int
    search_step_mm: float
    rays: int
    sample_step_px: float
    profile_blur_px: float
    seed_search_mm: float
    ring_support_fraction: float
    second_ring_mm: float
    inner_ring_fraction: float
    refine_search_mm: float
    refine_passes: int
    min_edge_gradient: float
    edge_peak_fraction: float
    model_mm: tuple[float, ...]
    wall_width_mm: tuple[float, ...]
    wall_prior_grey: float
    model_fallback_mm: float
    top_read_max_darkness: float


@dataclass(frozen=True)
class CircleFitSettings:
    """The robust circle fit to the rim edges, and the sigmas of a base read by its edges.

    iterations: iteratively reweighted geometric fit steps.
    outlier_sigmas: residuals beyond this many robust sigmas are outliers (weapons, cloaks, neighbours).
    max_rms_px: largest RMS residual of the inlier rim points of a base.
    edge_bias_px: added (in quadrature) to the fitted centre sigma for what the fit cannot see: edges
        pulled by what lies within a millimetre or two of the rim (side wall, shadow, a neighbouring base),
        in px at 1 px/mm. Blur mixes such structures in less as the scale grows, so it is divided by px/mm.
    edge_correlation_px: rim length over which neighbouring ray edges share noise; the fitted centre
        sigma counts one independent point per such length.
    diameter_sigma_mm: how far a diameter the edges (and the rim model) fitted strays from the true size
        (1-sigma, mm).
    model_sigma_mm: what the edges' outline model misses, per axis (mm).
    """

    iterations: int
    outlier_sigmas: float
    max_rms_px: float
    edge_bias_px: float
    edge_correlation_px: float
    diameter_sigma_mm: float
    model_sigma_mm: float


@dataclass(frozen=True)
class OutlineSettings:
    """The appearance fit (see :mod:`vision.outline`): the base's whole look (top disc, visible side wall, contact
    shadow) fitted to the pixels about its outline.

    min_px_per_mm: the fit runs only on images at least this fine: at about 1 px/mm the wall, the
        contact shadow and the blur each span about a pixel and trade off, and the edges do better (the fit at a
        known size has a floor of its own, ``known.min_px_per_mm``).
    size_min_px_per_mm: from this fineness up to min_px_per_mm (a 4K frame from a low camera)
        the fit reads only the footprint's size, where it lies within snap_tolerance_mm of the edges' reading;
        the centre stays the edges' (min_px_per_mm or more: never).
    window_mm: (inward, outward) extent (mm) of the pixels looked at about each outline.
    step_px: their spacing along each ray (px).
    sectors: sectors of directions around a base with grey levels of their own; it divides ``rim.rays``.
    contact_shadow_mm: how far (mm, the normal CDF's scale) a base's contact shadow fades into the mat.
    bevel_mm: how much smaller (mm, in radius) a base's top is than its footprint (0: straight walls).
    iterations: Levenberg-Marquardt steps.
    reject_at: the steps before which rays the model does not explain are dropped.
    ray_reject: a ray is dropped when its RMS residual is more than this many times the median.
    starts: where the fit starts from, in half parallax shifts towards the nadir from the edges'
        outline middle (0: the edges' own reading; 1: their circle read as the top disc); a later start's
        fit replaces an earlier one when its RMS residual is below ``start_margin`` times the earlier's.
    height_ratio: (low, high) bounds of each base's rim height as fitted, over the height assumed.
    height_sigma: the spread of that ratio the fit assumes before it looks (a prior about 1).
    diameter_sigma_mm: how far a diameter the appearance fit fitted strays from the true size (1-sigma, mm).
    model_sigma_mm: what the appearance fit's model misses, per axis (mm): a floor, its own misfit (next) added in
        quadrature.
    misfit_rays, misfit_scale: the appearance fit's centre and radius sigmas from how its
        residuals cluster (clusters of this many consecutive rays; it divides ``rim.rays``), times this factor.
    other_start_share: where another start's fit ended about as well elsewhere, this share of the distance
        between the two is the doubt along the line between them (``doubt_mm``).
    cast_shadow_mm, cast_min_z, cast_min_bases: how far the rims' shadows reach on the table, away from the
        main light, in the fit at a known size (0: not modelled); the direction is taken where the bases' darker
        sides agree this many times better than by chance, over at least this many bases
        (:func:`vision.outline.cast_shadow_px`).
    excess_blur_free, excess_blur_scale, excess_blur_min_bases: a base whose appearance fit needed more blur
        than ``excess_blur_free`` times the frame's own (the median over at least ``excess_blur_min_bases``
        such fits) has its edge smeared by something the model lacks: the excess (in quadrature, mm) times
        ``excess_blur_scale`` is added to its sigma.
    wall_dark_max, wall_light_min, wall_misplaced_doubt: an appearance fit whose wall, on the side towards the
        nadir, came out more than ``wall_dark_max`` of the way from the top's level to the mat's on a dark base
        (lit like the shaded mat), or less than ``wall_light_min`` of it on a light one (as bright as the top),
        read something else as its wall: ``wall_misplaced_doubt`` of the top disc's parallax shift is its doubt
        along the line from the nadir.
    wall_dark_far, wall_light_far, wall_far_doubt: where that wall came out farther still (more than
        ``wall_dark_far`` of the way on a dark base, less than ``wall_light_far`` on a light one), the doubt is
        ``wall_far_doubt`` of the shift.
    astray_short_mm: a footprint that lies less than this (mm, in diameter) inside the edges' circle is a fit
        gone astray too (it read a circle inside the footprint; see ``rim.model_fallback_mm``); a flat disc, a
        token or a printed one, with no wall and no shadow of its own, reads further inside. 0: only larger
        footprints.
    """

    min_px_per_mm: float
    size_min_px_per_mm: float
    window_mm: tuple[float, ...]
    step_px: float
    sectors: int
    contact_shadow_mm: float
    bevel_mm: float
    iterations: int
    reject_at: tuple[float, ...]
    ray_reject: float
    starts: tuple[float, ...]
    start_margin: float
    height_ratio: tuple[float, ...]
    height_sigma: float
    diameter_sigma_mm: float
    model_sigma_mm: float
    misfit_rays: int
    misfit_scale: float
    other_start_share: float
    astray_short_mm: float
    cast_shadow_mm: float
    cast_min_z: float
    cast_min_bases: int
    excess_blur_free: float
    excess_blur_scale: float
    excess_blur_min_bases: int
    wall_dark_max: float
    wall_light_min: float
    wall_misplaced_doubt: float
    wall_dark_far: float
    wall_light_far: float
    wall_far_doubt: float


@dataclass(frozen=True)
class KnownSizeSettings:
    """Fits at a known size (see :mod:`vision.known`): a roster's declared sizes, or the standard size a base was
    read at.

    misfit_scale: ``outline.misfit_scale`` for bases fitted again at a known size and rim height
        (:func:`vision.detect.fit_known_bases`).
    edge_share: such a base's sigma also holds this share of the distance between its centre and the
        one the edges read, in quadrature: where the two readings disagree, one of them is off.
    edge_limit_mm, astray_misfit_mm: where that distance exceeds the first and the fit's misfit
        (per axis, before ``misfit_scale``) the second, the fit is taken to have gone astray: the edges'
        reading stands (at the known size), its sigma widened as above.
    starts: the starts (as ``outline.starts``) of a fit at a known size and rim height.
    min_px_per_mm: that fit runs on images at least this fine (with size and height held, the wall and
        the contact shadow no longer trade off against the footprint, so it can run where the free fit cannot).
    refit_read_sizes: bases whose size nobody declared are fitted again too, at the standard size they were read
        at (where the free appearance fit runs), keeping their size doubt.
    read_starts: the starts (as ``outline.starts``) of that fit.
    read_height_sigma: ``outline.height_sigma`` for that fit (the size held, the height shows better).
    height_pool_min, height_pool_gain, height_pool_starts: a unit's bases share their rims' height. After that
        fit, each base's rim height ratio is pooled over the bases of its unit (as the size vote links them:
        within size_vote.reach_mm, tops within size_vote.colour, size_vote.hops steps; of one size read): the
        median of their fitted ratios, its departure from 1 times height_pool_gain (the fit leans on 1),
        within outline.height_ratio, where at least height_pool_min of them fitted. The base is then fitted
        again at that height, from height_pool_starts (as ``outline.starts``). height_pool_min 0 (or
        size_vote.reach_mm 0): not pooled.
    misread_start_steps, misread_start_directions: where a base whose size was read wrong is fitted from as
        well: this many directions round the reading, at these multiples of the difference of the radii (each
        from the first of the fit's starts along the nadir line only, but for a roster's declared bases).
    misread_share, misread_margin: such a base's doubt, added (in quadrature) to its sigma:
        ``outline.other_start_share`` of the distance from its kept fit to the farthest fit from its other starts
        whose misfit is at most misread_margin (a share) larger, and at least misread_share of that difference.
    bevel_check_mm: each base is also fitted with its top this much smaller (in radius) than its footprint (a
        bevel, which the fit otherwise assumes absent); where that fit's misfit is at most misread_margin larger
        than the kept one's, the distance between the two is a doubt along their line, as another start's
        (``outline.other_start_share`` of it). 0: not fitted.
    """

    misfit_scale: float
    edge_share: float
    edge_limit_mm: float
    astray_misfit_mm: float
    starts: tuple[float, ...]
    min_px_per_mm: float
    refit_read_sizes: bool
    read_starts: tuple[float, ...]
    read_height_sigma: float
    height_pool_min: int
    height_pool_gain: float
    height_pool_starts: tuple[float, ...]
    misread_start_steps: tuple[float, ...]
    misread_start_directions: int
    misread_share: float
    misread_margin: float
    bevel_check_mm: float


@dataclass(frozen=True)
class VerdictSettings:
    """Is it a base? The tests a circle read must pass (see :mod:`vision.verdicts`).

    min_edge_coverage: smallest fraction of the rays with a rim edge on the fitted circle.
    min_disc_contrast: smallest grey-level difference between the band just inside the rim and the mat
        just outside it (a printed ring line has mat on both sides).
    min_disc_fill: smallest ratio of that median difference to the band's 90th percentile difference: a
        wall or a top fills the band (near 1), a thin printed line only a part of it (small).
    min_wall_mm: a rim whose model (see rim.model_mm) shows a top of the mat's colour (within
        min_disc_contrast) inside a wall narrower than this is a printed ring line, not a base.
    disc_inner_mm: (start, end) of the band inside the rim, in mm inward from the rim.
    disc_outer_mm: (start, end) of the band outside the rim, in mm outward from the rim.
    figure_band: (start, end) of the inside of a rim, as fractions of its radius, where a figure is looked
        for.
    min_figure_contrast: smallest spread (grey levels) of the grey level around circles in that band: a base
        carries a figure, a token or a printed circle is the same all the way round.
    faint_disc_contrast, faint_figure_contrast: a circle whose disc contrast is below the first and whose
        figure spread is below the second is the mat's own texture (each test alone lets blotches through).
    ring_min_figure_contrast: inside a rim whose top has the mat's grey level (a printed ring, or a base whose
        top is of the mat's colour) the figure must spread by at least this.
    ring_colour_figure_contrast: such a rim's figure must also spread by at least this in colour, or by
        faint_figure_contrast in grey (the one figure test of such rims where figures blur).
    ring_inside_max_colour: a rim whose inside has the mat's colour (the median of the second look's image
        there below this) needs that figure too, whatever its grey level: a printed ring's inside may read
        brighter or darker than the mat just outside it, where the stroke's blur reaches.
    ring_edge_mm: a circle centred within this of a printed ring's, its radius within the ring's stroke
        widened by this, is the stroke's other edge, not a base.
    token_ring_mm: a circle around a plain disc (one that passes every test of a base but the figure's),
        centred within ring_edge_mm of it and up to this much larger in radius, is a token's printed ring.
    off_centre_reach_mm, off_centre_figure_contrast: a circle whose inside spreads by less than
        off_centre_figure_contrast around circles about some centre within off_centre_reach_mm of its own is
        a token's (or a printed disc's) concentric pattern seen off centre; in images of at least
        outline.min_px_per_mm only (0 contrast, or no figure test: no such test).
    round_end_max_wobble, round_end_min_contrast: a circle that is the rounded end of a band as wide as itself
        (a fingertip, a forearm; see :mod:`vision.ends`) is not a base: the band's inside must differ from
        both its flanks by at least round_end_min_contrast (grey levels, or their length over the three colour
        channels) and its width and middle wobble about straight lines by at most round_end_max_wobble radii
        (0: no circle is taken for a round end).
    die_square_agreement, die_line_agreement: a circle round a die is not a base: its inside's gradient
        directions agree, taken four times over, by at least die_square_agreement and, taken twice over (as a
        single straight edge's would), by at most die_line_agreement (see :mod:`vision.squares`; 0 for the
        first: no circle is taken for a die's).
    """

    min_edge_coverage: float
    min_disc_contrast: float
    min_disc_fill: float
    min_wall_mm: float
    disc_inner_mm: tuple[float, ...]
    disc_outer_mm: tuple[float, ...]
    figure_band: tuple[float, ...]
    min_figure_contrast: float
    faint_disc_contrast: float
    faint_figure_contrast: float
    ring_min_figure_contrast: float
    ring_colour_figure_contrast: float
    ring_inside_max_colour: float
    ring_edge_mm: float
    token_ring_mm: float
    off_centre_reach_mm: float
    off_centre_figure_contrast: float
    round_end_max_wobble: float
    round_end_min_contrast: float
    die_square_agreement: float
    die_line_agreement: float


@dataclass(frozen=True)
class OverlapSettings:
    """Bases are solid: how much two readings may overlap, and which of nested circles stands (see
    :mod:`vision.overlaps`).

    max_mm: two bases cannot overlap by more than this; the weaker of such a pair is dropped.
    coarse_max_mm: the same in images under outline.min_px_per_mm, where a size read one step too
        large puts up to 1.5 mm more overlap between bases in contact.
    nest_top_mm, nest_score_share: a larger circle with smaller ones inside it (its top, its figure's outline)
        takes their place where its fitted radius is at most nest_top_mm larger than theirs or its score at least
        nest_score_share of theirs (0: always).
    """

    max_mm: float
    coarse_max_mm: float
    nest_top_mm: float
    nest_score_share: float


@dataclass(frozen=True)
class OtherReadingSettings:
    """Other readings of a base read by its edges, and the doubt they add (see :mod:`vision.other_readings`).

    reach_mm, shifts: other readings of a base read by its edges: larger standard sizes
        up to this much larger in radius (mm), touching the reading on one side, in the best of this many
        directions (0 mm: no other readings looked for);
    parallax_starts: and footprints this many half parallax shifts towards the nadir (the reading
        being the top);
    max_rms_px: such a reading counts when it passes the tests of a base with an RMS residual up
        to this; the base's model sigma then covers it.
    unseen_rim_coverage, unseen_rim_sigma_share: a base read by its edges with a rim edge on fewer than
        ``unseen_rim_coverage`` of its rays may be a circle on part of it and something else: its model sigma
        widens by ``unseen_rim_sigma_share`` radii per unit of coverage short of that (0: never).
    """

    reach_mm: float
    shifts: int
    parallax_starts: tuple[float, ...]
    max_rms_px: float
    unseen_rim_coverage: float
    unseen_rim_sigma_share: float
