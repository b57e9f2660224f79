"""The table state: what stands where on the table, in millimetres.

Coordinates: origin at a table corner, ``x_mm`` along the width, ``y_mm`` along the depth. Every value type is
frozen; build a changed copy with :func:`dataclasses.replace`.

Height: a model stands on the table unless its ``on_terrain`` names a piece of ``solid`` (or ``sealed``) terrain
whose top it stands on; it then stands at that piece's ``height_mm``, which such a piece must give. JSON:
``"on_terrain": "ruin1"`` on the model (absent or null: on the table).
"""

from __future__ import annotations

import json
import math
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import shapely

from rules.errors import StateError

TERRAIN_KINDS = ("solid", "sealed", "dense", "area")
# Kinds a model may not stand in, move through (but for Fly) or end inside; a model may stand on top of one. The
# skirmish seed names "solid or sealed terrain" together and gives them no other difference.
BLOCKING_KINDS = ("solid", "sealed")
# No table is wider or deeper than this (mm: 100 m); a larger one is a typo or a hostile file.
MAX_TABLE_MM = 100_000.0
# No number of a state (a position, a size, a height, a rotation) is larger than this: a kilometre off the table.
MAX_LENGTH = 1_000_000.0
_WITHIN = f"of at most {MAX_LENGTH:g} in size"
# No base is smaller than this across (mm; the smallest sold are 20-25 mm): an oval's outline is measured through its
# axes' squares, which a needle of 1e-6 by 1000 mm takes past a float's precision.
MIN_BASE_MM = 1.0
# A state, profile or settings file larger than this is none: the largest real ones hold a few hundred kB.
MAX_FILE_BYTES = 32_000_000


@dataclass(frozen=True)
class RoundBase:
    """A round base of ``diameter_mm``; ``size_sigma_mm`` is the 1-sigma uncertainty of that size when it was
    measured (0: known). ``height_mm``, when known, is how high its rim stands above the table: no rule uses it,
    but a camera that sees the base from the side needs it to place the footprint (None: not known)."""

    diameter_mm: float
    size_sigma_mm: float = 0.0
    height_mm: float | None = None

    @property
    def semi_axes_mm(self) -> tuple[float, float]:
        r = self.diameter_mm / 2.0
        return (r, r)

    @property
    def rotation_deg(self) -> float:
        return 0.0

    @property
    def is_round(self) -> bool:
        return True

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"diameter_mm": self.diameter_mm}
        if self.size_sigma_mm:
            out["size_sigma_mm"] = self.size_sigma_mm
        if self.height_mm is not None:
            out["height_mm"] = self.height_mm
        return out


@dataclass(frozen=True)
class OvalBase:
    """An oval base: ``width_mm`` along x and ``depth_mm`` along y before it is turned counter-clockwise (from +x
    towards +y) by ``rotation_deg``; ``size_sigma_mm`` is the 1-sigma uncertainty of both sizes (0: known)."""

    width_mm: float
    depth_mm: float
    rotation_deg: float = 0.0
    size_sigma_mm: float = 0.0

    @property
    def semi_axes_mm(self) -> tuple[float, float]:
        return (self.width_mm / 2.0, self.depth_mm / 2.0)

    @property
    def is_round(self) -> bool:
        return self.width_mm == self.depth_mm

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"width_mm": self.width_mm, "depth_mm": self.depth_mm, "rotation_deg": self.rotation_deg}
        if self.size_sigma_mm:
            out["size_sigma_mm"] = self.size_sigma_mm
        return out


Base = RoundBase | OvalBase


@dataclass(frozen=True)
class Table:
    width_mm: float
    depth_mm: float


@dataclass(frozen=True)
class Unit:
    """A unit: its models name it by ``id``. ``move_in`` is its Move in inches (None when unknown). ``melee`` is
    false for a unit with no weapon of melee range, which the Legion seed forbids to move into melee."""

    id: str
    player: str | None = None
    name: str | None = None
    leader: str | None = None
    move_in: float | None = None
    abilities: tuple[str, ...] = ()
    melee: bool = True


