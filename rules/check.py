"""The referee's query: every finding of a table state under a rule profile, all at once.

Pure: no state is kept between calls and nothing outside the arguments is read. All pair work runs on arrays of
candidate pairs from a spatial index; no Python loop runs over pairs of models.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import shapely
from numpy.typing import NDArray

from rules.findings import CLEAR, CLOSE, KINDS, UNSEEN, Finding
from rules.geometry import BaseArrays, FloatArray, IntArray, candidate_pairs
from rules.lines import EPS_MM, Verdict, judge, seen_gap_mm
from rules.profile import RuleProfile
from rules.state import BLOCKING_KINDS, Model, TableState

BoolArray = NDArray[np.bool_]

# Base outlines against terrain: 4 * 32 vertices keep the polygon within 0.01 mm of a 100 mm base.
_QUAD_SEGS = 32


def _call(close: bool) -> str:
    return CLOSE if close else CLEAR


class _Context:
    """Arrays derived once from the state and shared by every rule."""

    def __init__(self, state: TableState, profile: RuleProfile) -> None:
        self.state = state
        self.profile = profile
        self.k = profile.calls.close_sigmas
        self.bases = BaseArrays.from_state(state)
        self.ids = [m.id for m in state.models]
        self.unit_ids = [u.id for u in state.units]
        unit_index = {u: n for n, u in enumerate(self.unit_ids)}
        players: dict[str, int] = {}
        self.unit_player = np.array(
            [-1 if u.player is None else players.setdefault(u.player, len(players)) for u in state.units],
            dtype=np.intp,
        )
        self.model_unit = np.array([-1 if m.unit is None else unit_index[m.unit] for m in state.models], dtype=np.intp)
        self.unit_size = np.bincount(self.model_unit[self.model_unit >= 0], minlength=len(self.unit_ids))
        model_index = {m: n for n, m in enumerate(self.ids)}
        # A leader not seen in this state leads no one in it.
        self.unit_leader = np.array([model_index.get(u.leader or "", -1) for u in state.units], dtype=np.intp)
        # Per model, the size and leader of its unit (0 and -1 for a model with no unit): a sentinel at the end of
        # each per-unit array answers for unit index -1.
        self.size_of_model = np.append(self.unit_size, 0)[self.model_unit]
        self.leader_of_model = np.append(self.unit_leader, -1)[self.model_unit]
        by_unit = np.argsort(self.model_unit, kind="stable")
        bounds = np.searchsorted(self.model_unit[by_unit], np.arange(len(self.unit_ids) + 1))
        self.members = [by_unit[bounds[u] : bounds[u + 1]] for u in range(len(self.unit_ids))]
        sigma = self.bases.sigma_most_mm
        cohesion = profile.cohesion
        reach = max(
            profile.engagement.range_mm,
            profile.contact.gap_mm,
            cohesion.range_mm if cohesion.mode == "chain" else 0.0,
        )
        reach += self.k * np.sqrt(2.0) * (float(sigma.max()) if len(sigma) else 0.0) + EPS_MM
        self.pi, self.pj = candidate_pairs(self.bases, reach)
        self.gap = self.bases.gaps_mm(self.pi, self.pj)
        self.pair_sigma = self.bases.pair_sigma_mm(self.pi, self.pj)
        self.band = self.k * self.pair_sigma
        self.solid = state.measured
        ui, uj = self.model_unit[self.pi], self.model_unit[self.pj]
        player = np.append(self.unit_player, -1)
        pli, plj = player[ui], player[uj]
        self.enemy = (pli >= 0) & (plj >= 0) & (pli != plj)
        self.same_unit = (ui >= 0) & (ui == uj)

    def gaps_to(self, model: int, others: IntArray) -> tuple[FloatArray, FloatArray]:
        """Gaps (M,) from one model to models ``others`` (M,), and their combined sigmas (M,)."""
        gap = self.bases.gaps_mm(np.full(len(others), model, dtype=np.intp), others)
        sigma = self.bases.pair_sigma_mm(np.full(len(others), model, dtype=np.intp), others)
        return gap, sigma

    def within(self, gap: FloatArray, limit: float, sigma: FloatArray) -> Verdict:
        """Gaps within ``limit`` (inclusive), judged as solid bases when the state was measured by a camera."""
        return judge(gap, limit, sigma, self.k, solid=self.solid)

    def pair_finding(self, kind: str, rows: IntArray, limit: float, verdict: Verdict) -> list[Finding]:
        """One finding per candidate pair ``rows``; models listed in the order of their units in the state."""
        out = []
        for r in rows:
            i, j = int(self.pi[r]), int(self.pj[r])
            if 0 <= self.model_unit[j] < self.model_unit[i]:
                i, j = j, i
            units = tuple(dict.fromkeys(self.unit_ids[u] for u in self.model_unit[[i, j]] if u >= 0))
            out.append(
                Finding(
                    kind=kind,
                    models=(self.ids[i], self.ids[j]),
                    units=units,
                    gap_mm=float(seen_gap_mm(self.gap[r], self.solid and kind != "overlap")),
                    limit_mm=limit,
                    sigma_mm=float(self.pair_sigma[r]),
                    call=_call(bool(verdict.close[r])),
                )
            )
        return out


def _engaged(ctx: _Context) -> list[Finding]:
    limit = ctx.profile.engagement.range_mm
    verdict = ctx.within(ctx.gap, limit, ctx.pair_sigma)
    rows = np.flatnonzero(ctx.enemy & verdict.reported)
    if len(rows) == 0:
        return []
    ui, uj = ctx.model_unit[ctx.pi[rows]], ctx.model_unit[ctx.pj[rows]]
    key = np.minimum(ui, uj) * len(ctx.unit_ids) + np.maximum(ui, uj)
    # Per pair of units, the pair of models most surely within the line stands for the unit pair; ties go to the
    # models first in the state, so that the choice does not depend on the spatial index's order.
    order = np.lexsort((ctx.pj[rows], ctx.pi[rows], ctx.gap[rows] + ctx.band[rows], key))
    first = np.ones(len(order), dtype=bool)
    first[1:] = key[order][1:] != key[order][:-1]
    return ctx.pair_finding("engaged", rows[order[first]], limit, verdict)


def _overlaps(ctx: _Context) -> list[Finding]:
    """Bases overlapping deeper than the profile allows. Measured bases are solid: an apparent overlap within what
    the measurement allows is contact, and only one clearly beyond it (a base on or over another) is reported."""
    limit = ctx.profile.overlap.gap_mm
    verdict = judge(ctx.gap, limit, ctx.pair_sigma, ctx.k, strict=True)
    rows = verdict.surely_met if ctx.solid else verdict.reported
    return ctx.pair_finding("overlap", np.flatnonzero(rows), limit, verdict)


def _components(n: int, ei: IntArray, ej: IntArray) -> IntArray:
    """Connected-component label (the smallest member index) of each of ``n`` nodes joined by edges (ei, ej)."""
    labels = np.arange(n, dtype=np.intp)
    while True:
        low = np.minimum(labels[ei], labels[ej])
        new = labels.copy()
        np.minimum.at(new, ei, low)
        np.minimum.at(new, ej, low)
        new = new[new]
        if np.array_equal(new, labels):
            return labels
        labels = new


def _chain_offenders(ctx: _Context, edge: BoolArray) -> tuple[BoolArray, IntArray, IntArray]:
    """Models breaking chain cohesion when only pairs ``edge`` count as within range.

    Returns (offender mask (N,), component label (N,), the main component's label of each unit (U,)).
    """
    n = len(ctx.ids)
    coh = ctx.profile.cohesion
    ei, ej = ctx.pi[edge], ctx.pj[edge]
    degree = np.bincount(np.concatenate([ei, ej]), minlength=n)
    in_unit = ctx.model_unit >= 0
    size = ctx.size_of_model
    large = (coh.large_unit_size > 0) & (size >= coh.large_unit_size)
    need = np.where(large, coh.large_unit_neighbours, coh.neighbours)
    grouped = in_unit & (size >= 2)
    labels = _components(n, ei, ej)
    # The main group of a unit is its largest; on a tie, the one holding the leader, else the first.
    main = np.full(len(ctx.unit_ids), -1, dtype=np.intp)
    members = np.flatnonzero(grouped)
    if len(members):
        # Labels are model indices, so (unit, label) pairs are unique per component.
        pairs, count = np.unique(
            np.stack([ctx.model_unit[members], labels[members]], axis=1), axis=0, return_counts=True
        )
        unit, label = pairs[:, 0], pairs[:, 1]
        leader = ctx.unit_leader[unit]
        has_leader = (leader >= 0) & (labels[np.maximum(leader, 0)] == label)
        order = np.lexsort((label, ~has_leader, -count, unit))
        first = np.ones(len(order), dtype=bool)
        first[1:] = unit[order][1:] != unit[order][:-1]
        main[unit[order][first]] = label[order][first]
    outsider = grouped & (labels != np.append(main, -1)[ctx.model_unit])
    offender = grouped & ((degree < need) | outsider)
    return offender, labels, main


def _chain_offender_gaps(
    ctx: _Context, offenders: IntArray, labels: IntArray, main: IntArray
) -> list[tuple[float, float]]:
    """Per offender, the gap (and its sigma) that keeps it out of cohesion: to its n-th nearest unit-mate and,
    when it stands apart from its unit's main group, between its group and the main group (the larger of the two).

    Every offender-to-unit-mate gap is measured in one vectorised call.
    """
    mates = [ctx.members[ctx.model_unit[m]] for m in offenders]
    mates = [g[g != m] for g, m in zip(mates, offenders, strict=True)]
    counts = [len(g) for g in mates]
    first = np.repeat(offenders, counts)
    second = np.concatenate(mates) if mates else np.empty(0, dtype=np.intp)
    gaps = np.split(ctx.bases.gaps_mm(first, second), np.cumsum(counts)[:-1])
    sigmas = np.split(ctx.bases.pair_sigma_mm(first, second), np.cumsum(counts)[:-1])
    nth: list[tuple[float, float]] = []
    to_core: dict[int, tuple[float, float]] = {}
    for m, g, s, others in zip(offenders, gaps, sigmas, mates, strict=True):
        u = ctx.model_unit[m]
        need = ctx.profile.cohesion.neighbours_needed(int(ctx.unit_size[u]))
        k = int(np.argsort(g)[min(need, len(g)) - 1])
        nth.append((float(g[k]), float(s[k])))
        if labels[m] != main[u]:
            core = labels[others] == main[u]
            if core.any():
                c = int(np.flatnonzero(core)[np.argmin(g[core])])
                link = (float(g[c]), float(s[c]))
                group = int(labels[m])
                if group not in to_core or link[0] < to_core[group][0]:
                    to_core[group] = link
    out = []
    for m, own in zip(offenders, nth, strict=True):
        apart = to_core.get(int(labels[m]))
        out.append(apart if apart is not None and apart[0] > own[0] else own)
    return out


def _cohesion_finding(ctx: _Context, u: int, models: IntArray, gaps: list[tuple[float, float]], close: bool) -> Finding:
    worst = int(np.argmax([g for g, _ in gaps]))
    return Finding(
        kind="cohesion",
        unit=ctx.unit_ids[u],
        models=tuple(ctx.ids[m] for m in models),
        gap_mm=gaps[worst][0],
        limit_mm=ctx.profile.cohesion.range_mm,
        sigma_mm=gaps[worst][1],
        call=_call(close),
    )


def _chain_cohesion(ctx: _Context) -> list[Finding]:
    limit = ctx.profile.cohesion.range_mm
    verdict = ctx.within(ctx.gap, limit, ctx.pair_sigma)
    # Judged twice: counting uncertain pairs as within (what surely breaks) and as outside (what may break).
    sure, sure_labels, sure_main = _chain_offenders(ctx, ctx.same_unit & verdict.reported)
    maybe, maybe_labels, maybe_main = _chain_offenders(ctx, ctx.same_unit & verdict.surely_met)
    # A unit that surely breaks is reported with its sure offenders; otherwise with those that may break it.
    surely_broken = np.zeros(len(ctx.unit_ids) + 1, dtype=bool)
    surely_broken[ctx.model_unit[sure]] = True
    maybe = maybe & ~surely_broken[ctx.model_unit]
    out = []
    for offenders, labels, main, close in (
        (sure, sure_labels, sure_main, False),
        (maybe, maybe_labels, maybe_main, True),
    ):
        models = np.flatnonzero(offenders)
        if len(models) == 0:
            continue
        gaps = _chain_offender_gaps(ctx, models, labels, main)
        unit_of = ctx.model_unit[models]
        for u in np.unique(unit_of):
            rows = np.flatnonzero(unit_of == u)
            out.append(_cohesion_finding(ctx, int(u), models[rows], [gaps[r] for r in rows], close))
    return sorted(out, key=lambda f: ctx.unit_ids.index(f.unit or ""))


def _leader_cohesion(ctx: _Context) -> list[Finding]:
    limit = ctx.profile.cohesion.range_mm
    leader = ctx.leader_of_model
    models = np.flatnonzero((leader >= 0) & (leader != np.arange(len(ctx.ids))))
    if len(models) == 0:
        return []
    leaders = leader[models]
    gap = ctx.bases.gaps_mm(models, leaders)
    sigma = ctx.bases.pair_sigma_mm(models, leaders)
    verdict = ctx.within(gap, limit, sigma)
    out = []
    for u in range(len(ctx.unit_ids)):
        mine = ctx.model_unit[models] == u
        for rows, close in ((mine & ~verdict.met & ~verdict.close, False), (mine & verdict.close, True)):
            if rows.any():
                gaps = list(zip(gap[rows].tolist(), sigma[rows].tolist(), strict=True))
                out.append(_cohesion_finding(ctx, u, models[rows], gaps, close))
                break
    return out


def _multi_contact(ctx: _Context) -> list[Finding]:
    verdict = ctx.within(ctx.gap, ctx.profile.contact.gap_mm, ctx.pair_sigma)
    rows = np.flatnonzero(ctx.enemy & verdict.reported)
    touching: dict[int, dict[int, bool]] = {}
    for r in rows:
        for me, other in ((ctx.pi[r], ctx.pj[r]), (ctx.pj[r], ctx.pi[r])):
            enemies = touching.setdefault(int(me), {})
            unit = int(ctx.model_unit[other])
            enemies[unit] = enemies.get(unit, False) or bool(verdict.surely_met[r])
    out = []
    for m in sorted(touching):
        enemies = touching[m]
        if len(enemies) >= 2:
            out.append(
                Finding(
                    kind="multi_contact",
                    models=(ctx.ids[m],),
                    units=tuple(ctx.unit_ids[u] for u in sorted(enemies)),
                    limit_mm=ctx.profile.contact.gap_mm,
                    call=_call(sum(enemies.values()) < 2),
                )
            )
    return out


def _off_table(ctx: _Context) -> list[Finding]:
    if len(ctx.ids) == 0:
        return []
    c = ctx.bases.center_mm
    ext = ctx.bases.extent_mm()
    t = ctx.state.table
    margin = np.min(
        np.stack(
            [
                c[:, 0] - ext[:, 0],
                t.width_mm - c[:, 0] - ext[:, 0],
                c[:, 1] - ext[:, 1],
                t.depth_mm - c[:, 1] - ext[:, 1],
            ]
        ),
        axis=0,
    )
    limit = 0.0 - ctx.profile.placement.off_table_mm
    verdict = judge(margin, limit, ctx.bases.sigma_most_mm, ctx.k, strict=True)
    return [
        Finding(
            kind="off_table",
            models=(ctx.ids[m],),
            gap_mm=float(margin[m]),
            limit_mm=limit,
            sigma_mm=float(ctx.bases.sigma_most_mm[m]),
            call=_call(bool(verdict.close[m])),
        )
        for m in np.flatnonzero(verdict.reported)
    ]


def _in_terrain(ctx: _Context) -> list[Finding]:
    solid = [t for t in ctx.state.terrain if t.kind in BLOCKING_KINDS]
    if not solid or len(ctx.ids) == 0:
        return []
    polys = np.array([shapely.Polygon(t.polygon) for t in solid], dtype=object)
    shapely.prepare(polys)
    tree = shapely.STRtree(polys)
    band = ctx.k * ctx.bases.sigma_most_mm
    reach = ctx.bases.circumradius_mm + band
    model, poly = tree.query(shapely.points(ctx.bases.center_mm), predicate="dwithin", distance=float(reach.max()))
    if len(model) == 0:
        return []
    # A model on top of a piece is not in it, nor in a piece no taller than the one it stands on.
    level = ctx.bases.level_mm if ctx.bases.level_mm is not None else np.zeros(len(ctx.ids))
    height = np.array([np.nan if t.height_mm is None else t.height_mm for t in solid], dtype=np.float64)
    on_top = np.array([m.on_terrain is not None for m in ctx.state.models], dtype=bool)
    below = on_top[model] & (level[model] >= height[poly])
    model, poly = model[~below], poly[~below]
    if len(model) == 0:
        return []
    outline = ctx.bases.polygons(model.astype(np.intp), _QUAD_SEGS)
    inside = shapely.intersects(outline, polys[poly]) & ~shapely.touches(outline, polys[poly])
    # Within the band of the outline it may be in; shrunk by the band and still in, it is surely in.
    maybe = (shapely.distance(outline, polys[poly]) <= band[model]) & (band[model] > 0)
    surely = inside.copy()
    doubt = np.flatnonzero(inside & (band[model] > 0))
    if len(doubt):
        shrunk = shapely.buffer(outline[doubt], -band[model[doubt]])
        surely[doubt] = shapely.intersects(shrunk, polys[poly[doubt]]) & ~shapely.touches(shrunk, polys[poly[doubt]])
    out = []
    for k in np.flatnonzero(inside | maybe):
        out.append(
            Finding(
                kind="in_terrain",
                models=(ctx.ids[model[k]],),
                terrain=solid[poly[k]].id,
                sigma_mm=float(ctx.bases.sigma_most_mm[model[k]]),
                call=_call(not bool(surely[k])),
            )
        )
    return out


def _top_margins_mm(outlines: NDArray[np.object_], tops: NDArray[np.object_]) -> FloatArray:
    """How far inside the edge of each top (M,) each base outline (M,) reaches: the least distance to the edge when
    the base is wholly on the top, else minus how far its outline runs past the edge."""
    margin = np.asarray(shapely.distance(outlines, shapely.boundary(tops)), dtype=np.float64)
    over = np.flatnonzero(~shapely.within(outlines, tops))
    for k in over:
        corners = shapely.points(shapely.get_coordinates(outlines[k]))
        margin[k] = -float(np.max(shapely.distance(corners, tops[k])))
    return margin


def _off_top(ctx: _Context) -> list[Finding]:
    """Models standing on a top (``on_terrain``) whose base is not wholly on it: not a legal position, so a finding
    of kind ``in_terrain`` naming the piece, with ``gap_mm`` how far inside the top's edge the base reaches (negative:
    over it), judged against ``[placement] off_top_mm`` as a base over the table's edge is."""
    on = [k for k, m in enumerate(ctx.state.models) if m.on_terrain is not None]
    if not on:
        return []
    idx = np.array(on, dtype=np.intp)
    pieces = {t.id: shapely.Polygon(t.polygon) for t in ctx.state.terrain}
    names = [ctx.state.models[k].on_terrain or "" for k in on]
    margin = _top_margins_mm(ctx.bases.polygons(idx, _QUAD_SEGS), np.array([pieces[t] for t in names], dtype=object))
    limit = 0.0 - ctx.profile.placement.off_top_mm
    sigma = ctx.bases.sigma_most_mm[idx]
    verdict = judge(margin, limit, sigma, ctx.k, strict=True)
    return [
        Finding(
            kind="in_terrain",
            models=(ctx.ids[idx[r]],),
            gap_mm=float(margin[r]),
            limit_mm=limit,
            sigma_mm=float(sigma[r]),
            call=_call(bool(verdict.close[r])),
            terrain=names[r],
        )
        for r in np.flatnonzero(verdict.reported)
    ]


