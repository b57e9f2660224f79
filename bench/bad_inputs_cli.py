"""The command-line cases of bench/bad_inputs.py, category by category: every bad variant of every input of the
`tableref` commands (but `serve`: bad_inputs_web.py)."""

from __future__ import annotations

import json
import os
import shutil
import struct
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bad_inputs import EITHER, FAIL, OK, Case
from bad_inputs_make import (
    DEEP,
    GONE,
    JSON_VALUES,
    NESTED,
    SAMPLES,
    TOML_VALUES,
    Fixtures,
    Lit,
    at,
    is_tables,
    json_text,
    mutations,
    profile_doc,
    replaced,
    rich_state,
    shown,
    toml_expect,
    toml_text,
    truth_doc,
    value_paths,
)

# ---------------------------------------------------------------------------------------------------------------
# Settings: every key of every section of the defaults (but [webui], which `serve` reads: bad_inputs_web.py)


def _section_commands(fx: Fixtures, section: str, config: Path, tag: str) -> list[list[str]]:
    c = ["--config", str(config)]
    table = ["--table", str(fx.spec)]
    review = [*table, "--quiet", *c]
    detect = ["detect", *fx.frame_args, *c]
    analyze = ["analyze", *fx.frame_args, "--roster", str(fx.roster), *c]
    measure = ["measure", str(fx.frame), str(fx.frame), "u1m1", "u1m2", *table, "--roster", str(fx.roster), *c]
    photos = ["review", str(fx.photos), "--out", str(fx.path(f"reviews/{tag}.photos.sqlite")), *review]
    video = ["review", str(fx.video), "--out", str(fx.path(f"reviews/{tag}.video.sqlite")), *review]
    calibrate = ["calibrate-camera", *map(str, fx.boards), "--out", str(fx.path(f"out/{tag}.camera.json")), *c]
    commands = {
        "calibration": [
            detect,
            ["board", "--out", str(fx.path(f"out/{tag}.board.pdf")), *c],
            ["markers", *table, "--out", str(fx.path(f"out/{tag}.markers.pdf")), *c],
            calibrate,
        ],
        "vision": [detect, analyze],
        "pipeline": [detect, analyze, measure, photos],
        "evaluate": [["evaluate", str(fx.eval_dir), *c]],
        "review": [video, photos],
    }
    return commands[section]


def settings_cases(fx: Fixtures) -> Iterator[Case]:
    from tableref.config import default_settings

    for section, keys in default_settings().items():
        if section == "webui":
            continue
        for key, default in keys.items():
            for name, lit in TOML_VALUES.items():
                tag = f"{section}.{key}.{name}"
                config = fx.write(f"settings/{tag}.toml", f"[{section}]\n{key} = {lit}\n")
                first, *then = _section_commands(fx, section, config, tag)
                yield Case("settings", f"[{section}] {key} = {name}", first, toml_expect(name, default), key, then)


# ---------------------------------------------------------------------------------------------------------------
# JSON files: table states, rosters, actions, camera.json, truths