@dataclass(frozen=True)
class Model:
    """One miniature on its base. ``sigma_mm`` is the 1-sigma uncertainty of the measured centre (0: exact), per
    axis. ``doubt_mm`` (dx, dy) is a further 1-sigma uncertainty along that line only: a second reading of the
    base about as likely lies that way, so a gap across that line is doubtful and one along the other is not.
    ``on_terrain`` is the id of the solid (or sealed) terrain piece the model stands on top of (None: on the table)."""

    id: str
    unit: str | None
    x_mm: float
    y_mm: float
    base: Base
    sigma_mm: float = 0.0
    doubt_mm: tuple[float, float] = (0.0, 0.0)
    on_terrain: str | None = None

    @property
    def sigma_most_mm(self) -> float:
        """The centre's 1-sigma uncertainty along the line where it is largest (mm)."""
        return math.sqrt(self.sigma_mm**2 + self.doubt_mm[0] ** 2 + self.doubt_mm[1] ** 2)


@dataclass(frozen=True)
class Terrain:
    """A terrain footprint. ``kind`` is one of :data:`TERRAIN_KINDS`; ``polygon`` is a ring of (x_mm, y_mm)."""

    id: str
    kind: str
    polygon: tuple[tuple[float, float], ...]
    height_mm: float | None = None


@dataclass(frozen=True)
class TableState:
    """Everything the rules need. ``extras`` carries top-level JSON sections the rules do not read (a camera's
    calibration report, say) so that writing a loaded state back loses nothing.

    ``unseen`` are models known to be on the table that this state does not show (hidden, off the frame, missed),
    each at the place it was last seen. ``measured`` says the models' places were measured by a camera: their
    bases are solid, so a gap can only look negative through the measurement's error."""

    table: Table
    units: tuple[Unit, ...] = ()
    models: tuple[Model, ...] = ()
    terrain: tuple[Terrain, ...] = ()
    extras: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    unseen: tuple[Model, ...] = ()
    measured: bool = False

    def __post_init__(self) -> None:
        _validate(self)

    def unit(self, unit_id: str) -> Unit:
        for u in self.units:
            if u.id == unit_id:
                return u
        raise KeyError(unit_id)

    def model(self, model_id: str) -> Model:
        for m in self.models:
            if m.id == model_id:
                return m
        raise KeyError(model_id)

    def to_dict(self) -> dict[str, Any]:
        return state_to_dict(self)


# --------------------------------------------------------------------------------------------------------------
# Validation


def _finite(value: float) -> bool:
    """A finite number of at most :data:`MAX_LENGTH` in size: beyond it (1e300 mm, say) the geometry's squares and
    areas overflow. A whole number too large for a float (JSON allows any number of digits) is none either."""
    try:
        return math.isfinite(value) and abs(value) <= MAX_LENGTH
    except OverflowError:
        return False


def _check_base(base: Base, where: str) -> None:
    for axis in base.semi_axes_mm:
        if not _finite(axis) or 2 * axis < MIN_BASE_MM:
            raise StateError(
                f"{where}: base sizes must be numbers from {MIN_BASE_MM:g} mm, {_WITHIN}, got {base.to_dict()}"
            )
    if not _finite(base.rotation_deg):
        raise StateError(f"{where}: base rotation_deg must be a finite number {_WITHIN}")
    if not _finite(base.size_sigma_mm) or base.size_sigma_mm < 0:
        raise StateError(f"{where}: base size_sigma_mm must be a non-negative number, got {base.size_sigma_mm!r}")
    height = base.height_mm if isinstance(base, RoundBase) else None
    if height is not None and not (_finite(height) and height > 0):
        raise StateError(f"{where}: base height_mm must be a positive number, got {height!r}")


def _float(value: int | float, where: str) -> float:
    """``value`` (a JSON number) as a float; a whole number beyond a float's range is a StateError naming
    ``where``, not an OverflowError."""
    try:
        return float(value)
    except OverflowError:
        raise StateError(f"{where} must be a finite number, got a whole number too large for one") from None


