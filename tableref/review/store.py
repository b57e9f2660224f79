"""A reviewed game in SQLite (WAL): every settled state with its findings, the moves, removals, additions, verdicts
and events, the settled frames as JPEGs, and what the scan of the recording needs to resume.

Each settled state is written in one transaction with everything that belongs to it, so a process killed at any
moment leaves either the whole state or none of it; the scan then resumes after the last state stored.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import wraps
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar, cast

import numpy as np
from numpy.typing import NDArray

import rules
from rules.actions import activations_from
from tableref.errors import StoreError, UsageError
from tableref.review.export import event_to_dict, move_to_dict, placement_to_dict, timeline, verdict_to_dict
from tableref.review.timeline import Event, Move, Placement, ReviewedState, Track

# Schema 2 keeps a SHA-256 of every stored frame (the JPEG and the change-detection copy), checked when it is read.
# A schema 1 database is still read, its frames unchecked; a review resumed into one adds the checksum columns, so
# that the frames stored from then on are checked.
SCHEMA_VERSION = "2"
_SUM_COLUMNS = ("image_sha256", "anchor_sha256")
_TABLES = ("meta", "states", "moves", "placements", "events")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS states (
    idx INTEGER PRIMARY KEY, frame INTEGER NOT NULL, time_s REAL NOT NULL,
    state TEXT NOT NULL, findings TEXT NOT NULL, verdicts TEXT NOT NULL, track TEXT NOT NULL,
    spell_time_s REAL NOT NULL, anchor BLOB NOT NULL, anchor_shape TEXT NOT NULL, image BLOB,
    image_sha256 TEXT, anchor_sha256 TEXT
);
CREATE TABLE IF NOT EXISTS moves (
    state INTEGER NOT NULL, model TEXT NOT NULL, unit TEXT, from_state INTEGER NOT NULL,
    from_x_mm REAL, from_y_mm REAL, to_x_mm REAL, to_y_mm REAL, distance_mm REAL, path_mm REAL, sigma_mm REAL,
    PRIMARY KEY (state, model)
);
CREATE TABLE IF NOT EXISTS placements (
    state INTEGER NOT NULL, kind TEXT NOT NULL, model TEXT NOT NULL, unit TEXT, x_mm REAL, y_mm REAL,
    returned INTEGER NOT NULL, PRIMARY KEY (state, kind, model)
);
CREATE TABLE IF NOT EXISTS events (
    state INTEGER NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, units TEXT NOT NULL, models TEXT NOT NULL,
    detail TEXT NOT NULL, PRIMARY KEY (state, seq)
);
"""
# Waiting this long (s) for a lock held by a reader (the dashboard) beats failing at once.
_BUSY_TIMEOUT_S = 30.0
# SQLite's integers are 64-bit: a larger index names no state (and would raise OverflowError if asked for).
_INDEX_RANGE = range(-(2**63), 2**63)
# quick_check reports at most this many problems; the first names the damage well enough.
_CHECK_PROBLEMS = 3

F = TypeVar("F", bound=Callable[..., Any])


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _is_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.OperationalError):
        return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in str(exc)
    return isinstance(exc, OSError) and exc.errno == errno.ENOSPC


def store_error(path: Path, exc: BaseException) -> StoreError:
    """The one-line error for a database failure ``exc`` of the review database at ``path``."""
    if _is_disk_full(exc):
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return StoreError(
            f"{path}: the disk is full ({reason}); nothing half-written was kept and what was stored before is "
            "intact: free some space and run the same command again (a review resumes where it stopped)"
        )
    if isinstance(exc, sqlite3.OperationalError):
        return StoreError(f"{path}: cannot use the review database ({exc}); expected a readable, writable SQLite file")
    return StoreError(
        f"{path}: not a review database, or a damaged one ({exc}); expected a file made by `tableref review` "
        "(review the recording again into a new file)"
    )


def damaged(path: Path, what: str) -> StoreError:
    return StoreError(
        f"{path}: the review database is damaged: {what}; expected an intact file (review the recording again "
        "into a new file)"
    )


def _guarded(method: F) -> F:
    """A store method whose database failures (a full disk, a damaged or foreign file) become one StoreError."""

    @wraps(method)
    def wrapper(self: ReviewStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.DatabaseError, OSError) as exc:
            if isinstance(exc, OSError) and not _is_disk_full(exc):
                raise
            raise store_error(self.path, exc) from None

    return cast(F, wrapper)


