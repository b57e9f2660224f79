"""What bench/bad_inputs.py's cases are made of: the fixtures they start from (good inputs, each made once), values
of every kind, and the writers and mutators that put them into JSON and TOML documents."""

from __future__ import annotations

import json
import os
import shutil
import struct
import sys
import tomllib
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bad_inputs import EITHER, FAIL

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_images"
DEEP = 100_000
NESTED = 500


class Lit(str):
    """TOML or JSON text written as it is (nan, a 400-digit number, a list nested deeper than any parser reads)."""


# A JSON value of each kind, as text: put in place of every value of every file in turn.
JSON_VALUES: dict[str, Lit] = {
    "null": Lit("null"),
    "true": Lit("true"),
    "zero": Lit("0"),
    "minus_one": Lit("-1"),
    "big": Lit("1e308"),
    "huge_int": Lit("9" * 400),
    "nan": Lit("NaN"),
    "inf": Lit("Infinity"),
    "minus_inf": Lit("-Infinity"),
    "text": Lit('"x"'),
    "empty_text": Lit('""'),
    "control": Lit(json.dumps("a\u0000\u202e\n\ud800b")),
    "list": Lit("[1, 2]"),
    "empty_list": Lit("[]"),
    "object": Lit('{"a": 1}'),
    "empty_object": Lit("{}"),
    "deep": Lit("[" * DEEP + "]" * DEEP),
    "nested": Lit("[" * NESTED + "]" * NESTED),
    "long_text": Lit('"' + "x" * 1_000_000 + '"'),
}
# What a setting (or a profile's or a spec's value) is given in turn, as TOML.
TOML_VALUES: dict[str, Lit] = {
    "zero": Lit("0"),
    "minus_one": Lit("-1"),
    "nan": Lit("nan"),
    "inf": Lit("inf"),
    "minus_inf": Lit("-inf"),
    "big": Lit("1e308"),
    "huge_int": Lit("9" * 400),
    "text": Lit('"abc"'),
    "bool": Lit("true"),
    "list": Lit("[1, 2]"),
    "table": Lit("{ a = 1 }"),
    "empty_text": Lit('""'),
}
# Values no number, string or flag may hold.
_NEVER = {"nan", "inf", "minus_inf", "big", "huge_int", "table"}


def toml_expect(name: str, default: Any) -> str:
    """FAIL where TOML value ``name`` can be no value of the kind of ``default``; else EITHER."""
    if name in _NEVER:
        return FAIL
    if isinstance(default, bool):
        ok = name == "bool"
    elif isinstance(default, int | float):
        ok = name in ("zero", "minus_one")
    elif isinstance(default, str):
        ok = name in ("text", "empty_text")
    elif isinstance(default, list):
        ok = name == "list"
    else:
        ok = True
    return EITHER if ok else FAIL


# ---------------------------------------------------------------------------------------------------------------
# Writing documents with a value put in as text


