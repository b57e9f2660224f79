"""The check query: lines judged to the hundredth of a millimetre, close calls, and invariances."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest

import rules
from tests.rules.conftest import canonical, model, state_of

NEAR_MM = 0.01
TWO_SIDES = [pytest.param(-NEAR_MM, True, id="inside"), pytest.param(+NEAR_MM, False, id="outside")]
# "Within X" includes X; "below" (overlap depth, over the edge) does not.
INCLUSIVE = [*TWO_SIDES, pytest.param(0.0, True, id="on-the-line")]
STRICT = [*TWO_SIDES, pytest.param(0.0, False, id="on-the-line")]
ENEMIES = [{"id": "red", "player": "A", "leader": "r1"}, {"id": "blue", "player": "B", "leader": "b1"}]
BASES = [
    pytest.param({"diameter_mm": 32.0}, 16.0, id="round"),
    pytest.param({"oval": (60.0, 35.0, 0.0)}, 30.0, id="oval-long"),
    pytest.param({"oval": (60.0, 35.0, 90.0)}, 17.5, id="oval-turned"),
]


def kinds(findings: list[rules.Finding], kind: str) -> list[rules.Finding]:
    return [f for f in findings if f.kind == kind]


@pytest.mark.parametrize("profile", rules.builtin_profiles())
@pytest.mark.parametrize(("base", "reach_mm"), BASES)
@pytest.mark.parametrize(("offset_mm", "engaged"), INCLUSIVE)
def test_engagement_line(profile: str, base: dict[str, Any], reach_mm: float, offset_mm: float, engaged: bool) -> None:
    p = rules.load_profile(profile)
    x = 500.0 + reach_mm + 16.0 + p.engagement.range_mm + offset_mm
    state = state_of([model("r1", "red", 500.0, 500.0, **base), model("b1", "blue", x, 500.0)], ENEMIES)
    found = kinds(rules.check(state, p), "engaged")
    assert bool(found) is engaged
    if engaged:
        assert found[0].gap_mm == pytest.approx(p.engagement.range_mm + offset_mm, abs=1e-6)
        assert found[0].call == rules.CLEAR


@pytest.mark.parametrize(("profile", "limit_mm"), [("skirmish", 50.8), ("40k", 50.8), ("legion", 76.2)])
@pytest.mark.parametrize(("base", "reach_mm"), BASES)
@pytest.mark.parametrize(("offset_mm", "within"), INCLUSIVE)
def test_cohesion_line(
    profile: str, limit_mm: float, base: dict[str, Any], reach_mm: float, offset_mm: float, within: bool
) -> None:
    x = 500.0 + reach_mm + 16.0 + limit_mm + offset_mm
    state = state_of([model("r1", "red", 500.0, 500.0, **base), model("r2", "red", x, 500.0)], ENEMIES[:1])
    found = kinds(rules.check(state, rules.load_profile(profile)), "cohesion")
    assert (not found) is within


@pytest.mark.parametrize(("base", "reach_mm"), BASES)
@pytest.mark.parametrize(("offset_mm", "overlap"), STRICT)
def test_overlap_line(base: dict[str, Any], reach_mm: float, offset_mm: float, overlap: bool) -> None:
    # Inside the line means deeper than 1 mm: gap = -1 - 0.01.
    x = 500.0 + reach_mm + 16.0 - 1.0 + offset_mm
    state = state_of([model("r1", "red", 500.0, 500.0, **base), model("r2", "red", x, 500.0)], ENEMIES[:1])
    assert bool(kinds(rules.check(state, rules.load_profile("skirmish")), "overlap")) is overlap


@pytest.mark.parametrize(("offset_mm", "contact"), INCLUSIVE)
def test_base_contact_line_for_multi_contact(offset_mm: float, contact: bool) -> None:
    units = [*ENEMIES, {"id": "green", "player": "B"}]
    gap = 1.0 + offset_mm
    state = state_of(
        [
            model("r1", "red", 500.0, 500.0),
            model("b1", "blue", 500.0 + 32.0 + gap, 500.0),
            model("g1", "green", 500.0, 500.0 + 32.0 + gap),
        ],
        units,
    )
    found = kinds(rules.check(state, rules.load_profile("legion")), "multi_contact")
    assert bool(found) is contact
    if contact:
        assert found[0].models == ("r1",) and found[0].units == ("blue", "green")


@pytest.mark.parametrize(("base", "reach_mm"), BASES)
@pytest.mark.parametrize(
    ("offset_mm", "off"),
    [
        pytest.param(-NEAR_MM, False, id="on"),
        pytest.param(0.0, False, id="on-the-edge"),
        pytest.param(NEAR_MM, True, id="off"),
    ],
)
@pytest.mark.parametrize("edge", ["left", "right", "near", "far"])
def test_table_edge_line(base: dict[str, Any], reach_mm: float, offset_mm: float, off: bool, edge: str) -> None:
    w, d = 1829.0, 1219.0
    inset = reach_mm - offset_mm  # centre this far from the edge: the base reaches offset_mm over it
    extent_y = 30.0 if reach_mm == 17.5 else (17.5 if reach_mm == 30.0 else 16.0)
    if edge in ("near", "far"):
        inset = extent_y - offset_mm
    where = {"left": (inset, 600.0), "right": (w - inset, 600.0), "near": (900.0, inset), "far": (900.0, d - inset)}
    x, y = where[edge]
    state = state_of([model("r1", "red", x, y, **base)], ENEMIES[:1])
    found = kinds(rules.check(state, rules.load_profile("skirmish")), "off_table")
    assert bool(found) is off


@pytest.mark.parametrize(
    ("offset_mm", "sigma_mm", "expected"),
    [
        (-1.0, 0.2, rules.CLEAR),  # 1 mm inside, band 0.57 mm
        (-0.3, 0.2, rules.CLOSE),
        (0.0, 0.2, rules.CLOSE),
        (+0.3, 0.2, rules.CLOSE),  # a near miss is reported, as too close to call
        (+1.0, 0.2, None),
        (+0.3, 0.0, None),  # exact positions: no close calls
        (-0.3, 0.0, rules.CLEAR),
        (+2.5, 1.0, rules.CLOSE),  # band 2.83 mm
    ],
)
def test_close_calls_on_both_sides_of_the_line(offset_mm: float, sigma_mm: float, expected: str | None) -> None:
    p = rules.load_profile("40k")
    x = 500.0 + 32.0 + p.engagement.range_mm + offset_mm
    state = state_of(
        [model("r1", "red", 500.0, 500.0, sigma_mm=sigma_mm), model("b1", "blue", x, 500.0, sigma_mm=sigma_mm)],
        ENEMIES,
    )
    found = kinds(rules.check(state, p), "engaged")
    assert (found[0].call if found else None) == expected
    if found:
        assert found[0].sigma_mm == pytest.approx(math.hypot(sigma_mm, sigma_mm))


def test_close_cohesion_when_a_link_is_uncertain() -> None:
    # Three in a chain; the second link is 0.2 mm inside 2" with 0.3 mm sigmas: the unit may be broken.
    xs = [100.0, 100.0 + 32.0 + 20.0, 100.0 + 2 * 32.0 + 20.0 + 50.6]
    state = state_of([model(f"r{k}", "red", x, 500.0, sigma_mm=0.3) for k, x in enumerate(xs, 1)], ENEMIES[:1])
    (finding,) = kinds(rules.check(state, rules.load_profile("skirmish")), "cohesion")
    assert finding.call == rules.CLOSE and finding.models == ("r3",)
    assert finding.gap_mm == pytest.approx(50.6)


# ---------------------------------------------------------------------------------------------------------------
# Invariances on random crowded states


def random_state(seed: int, n_units: int = 12, per_unit: int = 6) -> rules.TableState:
    rng = np.random.default_rng(seed)
    units = [{"id": f"u{k}", "player": "AB"[k % 2], "leader": f"u{k}m0"} for k in range(n_units)]
    models = []
    for k in range(n_units):
        cx, cy = rng.uniform(400, 1400), rng.uniform(300, 900)
        for j in range(per_unit):
            kw: dict[str, Any] = (
                {"oval": (60.0, 35.0, float(rng.uniform(0, 180)))}
                if rng.random() < 0.2
                else {"diameter_mm": float(rng.choice([25.0, 32.0, 40.0]))}
            )
            x, y = cx + rng.normal(0, 45), cy + rng.normal(0, 45)
            models.append(model(f"u{k}m{j}", f"u{k}", float(x), float(y), sigma_mm=float(rng.uniform(0, 0.4)), **kw))
    terrain = [{"id": "t0", "kind": "solid", "polygon": [[800, 500], [900, 500], [900, 600], [800, 620]]}]
    return state_of(models, units, terrain=terrain, table={"width_mm": 3000.0, "depth_mm": 3000.0})


def transformed(state: rules.TableState, angle_deg: float, shift: tuple[float, float]) -> rules.TableState:
    a = math.radians(angle_deg)
    c, s = math.cos(a), math.sin(a)
    pivot = (1000.0, 700.0)

    def move(x: float, y: float) -> tuple[float, float]:
        dx, dy = x - pivot[0], y - pivot[1]
        return pivot[0] + c * dx - s * dy + shift[0], pivot[1] + s * dx + c * dy + shift[1]

    models = []
    for m in state.models:
        x, y = move(m.x_mm, m.y_mm)
        base = m.base
        if isinstance(base, rules.OvalBase):
            base = dataclasses.replace(base, rotation_deg=base.rotation_deg + angle_deg)
        models.append(dataclasses.replace(m, x_mm=x, y_mm=y, base=base))
    terrain = tuple(dataclasses.replace(t, polygon=tuple(move(*p) for p in t.polygon)) for t in state.terrain)
    return dataclasses.replace(state, models=tuple(models), terrain=terrain)


def renamed(state: rules.TableState) -> rules.TableState:
    def new(x: str) -> str:
        return "z" + x[::-1]

    units = tuple(dataclasses.replace(u, id=new(u.id), leader=new(u.leader) if u.leader else None) for u in state.units)
    models = tuple(dataclasses.replace(m, id=new(m.id), unit=new(m.unit) if m.unit else None) for m in state.models)
    return dataclasses.replace(state, units=units, models=models)


@pytest.mark.parametrize("profile", rules.builtin_profiles())
@pytest.mark.parametrize("seed", [21, 22])
@pytest.mark.parametrize(("angle_deg", "shift"), [(0.0, (137.5, -42.25)), (33.0, (0.0, 0.0)), (-90.0, (10.0, 20.0))])
def test_rigid_motion_leaves_findings_unchanged(
    profile: str, seed: int, angle_deg: float, shift: tuple[float, float]
) -> None:
    p = rules.load_profile(profile)
    state = random_state(seed)
    before = rules.check(state, p)
    after = rules.check(transformed(state, angle_deg, shift), p)
    # Terrain outlines are polygons: their findings may differ on a rotation only if a base grazes them.
    assert canonical(before) == canonical(after)
    assert len(before) > 3


@pytest.mark.parametrize("profile", rules.builtin_profiles())
def test_renaming_ids_renames_findings(profile: str) -> None:
    p = rules.load_profile(profile)
    state = random_state(23)
    before = rules.check(state, p)
    after = rules.check(renamed(state), p)

    def rename(f: rules.Finding) -> rules.Finding:
        def new(x: str) -> str:
            return "z" + x[::-1]

        return dataclasses.replace(
            f, models=tuple(map(new, f.models)), units=tuple(map(new, f.units)), unit=new(f.unit) if f.unit else None
        )

    assert [rename(f) for f in before] == after


@pytest.mark.parametrize("profile", rules.builtin_profiles())
def test_pair_findings_do_not_depend_on_model_order(profile: str) -> None:
    p = rules.load_profile(profile)
    state = random_state(24)
    reversed_state = dataclasses.replace(state, models=state.models[::-1])
    before, after = rules.check(state, p), rules.check(reversed_state, p)
    pair_kinds = ("engaged", "overlap")
    assert [c for c in canonical(before) if c[0] in pair_kinds] == [c for c in canonical(after) if c[0] in pair_kinds]


def test_unassigned_models_only_take_part_in_placement_checks() -> None:
    state = state_of(
        [model("r1", "red", 500.0, 500.0), model("x1", None, 529.0, 500.0), model("x2", None, 900.0, 500.0)],
        ENEMIES[:1],
    )
    found = rules.check(state, rules.load_profile("skirmish"))
    assert [f.kind for f in found] == ["overlap"]
    assert found[0].units == ("red",)


def test_models_of_the_same_player_are_not_engaged() -> None:
    units = [{"id": "a", "player": "P"}, {"id": "b", "player": "P"}, {"id": "c"}]
    state = state_of(
        [model("a1", "a", 500.0, 500.0), model("b1", "b", 533.0, 500.0), model("c1", "c", 500.0, 533.0)], units
    )
    assert kinds(rules.check(state, rules.load_profile("skirmish")), "engaged") == []


def test_empty_state_has_no_findings(any_profile: rules.RuleProfile) -> None:
    assert rules.check(state_of([], []), any_profile) == []


def test_terrain_pieces_of_different_shapes() -> None:
    terrain = [
        {"id": "tri", "kind": "solid", "polygon": [[0, 0], [50, 0], [50, 50]]},
        {"id": "box", "kind": "solid", "polygon": [[500, 500], [600, 500], [600, 600], [500, 600]]},
    ]
    state = state_of([model("r1", "red", 550.0, 550.0)], ENEMIES[:1], terrain=terrain)
    (finding,) = rules.check(state, rules.load_profile("skirmish"))
    assert (finding.kind, finding.terrain) == ("in_terrain", "box")


def test_models_without_any_unit(any_profile: rules.RuleProfile) -> None:
    state = state_of([model("x1", None, 500.0, 500.0), model("x2", None, 529.0, 500.0)], [])
    assert [f.kind for f in rules.check(state, any_profile)] == ["overlap"]


@pytest.mark.parametrize(
    ("size_sigma_mm", "expected"),
    [(0.0, rules.CLEAR), (1.0, rules.CLOSE)],
)
def test_an_uncertain_base_size_widens_the_call(size_sigma_mm: float, expected: str) -> None:
    # 0.6 mm outside base contact, positions exact: only the sizes' doubt can make it too close to call.
    base = {"diameter_mm": 27.0, "size_sigma_mm": size_sigma_mm}
    models = [
        {"id": "r1", "unit": "red", "x_mm": 500.0, "y_mm": 500.0, "base": base},
        {"id": "b1", "unit": "blue", "x_mm": 500.0 + 27.0 + 1.6, "y_mm": 500.0, "base": base},
    ]
    state = state_of(models, ENEMIES)
    m = rules.measure(state, "r1", "b1", rules.load_profile("legion"))
    (contact,) = [v for v in m.verdicts if v.line == "base_contact"]
    assert (contact.within, contact.call) == (False, expected)
    assert m.sigma_mm == pytest.approx(math.hypot(size_sigma_mm / 2, size_sigma_mm / 2))