def _validate(state: TableState) -> None:
    t = state.table
    if max(t.width_mm, t.depth_mm) > MAX_TABLE_MM:
        raise StateError(
            f"table: width_mm and depth_mm must be at most {MAX_TABLE_MM:g} mm, got {t.width_mm:g} x {t.depth_mm:g}"
        )
    if not (_finite(t.width_mm) and _finite(t.depth_mm)) or t.width_mm <= 0 or t.depth_mm <= 0:
        raise StateError(f"table: width_mm and depth_mm must be positive numbers, got {t.width_mm!r} x {t.depth_mm!r}")
    unit_ids: set[str] = set()
    for i, u in enumerate(state.units):
        where = f"units[{i}] (id {u.id!r})"
        if u.id in unit_ids:
            raise StateError(f"{where}: duplicate unit id; every unit id must be unique")
        unit_ids.add(u.id)
        if u.move_in is not None and (not _finite(u.move_in) or u.move_in < 0):
            raise StateError(f"{where}: move_in must be a non-negative number of inches, got {u.move_in!r}")
    tops = _validate_terrain(state)
    model_ids: set[str] = set()
    members: dict[str, list[str]] = {}
    listed = [("models", i, m) for i, m in enumerate(state.models)]
    listed += [("unseen", i, m) for i, m in enumerate(state.unseen)]
    for section, i, m in listed:
        where = f"{section}[{i}] (id {m.id!r})"
        if m.id in model_ids:
            raise StateError(f"{where}: duplicate model id; every model id must be unique")
        model_ids.add(m.id)
        if m.unit is not None:
            if m.unit not in unit_ids:
                known = ", ".join(sorted(unit_ids)) or "none"
                raise StateError(f"{where}: unit {m.unit!r} is not defined (known units: {known})")
            members.setdefault(m.unit, []).append(m.id)
        if not (_finite(m.x_mm) and _finite(m.y_mm)):
            raise StateError(f"{where}: x_mm and y_mm must be finite numbers {_WITHIN}, got {m.x_mm!r}, {m.y_mm!r}")
        if not _finite(m.sigma_mm) or m.sigma_mm < 0:
            raise StateError(f"{where}: sigma_mm must be a non-negative number, got {m.sigma_mm!r}")
        if len(m.doubt_mm) != 2 or not all(_finite(d) for d in m.doubt_mm):
            raise StateError(f"{where}: doubt_mm must be two finite numbers {_WITHIN}, got {m.doubt_mm!r}")
        _check_base(m.base, where)
        if m.on_terrain is not None:
            _validate_top(m.on_terrain, tops, where)
    for i, u in enumerate(state.units):
        if u.leader is not None and u.leader not in members.get(u.id, []):
            where = f"units[{i}] (id {u.id!r})"
            raise StateError(f"{where}: leader {u.leader!r} is not a model of this unit")


def _validate_terrain(state: TableState) -> dict[str, Terrain]:
    """Check every terrain piece; returns them by id."""
    terrain_ids: set[str] = set()
    for i, tr in enumerate(state.terrain):
        where = f"terrain[{i}] (id {tr.id!r})"
        if tr.id in terrain_ids:
            raise StateError(f"{where}: duplicate terrain id")
        terrain_ids.add(tr.id)
        if tr.kind not in TERRAIN_KINDS:
            raise StateError(f"{where}: kind {tr.kind!r} is not one of {', '.join(TERRAIN_KINDS)}")
        if len(tr.polygon) < 3:
            raise StateError(f"{where}: polygon needs at least 3 points, got {len(tr.polygon)}")
        if not all(_finite(x) and _finite(y) for x, y in tr.polygon):
            raise StateError(f"{where}: polygon points must be finite numbers {_WITHIN}")
        # a ring that crosses itself or encloses nothing has no inside: what stands in it, and the ways round it,
        # would be guesses (and buffering a crossed ring of many points ran out of memory)
        if not shapely.is_valid(shapely.Polygon(tr.polygon)):
            raise StateError(
                f"{where}: polygon crosses itself or encloses no area; expected a simple ring of [x_mm, y_mm] points"
            )
        if tr.height_mm is not None and (not _finite(tr.height_mm) or tr.height_mm < 0):
            raise StateError(f"{where}: height_mm must be a non-negative number, got {tr.height_mm!r}")
    return {tr.id: tr for tr in state.terrain}


