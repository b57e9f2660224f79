"""Benchmark of the review's tracking on games it was not tuned on: does it find the moves, invent none, and see
the casualty?

Each game is a scene of the wide-look renderer (``synth.wide``: random tables, mats, bases, figures, light
and cameras, nothing like the frames the detector's rules were first chosen on) in three settled states, written
as a folder of photos: the scene; one unit of at least four models moved 175 mm (within a 7" Move) as a block;
another moved 60 mm and one model of a third taken off. Every move ends on the table, in the camera's view, clear
of other bases and of terrain. The folder is reviewed as ``tableref review FOLDER --roster roster.json`` would,
the first state's truth as the roster (every unit's Move 7"), and the timeline is compared with the truth:

- moves found: of the true moves whose model was detected (within 4 mm) in both states, those the review reports
  for that model, start and end within 4 mm and length within 2 mm (a move of a model not detected on one side
  is the detector's count, printed as "seen"); and of all the true moves, those so reported ("found of all": a
  model not detected before its move may still be reported moving from where it was last seen or placed);
- invented: reported moves longer than 5 mm of models that did not move;
- the casualty reported removed (and whether it was visible before it was taken off: one under terrain cannot be
  seen to go); models reported removed that were not taken off.

With ``--turns`` each moved unit also turns, as units wheel: by 15-90 degrees either way about its centre or a
front corner (front: the way it moves), then shifts, every model staying within the 7" Move and moving at least
``MIN_MOVE_MM``; the truth is each model's own displacement. Without it a seed makes the same game as before.

With ``--video HOLD_S`` each game is a 30 fps MPEG-4 recording instead (each state held ``HOLD_S`` seconds, its
frames differing by sensor noise, and before each later state a hand over the moved unit's new place for
``HAND_S``), reviewed as ``tableref review game.mp4`` would; the review's wall time is printed against the
recording's length, as ``bench_review.py`` prints it for the first renderer's plain games.

Run by hand: ``.venv/bin/python bench/bench_review_games.py [--seed 62000] [--count 10] [--turns] [--video 8]
[--out DIR]``; resolutions alternate 1080p and 4K.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import math
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _root  # noqa: F401  (the repository root on sys.path: synth, tests)
import cv2
import numpy as np

from synth.wide import random_scene
from synth.wide.frame import render_frame
from synth.wide.layout import make_hand
from synth.wide.scene import Blob, Part, Stick, WideBase, WideScene
from synth.wide.tables import spec_toml
from tableref.cli import main as tableref_main
from tableref.review.store import ReviewStore

EDGE_MM = 40.0
EDGE_PX = 60.0
CLEAR_MM = 3.0
MOVE_IN = 7
MM_PER_INCH = 25.4
MIN_MOVE_MM = 20.0
TURN_DEG = (15.0, 90.0)
# The share of a base's rim in view above which it counts as visible (as the wide-look sets count it).
VISIBLE_SHARE = 0.6
FPS = 30.0
FOURCC = "mp4v"
HAND_S = 1.5
NOISE_GREY = 1.5
# Sensor noise is drawn this many times and cycled: fresh noise for every 4K frame would take longer than the review.
NOISE_FIELDS = 8


@dataclass(frozen=True)
class UnitMove:
    """A unit's move: turned by ``turn_deg`` (from the table's x axis towards its y axis) about ``pivot_mm``, then
    shifted by ``shift_mm``."""

    shift_mm: tuple[float, float]
    turn_deg: float = 0.0
    pivot_mm: tuple[float, float] = (0.0, 0.0)

    def place(self, x: float, y: float) -> tuple[float, float]:
        a = math.radians(self.turn_deg)
        c, s = math.cos(a), math.sin(a)
        ux, uy = x - self.pivot_mm[0], y - self.pivot_mm[1]
        # the turn as an offset from (x, y): with no turn it is exactly zero, so a move without a turn is exactly
        # its shift
        return x + ((c - 1.0) * ux - s * uy) + self.shift_mm[0], y + (s * ux + (c - 1.0) * uy) + self.shift_mm[1]


def _moved_part(part: Part, move: UnitMove) -> Part:
    def at(p: tuple[float, float, float]) -> tuple[float, float, float]:
        return (*move.place(p[0], p[1]), p[2])

    if isinstance(part, Blob):
        return dataclasses.replace(part, centre=at(part.centre), yaw_deg=part.yaw_deg + move.turn_deg)
    if isinstance(part, Stick):
        return dataclasses.replace(part, start=at(part.start), end=at(part.end))
    a, b, c, d = (at(p) for p in part.corners)
    return dataclasses.replace(part, corners=(a, b, c, d))


def _moved_base(base: WideBase, move: UnitMove) -> WideBase:
    parts = tuple(_moved_part(p, move) for p in base.parts)
    x, y = move.place(base.x_mm, base.y_mm)
    return dataclasses.replace(base, x_mm=x, y_mm=y, parts=parts)


def _lands_clear(scene: WideScene, ids: set[str], move: UnitMove) -> bool:
    """Whether the bases ``ids`` moved by ``move`` stay on the table, in view, clear of the other bases and blocks."""
    w, d = scene.table.width_mm, scene.table.depth_mm
    cam = scene.camera
    others = [b for b in scene.bases if b.id not in ids]
    for b in scene.bases:
        if b.id not in ids:
            continue
        (x, y), r = move.place(b.x_mm, b.y_mm), b.radius_mm
        if not (EDGE_MM + r < x < w - EDGE_MM - r and EDGE_MM + r < y < d - EDGE_MM - r):
            return False
        u, v = np.asarray(cam.project(np.array([[x, y, 0.0]])), dtype=np.float64).reshape(-1, 2)[0]
        if not (EDGE_PX < u < cam.image_width - EDGE_PX and EDGE_PX < v < cam.image_height - EDGE_PX):
            return False
        if any(math.hypot(o.x_mm - x, o.y_mm - y) < o.radius_mm + r + CLEAR_MM for o in others):
            return False
        if any(
            math.hypot(k.x_mm - x, k.y_mm - y) < max(k.width_mm, k.depth_mm) / 2 + r + CLEAR_MM for k in scene.blocks
        ):
            return False
    return True


def _moved(
    scene: WideScene, units: dict[str, list[str]], unit: str, dist_mm: float, rng: np.random.Generator, turns: bool
) -> tuple[WideScene, dict[str, tuple[float, float]]] | None:
    """``scene`` with ``unit`` moved ``dist_mm`` in a random direction (turned too with ``turns``) where it lands
    clear, and each of its models' displacement; None where no direction tried lands clear."""
    ids = set(units[unit])
    for angle in rng.permutation(36) * 10.0:
        heading = (math.cos(math.radians(angle)), math.sin(math.radians(angle)))
        tries = (
            _turned(scene, ids, heading, dist_mm, rng)
            if turns
            else [UnitMove((dist_mm * heading[0], dist_mm * heading[1]))]
        )
        for move in tries:
            if _lands_clear(scene, ids, move):
                bases = tuple(_moved_base(b, move) if b.id in ids else b for b in scene.bases)
                moved = {b.id: (n.x_mm - b.x_mm, n.y_mm - b.y_mm) for b, n in zip(scene.bases, bases, strict=True)}
                return dataclasses.replace(scene, bases=bases), {i: moved[i] for i in units[unit]}
    return None


