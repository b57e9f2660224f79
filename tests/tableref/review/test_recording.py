"""Reading a recording ahead of its measurement: the still frames picked out of the samples, and the thread that
reads them ahead (order, progress, errors, stopping, how far ahead)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from tableref.pipeline.motion import SettleWatch, thumbnail
from tableref.review.recording import Sample, read_ahead, still_frames

FPS = 5.0


def _frames(levels: str) -> list[Sample]:
    """One sample per character, FPS a second: a digit is a flat grey picture of that level (x 20): the same digit
    is a still table, another digit a movement."""
    return [Sample(k, k / FPS, np.full((48, 64, 3), 20 * int(c), dtype=np.uint8)) for k, c in enumerate(levels)]


@pytest.mark.parametrize(
    ("levels", "settle_s", "spell_done", "expected"),
    [
        # still from the start: the first sample settled for 0.6 s (4 samples at 5 a second) is measured once
        ("1111111111", 0.6, False, [3]),
        # a move, then still again: one frame per spell
        ("1111122222222", 0.6, False, [3, 8]),
        # a spell shorter than settle_s is never measured
        ("11112233333333", 0.6, False, [3, 9]),
        ("1212121212", 0.6, False, []),
        # resumed inside a spell already measured: only the next spell
        ("111112222222", 0.6, True, [8]),
        # photos: every picture that differs is its own spell, settled at once
        ("1123", 0.0, False, [0, 2, 3]),
    ],
)
def test_still_frames_are_the_first_settled_sample_of_each_spell(
    levels: str, settle_s: float, spell_done: bool, expected: list[int]
) -> None:
    watch = SettleWatch(settle_s, pixel_delta=5, fraction=0.01)
    frames = _frames(levels)
    if spell_done:
        # as a resumed review does: the watch takes up the stored spell's first thumbnail
        watch.update(thumbnail(frames[0].image_bgr, 32, colour=True), -1.0)
    found = list(still_frames(iter(frames), watch, 32, spell_done))
    assert [f.sample.index for f in found] == expected
    for f in found:
        # the spell began where the level last changed
        began = max(k for k in range(f.sample.index + 1) if k == 0 or levels[k] != levels[k - 1])
        assert f.moved_at_s == pytest.approx(began / FPS)
        assert f.thumb.shape[1] == 32 and np.array_equal(f.anchor, f.thumb)


def _counting(n: int, made: list[int], fail_at: int | None = None) -> Callable[[Callable[[int], None]], Iterator[int]]:
    def make(count: Callable[[int], None]) -> Iterator[int]:
        for k in range(n):
            if k == fail_at:
                raise ValueError(f"item {k} is damaged")
            made.append(k)
            count(10)
            yield k

    return make


@pytest.mark.parametrize("limit", [1, 3, 50])
def test_read_ahead_yields_every_item_in_order_and_reports_every_frame(limit: int) -> None:
    made: list[int] = []
    passed: list[int] = []
    assert list(read_ahead(_counting(20, made), limit, passed.append)) == list(range(20))
    assert sum(passed) == 200
    assert threading.current_thread() is threading.main_thread()


def test_read_ahead_raises_the_makers_error_where_its_item_would_come() -> None:
    got = []
    with pytest.raises(ValueError, match="item 5 is damaged"):
        for item in read_ahead(_counting(20, [], fail_at=5), 2, lambda n: None):
            got.append(item)
    assert got == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("limit", [1, 4])
def test_read_ahead_runs_at_most_its_limit_ahead_and_stops_when_left(limit: int) -> None:
    made: list[int] = []
    closed = threading.Event()

    def make(count: Callable[[int], None]) -> Iterator[int]:
        try:
            for k in range(1000):
                made.append(k)
                yield k
        finally:
            closed.set()

    for item in read_ahead(make, limit, lambda n: None):
        time.sleep(0.3)  # the maker has had time to fill the queue
        # the item in hand, the queue full, one more made and waiting for room
        assert len(made) <= item + 1 + limit + 1
        if item == 2:
            break
    assert closed.wait(2.0)
    assert len(made) < 1000


def test_read_ahead_raises_an_error_of_the_maker_itself() -> None:
    def make(count: Callable[[int], None]) -> Iterator[int]:
        raise OSError("the recording went away")

    with pytest.raises(OSError, match="went away"):
        list(read_ahead(make, 2, lambda n: None))