def json_text(value: Any) -> str:
    if isinstance(value, Lit):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {json_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(json_text(v) for v in value) + "]"
    return json.dumps(value)


def _toml_value(value: Any) -> str:
    if isinstance(value, Lit):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def is_tables(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def toml_text(doc: dict[str, Any], prefix: str = "") -> str:
    """``doc`` as TOML: values first, then [sections] and [[arrays of tables]]."""
    lines = [
        f"{json.dumps(k)} = {_toml_value(v)}" for k, v in doc.items() if not isinstance(v, dict) and not is_tables(v)
    ]
    out = "\n".join(lines) + ("\n" if lines else "")
    for k, v in doc.items():
        name = f"{prefix}.{json.dumps(k)}" if prefix else json.dumps(k)
        if isinstance(v, dict):
            out += f"\n[{name}]\n" + toml_text(v, name)
        elif is_tables(v):
            for item in v:
                out += f"\n[[{name}]]\n" + toml_text(item, name)
    return out


Path_ = tuple[str | int, ...]


def value_paths(doc: Any, items: int = 1, depth: int = 99, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every place in ``doc`` (the first ``items`` of each list, ``depth`` levels deep), outer before inner."""
    if len(prefix) >= depth:
        return
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield (*prefix, k)
            yield from value_paths(v, items, depth, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:items]):
            yield (*prefix, i)
            yield from value_paths(v, items, depth, (*prefix, i))


def replaced(doc: Any, path: Path_, value: Any) -> Any:
    """A copy of ``doc`` with the value at ``path`` replaced (``GONE``: removed)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        out = dict(doc)
        new = replaced(doc[head], rest, value)
        if new is GONE:
            del out[head]
        else:
            out[head] = new
        return out
    items = list(doc)
    new = replaced(items[head], rest, value)  # type: ignore[index]
    if new is GONE:
        del items[head]  # type: ignore[arg-type]
    else:
        items[head] = new  # type: ignore[index]
    return items


GONE = object()


def at(doc: Any, path: Path_) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def shown(path: Path_) -> str:
    return ".".join(str(p) for p in path) or "(top)"


def mutations(
    doc: Any, items: int = 1, values: dict[str, Lit] = JSON_VALUES, depth: int = 99
) -> Iterator[tuple[str, Any]]:
    """Every variant of ``doc``: each value replaced by each of ``values``, removed, and each object given a key
    it does not know."""
    yield "extra key at (top)", {**doc, "zz_unknown": 1}
    for path in value_paths(doc, items, depth):
        for name, lit in values.items():
            yield f"{shown(path)} = {name}", replaced(doc, path, lit)
        yield f"{shown(path)} removed", replaced(doc, path, GONE)
        if isinstance(at(doc, path), dict):
            yield f"extra key at {shown(path)}", replaced(doc, path, {**at(doc, path), "zz_unknown": 1})


# ---------------------------------------------------------------------------------------------------------------
# Fixtures: good inputs, made once in a process of their own (OpenCV's threads must not start in the sweep's)


@dataclass(frozen=True)
class Fixtures:
    root: Path
    frame: Path
    spec: Path
    camera: Path
    roster: Path
    photos: Path
    video: Path
    review_db: Path
    eval_dir: Path
    boards: tuple[Path, ...]
    state: Path
    before: Path
    actions: Path
    profile: Path
    legion: Path

    def path(self, name: str) -> Path:
        """A new file name under the fixtures' folder of written variants."""
        out = self.root / "variants" / name
        out.parent.mkdir(parents=True, exist_ok=True)
        return out

    def write(self, name: str, text: str | bytes) -> Path:
        out = self.path(name)
        if isinstance(text, bytes):
            out.write_bytes(text)
        else:
            out.write_text(text, encoding="utf-8", errors="surrogatepass")
        return out

    @property
    def frame_args(self) -> list[str]:
        return [str(self.frame), "--table", str(self.spec)]


def rich_state(moved_mm: float = 0.0) -> dict[str, Any]:
    """A state with every field the state format has: units of each kind, a round and an oval base, doubt, a model
    on a terrain top, an unseen model, a camera's extras. u1's leader r1 touches u2's leader b1 (a melee)."""
    round32 = {"diameter_mm": 32, "size_sigma_mm": 0.2, "height_mm": 4}
    return {
        "table": {"width_mm": 1200, "depth_mm": 800},
        "units": [
            {"id": "u1", "player": "red", "name": "Red", "leader": "r1", "move_in": 6, "abilities": ["charge"]},
            {
                "id": "u2",
                "player": "blue",
                "name": "Blue",
                "leader": "b1",
                "move_in": 5,
                "abilities": [],
                "melee": False,
            },
        ],
        "models": [
            {
                "id": "r1",
                "unit": "u1",
                "x_mm": 300 - moved_mm,
                "y_mm": 300,
                "base": round32,
                "sigma_mm": 0.3,
                "doubt_mm": [0.1, 0.2],
            },
            {
                "id": "r2",
                "unit": "u1",
                "x_mm": 300 - moved_mm,
                "y_mm": 340,
                "base": {"width_mm": 60, "depth_mm": 35, "rotation_deg": 30},
            },
            {"id": "b1", "unit": "u2", "x_mm": 332.5, "y_mm": 300, "base": {"diameter_mm": 32}},
            {"id": "b2", "unit": "u2", "x_mm": 650, "y_mm": 450, "base": {"diameter_mm": 25}, "on_terrain": "ruin"},
            {"id": "x1", "unit": None, "x_mm": 900, "y_mm": 200, "base": {"diameter_mm": 40}},
        ],
        "unseen": [{"id": "b3", "unit": "u2", "x_mm": 360, "y_mm": 330, "base": {"diameter_mm": 32}}],
        "measured": True,
        "terrain": [
            {
                "id": "ruin",
                "kind": "solid",
                "height_mm": 100,
                "polygon": [[600, 400], [700, 400], [700, 500], [600, 500]],
            },
            {"id": "woods", "kind": "dense", "polygon": [[100, 600], [300, 600], [300, 750]]},
        ],
        "calibration": {"markers_used": [0, 1, 2]},
    }


def profile_doc(base: str) -> dict[str, Any]:
    """A profile file with every key written out: the defaults under built-in ``base``'s own values."""
    profiles = ROOT / "rules" / "profiles"
    doc = tomllib.loads((profiles / "defaults.toml").read_text())
    for key, value in tomllib.loads((profiles / f"{base}.toml").read_text()).items():
        doc[key] = {**doc[key], **value} if isinstance(value, dict) else value
    doc["name"] = f"house-{base}"
    return doc


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_claiming(width: int, height: int, depth: int = 8, colour: int = 2) -> bytes:
    """A PNG of a few bytes whose header claims ``width`` x ``height``."""
    rows = zlib.compress(b"\x00" * (1 + 3 * min(width, 64)) * 4)
    header = _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0))
    return b"\x89PNG\r\n\x1a\n" + header + _chunk(b"IDAT", rows) + _chunk(b"IEND", b"")


def jpeg_claiming(jpeg: bytes, width: int, height: int) -> bytes:
    """``jpeg`` with its frame header's size changed."""
    data = bytearray(jpeg)
    at_ = data.find(b"\xff\xc0")
    struct.pack_into(">HH", data, at_ + 5, height, width)
    return bytes(data)


def _image_variants(fx: Fixtures) -> Iterator[tuple[str, str, bytes | None, str]]:
    """(label, file name, bytes or None for a made file, expect)."""
    import cv2
    import numpy as np

    jpeg = fx.frame.read_bytes() if fx.frame.exists() else b""
    image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR) if jpeg else np.zeros((8, 8, 3), np.uint8)

    def encoded(ext: str, picture: Any) -> bytes:
        ok, data = cv2.imencode(ext, picture)
        return bytes(data) if ok else b""

    yield "zero bytes", "zero.jpg", b"", FAIL
    yield "truncated to half", "half.jpg", jpeg[: len(jpeg) // 2], FAIL
    yield "truncated to 100 bytes", "short.jpg", jpeg[:100], FAIL
    damaged = bytearray(jpeg)
    for k in range(len(damaged) // 3, len(damaged) // 3 + 4000, 7):
        damaged[k] ^= 0x55
    yield "damaged in the middle", "damaged.jpg", bytes(damaged), FAIL
    yield "random bytes", "noise.jpg", bytes(np.random.default_rng(0).integers(0, 256, 50_000, dtype=np.uint8)), FAIL
    yield "text", "text.jpg", b"this is not a picture\n", FAIL
    yield "a PNG named .jpg", "png.jpg", encoded(".png", image), EITHER
    yield "a JPEG named .png", "jpeg.png", jpeg, EITHER
    yield "a JPEG named .txt", "jpeg.txt", jpeg, EITHER
    yield "a video named .jpg", "video.jpg", fx.video.read_bytes()[:300_000] if fx.video.exists() else b"", FAIL
    yield "PNG claiming 60000 x 60000", "huge.png", png_claiming(60_000, 60_000), FAIL
    yield "PNG claiming 14000 x 14000", "big.png", png_claiming(14_000, 14_000), FAIL
    yield "PNG claiming 0 x 0", "nothing.png", png_claiming(0, 0), FAIL
    yield "PNG claiming 1 x 4000000000", "line.png", png_claiming(1, 4_000_000_000), FAIL
    yield "PNG of 16 bits claiming 9000 x 9000", "deep.png", png_claiming(9000, 9000, 16, 6), FAIL
    yield "JPEG claiming 65535 x 65535", "huge.jpg", jpeg_claiming(jpeg, 65535, 65535) if jpeg else b"", FAIL
    yield "JPEG claiming 0 x 0", "nothing.jpg", jpeg_claiming(jpeg, 0, 0) if jpeg else b"", FAIL
    bmp = bytearray(encoded(".bmp", image[:16, :16]))
    struct.pack_into("<ii", bmp, 18, 100_000, 100_000)
    yield "BMP claiming 100000 x 100000", "huge.bmp", bytes(bmp), FAIL
    tif = encoded(".tiff", image[:16, :16])
    yield "TIFF truncated", "cut.tif", tif[: len(tif) // 2], FAIL
    webp = bytearray(encoded(".webp", image[:16, :16]))
    yield "WebP truncated", "cut.webp", bytes(webp[:40]), FAIL
    yield "GIF", "pic.gif", b"GIF89a\x01\x00\x01\x00\x00\x00\x00;", FAIL
    yield "1 x 1 PNG", "one.png", encoded(".png", image[:1, :1]), FAIL
    yield "100 x 100 PNG", "small.png", encoded(".png", image[:100, :100]), FAIL
    yield "grey PNG", "grey.png", encoded(".png", cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)), EITHER
    yield "16-bit PNG", "sixteen.png", encoded(".png", image.astype(np.uint16) * 257), EITHER
    yield "PNG with alpha", "alpha.png", encoded(".png", cv2.cvtColor(image, cv2.COLOR_BGR2BGRA)), EITHER
    yield "black", "black.png", encoded(".png", np.zeros_like(image)), FAIL
    yield "white", "white.png", encoded(".png", np.full_like(image, 255)), FAIL
    yield "upside down", "flipped.jpg", encoded(".jpg", image[::-1]), EITHER
    yield "a tall strip 8 x 20000", "strip.png", encoded(".png", np.zeros((20000, 8, 3), np.uint8)), FAIL


def write_image_variants(fx: Fixtures) -> None:
    """The bad pictures, and a list of them (made with the fixtures: OpenCV encodes them)."""
    listed = [
        (label, str(fx.write(f"images/{name}", data)), expect) for label, name, data, expect in _image_variants(fx)
    ]
    fx.write("images/list.json", json.dumps(listed))


def _make_fixtures(fx: Fixtures) -> None:
    """Write every fixture (run in a forked child)."""
    import cv2

    from tableref.cli import main
    from tests.calibration.test_lens import board_photos

    shutil.copy(SAMPLES / "small_table_720p.jpg", fx.frame)
    shutil.copy(SAMPLES / "small_table.toml", fx.spec)
    shutil.copy(SAMPLES / "small_table_720p.camera.json", fx.camera)
    truth = json.loads((SAMPLES / "small_table_720p.truth.json").read_text())
    fx.roster.write_text(json.dumps({k: truth[k] for k in ("table", "units", "models", "terrain")}, indent=1))
    fx.photos.mkdir(exist_ok=True)
    first = cv2.imread(str(fx.frame))
    moved = first.copy()
    cv2.circle(moved, (640, 400), 20, (30, 30, 30), -1)
    cv2.imwrite(str(fx.photos / "a.jpg"), first)
    cv2.imwrite(str(fx.photos / "b.jpg"), moved)
    # a recorded game: the table still, a hand reaching in, a model put down, the table still again
    writer = cv2.VideoWriter(str(fx.video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (first.shape[1], first.shape[0]))
    for k in range(60):
        image = first if k < 25 else moved
        if 25 <= k < 35:
            image = first.copy()
            cv2.rectangle(image, (600, 0), (700, 300 + 10 * (k - 25)), (120, 140, 200), -1)
        writer.write(image)
    writer.release()
    fx.eval_dir.mkdir(exist_ok=True)
    shutil.copy(fx.frame, fx.eval_dir / "frame.jpg")
    (fx.eval_dir / "frame.truth.json").write_text(json.dumps(truth))
    for path, photo in zip(fx.boards, board_photos("barrel"), strict=False):
        cv2.imwrite(str(path), photo)
    fx.state.write_text(json.dumps(rich_state(), indent=1))
    fx.before.write_text(json.dumps(rich_state(moved_mm=40), indent=1))
    fx.actions.write_text(json.dumps({"u1": "move", "u2": {"action": "charge", "attack_used": False}}))
    fx.profile.write_text(toml_text(profile_doc("skirmish")))
    fx.legion.write_text(toml_text(profile_doc("legion")))
    write_image_variants(fx)
    code = main(["review", str(fx.photos), "--table", str(fx.spec), "--out", str(fx.review_db), "--quiet"])
    if code != 0:
        raise SystemExit(f"the review fixture failed ({code})")


def build_fixtures(work: Path) -> Fixtures:
    root = work / "fixtures"
    root.mkdir(parents=True, exist_ok=True)
    fx = Fixtures(
        root=root,
        frame=root / "frame.jpg",
        spec=root / "table.toml",
        camera=root / "camera.json",
        roster=root / "roster.json",
        photos=root / "photos",
        video=root / "game.avi",
        review_db=root / "review.sqlite",
        eval_dir=root / "eval",
        boards=tuple(root / "boards" / f"board{n}.png" for n in range(8)),
        state=root / "state.json",
        before=root / "before.json",
        actions=root / "actions.json",
        profile=root / "house.toml",
        legion=root / "house_legion.toml",
    )
    stamp = root / ".made"
    if stamp.exists():
        return fx
    (root / "boards").mkdir(exist_ok=True)
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            _make_fixtures(fx)
            code = 0
        except BaseException as exc:
            print(f"fixtures: {exc!r}", file=sys.stderr)
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("could not make the fixtures")
    stamp.write_text("")
    return fx


def truth_doc() -> dict[str, Any]:
    """The sample frame's truth, with only what `evaluate` reads of it, and a look as the wide-look renderer
    describes one (the breakdown by look reads it)."""
    truth = json.loads((SAMPLES / "small_table_720p.truth.json").read_text())
    first = truth["models"][0]["id"]
    look = {"mat": "green", "resolution": "720p", "px_per_mm": 1.0, "light": {"tint": "warm"}}
    model_look = {"top": "plain", "figure": "none", "contact": False, "rim_height_mm": 4.0}
    return {
        **{k: truth[k] for k in ("table", "units", "models", "terrain", "camera")},
        "visibility": {first: 1.0},
        "render": {"table": truth["render"]["table"], "look": look, "models": [{"id": first, "look": model_look}]},
    }