def _unseen(state: TableState) -> list[Finding]:
    """One finding per unit (and one for models of no unit) listing its models the state does not show."""
    order = {u.id: n for n, u in enumerate(state.units)}
    groups: dict[str | None, list[Model]] = {}
    for m in sorted(state.unseen, key=lambda m: order.get(m.unit or "", len(order))):
        groups.setdefault(m.unit, []).append(m)
    return [
        Finding(
            kind="unseen",
            models=tuple(m.id for m in models),
            unit=unit,
            call=CLOSE,
            reason=UNSEEN,
            last_seen_mm=tuple((m.id, m.x_mm, m.y_mm) for m in models),
        )
        for unit, models in groups.items()
    ]


def _opened_by_unseen(state: TableState, profile: RuleProfile, findings: list[Finding]) -> list[Finding]:
    """``findings`` with every call an unseen model could change left open.

    The state is judged again with its unseen models at their last places. A unit with unseen models keeps the
    cohesion finding of that judgement (else the one of its seen models), open: the unseen could bridge or break
    it, and an unseen leader is still the one to keep cohesion to. An engagement the seen models do not make but an
    unseen model at its last place could is reported open. A clear engagement of seen models stands: unseen models
    cannot undo it.
    """
    hidden = {m.unit for m in state.unseen if m.unit is not None}
    whole_state = replace(state, models=state.models + state.unseen, unseen=())
    whole = _Context(whole_state, profile)
    cohesion = {f.unit: f for f in _cohesion(whole) if f.unit in hidden}
    out = []
    for f in findings:
        if f.kind == "cohesion" and f.unit in hidden:
            f = cohesion.pop(f.unit, f)
            f = replace(f, call=CLOSE, reason=UNSEEN)
        out.append(f)
    out += [replace(f, call=CLOSE, reason=UNSEEN) for f in cohesion.values()]
    engaged = {frozenset(f.units) for f in findings if f.kind == "engaged"}
    unseen_ids = {m.id for m in state.unseen}
    for f in _engaged(whole):
        if frozenset(f.units) not in engaged and unseen_ids.intersection(f.models):
            out.append(replace(f, call=CLOSE, reason=UNSEEN))
    return out


def _cohesion(ctx: _Context) -> list[Finding]:
    mode = ctx.profile.cohesion.mode
    if mode == "chain":
        return _chain_cohesion(ctx)
    if mode == "leader":
        return _leader_cohesion(ctx)
    return []


def check(state: TableState, profile: RuleProfile) -> list[Finding]:
    """Every finding of ``state`` under ``profile``, in the order of :data:`rules.findings.KINDS`.

    Engagement is judged between models of units of different players; models with no unit take part in the
    overlap and placement checks only. A finding is reported when its rule is met, and also, with
    ``call="close"``, when the measurement cannot tell which side of the line it is on. The state's unseen models
    are reported per unit, and every call they could change is open (``reason="unseen"``).
    """
    ctx = _Context(state, profile)
    findings = _engaged(ctx) + _cohesion(ctx)
    findings += _overlaps(ctx)
    if profile.multi_contact.enabled:
        findings += _multi_contact(ctx)
    findings += _off_table(ctx)
    findings += _in_terrain(ctx) + _off_top(ctx)
    if state.unseen:
        findings = _unseen(state) + _opened_by_unseen(state, profile, findings)
    return sorted(findings, key=lambda f: KINDS.index(f.kind))