def _validate_top(terrain_id: str, tops: Mapping[str, Terrain], where: str) -> None:
    """A model's ``on_terrain``: a solid or sealed piece (dense and area terrain are stood in, not on) of known height
    (the height it stands at, which distances to other models count)."""
    piece = tops.get(terrain_id)
    if piece is None:
        known = ", ".join(sorted(tops)) or "none"
        raise StateError(f"{where}: on_terrain {terrain_id!r} is not defined (known terrain: {known})")
    if piece.kind not in BLOCKING_KINDS:
        raise StateError(
            f"{where}: on_terrain {terrain_id!r} is {piece.kind} terrain; a model stands on top of solid or sealed "
            "terrain only"
        )
    if piece.height_mm is None:
        raise StateError(
            f"{where}: on_terrain {terrain_id!r} has no height_mm; a model on top stands at the piece's height"
        )


# --------------------------------------------------------------------------------------------------------------
# JSON


class _Reader:
    """Reads one JSON object and turns every type slip into a StateError that names the entry."""

    def __init__(self, obj: Any, where: str) -> None:
        if not isinstance(obj, Mapping):
            raise StateError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        self.obj = obj
        self.where = where

    def has(self, key: str) -> bool:
        return key in self.obj and self.obj[key] is not None

    def number(self, key: str, default: float | None = None) -> float:
        if not self.has(key):
            if default is not None:
                return default
            raise StateError(f"{self.where}: missing {key!r} (a number)")
        value = self.obj[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise StateError(f"{self.where}: {key!r} must be a number, got {value!r}")
        number = _float(value, f"{self.where}: {key!r}")
        if not math.isfinite(number):
            raise StateError(f"{self.where}: {key!r} must be a finite number, got {value!r}")
        return number

    def optional_number(self, key: str) -> float | None:
        return self.number(key) if self.has(key) else None

    def text(self, key: str, required: bool = True) -> str | None:
        if not self.has(key):
            if required:
                raise StateError(f"{self.where}: missing {key!r} (a string)")
            return None
        value = self.obj[key]
        if not isinstance(value, str) or not value:
            raise StateError(f"{self.where}: {key!r} must be a non-empty string, got {value!r}")
        return value

    def ident(self, key: str = "id") -> str:
        """Ids may be written as numbers; they are kept as strings."""
        value = self.obj.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        result = self.text(key)
        assert result is not None
        return result

    def array(self, key: str) -> list[Any]:
        if not self.has(key):
            return []
        value = self.obj[key]
        if not isinstance(value, list):
            raise StateError(f"{self.where}: {key!r} must be a list, got {type(value).__name__}")
        return value


def base_from_dict(obj: Any, where: str = "base") -> Base:
    """A base from parsed JSON, checked: ``{"diameter_mm": 32}`` (a round one may add its rim's ``height_mm``) or
    ``{"width_mm": 60, "depth_mm": 35, "rotation_deg": 30}``, either with an optional ``size_sigma_mm``. Raises
    :class:`StateError` naming ``where``."""
    if not isinstance(obj, dict):
        raise StateError(f"{where}: expected a base object such as {{'diameter_mm': 32}}, got {obj!r}")
    r = _Reader(obj, where)
    size_sigma = r.number("size_sigma_mm", 0.0)
    base: Base
    if r.has("diameter_mm"):
        base = RoundBase(r.number("diameter_mm"), size_sigma, r.optional_number("height_mm"))
    elif r.has("width_mm") and r.has("depth_mm"):
        base = OvalBase(r.number("width_mm"), r.number("depth_mm"), r.number("rotation_deg", 0.0), size_sigma)
    else:
        raise StateError(f"{where}: expected diameter_mm (round) or width_mm and depth_mm (oval)")
    _check_base(base, where)
    return base


def _polygon_from(value: Any, where: str) -> tuple[tuple[float, float], ...]:
    if not isinstance(value, list):
        raise StateError(f"{where}: polygon must be a list of [x_mm, y_mm] points")
    points: list[tuple[float, float]] = []
    for j, p in enumerate(value):
        ok = (
            isinstance(p, list | tuple)
            and len(p) == 2
            and all(isinstance(c, int | float) and not isinstance(c, bool) for c in p)
        )
        if not ok:
            raise StateError(f"{where}: polygon[{j}] must be [x_mm, y_mm], got {p!r}")
        points.append((_float(p[0], f"{where}: polygon[{j}]"), _float(p[1], f"{where}: polygon[{j}]")))
    return tuple(points)


def _doubt_from(value: Any, where: str) -> tuple[float, float]:
    if value is None:
        return (0.0, 0.0)
    numbers = isinstance(value, list) and all(isinstance(c, int | float) and not isinstance(c, bool) for c in value)
    if not numbers or len(value) != 2:
        raise StateError(f"{where}: doubt_mm must be [dx_mm, dy_mm], got {value!r}")
    return (_float(value[0], f"{where}: doubt_mm"), _float(value[1], f"{where}: doubt_mm"))


def state_from_dict(data: Any) -> TableState:
    """Build and validate a :class:`TableState` from parsed JSON. Raises :class:`StateError` naming the entry.

    A model's ``"on_terrain": ID`` (absent or null: on the table) names the solid (or sealed) terrain piece, with a
    ``height_mm``, whose top it stands on."""
    top = _Reader(data, "state")
    if not top.has("table"):
        raise StateError("state: missing 'table' with width_mm and depth_mm")
    tr = _Reader(top.obj["table"], "table")
    table = Table(tr.number("width_mm"), tr.number("depth_mm"))

    units = []
    for i, obj in enumerate(top.array("units")):
        r = _Reader(obj, f"units[{i}]")
        abilities = r.array("abilities")
        if not all(isinstance(a, str) for a in abilities):
            raise StateError(f"units[{i}]: abilities must be a list of strings")
        leader = r.obj.get("leader")
        # like every other optional field, null means "not said": a unit has a melee weapon unless told
        melee = r.obj["melee"] if r.has("melee") else True
        if not isinstance(melee, bool):
            raise StateError(f"units[{i}]: 'melee' must be true or false (has a melee weapon), got {melee!r}")
        units.append(
            Unit(
                id=r.ident(),
                player=r.text("player", required=False),
                name=r.text("name", required=False),
                leader=None if leader is None else r.ident("leader"),
                move_in=r.optional_number("move_in"),
                abilities=tuple(abilities),
                melee=melee,
            )
        )

    models = [_model_from(obj, f"models[{i}]") for i, obj in enumerate(top.array("models"))]
    unseen = [_model_from(obj, f"unseen[{i}]") for i, obj in enumerate(top.array("unseen"))]
    measured = top.obj.get("measured", False)
    if not isinstance(measured, bool):
        raise StateError(f"state: 'measured' must be true or false, got {measured!r}")

    terrain = []
    for i, obj in enumerate(top.array("terrain")):
        r = _Reader(obj, f"terrain[{i}]")
        terrain_id = r.ident()
        kind = r.text("kind")
        assert kind is not None
        terrain.append(
            Terrain(
                id=terrain_id,
                kind=kind,
                polygon=_polygon_from(r.obj.get("polygon"), f"terrain[{i}] (id {terrain_id!r})"),
                height_mm=r.optional_number("height_mm"),
            )
        )

    known = {"table", "units", "models", "terrain", "unseen", "measured"}
    extras = {k: v for k, v in top.obj.items() if k not in known}
    return TableState(
        table, tuple(units), tuple(models), tuple(terrain), MappingProxyType(extras), tuple(unseen), measured
    )


def _model_from(obj: Any, where: str) -> Model:
    r = _Reader(obj, where)
    model_id = r.ident()
    where = f"{where} (id {model_id!r})"
    r.where = where
    unit = r.obj.get("unit")
    return Model(
        id=model_id,
        unit=None if unit is None else r.ident("unit"),
        x_mm=r.number("x_mm"),
        y_mm=r.number("y_mm"),
        base=base_from_dict(r.obj.get("base"), f"{where}.base"),
        sigma_mm=r.number("sigma_mm", 0.0),
        doubt_mm=_doubt_from(r.obj.get("doubt_mm"), where),
        on_terrain=None if r.obj.get("on_terrain") is None else r.ident("on_terrain"),
    )


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _model_to_dict(m: Model) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": m.id,
        "unit": m.unit,
        "x_mm": m.x_mm,
        "y_mm": m.y_mm,
        "base": m.base.to_dict(),
        "sigma_mm": m.sigma_mm,
    }
    if any(m.doubt_mm):
        out["doubt_mm"] = list(m.doubt_mm)
    if m.on_terrain is not None:
        out["on_terrain"] = m.on_terrain
    return out


