"""The review database keeps its data safe: checksums of the stored frames checked when read, a damaged or foreign
file named in one line, a full disk that loses nothing stored, and databases of the older schema still read."""

from __future__ import annotations

import errno
import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

import rules
from rules.state import dump_state
from synth.game import GameVideo
from tableref.cli import main
from tableref.config import load_config
from tableref.errors import StoreError
from tableref.review.store import SCHEMA_VERSION, Resume, ReviewStore
from tableref.review.timeline import review_states
from tests.tableref.review_game import roster_state, truth_states

TABLE = rules.Table(1829.0, 1219.0)
# Bytes a damaged disk block is made of: 4 KB, as one file-system block.
BLOCK = 4096


def _jpeg(seed: int) -> bytes:
    """A noisy 160 x 120 JPEG (about 15 KB, stored over several database pages)."""
    image = np.random.default_rng(seed).integers(0, 255, (120, 160, 3), dtype=np.uint8)
    return bytes(cv2.imencode(".jpg", image)[1].tobytes())


def _stored_review(path: Path, frames: int = 3) -> list[bytes]:
    """A review of ``frames`` settled states of one model moving, each with its JPEG; returns the JPEGs."""
    seq = [
        (
            10 * k,
            float(k),
            rules.TableState(TABLE, (), (rules.Model("m0", None, 300.0 + 20 * k, 300.0, rules.RoundBase(32.0)),)),
        )
        for k in range(frames)
    ]
    states = review_states(seq, rules.load_profile("skirmish"), load_config().review, None, None, [None] * frames)
    jpegs = [_jpeg(k) for k in range(frames)]
    with ReviewStore(path) as store:
        store.claim({"source": "game.mp4", "profile": "skirmish"})
        for s, jpeg in zip(states, jpegs, strict=True):
            store.add_state(s, Resume(s.frame, s.time_s, np.full((18, 32), s.index, np.uint8)), jpeg)
    return jpegs


def _overwrite(path: Path, offset: int, size: int = BLOCK, seed: int = 7) -> None:
    """``size`` random bytes written over the file at ``offset``: a damaged block of the disk."""
    with path.open("r+b") as f:
        f.seek(offset)
        f.write(np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes())


