"""Labels placed apart: each in its own place where it is free, else at the nearest free place round its anchor with a
leader line, always inside the drawing; none overlapping another; left out only where no place is free."""

from __future__ import annotations

import itertools

import pytest

from tableref.labels import Circle, Label, label_for, place_labels, text_size

BOUNDS = (0.0, 0.0, 400.0, 300.0)


def _box(label: Label, cx: float, cy: float) -> tuple[float, float, float, float]:
    hw, hh = label.width / 2 + label.pad, label.height / 2 + label.pad
    return cx - hw, cy - hh, cx + hw, cy + hh


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] - 1e-9 and b[0] < a[2] - 1e-9 and a[1] < b[3] - 1e-9 and b[1] < a[3] - 1e-9


def _row(n: int, pitch: float, y: float = 150.0, font: float = 12.0) -> list[Label]:
    return [label_for(f"model-{k}", 100.0 + pitch * k, y, font, own=f"m{k}") for k in range(n)]


@pytest.mark.parametrize(
    ("labels", "bases", "moved"),
    [
        # far apart: every label in its own place
        (_row(3, 120.0), [], 0),
        # side by side closer than their width: the first keeps its place, the others go round with a leader
        (_row(4, 20.0), [], 3),
        # a unit name above its model, clear of the bases, and the model's id on its base
        (
            [label_for("Clones", 200.0, 140.0, 12.0, above=True, clear_of_bases=True), label_for("c1", 200, 150, 10)],
            [Circle("c1", 200.0, 150.0, 10.0)],
            0,
        ),
        # in a corner: moved inside the drawing, not left out
        ([label_for("Unit at the edge", 2.0, 2.0, 12.0, above=True)], [], 0),
    ],
)
def test_labels_stand_apart_inside_the_drawing(labels: list[Label], bases: list[Circle], moved: int):
    placed = place_labels(labels, BOUNDS, bases)
    assert all(p is not None for p in placed)
    boxes = [_box(label, p.cx, p.cy) for label, p in zip(labels, placed, strict=True) if p is not None]
    assert [pair for pair in itertools.combinations(boxes, 2) if _overlap(*pair)] == []
    for x0, y0, x1, y1 in boxes:
        assert x0 >= BOUNDS[0] - 1e-9 and y0 >= BOUNDS[1] - 1e-9 and x1 <= BOUNDS[2] + 1e-9 and y1 <= BOUNDS[3] + 1e-9
    assert sum(p.leader is not None for p in placed if p is not None) == moved
    for label, p in zip(labels, placed, strict=True):
        assert p is not None
        if p.leader is not None:
            # the leader runs from the anchor to the label's box
            x0, y0, x1, y1 = _box(label, p.cx, p.cy)
            assert p.leader[:2] == pytest.approx((label.x, label.y), abs=0.01)
            ex, ey = p.leader[2:]
            assert x0 - 0.01 <= ex <= x1 + 0.01 and y0 - 0.01 <= ey <= y1 + 0.01


def test_a_label_moved_off_keeps_clear_of_the_other_bases_where_it_can():
    # ids on a row of bases in contact: each moved id lands off every base but its own
    bases = [Circle(f"m{k}", 100.0 + 20.0 * k, 150.0, 10.0) for k in range(4)]
    labels = _row(4, 20.0)
    placed = place_labels(labels, BOUNDS, bases)
    for label, p in zip(labels, placed, strict=True):
        assert p is not None
        if p.leader is None:
            continue
        x0, y0, x1, y1 = _box(label, p.cx, p.cy)
        for c in bases:
            if c.id == label.own:
                continue
            dx = max(x0 - c.x, 0.0, c.x - x1)
            dy = max(y0 - c.y, 0.0, c.y - y1)
            assert dx * dx + dy * dy >= c.r * c.r - 1e-6, (label.text, c.id)


@pytest.mark.parametrize(("n", "left"), [(1, 0), (2, 1)])
def test_a_label_with_no_free_place_is_left_out(n: int, left: int):
    # a drawing with room for one label only
    bounds = (0.0, 0.0, 60.0, 20.0)
    labels = [label_for("wide label", 30.0, 10.0, 10.0) for _ in range(n)]
    placed = place_labels(labels, bounds)
    assert sum(p is None for p in placed) == left
    assert placed[0] is not None and placed[0].leader is None


@pytest.mark.parametrize(("text", "wider"), [("iii", "mmm"), ("c1", "MW"), ("1.0", "Clone")])
def test_estimated_text_grows_with_wide_letters(text: str, wider: str):
    assert text_size(text, 10.0)[0] < text_size(wider, 10.0)[0]
    assert text_size(text, 20.0)[0] == pytest.approx(2 * text_size(text, 10.0)[0])