def _big_states() -> Iterator[tuple[str, dict[str, Any]]]:
    """States of the right types but of awkward content."""
    base = rich_state()
    models, units, terrain = base["models"], base["units"], base["terrain"]
    yield "duplicate unit id", {**base, "units": [*units, units[0]]}
    yield "duplicate model id", {**base, "models": [*models, models[0]]}
    yield "model id also unseen", {**base, "unseen": [{**base["unseen"][0], "id": "r1"}]}
    yield "duplicate terrain id", {**base, "terrain": [*terrain, terrain[0]]}
    for key in ("units", "models", "terrain", "unseen"):
        yield f"empty {key}", {**base, key: [], **({"models": []} if key == "units" else {})}
    yield "nothing but the table", {"table": base["table"]}
    yield "leader of another unit", replaced(base, ("units", 0, "leader"), "b1")
    yield "on dense terrain", replaced(base, ("models", 3, "on_terrain"), "woods")
    yield "unknown unit", replaced(base, ("models", 0, "unit"), "nobody")
    spread = [
        {
            "id": f"m{k}",
            "unit": "u1" if k % 2 else "u2",
            "x_mm": 20 + (k % 100) * 11.5,
            "y_mm": 20 + (k // 100) * 15.5,
            "base": {"diameter_mm": 10},
        }
        for k in range(5000)
    ]
    yield "5000 models in a grid", {"table": base["table"], "units": [{"id": "u1"}, {"id": "u2"}], "models": spread}
    stacked = [{**m, "x_mm": 500, "y_mm": 400} for m in spread]
    yield "5000 models stacked", {"table": base["table"], "units": [{"id": "u1"}, {"id": "u2"}], "models": stacked}
    yield (
        "2000 terrain pieces",
        {
            **base,
            "terrain": [
                {"id": f"t{k}", "kind": "area", "polygon": [[k % 1000, 10], [k % 1000 + 5, 10], [k % 1000 + 5, 20]]}
                for k in range(2000)
            ],
        },
    )
    ring = [[600 + 100 * (k % 2), 400 + k * 0.001] for k in range(100_000)]
    yield "polygon of 100000 points", replaced(base, ("terrain", 0, "polygon"), ring)
    yield "bow-tie polygon", replaced(base, ("terrain", 0, "polygon"), [[600, 400], [700, 500], [700, 400], [600, 500]])
    yield "flat polygon", replaced(base, ("terrain", 0, "polygon"), [[600, 400], [650, 400], [700, 400]])
    yield "polygon of one point", replaced(base, ("terrain", 0, "polygon"), [[600, 400]] * 4)
    yield "tiny base", replaced(base, ("models", 0, "base"), {"diameter_mm": 1e-9})
    yield "needle oval", replaced(base, ("models", 1, "base"), {"width_mm": 1e-6, "depth_mm": 1000})
    yield "turned 1e12 degrees", replaced(base, ("models", 1, "base", "rotation_deg"), 1e12)
    yield "a table of 1 mm", replaced(base, ("table",), {"width_mm": 1, "depth_mm": 1})
    yield "models far off the table", replaced(base, ("models", 4, "x_mm"), -9000)
    for name, text in (
        ("emoji", "🙂"),
        ("right-to-left", "\u202eid"),
        ("NUL", "a\u0000b"),
        ("newline", "a\nb"),
        ("long", "i" * 100_000),
        ("lone surrogate", "\ud800"),
        ("blank", " "),
    ):
        doc = json.loads(json.dumps(base).replace('"r1"', json.dumps(text)))
        yield f"id {name}", doc
    yield "1000 units", {**base, "units": [*units, *({"id": f"v{k}"} for k in range(1000))]}
    yield "10000 abilities", replaced(base, ("units", 0, "abilities"), [f"a{k}" for k in range(10_000)])


def _raw_files() -> Iterator[tuple[str, bytes, str]]:
    """Files no JSON reader can use, and a few it can (with what each expects)."""
    yield "empty file", b"", FAIL
    yield "a list", b"[]", FAIL
    yield "a string", b'"state"', FAIL
    yield "null", b"null", FAIL
    yield "truncated", json.dumps(rich_state()).encode()[:300], FAIL
    yield "trailing garbage", json.dumps(rich_state()).encode() + b" }", FAIL
    yield "byte order mark", b"\xef\xbb\xbf" + json.dumps(rich_state()).encode(), EITHER
    yield "UTF-16", json.dumps(rich_state()).encode("utf-16"), FAIL
    yield "binary", bytes(range(256)) * 4, FAIL
    yield "deep object", ('{"a": ' * DEEP + "1" + "}" * DEEP).encode(), FAIL
    yield "deep list", ("[" * DEEP + "]" * DEEP).encode(), FAIL
    yield "duplicate keys", b'{"table": {"width_mm": 1}, "table": {"width_mm": 1200, "depth_mm": 800}}', EITHER
    yield "comments", b"// a state\n" + json.dumps(rich_state()).encode(), FAIL
    yield "40 MB", b'{"table": {"width_mm": 1200, "depth_mm": 800}, "pad": "' + b"x" * 40_000_000 + b'"}', FAIL


def _special_paths(fx: Fixtures, suffix: str) -> Iterator[tuple[str, str]]:
    """What is not a readable file, named like one."""
    folder = fx.path(f"special/folder{suffix}")
    folder.mkdir(exist_ok=True)
    fifo = fx.path(f"special/pipe{suffix}")
    if not fifo.exists():
        os.mkfifo(fifo)
    yield "a folder", str(folder)
    yield "a FIFO", str(fifo)
    yield "/dev/zero", "/dev/zero"
    yield "/dev/null", "/dev/null"
    yield "no such file", str(fx.path(f"special/missing{suffix}"))
    yield "a file as a folder", str(fx.state) + f"/x{suffix}"
    yield "an empty name", ""


def _json_cases(
    fx: Fixtures,
    category: str,
    base: Any,
    items: int,
    commands: Any,
    values: dict[str, Lit] = JSON_VALUES,
    depth: int = 99,
) -> Iterator[Case]:
    """Every mutation of ``base`` written to a file, given to ``commands(path)`` (the first, then the others)."""
    variants: list[tuple[str, str, str]] = []
    for label, doc in mutations(base, items, values, depth):
        variants.append((label, json_text(doc), FAIL if label.endswith("= deep") else EITHER))
    for n, (label, raw, expect) in enumerate(variants):
        path = fx.write(f"{category}/{n}.json", raw)
        first, *then = commands(str(path), n)
        yield Case(category, label, first, expect, then=then)
    for n, (label, data, expect) in enumerate(_raw_files()):
        path = fx.write(f"{category}/raw{n}.json", data)
        first, *then = commands(str(path), f"raw{n}")
        yield Case(category, label, first, expect, then=then)
    for k, (label, path) in enumerate(_special_paths(fx, ".json")):
        first, *_ = commands(path, f"special{k}")
        yield Case(category, label, first, FAIL)


def state_cases(fx: Fixtures) -> Iterator[Case]:
    def commands(path: str, n: object) -> list[list[str]]:
        out = str(fx.path(f"out/melee{n}.json"))
        return [
            ["check", path, "--json"],
            ["check", path],
            ["check-move", str(fx.before), path, "--json"],
            ["check-move", str(fx.before), path],
            ["melee", path, "u1", "--profile", "legion", "--out", out],
        ]

    yield from _json_cases(fx, "state", rich_state(), 2, commands)
    for n, (label, doc) in enumerate(_big_states()):
        path = fx.write(f"state/big{n}.json", json_text(doc))
        first, *then = commands(str(path), f"big{n}")
        yield Case("state", label, first, EITHER, then=then)


def roster_cases(fx: Fixtures) -> Iterator[Case]:
    roster = json.loads(fx.roster.read_text()) if fx.roster.exists() else {}

    def commands(path: str, n: object) -> list[list[str]]:
        return [
            ["analyze", *fx.frame_args, "--roster", path, "--json"],
            ["measure", str(fx.frame), "u1m1", "u1m2", "--table", str(fx.spec), "--roster", path],
        ]

    yield from _json_cases(fx, "roster", roster, 1, commands)
    photos = ["review", str(fx.photos), "--table", str(fx.spec), "--quiet"]
    for n, (label, data, expect) in enumerate(_raw_files()):
        path = fx.write(f"roster/review{n}.json", data)
        out = str(fx.path(f"reviews/roster{n}.sqlite"))
        yield Case("roster", f"review --roster: {label}", [*photos, "--roster", str(path), "--out", out], expect)


def actions_cases(fx: Fixtures) -> Iterator[Case]:
    def commands(path: str, n: object) -> list[list[str]]:
        return [["check-move", str(fx.before), str(fx.state), "--actions", path, "--json"]]

    base = {"u1": "move", "u2": {"action": "charge", "attack_used": False}}
    yield from _json_cases(fx, "actions", base, 1, commands)
    for label, doc in (
        ("unknown unit", {"nobody": "move"}),
        ("10000 units", {f"u{k}": "move" for k in range(10_000)}),
        ("unknown action", {"u1": "fly"}),
        ("action null", {"u1": {"action": None}}),
        ("empty", {}),
    ):
        path = fx.write(f"actions/x{label.replace(' ', '_')}.json", json.dumps(doc))
        yield Case("actions", label, commands(str(path), 0)[0], EITHER)
    out = str(fx.path("reviews/actions.sqlite"))
    bad = fx.write("actions/review.json", '{"u1": 99}')
    review = ["review", str(fx.photos), "--table", str(fx.spec), "--quiet", "--out", out, "--actions", str(bad)]
    yield Case("actions", "review --actions with a number", review, FAIL)


def camera_cases(fx: Fixtures) -> Iterator[Case]:
    camera = json.loads((SAMPLES / "small_table_720p.camera.json").read_text())

    def commands(path: str, n: object) -> list[list[str]]:
        return [["detect", *fx.frame_args, "--camera", path, "--json"]]

    yield from _json_cases(fx, "camera", camera, 3, commands)
    for label, change in (
        ("half the size", {"image_width": 640, "image_height": 360}),
        ("singular matrix", {"camera_matrix": [[0, 0, 0], [0, 0, 0], [0, 0, 1]]}),
        ("negative focal", {"camera_matrix": [[-1600, 0, 640], [0, -1600, 360], [0, 0, 1]]}),
        ("wild distortion", {"dist_coeffs": [1e6, -1e6, 1, 1, 1e6]}),
        ("14 coefficients", {"dist_coeffs": [0.01] * 14}),
        ("no coefficients", {"dist_coeffs": []}),
        ("a 2 x 2 matrix", {"camera_matrix": [[1600, 0], [0, 1600]]}),
    ):
        path = fx.write(f"camera/x{label.replace(' ', '_')}.json", json.dumps({**camera, **change}))
        yield Case("camera", label, commands(str(path), 0)[0], EITHER)


def truth_cases(fx: Fixtures) -> Iterator[Case]:
    values = {
        k: JSON_VALUES[k]
        for k in ("null", "minus_one", "huge_int", "nan", "text", "empty_list", "object", "deep", "control")
    }

    def commands(path: str, n: object) -> list[list[str]]:
        folder = fx.path(f"truth/{n}")
        folder.mkdir(exist_ok=True)
        shutil.copy(fx.frame, folder / "frame.jpg")
        target = folder / "frame.truth.json"
        if os.path.isfile(path):
            shutil.copy(path, target)
        elif path and not target.is_symlink():
            target.symlink_to(path)
        return [["evaluate", str(folder), "--json"], ["evaluate", str(folder), "--roster", "--by-look"]]

    yield from _json_cases(fx, "truth", truth_doc(), 1, commands, values, depth=4)


# ---------------------------------------------------------------------------------------------------------------
# TOML files: rule profiles and table specs


def _toml_cases(fx: Fixtures, category: str, base: dict[str, Any], commands: Any) -> Iterator[Case]:
    """Each value of ``base`` given each of TOML_VALUES, removed; an unknown key in each table."""
    n = 0

    def case(label: str, doc: dict[str, Any] | str, expect: str, words: str = "") -> Case:
        nonlocal n
        n += 1
        path = fx.write(f"{category}/{n}.toml", doc if isinstance(doc, str) else toml_text(doc))
        first, *then = commands(str(path), n)
        return Case(category, label, first, expect, words, then)

    for path in value_paths(base, items=1):
        value = at(base, path)
        if isinstance(value, dict | list) and not isinstance(path[-1], str):
            continue
        if not isinstance(value, dict) and not is_tables(value):
            for name, lit in TOML_VALUES.items():
                yield case(
                    f"{shown(path)} = {name}", replaced(base, path, lit), toml_expect(name, value), str(path[-1])
                )
        yield case(f"{shown(path)} removed", replaced(base, path, GONE), EITHER)
        if isinstance(value, dict):
            yield case(f"unknown key in {shown(path)}", replaced(base, path, {**value, "zz_unknown": 1}), EITHER)
    yield case("unknown key at the top", {**base, "zz_unknown": 1}, EITHER)
    for label, text in (
        ("empty file", ""),
        ("not TOML", "this is = not [toml"),
        ("binary", "\u0000\u0001\u0002"),
        ("deep", "a = " + "[" * DEEP + "]" * DEEP + "\n"),
        ("nested 500", "a = " + "[" * NESTED + "]" * NESTED + "\n"),
        ("a section as a value", "table = 3\nmarkers = 4\nengagement = 5\n"),
    ):
        yield case(label, text, FAIL if label != "nested 500" else EITHER)
    for k, (label, path) in enumerate(_special_paths(fx, ".toml")):
        first, *_ = commands(path, f"special{k}")
        yield Case(category, label, first, FAIL)


def profile_cases(fx: Fixtures) -> Iterator[Case]:
    def commands(path: str, n: object) -> list[list[str]]:
        return [
            ["check", str(fx.state), "--profile", path, "--json"],
            ["check", str(fx.state), "--profile", path],
            ["check-move", str(fx.before), str(fx.state), "--profile", path, "--json"],
        ]

    def melee(path: str, n: object) -> list[list[str]]:
        return [["melee", str(fx.state), "u1", "--profile", path, "--out", str(fx.path(f"out/melee_p{n}.json"))]]

    yield from _toml_cases(fx, "profile", profile_doc("skirmish"), commands)
    for case in _toml_cases(fx, "profile", profile_doc("legion"), melee):
        case.label = f"legion: {case.label}"
        yield case
    for name in ("nosuch", "", "skirmish.toml", "../../etc/passwd", "LEGION"):
        yield Case("profile", f"--profile {name!r}", ["check", str(fx.state), "--profile", name], FAIL)
    for extends in ('"legion"', '"nosuch"', "3", '"' + str(fx.profile) + '"'):
        path = fx.write(f"profile/extends{len(extends)}.toml", f'name = "x"\nextends = {extends}\n')
        yield Case("profile", f"extends = {extends[:20]}", ["check", str(fx.state), "--profile", str(path)], EITHER)


def spec_cases(fx: Fixtures) -> Iterator[Case]:
    base = tomllib.loads((SAMPLES / "small_table.toml").read_text())

    def commands(path: str, n: object) -> list[list[str]]:
        return [
            ["detect", str(fx.frame), "--table", path, "--json"],
            ["markers", "--table", path, "--out", str(fx.path(f"out/spec{n}.pdf"))],
            ["analyze", str(fx.frame), "--table", path, "--roster", str(fx.roster)],
        ]

    yield from _toml_cases(fx, "spec", base, commands)
    markers = base["markers"]["marker"]
    for label, change in (
        ("no markers", []),
        ("two markers", markers[:2]),
        ("duplicate ids", [*markers, markers[0]]),
        ("id beyond the dictionary", [{**markers[0], "id": 100}, *markers[1:]]),
        ("2000 markers", [{**markers[0], "id": k % 100, "x_mm": k} for k in range(2000)]),
        ("markers off the table", [{**m, "x_mm": m["x_mm"] + 5000} for m in markers]),
        ("markers on one spot", [{**m, "x_mm": 100, "y_mm": 100} for m in markers]),
        ("markers in a line", [{**m, "y_mm": 100} for m in markers]),
        ("a marker larger than the table", [{**markers[0], "size_mm": 5000}, *markers[1:]]),
    ):
        doc = replaced(base, ("markers", "marker"), change)
        yield Case("spec", label, *_first_then(commands(str(fx.write(f"spec/x{label}.toml", toml_text(doc))), label)))
    for label, table in (
        ("a table of 1 mm", {"width_mm": 1, "depth_mm": 1}),
        ("a table of 1e6 mm", {"width_mm": 1e6, "depth_mm": 1e6}),
    ):
        doc = {**base, "table": table}
        yield Case("spec", label, *_first_then(commands(str(fx.write(f"spec/x{label}.toml", toml_text(doc))), label)))


def _first_then(commands: list[list[str]]) -> tuple[list[str], str, str, list[list[str]]]:
    return commands[0], EITHER, "", commands[1:]


# ---------------------------------------------------------------------------------------------------------------
# Pictures and recordings


def image_cases(fx: Fixtures) -> Iterator[Case]:
    roster = ["--roster", str(fx.roster)]
    table = ["--table", str(fx.spec)]
    variants = [tuple(v) for v in json.loads(fx.path("images/list.json").read_text())]
    variants += [(label, path, FAIL) for label, path in _special_paths(fx, ".jpg")]
    for n, (label, path, expect) in enumerate(variants):
        folder = fx.path(f"image_folders/{n}")
        folder.mkdir(exist_ok=True)
        name = folder / (Path(path).name or "empty.jpg")
        if path and not name.exists() and not name.is_symlink():
            if os.path.isfile(path):
                shutil.copy(path, name)
            else:
                name.symlink_to(path)
        truth = fx.eval_dir / "frame.truth.json"
        if name.suffix and not name.with_suffix(".truth.json").exists() and truth.exists():
            shutil.copy(truth, name.with_suffix(".truth.json"))
        out = str(fx.path(f"reviews/image{n}.sqlite"))
        for argv in (
            ["detect", path, *table],
            ["analyze", path, *table, *roster],
            ["measure", path, "u1m1", "u1m2", *table, *roster],
            ["detect", str(fx.frame), *table, "--empty", path],
            ["calibrate-camera", path, "--out", str(fx.path(f"out/image{n}.json"))],
            ["review", str(folder), *table, "--out", out, "--quiet"],
            ["evaluate", str(folder)],
        ):
            # a frame as its own empty table has no base on it; a picture of no board calibrates no lens
            either = expect == EITHER and argv[0] != "calibrate-camera" and "--empty" not in argv
            yield Case(
                "image",
                f"{argv[0]}{' --empty' if '--empty' in argv else ''}: {label}",
                argv,
                EITHER if either else FAIL,
            )


def _video_variants(fx: Fixtures) -> Iterator[tuple[str, str, bytes, str]]:
    import random

    data = fx.video.read_bytes() if fx.video.exists() else b""
    n = len(data)
    rng = random.Random(2)
    yield "zero bytes", "zero.avi", b"", FAIL
    yield "text", "text.avi", b"not a video\n", FAIL
    yield "truncated to 300 bytes", "t300.avi", data[:300], FAIL
    yield "truncated to 2000 bytes", "t2k.avi", data[:2000], FAIL
    yield "truncated to half", "half.avi", data[: n // 2], EITHER
    flipped = bytearray(data)
    for k in range(0, n, 997):
        flipped[k] ^= 0xFF
    yield "a byte in 997 flipped", "flip.avi", bytes(flipped), EITHER
    head = bytearray(data)
    head[200:4296] = bytes(rng.randrange(256) for _ in range(4096))
    yield "header overwritten", "head.avi", bytes(head), EITHER
    middle = bytearray(data)
    middle[n // 3 : n // 3 + 4096] = bytes(rng.randrange(256) for _ in range(4096))
    yield "4 KB overwritten in the middle", "mid.avi", bytes(middle), EITHER
    big = bytearray(data)
    at_ = big.find(b"avih")
    if at_ >= 0:
        struct.pack_into("<II", big, at_ + 8 + 32, 60_000, 60_000)
    at_ = big.find(b"strf")
    if at_ >= 0:
        struct.pack_into("<ii", big, at_ + 8 + 4, 60_000, 60_000)
    # the frames themselves are 1280 x 720, and what OpenCV reports of them
    yield "header claiming 60000 x 60000", "huge.avi", bytes(big), EITHER
    # FFmpeg reads a JPEG as a recording of one frame
    yield "a JPEG named .avi", "jpeg.avi", fx.frame.read_bytes() if fx.frame.exists() else b"", EITHER
    yield "a video named .mp4", "avi.mp4", data, EITHER
    yield "random bytes", "noise.mp4", bytes(rng.randrange(256) for _ in range(100_000)), FAIL


def video_cases(fx: Fixtures) -> Iterator[Case]:
    variants = [
        (label, str(fx.write(f"videos/{name}", data)), expect) for label, name, data, expect in _video_variants(fx)
    ]
    variants += [(label, path, FAIL) for label, path in _special_paths(fx, ".avi")]
    for n, (label, path, expect) in enumerate(variants):
        out = str(fx.path(f"reviews/video{n}.sqlite"))
        yield Case("video", label, ["review", path, "--table", str(fx.spec), "--out", out, "--quiet"], expect)
    several = [variants[0][1], str(fx.video)]
    out = str(fx.path("reviews/several"))
    yield Case("video", "two, one bad", ["review", *several, "--table", str(fx.spec), "--out", out, "--quiet"], FAIL)


# ---------------------------------------------------------------------------------------------------------------
# Where results are written, and the other arguments


def _out_places(fx: Fixtures, suffix: str) -> Iterator[tuple[str, str, str]]:
    folder = fx.path(f"outplaces/folder{suffix}")
    folder.mkdir(exist_ok=True)
    fifo = fx.path(f"outplaces/pipe{suffix}")
    if not fifo.exists():
        os.mkfifo(fifo)
    yield "a folder", str(folder), FAIL
    yield "a FIFO", str(fifo), FAIL
    yield "a missing folder", str(fx.path("outplaces/missing") / f"x{suffix}"), FAIL
    yield "a file as a folder", f"{fx.state}/x{suffix}", FAIL
    yield "a full disk", "/dev/full", FAIL
    yield "/dev/null", "/dev/null", EITHER
    yield "a name too long", str(fx.path("outplaces")) + "/" + "a" * 300 + suffix, FAIL
    yield "an empty name", "", FAIL
    yield "a wrong ending", str(fx.path(f"outplaces/out{suffix}.txt")), EITHER
    yield "a proc file", "/proc/version", FAIL


def output_cases(fx: Fixtures) -> Iterator[Case]:
    for case in _output_cases(fx):
        # a writer that waits on a FIFO waits for ever: no need to wait long to see it
        case.timeout_s = 30.0
        yield case


def _output_cases(fx: Fixtures) -> Iterator[Case]:
    table = ["--table", str(fx.spec)]
    for label, place, expect in _out_places(fx, ".png"):
        yield Case("output", f"detect --annotate: {label}", ["detect", *fx.frame_args, "--annotate", place], expect)
    for label, place, expect in _out_places(fx, ".pdf"):
        yield Case("output", f"board --out: {label}", ["board", "--out", place], expect)
        yield Case("output", f"markers --out: {label}", ["markers", *table, "--out", place], expect)
    for label, place, expect in _out_places(fx, ".json"):
        boards = [str(b) for b in fx.boards]
        yield Case("output", f"calibrate-camera --out: {label}", ["calibrate-camera", *boards, "--out", place], expect)
        yield Case(
            "output",
            f"melee --out: {label}",
            ["melee", str(fx.state), "u1", "--profile", "legion", "--out", place],
            expect,
        )
    for label, place, expect in _out_places(fx, ".sqlite"):
        argv = ["review", str(fx.photos), *table, "--out", place, "--quiet"]
        yield Case("output", f"review --out: {label}", argv, expect)
    # several recordings write into a folder: a file where it should be
    yield Case(
        "output",
        "review of two into a file",
        ["review", str(fx.photos), str(fx.video), *table, "--out", str(fx.state), "--quiet"],
        FAIL,
    )
    foreign = fx.write("outplaces/text.sqlite", "not a database\n")
    yield Case(
        "output",
        "review --out: a text file",
        ["review", str(fx.photos), *table, "--out", str(foreign), "--quiet"],
        FAIL,
    )
    damaged = fx.path("outplaces/damaged.sqlite")
    if fx.review_db.exists():
        data = bytearray(fx.review_db.read_bytes())
        data[len(data) // 2 : len(data) // 2 + 4096] = bytes(4096)
        damaged.write_bytes(bytes(data))
    yield Case(
        "output",
        "review --out: a damaged review",
        ["review", str(fx.photos), *table, "--out", str(damaged), "--quiet"],
        FAIL,
    )


def argument_cases(fx: Fixtures) -> Iterator[Case]:
    table = ["--table", str(fx.spec)]
    roster = ["--roster", str(fx.roster)]
    frame = str(fx.frame)
    photos = ["review", str(fx.photos), *table, "--quiet"]
    rows: list[tuple[str, list[str], str]] = [
        ("measure: an unknown id", ["measure", frame, "nobody", "u1m1", *table, *roster], FAIL),
        ("measure: one id twice", ["measure", frame, "u1m1", "u1m1", *table, *roster], FAIL),
        ("measure: ids only", ["measure", "u1m1", "u1m2", *table, *roster], FAIL),
        ("measure: no ids", ["measure", frame, *table, *roster], FAIL),
        ("measure: 40 frames", ["measure", *[frame] * 40, "u1m1", "u1m2", *table, *roster], EITHER),
        ("check-move: one state twice", ["check-move", str(fx.state), str(fx.state)], OK),
        ("melee: an unknown unit", ["melee", str(fx.state), "nobody", "--profile", "legion"], FAIL),
        ("melee: an empty unit", ["melee", str(fx.state), "", "--profile", "legion"], FAIL),
        ("melee: the skirmish profile", ["melee", str(fx.state), "u1", "--profile", "skirmish"], FAIL),
        ("melee: a unit not in contact", ["melee", str(fx.before), "u1", "--profile", "legion"], FAIL),
        ("evaluate: an empty folder", ["evaluate", str(fx.path("args/empty_folder"))], FAIL),
        ("evaluate: a file", ["evaluate", str(fx.state)], FAIL),
        ("evaluate: no such folder", ["evaluate", str(fx.path("args/none"))], FAIL),
        (
            "calibrate-camera: one photo",
            ["calibrate-camera", str(fx.boards[0]), "--out", str(fx.path("args/c.json"))],
            FAIL,
        ),
        (
            "calibrate-camera: a photo twice",
            ["calibrate-camera", *[str(fx.boards[0])] * 8, "--out", str(fx.path("args/c2.json"))],
            FAIL,
        ),
        # the same shape: the camera is scaled to the frame
        (
            "detect: the camera of another size",
            ["detect", str(SAMPLES / "skirmish_1080p.jpg"), "--camera", str(fx.camera)],
            EITHER,
        ),
        ("detect: the frame as its own empty table", ["detect", *fx.frame_args, "--empty", frame], FAIL),
        ("detect: the default table's spec", ["detect", frame], FAIL),
        ("review: --workers 0", [*photos, "--workers", "0", "--out", str(fx.path("args/w0.sqlite"))], FAIL),
        ("review: --workers -1", [*photos, "--workers", "-1", "--out", str(fx.path("args/w1.sqlite"))], FAIL),
        (
            "review: --workers 10**30",
            [*photos, "--workers", "1" + "0" * 30, "--out", str(fx.path("args/w2.sqlite"))],
            EITHER,
        ),
        ("review: --workers abc", [*photos, "--workers", "abc", "--out", str(fx.path("args/w3.sqlite"))], FAIL),
        ("review: --dask nonsense", [*photos, "--dask", "::::", "--out", str(fx.path("args/d.sqlite"))], FAIL),
        (
            "review: --dask unreachable",
            [*photos, "--dask", "tcp://127.0.0.1:1", "--out", str(fx.path("args/d2.sqlite"))],
            FAIL,
        ),
        (
            "review: the same folder twice",
            ["review", str(fx.photos), str(fx.photos), *table, "--quiet", "--out", str(fx.path("args/twice"))],
            EITHER,
        ),
        ("review: an unknown profile", [*photos, "--profile", "nosuch", "--out", str(fx.path("args/p.sqlite"))], FAIL),
        (
            "review: a resumed review with another spec",
            ["review", str(fx.photos), "--quiet", "--out", str(fx.review_db)],
            EITHER,
        ),
        ("check: an unknown option", ["check", "--nosuch"], FAIL),
        ("no command", [], FAIL),
    ]
    fx.path("args/empty_folder").mkdir(parents=True, exist_ok=True)
    for label, argv, expect in rows:
        yield Case("args", label, argv, expect)


CATEGORIES: dict[str, tuple[str, Any]] = {
    "settings": ("cli", settings_cases),
    "state": ("cli", state_cases),
    "roster": ("cli", roster_cases),
    "actions": ("cli", actions_cases),
    "camera": ("cli", camera_cases),
    "truth": ("cli", truth_cases),
    "profile": ("cli", profile_cases),
    "spec": ("cli", spec_cases),
    "image": ("cli", image_cases),
    "video": ("cli", video_cases),
    "output": ("cli", output_cases),
    "args": ("cli", argument_cases),
}