def _inside(path: Path, stored: bytes) -> int:
    """Where in the file the middle of ``stored`` (a frame) lies."""
    offset = path.read_bytes().find(stored[len(stored) // 2 : len(stored) // 2 + 64])
    assert offset > 0
    return offset


def _checkpoint(path: Path) -> None:
    """Move what the write-ahead log holds into the database file, where the damage is done."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def test_frames_read_back_as_stored(tmp_path: Path) -> None:
    path = tmp_path / "game.sqlite"
    jpegs = _stored_review(path)
    with ReviewStore(path, readonly=True) as store:
        store.verify()
        assert [store.image(k) for k in range(3)] == jpegs
        assert store.image(3) is None and store.image(10**23) is None


# Where the damaged block lies: inside a stored frame (caught by its checksum), or over the file's second page,
# which holds a table's tree (caught by SQLite or its page check).
@pytest.mark.parametrize(
    ("where", "words"),
    [
        ("frame", "the frame of settled state 1 does not match its checksum"),
        ("page", "damaged"),
    ],
)
def test_a_damaged_block_is_noticed(tmp_path: Path, where: str, words: str) -> None:
    path = tmp_path / "game.sqlite"
    jpegs = _stored_review(path)
    _checkpoint(path)
    if where == "frame":
        # the rest of the page past its first 4 bytes (which link to the frame's next page): frame bytes only
        page = _inside(path, jpegs[1]) // BLOCK * BLOCK
        _overwrite(path, page + 4, BLOCK - 4)
    else:
        _overwrite(path, BLOCK)
    with pytest.raises(StoreError, match=words) as info, ReviewStore(path, readonly=True) as store:
        store.verify()
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    if where == "frame":
        with ReviewStore(path, readonly=True) as store, pytest.raises(StoreError, match=words):
            store.image(1)


def _as_schema_1(path: Path) -> None:
    """Make a review database what the schema 1 tableref wrote: no checksum columns."""
    db = sqlite3.connect(path)
    with db:
        db.execute("ALTER TABLE states DROP COLUMN image_sha256")
        db.execute("ALTER TABLE states DROP COLUMN anchor_sha256")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
    db.close()


def test_a_schema_1_database_is_read_and_checked_from_when_it_is_resumed(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    jpegs = _stored_review(path)
    _as_schema_1(path)
    with ReviewStore(path, readonly=True) as store:
        store.verify()
        assert [store.image(k) for k in range(3)] == jpegs
    # resumed: the columns come back, the frames stored from now on carry a checksum
    with ReviewStore(path) as store:
        assert store.meta()["schema"] == SCHEMA_VERSION
        stored = store.last()
        assert stored is not None
        last, resume = stored
        after = replace(last, index=last.index + 1, frame=last.frame + 10, time_s=last.time_s + 1, moves=())
        store.add_state(after, Resume(after.frame, after.time_s, resume.anchor), _jpeg(9))
    db = sqlite3.connect(path)
    sums = [r[0] for r in db.execute("SELECT image_sha256 FROM states ORDER BY idx")]
    db.close()
    assert sums[:3] == [None, None, None] and sums[3] is not None


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    _stored_review(path)
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    db.close()
    with pytest.raises(StoreError, match="schema '99', which this tableref does not read; expected schema 2"):
        ReviewStore(path, readonly=True)


# ----------------------------------------------------------------------------------------------------------------
# `tableref review` with a damaged database or a full disk


@pytest.fixture
def roster(game: GameVideo, tmp_path: Path) -> Path:
    path = tmp_path / "roster.json"
    dump_state(roster_state(truth_states()[0]), path)
    return path


def _review(capsys: pytest.CaptureFixture[str], game: GameVideo, roster: Path, out: Path) -> tuple[int, str]:
    code = main(["review", str(game.path), "--roster", str(roster), "--out", str(out), "--quiet"])
    return code, capsys.readouterr().err


def test_a_review_run_again_on_damaged_frames_says_so(
    capsys: pytest.CaptureFixture[str], game: GameVideo, roster: Path, tmp_path: Path
) -> None:
    out = tmp_path / "game.sqlite"
    assert _review(capsys, game, roster, out)[0] == 0
    with ReviewStore(out, readonly=True) as store:
        frame = store.image(2)
    assert frame is not None
    _checkpoint(out)
    _overwrite(out, _inside(out, frame) - 100)
    code, err = _review(capsys, game, roster, out)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"tableref review: error: {out}: ") and "damaged" in err


class _FullDisk:
    """A connection that refuses every write once ``states`` settled states are stored, as a full disk does."""

    def __init__(self, db: sqlite3.Connection, states: int, error: BaseException) -> None:
        self.db = db
        self.states = states
        self.error = error

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)

    def __enter__(self) -> sqlite3.Connection:
        return self.db.__enter__()

    def __exit__(self, *exc: Any) -> Any:
        return self.db.__exit__(*exc)

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        writes = sql.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))
        if writes and self.db.execute("SELECT count(*) FROM states").fetchone()[0] >= self.states:
            raise self.error
        return self.db.execute(sql, *args)


def _fill_the_disk(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """After the first settled state is stored, the disk is full: SQLite's own limit on the file's pages (the
    error SQLite gives for a full disk), or every write failing with ENOSPC."""
    opened = ReviewStore.__init__

    def init(self: ReviewStore, *args: Any, **kwargs: Any) -> None:
        opened(self, *args, **kwargs)
        if how == "ENOSPC":
            self.db = _FullDisk(self.db, 1, OSError(errno.ENOSPC, "No space left on device"))  # type: ignore[assignment]

    monkeypatch.setattr(ReviewStore, "__init__", init)
    if how == "SQLITE_FULL":
        stored = ReviewStore.add_state

        def add_state(self: ReviewStore, *args: Any) -> None:
            stored(self, *args)
            pages = self.db.execute("PRAGMA page_count").fetchone()[0]
            self.db.execute(f"PRAGMA max_page_count = {pages}")

        monkeypatch.setattr(ReviewStore, "add_state", add_state)


@pytest.mark.parametrize(("how", "words"), [("SQLITE_FULL", "database or disk is full"), ("ENOSPC", "No space")])
def test_a_full_disk_midway_is_one_line_and_loses_nothing_stored(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    game: GameVideo,
    roster: Path,
    tmp_path: Path,
    how: str,
    words: str,
) -> None:
    out = tmp_path / "game.sqlite"
    with monkeypatch.context() as patch:
        _fill_the_disk(patch, how)
        code, err = _review(capsys, game, roster, out)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"{out}: the disk is full ({words}" in err and "run the same command again" in err
    with ReviewStore(out, readonly=True) as store:
        store.verify()
        assert store.count() == 1 and "complete" not in store.meta()
    # space freed: the same command resumes after the state stored and reviews the rest
    assert _review(capsys, game, roster, out)[0] == 0
    with ReviewStore(out, readonly=True) as store:
        assert [s.index for s in store.states()] == list(range(len(game.holds)))


def test_the_steps_of_a_melee_left_undone_are_read_back_with_their_verdict(tmp_path: Path) -> None:
    scenario = json.loads((Path(__file__).parents[2] / "rules" / "scenarios" / "melee_others.json").read_text())
    before, after = rules.state_from_dict(scenario["state"]), rules.state_from_dict(scenario["after"])
    seq = [
        (10 * k, float(k), replace(s, units=(), models=tuple(replace(m, unit=None) for m in s.models)))
        for k, s in enumerate((before, after))
    ]
    states = review_states(seq, rules.load_profile("legion"), load_config().review, before, None)
    path = tmp_path / "melee.sqlite"
    with ReviewStore(path) as store:
        store.claim({"source": "game.mp4", "profile": "legion"})
        for s in states:
            store.add_state(s, Resume(s.frame, s.time_s, np.zeros((18, 32), np.uint8)), _jpeg(s.index))
    with ReviewStore(path, readonly=True) as store:
        read = store.states()
    # as the timeline document gives them (to the millimetre's thousandth)
    wrote = {v.unit: [f.to_dict() for f in v.findings] for v in states[1].verdicts}
    assert any(f["kind"] == "melee" for f in wrote["troopers"])
    assert {v.unit: [f.to_dict() for f in v.findings] for v in read[1].verdicts} == wrote


@pytest.mark.parametrize("path_mm", [95.5, float("inf")])
def test_a_move_with_no_legal_path_reads_back_as_stored(tmp_path: Path, path_mm: float) -> None:
    # walls or models closing every way round leave no legal path: the shortest one is infinite, which SQLite's REAL
    # and JSON cannot hold
    db = tmp_path / "r.sqlite"
    _stored_review(db, frames=2)
    with ReviewStore(db, readonly=True) as store:
        states = store.states()
    moved = replace(states[1], moves=tuple(replace(m, path_mm=path_mm) for m in states[1].moves))
    assert moved.moves
    again = tmp_path / "again.sqlite"
    with ReviewStore(again) as store:
        store.claim({"source": "game.mp4", "profile": "skirmish"})
        for s in (states[0], moved):
            store.add_state(s, Resume(s.frame, s.time_s, np.zeros((18, 32), np.uint8)), _jpeg(s.index))
    with ReviewStore(again, readonly=True) as store:
        read = store.states()
        doc = store.timeline()
    assert [m.path_mm for m in read[1].moves] == [path_mm] * len(moved.moves)
    assert all(m["path_mm"] == (None if path_mm == float("inf") else path_mm) for m in doc["moves"])
    json.dumps(doc, allow_nan=False)