@dataclass(frozen=True)
class Resume:
    """Where the scan of a recording stood after the last stored state: its frame, when its still spell began
    (s) and the change-detection copy it was compared with."""

    frame: int
    spell_time_s: float
    anchor: NDArray[np.uint8]


def _track_to_json(track: Track, table: rules.Table) -> str:
    bare = tuple(replace(u, leader=None) for u in track.units)
    gone = rules.TableState(table, bare, tuple(track.gone.values()))
    return json.dumps(
        {
            "units": rules.state_to_dict(gone)["units"],
            "leaders": {u.id: u.leader for u in track.units if u.leader is not None},
            "gone": rules.state_to_dict(gone)["models"],
            "used_ids": sorted(track.used_ids),
        }
    )


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return _whole(value) or (isinstance(value, float) and math.isfinite(value))


def _finite(value: float) -> float | None:
    """A length as stored: NULL for no legal path at all (infinite), which SQLite's REAL and JSON cannot hold."""
    return value if math.isfinite(value) else None


def _json(text: Any, kind: type, what: str) -> Any:
    """The JSON document stored as ``text``, of type ``kind``; ValueError (read as damage) when it is not."""
    if not isinstance(text, str):
        raise ValueError(f"{what} is not stored as text")
    data = json.loads(text)
    if not isinstance(data, kind):
        raise ValueError(f"{what} is a JSON {type(data).__name__}, not a {kind.__name__}")
    return data


def _json_list(text: Any, what: str) -> list[Any]:
    data: list[Any] = _json(text, list, what)
    return data


def _check_row(
    row: tuple[Any, ...],
    what: str,
    whole: tuple[int, ...],
    numbers: range | tuple[int, ...],
    texts: tuple[int, ...],
    optional_texts: tuple[int, ...],
) -> None:
    """TypeError (read as damage) when a column of ``row`` does not hold what a review stores there."""
    ok = (
        all(_whole(row[k]) for k in whole)
        and all(row[k] is None or _number(row[k]) for k in numbers)
        and all(isinstance(row[k], str) for k in texts)
        and all(row[k] is None or isinstance(row[k], str) for k in optional_texts)
    )
    if not ok:
        raise TypeError(f"{what} of settled state {row[0]!r} holds values of the wrong kind: {row!r}")


def _track_from_json(text: str, state: rules.TableState) -> Track:
    data = _json(text, dict, "a track")
    table = {"width_mm": state.table.width_mm, "depth_mm": state.table.depth_mm}
    gone = rules.state_from_dict({"table": table, "units": data["units"], "models": data["gone"]})
    units = tuple(replace(u, leader=data["leaders"].get(u.id)) for u in gone.units)
    return Track(state, MappingProxyType({m.id: m for m in gone.models}), frozenset(data["used_ids"]), units)