def _turned(
    scene: WideScene, ids: set[str], heading: tuple[float, float], dist_mm: float, rng: np.random.Generator
) -> list[UnitMove]:
    """Moves of the bases ``ids`` heading that way: one random turn (15-90 degrees either way, about the unit's
    centre or one of its front corners), then the shift ``dist_mm``, or a shorter one where a model would move
    beyond the unit's Move; only those that move every model at least ``MIN_MOVE_MM``."""
    xy = np.array([[b.x_mm, b.y_mm] for b in scene.bases if b.id in ids])
    along, side = np.array(heading), np.array([-heading[1], heading[0]])
    turn = float(rng.uniform(*TURN_DEG)) * float(rng.choice([-1.0, 1.0]))
    pivot_kind = int(rng.integers(3))
    if pivot_kind == 0:
        pivot = xy.mean(axis=0)
    else:
        across = xy @ side
        pivot = along * float((xy @ along).max()) + side * float(across.max() if pivot_kind == 1 else across.min())
    out = []
    for share in (1.0, 0.75, 0.5, 0.25, 0.0):
        move = UnitMove((dist_mm * share * heading[0], dist_mm * share * heading[1]), turn, (pivot[0], pivot[1]))
        apart = [math.dist(move.place(x, y), (x, y)) for x, y in xy]
        if min(apart) >= MIN_MOVE_MM and max(apart) <= MOVE_IN * MM_PER_INCH:
            out.append(move)
    return out


