"""Settings of the vision stage. Every value comes from the ``[vision]`` section of ``vision/defaults.toml``, beside
this file (or a user's settings file); the dataclass holds no defaults of its own."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from vision.errors import SettingsError

# Settings that must be positive, in (0, 1], and not negative (the rest are checked one by one).
_POSITIVE = (
    "finder_max_diameter_mm",
    "finder_centre_sigma_mm",
    "finder_diameter_sigma_mm",
    "finder_reach_mm",
    "finder_pack_min_bases",
    "finder_pack_gap_mm",
    "finder_pack_move_mm",
    "known_edge_limit_mm",
    "snap_tolerance_mm",
    "seed_radius_px",
    "seed_canny_high",
    "vote_canny_low",
    "vote_canny_high",
    "vote_blur_px",
    "vote_cell_mm",
    "sample_step_px",
    "search_step_mm",
    "seed_search_mm",
    "refine_search_mm",
    "outlier_sigmas",
    "max_fit_rms_px",
    "colour_max_fit_rms_px",
    "edge_correlation_px",
    "min_wall_mm",
    "min_disc_contrast",
    "outline_step_px",
    "edge_diameter_sigma_mm",
    "outline_diameter_sigma_mm",
    "edge_model_sigma_mm",
    "outline_model_sigma_mm",
    "ambiguity_max_rms_px",
    "outline_height_sigma",
    "read_height_sigma",
)
_FRACTIONS = (
    "seed_vote_fraction",
    "vote_fraction",
    "edge_peak_fraction",
    "ring_support_fraction",
    "outline_start_margin",
    "min_edge_coverage",
    "kin_min_edge_coverage",
    "unseen_rim_coverage",
    "min_disc_fill",
)
_NON_NEGATIVE = (
    "expected_min_probability",
    "expected_size_share",
    "finder_verifier_probability",
    "finder_unit_probability",
    "finder_trust_probability",
    "finder_pack_probability",
    "finder_sure_probability",
    "finder_seed_probability",
    "finder_keep_probability",
    "finder_band_margin",
    "finder_size_weight",
    "known_astray_misfit_mm",
    "second_ring_mm",
    "inner_ring_fraction",
    "max_overlap_mm",
    "coarse_max_overlap_mm",
    "rim_model_fallback_mm",
    "astray_short_mm",
    "ambiguity_reach_mm",
    "unseen_rim_sigma_share",
    "ambiguity_shifts",
    "min_figure_contrast",
    "faint_disc_contrast",
    "faint_figure_contrast",
    "ring_min_figure_contrast",
    "ring_colour_figure_contrast",
    "ring_inside_max_colour",
    "ring_edge_mm",
    "token_ring_mm",
    "off_centre_reach_mm",
    "off_centre_figure_contrast",
    "round_end_max_wobble",
    "nest_top_mm",
    "nest_score_share",
    "round_end_min_contrast",
    "die_square_agreement",
    "die_line_agreement",
    "size_vote_reach_mm",
    "size_vote_window_mm",
    "size_vote_colour",
    "size_vote_min",
    "size_vote_lone_doubt_mm",
    "outline_size_min_px_per_mm",
    "kin_min_bases",
    "kin_group_min",
    "kin_group_min_score",
    "kin_max_fit_rms_px",
    "kin_reach_mm",
    "kin_lost_overlap_mm",
    "height_pool_min",
    "height_pool_gain",
    "colour_gain",
    "colour_blur_px",
    "colour_mask_margin_mm",
    "verifier_min_probability",
    "reference_blur_mm",
    "reference_light_cell_mm",
    "reference_light_reach_cells",
    "reference_min_change",
    "reference_min_changed_share",
    "reference_outline_share",
    "colour_min_figure_contrast",
    "colour_clear_figure_contrast",
    "colour_clear_figure_grey",
    "shadow_min_darkness",
    "shadow_max_colour",
    "seed_blur_px",
    "profile_blur_px",
    "min_edge_gradient",
    "edge_bias_px",
)


@dataclass(frozen=True)
class VisionSettings:
    """Tunable numbers of base detection. Lengths in mm scale with the image; lengths in px do not.

    Sizes
        base_sizes_mm: the standard round base diameters a detection may snap to.
        snap_tolerance_mm: largest difference between a fitted diameter and the size it snaps to.
    Seeds (HoughCircles on reduced copies of the image)
        seed_hough_circles: whether ``cv2.HoughCircles`` adds seeds to the voted ones (the size bands and reduced
            copies below serve the voting too).
        seed_radius_px: each size band is searched on a copy reduced (by a whole factor, never enlarged) until
            its smallest base is about this radius in px.
        seed_blur_px: Gaussian smoothing of a reduced copy before the circle search (px at its scale).
        seed_band_ratio: largest ratio of radii searched in one pass; the sizes are split into such bands.
        seed_radius_margin: relative widening of each band's radius range (seed radii are only roughly right).
        seed_canny_high: upper Canny threshold of the circle search (grey levels); the lower one is half.
        seed_vote_fraction: accumulator votes needed, as a fraction of the smallest rim length of the band in px.
    Seeds (gradient-direction voting at the standard radii, on the same reduced copies)
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
    Rim edges (intensity profiles along rays from each candidate's centre)
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
        inner_ring_fraction: in images under outline_min_px_per_mm, the outermost ring of the other polarity more
            than second_ring_mm inside the outermost one, supported by at least this fraction of the best ring's
            rays, is read as well, the same way (a contact shadow's outer edge read as the footprint, the base's
            own rim inside it); 0 reads none.
        refine_search_mm: half-width of the second search around the snapped nominal radius.
        refine_passes: edge searches around the nominal radius (each restarts from the previous fit).
        min_edge_gradient: weakest edge accepted on a ray (grey levels per px along the ray).
        edge_peak_fraction: on each ray the outermost edge at least this fraction of the ray's strongest edge of
            the base's polarity is the rim (a base's side wall can add a second, inner edge).
        rim_model_mm: (inward, outward) extent of the mean rim profile whose wall-and-top model corrects the
            radius for blur (see :mod:`vision.profile`).
        wall_width_mm: (mean, sd) of the visible width of a base's side wall seen from above; the rim model
            leans on it where the image is too coarse to measure the width.
        wall_prior_grey: how firmly: a width one sd off costs as much as one profile sample this many grey
            levels off the model.
    Appearance fit (see :mod:`vision.outline`)
        outline_min_px_per_mm: the fit runs only on images at least this fine: at about 1 px/mm the wall, the
            contact shadow and the blur each span about a pixel and trade off, and the edges do better (the fit at a
            known size has a floor of its own, ``known_min_px_per_mm``).
        outline_size_min_px_per_mm: from this fineness up to outline_min_px_per_mm (a 4K frame from a low camera)
            the fit reads only the footprint's size, where it lies within snap_tolerance_mm of the edges' reading;
            the centre stays the edges' (outline_min_px_per_mm or more: never).
        outline_window_mm: (inward, outward) extent (mm) of the pixels looked at about each outline.
        outline_step_px: their spacing along each ray (px).
        outline_sectors: sectors of directions around a base with grey levels of their own; it divides ``rays``.
        contact_shadow_mm: how far (mm, the normal CDF's scale) a base's contact shadow fades into the mat.
        bevel_mm: how much smaller (mm, in radius) a base's top is than its footprint (0: straight walls).
        outline_iterations: Levenberg-Marquardt steps.
        outline_reject_at: the steps before which rays the model does not explain are dropped.
        outline_ray_reject: a ray is dropped when its RMS residual is more than this many times the median.
        outline_starts: where the fit starts from, in half parallax shifts towards the nadir from the edges'
            outline middle (0: the edges' own reading; 1: their circle read as the top disc); a later start's
            fit replaces an earlier one when its RMS residual is below ``outline_start_margin`` times the earlier's.
        outline_height_ratio: (low, high) bounds of each base's rim height as fitted, over the height assumed.
        outline_height_sigma: the spread of that ratio the fit assumes before it looks (a prior about 1).
        edge_diameter_sigma_mm, outline_diameter_sigma_mm: how far a fitted diameter strays from the true size
            (1-sigma, mm) when the edges (and the rim model) fitted it, and when the appearance fit did.
        edge_model_sigma_mm, outline_model_sigma_mm: what each method's outline model misses, per axis (mm);
            for the appearance fit a floor, its own misfit (next) added in quadrature.
        outline_misfit_rays, outline_misfit_scale: the appearance fit's centre and radius sigmas from how its
            residuals cluster (clusters of this many consecutive rays; it divides ``rays``), times this factor.
        known_misfit_scale: that factor for bases fitted again at a known size and rim height
            (:func:`vision.detect.fit_known_bases`).
        known_edge_share: such a base's sigma also holds this share of the distance between its centre and the
            one the edges read, in quadrature: where the two readings disagree, one of them is off.
        known_edge_limit_mm, known_astray_misfit_mm: where that distance exceeds the first and the fit's misfit
            (per axis, before ``known_misfit_scale``) the second, the fit is taken to have gone astray: the edges'
            reading stands (at the known size), its sigma widened as above.
        known_starts: the starts (as ``outline_starts``) of a fit at a known size and rim height.
        known_min_px_per_mm: that fit runs on images at least this fine (with size and height held, the wall and
            the contact shadow no longer trade off against the footprint, so it can run where the free fit cannot).
        refit_read_sizes: bases whose size nobody declared are fitted again too, at the standard size they were read
            at (where the free appearance fit runs), keeping their size doubt.
        read_starts: the starts (as ``outline_starts``) of that fit.
        read_height_sigma: ``outline_height_sigma`` for that fit (the size held, the height shows better).
        height_pool_min, height_pool_gain, height_pool_starts: a unit's bases share their rims' height. After that
            fit, each base's rim height ratio is pooled over the bases of its unit (as the size vote links them:
            within size_vote_reach_mm, tops within size_vote_colour, size_vote_hops steps; of one size read): the
            median of their fitted ratios, its departure from 1 times height_pool_gain (the fit leans on 1),
            within outline_height_ratio, where at least height_pool_min of them fitted. The base is then fitted
            again at that height, from height_pool_starts (as ``outline_starts``). height_pool_min 0 (or
            size_vote_reach_mm 0): not pooled.
        misread_start_steps, misread_start_directions: where a base whose size was read wrong is fitted from as
            well: this many directions round the reading, at these multiples of the difference of the radii (each
            from the first of the fit's starts along the nadir line only, but for a roster's declared bases).
        misread_share, misread_margin: such a base's doubt, added (in quadrature) to its sigma: ``other_start_share``
            of the distance from its kept fit to the farthest fit from its other starts whose misfit is at most
            misread_margin (a share) larger, and at least misread_share of that difference.
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
    Circle fit
        fit_iterations: iteratively reweighted geometric fit steps.
        outlier_sigmas: residuals beyond this many robust sigmas are outliers (weapons, cloaks, neighbours).
        max_fit_rms_px: largest RMS residual of the inlier rim points of a base.
        edge_bias_px: added (in quadrature) to the fitted centre sigma for what the fit cannot see: edges
            pulled by what lies within a millimetre or two of the rim (side wall, shadow, a neighbouring base),
            in px at 1 px/mm. Blur mixes such structures in less as the scale grows, so it is divided by px/mm.
        edge_correlation_px: rim length over which neighbouring ray edges share noise; the fitted centre
            sigma counts one independent point per such length.
    Is it a base?
        min_edge_coverage: smallest fraction of the rays with a rim edge on the fitted circle.
        min_disc_contrast: smallest grey-level difference between the band just inside the rim and the mat
            just outside it (a printed ring line has mat on both sides).
        min_disc_fill: smallest ratio of that median difference to the band's 90th percentile difference: a
            wall or a top fills the band (near 1), a thin printed line only a part of it (small).
        min_wall_mm: a rim whose model (see rim_model_mm) shows a top of the mat's colour (within
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
        size_vote_reach_mm, size_vote_window_mm, size_vote_colour, size_vote_ring, size_vote_hops, size_vote_min:
            a unit's models stand on one size and are based alike: two bases are of one unit where they stand
            within size_vote_reach_mm of each other (edge to edge), their fitted diameters lie within
            size_vote_window_mm and their tops' colours (CIE Lab, 8-bit OpenCV scale, of the medians of the colour
            channels over the ring between the fractions size_vote_ring of the fitted radius) within
            size_vote_colour (0: colour not compared); each base's size is the standard size nearest the median
            fitted diameter of the bases reached within size_vote_hops such steps whose fitted diameters lie within
            size_vote_window_mm of its own, itself included, where there are at least size_vote_min of them (reach
            0: no vote).
        size_vote_lone_doubt_mm: a base the vote leaves alone (fewer than size_vote_min bases fitted about its size
            in reach) whose diameter doubt is at least this much takes the size that at least size_vote_min - 1
            bases of its top's colour in direct reach, each voting, all voted (0: never). A reading of part of a
            rim, or of more than it, stands out so; a hero on a larger base among its unit is fitted sure.
        kin_min_bases, kin_max_fit_rms_px, kin_min_edge_coverage, kin_reach_mm: a reading that fails one test of a
            base is a base where it overlaps no base and at least kin_min_bases bases (or readings that stand so)
            within kin_reach_mm of it edge to edge would be one unit's with it as the size vote links them
            (size_vote_window_mm, size_vote_colour; 0: never): a clear disc (disc contrast at least
            faint_disc_contrast) that fails only the figure test or, where figures blur (under
            outline_min_px_per_mm), a rim rougher than the roundness bar up to kin_max_fit_rms_px, or seen over
            less of its length than min_edge_coverage down to kin_min_edge_coverage, that passes every other test.
        kin_group_min: such readings stand without a base beside them where at least this many, linked as kin
            (as above), form a group: a unit on plain bases, no figure on any; 0: never. Each of them must score
            at least kin_group_min_score.
        kin_lost_overlap_mm: a base's reading that lost to a better scored base only by overlapping it by up to this
            much more than the overlap allowed (max_overlap_mm, coarse_max_overlap_mm) stands by its unit as well,
            where it overlaps none of the bases at the sizes their units vote (one read a size too large keeps its
            neighbour out); 0: never.
        token_ring_mm: a circle around a plain disc (one that passes every test of a base but the figure's),
            centred within ring_edge_mm of it and up to this much larger in radius, is a token's printed ring.
        off_centre_reach_mm, off_centre_figure_contrast: a circle whose inside spreads by less than
            off_centre_figure_contrast around circles about some centre within off_centre_reach_mm of its own is
            a token's (or a printed disc's) concentric pattern seen off centre; in images of at least
            outline_min_px_per_mm only (0 contrast, or no figure test: no such test).
        round_end_max_wobble, round_end_min_contrast: a circle that is the rounded end of a band as wide as itself
            (a fingertip, a forearm; see :mod:`vision.ends`) is not a base: the band's inside must differ from
            both its flanks by at least round_end_min_contrast (grey levels, or their length over the three colour
            channels) and its width and middle wobble about straight lines by at most round_end_max_wobble radii
            (0: no circle is taken for a round end).
        die_square_agreement, die_line_agreement: a circle round a die is not a base: its inside's gradient
            directions agree, taken four times over, by at least die_square_agreement and, taken twice over (as a
            single straight edge's would), by at most die_line_agreement (see :mod:`vision.squares`; 0 for the
            first: no circle is taken for a die's).
        max_overlap_mm: two bases cannot overlap by more than this; the weaker of such a pair is dropped.
        coarse_max_overlap_mm: the same in images under outline_min_px_per_mm, where a size read one step too
            large puts up to 1.5 mm more overlap between bases in contact.
        nest_top_mm, nest_score_share: a larger circle with smaller ones inside it (its top, its figure's outline)
            takes their place where its fitted radius is at most nest_top_mm larger than theirs or its score at least
            nest_score_share of theirs (0: always).
        ambiguity_reach_mm, ambiguity_shifts: other readings of a base read by its edges: larger standard sizes
            up to this much larger in radius (mm), touching the reading on one side, in the best of this many
            directions (0 mm: no other readings looked for);
        ambiguity_parallax_starts: and footprints this many half parallax shifts towards the nadir (the reading
            being the top);
        ambiguity_max_rms_px: such a reading counts when it passes the tests of a base with an RMS residual up
            to this; the base's model sigma then covers it.
        unseen_rim_coverage, unseen_rim_sigma_share: a base read by its edges with a rim edge on fewer than
            ``unseen_rim_coverage`` of its rays may be a circle on part of it and something else: its model sigma
            widens by ``unseen_rim_sigma_share`` radii per unit of coverage short of that (0: never).
    The learned verifier (see :mod:`vision.verify`)
        verifier_min_probability: a circle read is a base where the verifier gives it at least this probability
            (0: no verifier).
        verifier_file: the verifier's weights (.npz); empty: the one that ships in vision/data.
    The learned finder (see :mod:`vision.finder`)
        finder_seed_probability: where the finder gives a base's centre at least this probability and no base was
            found, its rim is looked for there (0: no finder).
        finder_keep_probability: a base found stands only where the finder gives at least this probability within
            ``finder_reach_mm`` of its centre (0: every base stands).
        finder_reach_mm: how far from the finder's centre a base's may lie and still be its.
        finder_max_diameter_mm: the largest base the finder was fitted on: larger bases found stand whatever it says.
        finder_band_margin: the rim is looked for from (1 - this) to (1 + this) of the radius the finder gives.
        finder_sure_probability: where the finder gives at least this and no rim is read there, the finder's own
            centre and size stand, with ``finder_centre_sigma_mm`` and ``finder_diameter_sigma_mm`` as their sigmas
            (above 1: never).
        finder_verifier_probability: what only the finder sees (a rim read at its peak, or its own base) stands
            where the verifier gives it at least this (0: whatever the verifier says).
        finder_unit_probability: what only the finder sees at least this stands whatever the verifier says where at
            least two such bases stand as one unit's (``kin_group_min`` in all with the bases found; 0: never); where
            no rim is read, the finder's own base below ``finder_sure_probability`` stands only so.
        finder_trust_probability: a circle read (of a size up to ``finder_max_diameter_mm``) stands whatever the
            verifier says where the finder gives at least this within ``finder_reach_mm`` of its centre (0: never).
        finder_pack_probability, finder_pack_min_bases, finder_pack_gap_mm, finder_pack_move_mm: where the finder
            gives at least ``finder_pack_probability`` at a place no base found explains, and a base there would
            touch (within ``finder_pack_gap_mm`` edge to edge) at least ``finder_pack_min_bases`` bases found of
            about its size (``size_vote_window_mm``), a base of their size stands there, moved out of them (at most
            ``finder_pack_move_mm``; bases are solid) (0: never).
        finder_size_weight: each base's size is voted (see ``size_vote_*``) again once the finder has looked, on a
            reading that blends this share of the finder's diameter there with (1 - this) of the rim's fitted one
            (0: the rim's alone; bases over ``finder_max_diameter_mm`` keep the rim's).
        finder_file: the finder's net (.onnx); empty: the one that ships in vision/data.
    The bases a roster expects (see :mod:`vision.expected`; only where one is given)
        expected_min_probability: where fewer bases of a size were found than the roster lists, the finder's peaks
            of at least this probability that nothing found explains stand for the missing ones (0: never).
        expected_size_share: such a peak's diameter is within this share of the missing size.
    The empty table (see :mod:`vision.reference`; only where a reference is given)
        reference_blur_mm: both images are smoothed by this much before they are compared.
        reference_light_cell_mm, reference_light_reach_cells: the light's slow change between the two is read per
            cell of this side, as the median over this many cells square (odd, at least 3).
        reference_min_change: a pixel whose colour moved by at least this many grey levels changed.
        reference_min_changed_share: a base changed at least this share of its inside since the table was empty,
        reference_outline_share: ... or the empty table showed less than this share of its outline's edges (a dark
            base on a dark mat changes its inside little, but its wall, rim and shadow are new; a printed ring's
            outline was there).
    Second look, in colour (see :mod:`vision.colour`)
        colour_gain: grey levels of the colour-contrast image per unit of chromaticity distance from the mat
            (0: no second look).
        colour_blur_px: Gaussian smoothing of that image (px).
        colour_mask_margin_mm: the first look's bases, grown by this much, are left out of the second.
        colour_min_figure_contrast: the figure test of the second look, in grey and in colour alike.
        colour_clear_figure_contrast, colour_clear_figure_grey: in images under outline_min_px_per_mm, where
            figures blur, a figure that spreads by the first in colour passes with the second in grey.
        colour_max_fit_rms_px: the second look's max_fit_rms_px (its edges scatter more round a rim than grey
            levels' do); a base's score takes its roundness against it.
        shadow_min_darkness, shadow_max_colour: a circle whose size fits no standard one is read again at the
            inner edge of its rim band where that band is darker than both the mat and the top by at least
            shadow_min_darkness grey levels and of the mat's colour (at most shadow_max_colour in the colour-contrast
            image): a contact shadow around a base of the mat's own colour.
        rim_model_fallback_mm: in images under outline_min_px_per_mm, a circle whose size, corrected by the rim
            model, fits no standard one keeps the size of its edges' own circle where that lies within this of a
            standard size (mm, in diameter; 0: never); where the appearance fit runs, a footprint that fits no
            standard size and is larger than the edges' circle, which lies within this of one, is a fit gone astray
            (a contact shadow taken in), and the base is read as where that fit fails.
        astray_short_mm: so is one that lies less than this (mm, in diameter) inside the edges' circle (the fit read
            a circle inside the footprint); a flat disc, a token or a printed one, with no wall and no shadow of its
            own, reads further inside. 0: only larger footprints.
        top_read_max_darkness: in images under outline_min_px_per_mm, a base the grey look's edges read whose top the
            rim model finds lighter than the mat, or darker by at most this (grey levels), is read by its top disc:
            its wall, facing sideways and less lit, is darker than its top, and the rim edge on the side facing the
            camera is the top's. Its radius gets back the stretch the stadium fit allowed its rays (the top is a
            circle; not round a shadow's dark band), its centre is moved back half a parallax shift (to where the
            outline's middle would be) and a rim height error shows in full (rim_height_share 2). Negative: never.
    """

    base_sizes_mm: tuple[float, ...]
    snap_tolerance_mm: float
    seed_hough_circles: bool
    seed_radius_px: float
    seed_blur_px: float
    seed_band_ratio: float
    seed_radius_margin: float
    seed_canny_high: float
    seed_vote_fraction: float
    vote_canny_low: float
    vote_canny_high: float
    vote_blur_px: float
    vote_fraction: float
    pack_vote_fraction: float
    pack_min_apart: float
    pack_min_score: float
    vote_cell_mm: float
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
    rim_model_mm: tuple[float, ...]
    wall_width_mm: tuple[float, ...]
    wall_prior_grey: float
    outline_min_px_per_mm: float
    outline_size_min_px_per_mm: float
    outline_window_mm: tuple[float, ...]
    outline_step_px: float
    outline_sectors: int
    contact_shadow_mm: float
    bevel_mm: float
    outline_iterations: int
    outline_reject_at: tuple[float, ...]
    outline_starts: tuple[float, ...]
    outline_height_ratio: tuple[float, ...]
    outline_height_sigma: float
    outline_start_margin: float
    outline_ray_reject: float
    edge_diameter_sigma_mm: float
    outline_diameter_sigma_mm: float
    edge_model_sigma_mm: float
    outline_model_sigma_mm: float
    outline_misfit_rays: int
    outline_misfit_scale: float
    known_misfit_scale: float
    known_edge_share: float
    known_edge_limit_mm: float
    known_astray_misfit_mm: float
    known_starts: tuple[float, ...]
    known_min_px_per_mm: float
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
    other_start_share: float
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
    fit_iterations: int
    outlier_sigmas: float
    max_fit_rms_px: float
    edge_bias_px: float
    edge_correlation_px: float
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
    size_vote_reach_mm: float
    size_vote_window_mm: float
    size_vote_colour: float
    size_vote_ring: tuple[float, ...]
    size_vote_hops: int
    size_vote_min: int
    size_vote_lone_doubt_mm: float
    kin_min_bases: int
    kin_group_min: int
    kin_group_min_score: float
    kin_max_fit_rms_px: float
    kin_reach_mm: float
    kin_min_edge_coverage: float
    kin_lost_overlap_mm: float
    token_ring_mm: float
    off_centre_reach_mm: float
    off_centre_figure_contrast: float
    round_end_max_wobble: float
    round_end_min_contrast: float
    die_square_agreement: float
    die_line_agreement: float
    max_overlap_mm: float
    coarse_max_overlap_mm: float
    nest_top_mm: float
    nest_score_share: float
    ambiguity_reach_mm: float
    ambiguity_shifts: int
    ambiguity_parallax_starts: tuple[float, ...]
    ambiguity_max_rms_px: float
    unseen_rim_coverage: float
    unseen_rim_sigma_share: float
    verifier_min_probability: float
    verifier_file: str
    finder_seed_probability: float
    finder_keep_probability: float
    finder_reach_mm: float
    finder_max_diameter_mm: float
    finder_band_margin: float
    finder_sure_probability: float
    finder_verifier_probability: float
    finder_unit_probability: float
    finder_trust_probability: float
    finder_pack_probability: float
    finder_pack_min_bases: int
    finder_pack_gap_mm: float
    finder_pack_move_mm: float
    finder_centre_sigma_mm: float
    finder_diameter_sigma_mm: float
    finder_size_weight: float
    finder_file: str
    expected_min_probability: float
    expected_size_share: float
    reference_blur_mm: float
    reference_light_cell_mm: float
    reference_light_reach_cells: int
    reference_min_change: float
    reference_min_changed_share: float
    reference_outline_share: float
    colour_gain: float
    colour_blur_px: float
    colour_mask_margin_mm: float
    colour_min_figure_contrast: float
    colour_clear_figure_contrast: float
    colour_clear_figure_grey: float
    colour_max_fit_rms_px: float
    shadow_min_darkness: float
    shadow_max_colour: float
    rim_model_fallback_mm: float
    astray_short_mm: float
    top_read_max_darkness: float

    def __post_init__(self) -> None:
        self._check_numbers()
        self._check_seeds_and_votes()
        self._check_outline()
        self._check_walls_and_bands()

    def _check_numbers(self) -> None:
        """Every value a finite number (the verifier's file a path), and the ranges of :data:`_POSITIVE`,
        :data:`_FRACTIONS` and :data:`_NON_NEGATIVE`."""
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("verifier_file", "finder_file"):
                if not isinstance(value, str):
                    raise SettingsError(f"{f.name} must be a path (a string), got {value!r}")
                continue
            values = value if isinstance(value, tuple) else (value,)
            if not all(isinstance(v, int | float) and math.isfinite(v) for v in values):
                raise SettingsError(f"vision setting {f.name} must be finite numbers, got {value!r}")
        for name in _POSITIVE:
            if getattr(self, name) <= 0:
                raise SettingsError(f"{name} must be positive, got {getattr(self, name)!r}")
        for name in _FRACTIONS:
            if not 0 < getattr(self, name) <= 1:
                raise SettingsError(f"{name} must be in (0, 1], got {getattr(self, name)!r}")
        for name in _NON_NEGATIVE:
            if getattr(self, name) < 0:
                raise SettingsError(f"{name} must not be negative, got {getattr(self, name)!r}")

    def _check_seeds_and_votes(self) -> None:
        """Sizes, seeds, rays, the size vote and the pack's look."""
        if not self.base_sizes_mm or min(self.base_sizes_mm) <= 0:
            raise SettingsError(f"base_sizes_mm must list positive diameters, got {self.base_sizes_mm!r}")
        if self.seed_band_ratio < 1:
            raise SettingsError(f"seed_band_ratio must be at least 1, got {self.seed_band_ratio}")
        # a copy is reduced until its smallest base is about this radius: under a pixel it would be enlarged instead
        if self.seed_radius_px < 1:
            raise SettingsError(f"seed_radius_px must be at least 1 (px), got {self.seed_radius_px!r}")
        # the radius range searched is widened by (1 - margin) to (1 + margin): from 1 on it would reach 0
        if not 0 <= self.seed_radius_margin < 1:
            raise SettingsError(f"seed_radius_margin must be from 0 to less than 1, got {self.seed_radius_margin!r}")
        if min(self.rays, self.search_rays) < 16:
            raise SettingsError(
                f"rays and search_rays must be at least 16 to see a rim, got {self.rays}, {self.search_rays}"
            )
        if self.refine_passes < 1 or self.fit_iterations < 1:
            raise SettingsError("refine_passes and fit_iterations must be at least 1")
        if self.finder_size_weight > 1:
            raise SettingsError(f"finder_size_weight must be from 0 to 1, got {self.finder_size_weight!r}")
        if len(self.size_vote_ring) != 2 or not 0 <= self.size_vote_ring[0] < self.size_vote_ring[1] <= 1:
            raise SettingsError(
                "size_vote_ring must be [inner, outer] fractions of the radius, 0 <= inner < outer <= 1, got "
                f"{list(self.size_vote_ring)}"
            )
        if (
            not 0 <= self.pack_vote_fraction <= 1
            or not 0 <= self.pack_min_apart <= 2
            or not 0 <= self.pack_min_score <= 1
        ):
            raise SettingsError(
                "pack_vote_fraction must be in [0, 1] (0: off), pack_min_apart in [0, 2] (radii) and pack_min_score "
                f"in [0, 1], got {self.pack_vote_fraction!r}, {self.pack_min_apart!r} and {self.pack_min_score!r}"
            )
        if self.size_vote_hops < 1:
            raise SettingsError(f"size_vote_hops must be at least 1, got {self.size_vote_hops!r}")

    def _check_outline(self) -> None:
        """The rim model and the appearance fit: windows, sectors, starts and misfit scales."""
        if len(self.rim_model_mm) != 2 or min(self.rim_model_mm) <= 0:
            raise SettingsError(
                f"rim_model_mm must be [inward, outward], both positive (mm), got {list(self.rim_model_mm)}"
            )
        if len(self.wall_width_mm) != 2 or min(self.wall_width_mm) <= 0:
            raise SettingsError(f"wall_width_mm must be [mean, sd], both positive (mm), got {list(self.wall_width_mm)}")
        if len(self.outline_window_mm) != 2 or min(self.outline_window_mm) <= 0:
            raise SettingsError(
                f"outline_window_mm must be [inward, outward], both positive (mm), got {list(self.outline_window_mm)}"
            )
        if self.outline_sectors < 1 or self.outline_iterations < 0:
            raise SettingsError("outline_sectors must be at least 1 and outline_iterations not negative")
        if self.outline_misfit_rays < 1 or self.rays % self.outline_misfit_rays:
            raise SettingsError(
                f"outline_misfit_rays must divide rays, got {self.outline_misfit_rays} of {self.rays} rays"
            )
        if self.outline_misfit_scale < 0:
            raise SettingsError(f"outline_misfit_scale must not be negative, got {self.outline_misfit_scale}")
        if self.known_misfit_scale < 0:
            raise SettingsError(f"known_misfit_scale must not be negative, got {self.known_misfit_scale}")
        if self.known_edge_share < 0:
            raise SettingsError(f"known_edge_share must not be negative, got {self.known_edge_share}")
        if self.rays % self.outline_sectors:
            raise SettingsError(
                f"outline_sectors must divide rays (each sector the same number of rays), got {self.outline_sectors} "
                f"sectors of {self.rays} rays"
            )
        if (
            len(self.outline_height_ratio) != 2
            or not 0 < self.outline_height_ratio[0] <= 1 <= self.outline_height_ratio[1]
        ):
            raise SettingsError(
                "outline_height_ratio must be [low, high] with 0 < low <= 1 <= high, got "
                f"{list(self.outline_height_ratio)}"
            )
        if not self.outline_starts:
            raise SettingsError("outline_starts must list at least one start (0: where the edges put the base)")
        if not self.known_starts:
            raise SettingsError("known_starts must list at least one start (0: where the base was detected)")
        if not self.read_starts:
            raise SettingsError("read_starts must list at least one start (0: where the base was detected)")
        if not self.height_pool_starts:
            raise SettingsError("height_pool_starts must list at least one start (0: where the fit put the base)")
        if any(step <= 0 for step in self.misread_start_steps) or self.misread_start_directions < 1:
            raise SettingsError(
                "misread_start_steps must be positive and misread_start_directions at least 1, got "
                f"{list(self.misread_start_steps)} and {self.misread_start_directions}"
            )
        if min(self.misread_share, self.misread_margin, self.other_start_share) < 0:
            raise SettingsError(
                "misread_share, misread_margin and other_start_share must not be negative, got "
                f"{self.misread_share}, {self.misread_margin} and {self.other_start_share}"
            )

    def _check_walls_and_bands(self) -> None:
        """Cast shadows, blur, the wall's bounds and doubts, and the bands of the disc and figure tests."""
        if self.cast_shadow_mm < 0 or self.cast_min_z < 0 or self.cast_min_bases < 2:
            raise SettingsError(
                "cast_shadow_mm and cast_min_z must not be negative and cast_min_bases must be at least 2, got "
                f"{self.cast_shadow_mm}, {self.cast_min_z} and {self.cast_min_bases}"
            )
        if self.excess_blur_free < 1 or self.excess_blur_scale < 0 or self.excess_blur_min_bases < 1:
            raise SettingsError(
                "excess_blur_free must be at least 1, excess_blur_scale not negative and excess_blur_min_bases at "
                f"least 1, got {self.excess_blur_free}, {self.excess_blur_scale} and {self.excess_blur_min_bases}"
            )
        if not math.isfinite(self.wall_dark_max) or not math.isfinite(self.wall_light_min):
            raise SettingsError(
                f"wall_dark_max and wall_light_min must be numbers, got {self.wall_dark_max} and {self.wall_light_min}"
            )
        if not self.wall_dark_far >= self.wall_dark_max or not self.wall_light_far <= self.wall_light_min:
            raise SettingsError(
                "wall_dark_far must be at least wall_dark_max and wall_light_far at most wall_light_min (a wall "
                f"farther out than the first bound), got {self.wall_dark_far} and {self.wall_light_far}"
            )
        if self.wall_misplaced_doubt < 0 or self.wall_far_doubt < self.wall_misplaced_doubt:
            raise SettingsError(
                "wall_misplaced_doubt must not be negative and wall_far_doubt not below it, got "
                f"{self.wall_misplaced_doubt} and {self.wall_far_doubt}"
            )
        if self.bevel_mm < 0:
            raise SettingsError(f"bevel_mm must not be negative, got {self.bevel_mm}")
        if self.contact_shadow_mm <= 0 or self.outline_ray_reject <= 1:
            raise SettingsError("contact_shadow_mm must be positive and outline_ray_reject more than 1")
        if self.wall_prior_grey <= 0:
            raise SettingsError(f"wall_prior_grey must be positive, got {self.wall_prior_grey}")
        for name in ("disc_inner_mm", "disc_outer_mm"):
            band = getattr(self, name)
            if len(band) != 2 or not 0 <= band[0] < band[1]:
                raise SettingsError(f"{name} must be [start, end] with 0 <= start < end (mm), got {list(band)}")
        if len(self.figure_band) != 2 or not 0 <= self.figure_band[0] < self.figure_band[1] <= 1:
            raise SettingsError(
                f"figure_band must be [start, end] with 0 <= start < end <= 1 (radius fractions), got "
                f"{list(self.figure_band)}"
            )