def state_to_dict(state: TableState) -> dict[str, Any]:
    """The JSON form of a state; :func:`state_from_dict` reads it back to an equal state. A model's
    ``on_terrain`` is written only for a model on top of a piece."""
    out: dict[str, Any] = {
        "table": {"width_mm": state.table.width_mm, "depth_mm": state.table.depth_mm},
        "units": [
            _drop_none(
                {
                    "id": u.id,
                    "player": u.player,
                    "name": u.name,
                    "leader": u.leader,
                    "move_in": u.move_in,
                    "abilities": list(u.abilities),
                    # written only when false: the default is a unit with a melee weapon
                    "melee": None if u.melee else False,
                }
            )
            for u in state.units
        ],
        "models": [_model_to_dict(m) for m in state.models],
        **({"unseen": [_model_to_dict(m) for m in state.unseen]} if state.unseen else {}),
        **({"measured": True} if state.measured else {}),
        "terrain": [
            _drop_none({"id": t.id, "kind": t.kind, "height_mm": t.height_mm, "polygon": [list(p) for p in t.polygon]})
            for t in state.terrain
        ],
    }
    out.update(state.extras)
    return out


def check_regular_file(
    path: Path, expected: str, error: Callable[[str], Exception], max_bytes: int | None = MAX_FILE_BYTES
) -> None:
    """``error`` naming ``path`` and ``expected`` unless it is a regular file of at most ``max_bytes`` (None: any
    size): a device or a pipe may never end, and a reader would wait on it for ever."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise error(f"{path}: no such file; expected {expected}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read it ({exc.strerror or exc}); expected {expected}") from None
    if stat.S_ISDIR(info.st_mode):
        raise error(f"{path}: is a folder; expected {expected}")
    if not stat.S_ISREG(info.st_mode):
        raise error(f"{path}: not a regular file; expected {expected}")
    if max_bytes is not None and info.st_size > max_bytes:
        raise error(f"{path}: {info.st_size} bytes; expected {expected} of at most {max_bytes} bytes")


def read_text(path: str | Path, expected: str, error: Callable[[str], Exception] = StateError) -> str:
    """The text of the file at ``path``: the one reader of the text files the rules (and the app's settings) take,
    so that every way such a file can be unreadable is one ``error`` naming it and ``expected``. Only a regular file
    of at most :data:`MAX_FILE_BYTES` is read (:func:`check_regular_file`)."""
    p = Path(path)
    check_regular_file(p, expected, error)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{p}: no such file; expected {expected}") from None
    except UnicodeDecodeError:
        raise error(f"{p}: not text (not UTF-8); expected {expected}") from None
    except OSError as exc:
        raise error(f"{p}: cannot read it ({exc.strerror or exc}); expected {expected}") from None


def read_json(path: str | Path, expected: str = "a table state JSON file") -> Any:
    """The parsed JSON of the file at ``path``: the one reader of state files (and of files holding one), so that
    every way such a file can be unreadable is one :class:`StateError` naming it and ``expected``."""
    p = Path(path)
    text = read_text(p, expected)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise StateError(f"{p}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except ValueError as exc:
        # A whole number of more digits than Python converts (4300 by default): no usable value has that many.
        raise StateError(f"{p}: not usable JSON ({str(exc).split(';')[0]}); expected {expected}") from None
    except RecursionError:
        # The parser recurses once per level: a hostile file nests deeper than Python's stack.
        raise StateError(f"{p}: JSON nested too deep to read; expected {expected}") from None


def load_state(path: str | Path) -> TableState:
    """Read a table state JSON file. Raises :class:`StateError` for a missing file, bad JSON or bad content."""
    data = read_json(path)
    try:
        return state_from_dict(data)
    except StateError as exc:
        raise StateError(f"{Path(path)}: {exc}") from None


def dump_state(state: TableState, path: str | Path) -> None:
    """Write a state as JSON (2-space indent)."""
    Path(path).write_text(json.dumps(state_to_dict(state), indent=2) + "\n", encoding="utf-8")


def members(state: TableState) -> dict[str, list[int]]:
    """Model indices of each unit, in state order."""
    out: dict[str, list[int]] = {u.id: [] for u in state.units}
    for i, m in enumerate(state.models):
        if m.unit is not None:
            out[m.unit].append(i)
    return out