def make_game(
    seed: int, resolution: str, out: Path, turns: bool = False, hold_s: float | None = None
) -> dict[str, Any] | None:
    """Render one game into ``out`` (photos, table.toml, camera.json, roster.json; with ``hold_s``, game.mp4 as
    well), its units turned as well as shifted with ``turns``; its truth, or None where no two units could be moved
    clear."""
    rng = np.random.default_rng(seed)
    first = dataclasses.replace(random_scene(seed, resolution), hands=())
    units: dict[str, list[str]] = {}
    for b in first.bases:
        units.setdefault(b.unit or "", []).append(b.id)
    big = [u for u, ids in units.items() if len(ids) >= 4]
    rng.shuffle(big)
    second = next(((u, m) for u in big if (m := _moved(first, units, u, 175.0, rng, turns))), None)
    if second is None:
        return None
    third = next(
        ((u, m) for u in big if u != second[0] and (m := _moved(second[1][0], units, u, 60.0, rng, turns))), None
    )
    if third is None:
        return None
    victim = units[next((u for u in big if u not in (second[0], third[0])), second[0])][-1]
    scenes = (
        first,
        second[1][0],
        dataclasses.replace(third[1][0], bases=tuple(b for b in third[1][0].bases if b.id != victim)),
    )
    out.mkdir(parents=True, exist_ok=True)
    victim_seen = 0.0
    images = []
    for k, scene in enumerate(scenes, 1):
        image, truth = render_frame(scene, seed * 10 + k)
        images.append(np.asarray(image, dtype=np.uint8))
        cv2.imwrite(str(out / f"state_{k}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        if k == 1:
            (out / "camera.json").write_text(json.dumps(dict(truth.camera)), encoding="utf-8")
        if k == 2:
            victim_seen = float(truth.visibility.get(victim, 0.0))
    (out / "table.toml").write_text(spec_toml(first.table), encoding="utf-8")
    roster = first.state().to_dict()
    for unit in roster["units"]:
        unit["move_in"] = MOVE_IN
    (out / "roster.json").write_text(json.dumps(roster), encoding="utf-8")
    start = {b.id: (b.x_mm, b.y_mm) for b in first.bases}
    length_s = 0.0
    if hold_s is not None:
        moved = [set(second[1][1]), set(third[1][1])]
        hands = [render_frame(_with_hand(scenes[k], moved[k - 1], rng), seed * 10 + 5 + k)[0] for k in (1, 2)]
        length_s = write_video(out / "game.mp4", images, [np.asarray(h, dtype=np.uint8) for h in hands], hold_s, seed)
    return {
        "length_s": length_s,
        "start": start,
        "moves": [second[1][1], third[1][1]],
        "victim": victim,
        # a model under terrain can be taken off unseen: no camera can report it
        "victim_visible": victim_seen >= VISIBLE_SHARE,
    }


def _with_hand(scene: WideScene, moved: set[str], rng: np.random.Generator) -> WideScene:
    """``scene`` with a hand over the new place of the ``moved`` bases, reaching in from the nearer long edge."""
    xy = np.array([[b.x_mm, b.y_mm] for b in scene.bases if b.id in moved]).mean(axis=0)
    near_side = xy[1] < scene.table.depth_mm / 2
    hand = make_hand(rng, (float(xy[0]), float(xy[1])), 90.0 if near_side else -90.0, 45.0)
    # the arm from the forearm's end to the player beyond the table's edge: a hand is never cut off in mid-air
    forearm = next(p for p in hand if isinstance(p, Stick))
    edge_y = -300.0 if near_side else scene.table.depth_mm + 300.0
    shoulder = (forearm.start[0], edge_y, forearm.start[2] + 250.0)
    arm = Stick(forearm.start, shoulder, forearm.radius * 1.2, forearm.colour)
    return dataclasses.replace(scene, hands=((*hand, arm),))


def write_video(path: Path, states: list[np.ndarray], hands: list[np.ndarray], hold_s: float, seed: int) -> float:
    """Write the game as a video: each of ``states`` held ``hold_s``, each later one after ``HAND_S`` of its
    ``hands`` frame (the hand over the moved unit); its length (s)."""
    rng = np.random.default_rng(seed)
    h, w = states[0].shape[:2]
    noise = [rng.normal(0.0, NOISE_GREY, (h, w, 3)).astype(np.float32) for _ in range(NOISE_FIELDS)]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*FOURCC), FPS, (w, h))
    frames = 0
    for k, image in enumerate(states):
        spells = [(hands[k - 1], HAND_S)] if k else []
        for picture, seconds in [*spells, (image, hold_s)]:
            for _ in range(round(seconds * FPS)):
                writer.write(np.clip(picture + noise[frames % NOISE_FIELDS], 0, 255).astype(np.uint8))
                frames += 1
    writer.release()
    return frames / FPS