class ReviewStore:
    """One game's review database. ``ReviewStore(path)`` opens (creating) it; use as a context manager."""

    def __init__(self, path: str | Path, readonly: bool = False) -> None:
        self.path = Path(path)
        if readonly and not self.path.is_file():
            raise StoreError(f"{self.path}: no such review database; expected a file made by `tableref review`")
        try:
            uri = f"file:{self.path}?mode=ro" if readonly else str(self.path)
            self.db = sqlite3.connect(uri, uri=readonly, timeout=_BUSY_TIMEOUT_S, check_same_thread=False)
        except sqlite3.DatabaseError as exc:
            raise store_error(self.path, exc) from None
        try:
            self._open(readonly)
        except BaseException:
            self.db.close()
            raise

    @_guarded
    def _open(self, readonly: bool) -> None:
        if not readonly:
            # a review is never written into another program's database (--out naming the wrong file)
            found = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            foreign = sorted(t for t in found - set(_TABLES) if not t.startswith("sqlite_"))
            if foreign:
                raise StoreError(
                    f"{self.path}: not a review database (it holds the tables {', '.join(foreign)}); expected a file "
                    "made by `tableref review`, or a new one"
                )
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(_SCHEMA)
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        meta = "meta" in tables
        version = self.db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() if meta else None
        if version is not None and version[0] not in ("1", SCHEMA_VERSION):
            raise StoreError(
                f"{self.path}: a review database of schema {version[0]!r}, which this tableref does not read; expected "
                f"schema {SCHEMA_VERSION} or older (update tableref, or review the recording again into a new file)"
            )
        columns = {r[1] for r in self.db.execute("PRAGMA table_info(states)")}
        if not readonly and not all(c in columns for c in _SUM_COLUMNS):
            # a schema 1 database resumed: its frames stay unchecked, those stored from now on are checked
            with self.db:
                for c in _SUM_COLUMNS:
                    if c not in columns:
                        self.db.execute(f"ALTER TABLE states ADD COLUMN {c} TEXT")
                self.db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (SCHEMA_VERSION,))
            columns.update(_SUM_COLUMNS)
        # what stands for the checksums in a query: NULL (not stored) in a schema 1 database opened to read
        self._sums = ", ".join(c if c in columns else "NULL" for c in _SUM_COLUMNS)

    def __enter__(self) -> ReviewStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    # -- meta --------------------------------------------------------------------------------------------------

    @_guarded
    def meta(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT key, value FROM meta").fetchall())

    @_guarded
    def declared_actions(self) -> dict[str, Any] | None:
        """The units' actions declared for the review (None: none declared), as ``--actions`` gave them."""
        text = self.meta().get("declared_actions")
        if not text:
            return None
        try:
            data = _json(text, dict, "the declared actions")
            activations_from(data)
        except (ValueError, rules.ActionError) as exc:
            raise damaged(self.path, f"the declared actions do not read back ({exc})") from None
        return cast(dict[str, Any], data)

    def _check_meta(self) -> None:
        """What the review recorded of its job: text under text keys, declared actions that read back."""
        for key, value in self.db.execute("SELECT key, value FROM meta"):
            if not isinstance(key, str) or not isinstance(value, str):
                raise damaged(self.path, f"the review's record {key!r} holds {value!r}, not text")
        self.declared_actions()

    @_guarded
    def set_meta(self, **values: str) -> None:
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(values.items()))

    @_guarded
    def claim(self, job: dict[str, str]) -> bool:
        """Record what this database reviews, or check that it reviews the same job: resuming a different one
        would mix two games. A job whose recording has other content (another recording copied to the same path)
        is not that one's review: what was stored is dropped and the review starts afresh. Returns whether it was.
        """
        meta = self.meta()
        afresh = bool(meta) and "content" in job and meta.get("content") != job["content"]
        if afresh:
            with self.db:
                for table in ("meta", "states", "moves", "placements", "events"):
                    self.db.execute(f"DELETE FROM {table}")
            meta = {}
        if not meta:
            self.set_meta(schema=SCHEMA_VERSION, **job)
            return afresh
        for key, value in job.items():
            if meta.get(key) != value:
                raise UsageError(
                    f"{self.path} holds a review with another {key} ({meta.get(key)!r}, not {value!r}); "
                    "expected the same recording, table, profile, roster, actions and settings (or another --out)"
                )
        return False

    # -- states ------------------------------------------------------------------------------------------------

    @_guarded
    def add_state(self, s: ReviewedState, resume: Resume, image_jpeg: bytes | None) -> None:
        """Store one settled state with all that belongs to it, atomically (a full disk stores none of it)."""
        anchor = np.ascontiguousarray(resume.anchor, dtype=np.uint8).tobytes()
        state_doc = rules.state_to_dict(s.state)
        with self.db:
            self.db.execute(
                "INSERT INTO states VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    s.index,
                    s.frame,
                    s.time_s,
                    json.dumps(state_doc),
                    json.dumps([f.to_dict() for f in s.findings]),
                    json.dumps([verdict_to_dict(v, s.index) for v in s.verdicts]),
                    _track_to_json(s.track, s.state.table),
                    resume.spell_time_s,
                    anchor,
                    json.dumps(list(resume.anchor.shape)),
                    image_jpeg,
                    None if image_jpeg is None else _sha256(image_jpeg),
                    _sha256(anchor),
                ),
            )
            self._write_parts(s)

    def _write_parts(self, s: ReviewedState) -> None:
        """The moves, placements and events of state ``s`` (inside the caller's transaction)."""
        self.db.executemany(
            "INSERT INTO moves VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    s.index,
                    m.model,
                    m.unit,
                    m.from_state,
                    *m.from_mm,
                    *m.to_mm,
                    m.distance_mm,
                    _finite(m.path_mm),
                    m.sigma_mm,
                )
                for m in s.moves
            ],
        )
        self.db.executemany(
            "INSERT INTO placements VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (s.index, kind, p.model, p.unit, *p.at_mm, int(p.returned))
                for kind, ps in (("removed", s.removed), ("added", s.added))
                for p in ps
            ],
        )
        self.db.executemany(
            "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)",
            [(s.index, k, e.kind, json.dumps(e.units), json.dumps(e.models), e.detail) for k, e in enumerate(s.events)],
        )

    @_guarded
    def rejudge(self, states: list[ReviewedState]) -> None:
        """Replace what was judged of the stored states (their models' units, findings, verdicts, moves, removals,
        additions, events, tracking) by ``states``, atomically; frames and where the scan stood are kept."""
        with self.db:
            for s in states:
                self.db.execute(
                    "UPDATE states SET state = ?, findings = ?, verdicts = ?, track = ? WHERE idx = ?",
                    (
                        json.dumps(rules.state_to_dict(s.state)),
                        json.dumps([f.to_dict() for f in s.findings]),
                        json.dumps([verdict_to_dict(v, s.index) for v in s.verdicts]),
                        _track_to_json(s.track, s.state.table),
                        s.index,
                    ),
                )
                for table in ("moves", "placements", "events"):
                    self.db.execute(f"DELETE FROM {table} WHERE state = ?", (s.index,))
                self._write_parts(s)

    @_guarded
    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM states").fetchone()[0])

    @_guarded
    def states(self) -> list[ReviewedState]:
        """Every stored state, in order, rebuilt as the review made them."""
        try:
            return self._states()
        except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
            # text changed in place where no page check looks: named as damage, not met as a traceback
            raise damaged(self.path, f"a stored state does not read back ({type(exc).__name__}: {exc})") from None

    def _states(self) -> list[ReviewedState]:
        rows = self.db.execute(
            "SELECT idx, frame, time_s, state, findings, verdicts, track FROM states ORDER BY idx"
        ).fetchall()
        moves: dict[int, list[Move]] = {}
        for r in self.db.execute("SELECT * FROM moves ORDER BY state, model"):
            _check_row(r, "a move", whole=(0, 3), numbers=range(4, 11), texts=(1,), optional_texts=(2,))
            moves.setdefault(r[0], []).append(
                Move(
                    model=r[1],
                    unit=r[2],
                    from_mm=(r[4], r[5]),
                    to_mm=(r[6], r[7]),
                    distance_mm=r[8],
                    path_mm=math.inf if r[9] is None else r[9],
                    sigma_mm=r[10],
                    from_state=r[3],
                    to_state=r[0],
                )
            )
        placed: dict[tuple[int, str], list[Placement]] = {}
        for r in self.db.execute("SELECT * FROM placements ORDER BY state, kind, model"):
            _check_row(r, "a placement", whole=(0, 6), numbers=(4, 5), texts=(1, 2), optional_texts=(3,))
            placed.setdefault((r[0], r[1]), []).append(Placement(r[2], r[3], r[0], (r[4], r[5]), bool(r[6])))
        events: dict[int, list[Event]] = {}
        for r in self.db.execute("SELECT * FROM events ORDER BY state, seq"):
            _check_row(r, "an event", whole=(0, 1), numbers=(), texts=(2, 5), optional_texts=())
            events.setdefault(r[0], []).append(
                Event(
                    r[0],
                    r[2],
                    tuple(_json_list(r[3], "an event's units")),
                    tuple(_json_list(r[4], "an event's models")),
                    r[5],
                )
            )
        out = []
        for position, (idx, frame, time_s, state_text, findings, verdicts, track) in enumerate(rows):
            # the states are numbered from 0 as they were stored, and screens find each by its number
            if idx != position:
                raise ValueError(f"settled state {position} is numbered {idx}")
            if not _whole(frame) or not _number(time_s):
                raise TypeError(f"settled state {idx}: frame {frame!r} and time {time_s!r} are not numbers")
            state = rules.state_from_dict(_json(state_text, dict, f"settled state {idx}"))
            out.append(
                ReviewedState(
                    idx,
                    frame,
                    float(time_s),
                    state,
                    tuple(rules.Finding.from_dict(f) for f in _json_list(findings, f"the findings of state {idx}")),
                    tuple(moves.get(idx, ())),
                    tuple(_verdict_from_dict(v) for v in _json_list(verdicts, f"the verdicts of state {idx}")),
                    tuple(placed.get((idx, "removed"), ())),
                    tuple(placed.get((idx, "added"), ())),
                    tuple(events.get(idx, ())),
                    _track_from_json(track, state),
                )
            )
        return out

    @_guarded
    def last(self) -> tuple[ReviewedState, Resume] | None:
        """The last stored state and where the scan stood after it (None when nothing is stored yet)."""
        row = self.db.execute(
            f"SELECT idx, spell_time_s, anchor, anchor_shape, {self._sums} FROM states ORDER BY idx DESC LIMIT 1"
        ).fetchone()
        if row is None:
            return None
        last = self.states()[-1]
        self._check(row[2], row[5], f"the change-detection copy of settled state {row[0]}")
        try:
            anchor = np.frombuffer(row[2], dtype=np.uint8).reshape(json.loads(row[3]))
        except (ValueError, TypeError) as exc:
            raise damaged(self.path, f"the change-detection copy of settled state {row[0]} ({exc})") from None
        anchor.flags.writeable = False
        return last, Resume(last.frame, float(row[1]), anchor)

    @_guarded
    def image(self, index: int) -> bytes | None:
        """The JPEG of settled state ``index`` (None when not stored); StoreError when it is not what was stored."""
        if index not in _INDEX_RANGE:
            return None
        row = self.db.execute(f"SELECT image, {self._sums} FROM states WHERE idx = ?", (index,)).fetchone()
        if row is None or row[0] is None:
            return None
        self._check(row[0], row[1], f"the frame of settled state {index}")
        return bytes(row[0])

    def _check(self, data: bytes, digest: str | None, what: str) -> None:
        """Raise StoreError when ``data`` is not what was stored (no ``digest``: a schema 1 frame, unchecked)."""
        if digest is not None and _sha256(data) != digest:
            raise damaged(self.path, f"{what} does not match its checksum")

    @_guarded
    def verify(self) -> None:
        """Check the whole database before it is used: a review database this tableref reads, whose pages, stored
        frames and states are intact. Raises StoreError naming the first thing wrong."""
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = [t for t in _TABLES if t not in tables]
        if missing:
            raise StoreError(
                f"{self.path}: not a review database (it has no {', '.join(missing)} table); expected a file made "
                "by `tableref review`"
            )
        problems = [r[0] for r in self.db.execute(f"PRAGMA quick_check({_CHECK_PROBLEMS})")]
        if problems != ["ok"]:
            # SQLite's report spans lines and opens with a heading: the error stays one line
            lines = (line.strip() for text in problems for line in text.splitlines())
            raise damaged(self.path, "; ".join(line for line in lines if line and not line.startswith("***")))
        rows = self.db.execute(f"SELECT idx, image, anchor, {self._sums} FROM states ORDER BY idx")
        for idx, image, anchor, image_sum, anchor_sum in rows:
            if image is not None:
                self._check(image, image_sum, f"the frame of settled state {idx}")
            self._check(anchor, anchor_sum, f"the change-detection copy of settled state {idx}")
        self._check_meta()
        self.states()

    @_guarded
    def timeline(self) -> dict[str, Any]:
        """The timeline document (see :func:`tableref.review.export.timeline`), with what was reviewed."""
        meta = self.meta()
        doc = timeline(self.states(), meta.get("profile", ""))
        doc = {"source": meta.get("source"), "complete": meta.get("complete") == "1", **doc}
        return doc


def _verdict_from_dict(d: dict[str, Any]) -> rules.UnitMove:
    return rules.UnitMove(
        d["unit"],
        d["action"],
        d["declared"],
        d["legal"],
        d["call"],
        d["allowance_mm"],
        (),
        tuple(d["problems"]),
        d.get("note", ""),
        findings=tuple(rules.Finding.from_dict(f) for f in d.get("findings", [])),
    )


__all__ = ["Resume", "ReviewStore", "event_to_dict", "move_to_dict", "placement_to_dict"]