def review(folder: Path, source: Path | None = None) -> Path:
    """Review the game (its photos, or the recording ``source``), as the command line does; the review's file."""
    db = folder / "review.sqlite"
    args = ["review", str(source or folder), "--roster", str(folder / "roster.json")]
    args += ["--table", str(folder / "table.toml")]
    args += ["--camera", str(folder / "camera.json"), "--out", str(db), "--quiet"]
    with contextlib.redirect_stdout(io.StringIO()):
        tableref_main(args)
    return db


def score(truth: dict[str, Any], db: Path) -> dict[str, Any]:
    """The review's timeline against the truth (see the module's description)."""
    places = [{k: np.array(v) for k, v in truth["start"].items()}]
    for moves in truth["moves"]:
        places.append({k: p + np.array(moves.get(k, (0.0, 0.0))) for k, p in places[-1].items()})
    del places[2][truth["victim"]]
    with ReviewStore(str(db), readonly=True) as store:
        timeline, states = store.timeline(), store.states()
    seen = [np.array([[m.x_mm, m.y_mm] for m in s.state.models]).reshape(-1, 2) for s in states]

    def detected(k: int, model: str) -> bool:
        return (
            k < len(seen)
            and model in places[k]
            and len(seen[k]) > 0
            and bool(np.hypot(*(seen[k] - places[k][model]).T).min() <= 4.0)
        )

    true_moves = {(k + 1, m): np.array(d) for k, moves in enumerate(truth["moves"]) for m, d in moves.items()}
    visible = {key for key in true_moves if detected(key[0] - 1, key[1]) and detected(key[0], key[1])}
    found, found_all, invented = 0, 0, 0
    for move in timeline["moves"]:
        key = (move["to_state"], move["model"])
        if key in true_moves and move["from_state"] == key[0] - 1:
            start, end = places[key[0] - 1][key[1]], places[key[0]][key[1]]
            right = bool(
                np.hypot(*(np.array(move["from_mm"]) - start)) <= 4.0
                and np.hypot(*(np.array(move["to_mm"]) - end)) <= 4.0
                and abs(move["distance_mm"] - float(np.hypot(*true_moves[key]))) <= 2.0
            )
            found += right and key in visible
            found_all += right
        elif key not in true_moves and move["distance_mm"] > 5.0:
            invented += 1
    removed = [r["model"] for r in timeline["removed"]]
    return {
        "states": len(states),
        "moves": len(true_moves),
        "seen": len(visible),
        "found": found,
        "found of all": found_all,
        "invented": invented,
        "casualty": truth["victim"] in removed,
        "casualty visible": truth["victim_visible"],
        "removed wrongly": sum(r != truth["victim"] for r in removed),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=62000)
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--turns", action="store_true", help="moved units turn as well as shift")
    parser.add_argument(
        "--video", type=float, default=None, metavar="HOLD_S", help="review each game as a recording, states held so"
    )
    parser.add_argument("--out", type=Path, default=None, help="keep the games here (default: a temporary folder)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = args.out or Path(tmp)
        rows = []
        for k in range(args.count):
            seed, resolution = args.seed + k, ("1080p", "4k")[k % 2]
            folder = root / f"game_{resolution}_{seed}"
            truth = make_game(seed, resolution, folder, args.turns, args.video)
            if truth is None:
                print(f"{folder.name}: no two units could be moved clear; skipped", flush=True)
                continue
            started = time.perf_counter()
            db = review(folder, folder / "game.mp4" if args.video else None)
            took_s = time.perf_counter() - started
            row = {"game": folder.name, **score(truth, db)}
            if args.video:
                row |= {"length s": truth["length_s"], "review s": round(took_s, 2)}
                row["x real time"] = round(truth["length_s"] / took_s, 1)
            rows.append(row)
            print(json.dumps(row), flush=True)
    keys = (
        "states",
        "moves",
        "seen",
        "found",
        "found of all",
        "invented",
        "casualty",
        "casualty visible",
        "removed wrongly",
    )
    total = {key: sum(int(r[key]) for r in rows) for key in keys}
    print(
        f"{len(rows)} games: all 3 states in {sum(r['states'] == 3 for r in rows)}; moves found {total['found']} of "
        f"{total['seen']} seen on both sides, {total['found of all']} of the {total['moves']} true; "
        f"invented {total['invented']}; casualty seen "
        f"{total['casualty']} of {len(rows)} ({total['casualty visible']} visible); models removed wrongly "
        f"{total['removed wrongly']}"
    )
    if args.video:
        for resolution in ("1080p", "4k"):
            times = sorted(r["x real time"] for r in rows if f"_{resolution}_" in r["game"])
            if times:
                print(
                    f"{resolution}: x real time {', '.join(f'{t:.1f}' for t in times)} (median {np.median(times):.1f})"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
