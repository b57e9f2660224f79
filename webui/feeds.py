"""What the dashboard watches: frames at the pace a camera would deliver them, each with the scene it shows.

Every feed yields :class:`FeedFrame` objects from :meth:`Feed.frames` and raises ``tableref.sources.SourceError``
when it cannot open or read its source. A live feed (camera, stream) that stops is reopened by the live loop; a
recorded one (video, folder of images) ends; a still image, the bundled sample and a table state repeat forever.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType

import cv2
import numpy as np
from numpy.typing import NDArray

import rules
from calibration.camera import CameraModel, load_camera
from tableref.outlines import outline_mm
from tableref.sources import FrameSource, SourceError, StillImage, open_source, read_image
from webui.roster import roster_from_json

# The bundled sample game: frames of the default table (1080p, each with its camera.json and truth.json) from the
# repository checkout's sample_images/. The 4K and small-table frames are left out: the first is slow to decode and
# measure on every loop, the second shows another table.
SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_images"
SAMPLE_FRAMES = ("skirmish_1080p", "melee_hand_1080p", "tilted_barrel_1080p")

# Colours of the drawing of a table state (BGR): a green mat, terrain by kind, grey bases with a light rim.
_MAT_BGR = (70, 110, 80)
_TERRAIN_BGR = {"solid": (70, 70, 80), "sealed": (50, 50, 60), "dense": (40, 90, 40), "area": (90, 130, 140)}
_BASE_BGR = (50, 50, 50)
_RIM_BGR = (200, 200, 200)
# The sample's move from one frame to the next is this many blends, each a quarter of the way further: steps
# large enough to count as movement, as a hand or a moved model would.
_MOVE_STEPS = 3
# Base outlines are drawn with this many vertices (smooth at any scale a screen shows).
_OUTLINE_VERTICES = 64


@dataclass(frozen=True)
class Scene:
    """What frames show beyond their pixels. Frames of one ``key`` share a camera position and a roster.

    - ``camera``: the lens model (camera.json), or None.
    - ``roster``: the roster to start from (units, ids), or None for an empty one.
    - ``state``: for a table state feed, the exact state the frame was drawn from (nothing to detect), drawn at
      ``px_per_mm``.
    - ``game``: which playing of a looped recording the frame belongs to: a new one starts the game over (the roster
      from ``roster`` again), at the same camera position.
    - ``fresh_if_other``: where the models first seen do not match ``roster`` (a photo of another table), start
      from a fresh roster instead, ``roster`` kept for undo.
    """

    key: str
    camera: CameraModel | None = None
    roster: rules.TableState | None = None
    state: rules.TableState | None = None
    px_per_mm: float = 0.0
    game: int = 0
    fresh_if_other: bool = False


@dataclass(frozen=True)
class FeedFrame:
    """One frame (H, W, 3) BGR of a feed; the same array object means the same picture (an unchanged frame)."""

    index: int
    image_bgr: NDArray[np.uint8]
    scene: Scene


class Feed:
    """Base of the feeds. ``live`` feeds (cameras, streams) may drop and come back."""

    name: str = ""
    kind: str = ""
    live: bool = False

    def frames(self) -> Iterator[FeedFrame]:
        raise NotImplementedError


def _readonly(image: NDArray[np.uint8]) -> NDArray[np.uint8]:
    image.flags.writeable = False
    return image


class _Pacer:
    """Sleeps so that frames leave at ``fps`` (never faster), catching up after a slow consumer."""

    def __init__(self, fps: float) -> None:
        self.period_s = 1.0 / fps
        self.due = time.monotonic()

    def wait(self) -> None:
        now = time.monotonic()
        if self.due > now:
            time.sleep(self.due - now)
        self.due = max(self.due, now) + self.period_s


class SourceFeed(Feed):
    """A ``tableref.sources`` frame source: a live camera or stream at its own pace; a video at its frame rate; a
    still image repeated at ``fps``; a folder's images each held for the source's period at ``fps``. With ``loop``,
    a recording is played again from its start when it ends, each playing a new ``game`` of the scene: the game
    starts over, so its roster does too."""

    def __init__(self, source: FrameSource, scene: Scene, fps: float, loop: bool = False) -> None:
        self.source = source
        self.scene = scene
        self.fps = fps
        self.loop = loop
        self.name = source.name
        self.live = source.live
        self.kind = getattr(source, "kind", type(source).__name__)

    def frames(self) -> Iterator[FeedFrame]:
        if self.live:
            # A camera or stream blocks on each read at its own pace; each call opens a fresh capture.
            for f in self.source.frames():
                yield FeedFrame(f.index, _readonly(f.image_bgr), self.scene)
            return
        if not self.loop:
            yield from self._pass(self.scene, hold_last=True)
            return
        game = self.scene.game
        while True:
            scene = replace(self.scene, game=game)
            game += 1
            shown = False
            for frame in self._pass(scene, hold_last=False):
                shown = True
                yield frame
            if not shown:
                return

    def _pass(self, scene: Scene, hold_last: bool) -> Iterator[FeedFrame]:
        """One pass through the recording, at its pace; ``hold_last``: its last frame then stays on (a still
        image for ever, a folder's last image for its period)."""
        pacer = _Pacer(self.fps)
        start = time.monotonic()
        last: FeedFrame | None = None
        for f in self.source.frames():
            frame = FeedFrame(f.index, _readonly(f.image_bgr), scene)
            # Until this frame is due, the camera still shows the one before it.
            while last is not None and time.monotonic() - start < f.time_s:
                pacer.wait()
                yield last
            pacer.wait()
            yield frame
            last = frame
        if last is None or not hold_last:
            return
        hold_s = getattr(self.source, "period_s", 0.0) if len(self.source) != 1 else float("inf")
        end = time.monotonic() + hold_s
        while time.monotonic() < end:
            pacer.wait()
            yield last


class ImageFeed(Feed):
    """One image repeated at ``fps``: a camera watching an unchanging table (a still photo, an upload)."""

    kind = "image"

    def __init__(self, image_bgr: NDArray[np.uint8], name: str, scene: Scene, fps: float) -> None:
        self.image = _readonly(image_bgr)
        self.name = name
        self.scene = scene
        self.fps = fps

    def frames(self) -> Iterator[FeedFrame]:
        pacer = _Pacer(self.fps)
        k = 0
        while True:
            pacer.wait()
            yield FeedFrame(k, self.image, self.scene)
            k += 1


class StateFeed(ImageFeed):
    """A table state with no camera: the table drawn top-down at ``px_per_mm``, repeated at ``fps``. Detection is
    skipped; the state's models are the detections, its units the roster."""

    kind = "table state"

    def __init__(
        self,
        state: rules.TableState,
        name: str,
        px_per_mm: float,
        fps: float,
        roster: rules.TableState | None = None,
    ) -> None:
        start = roster if roster is not None else state
        scene = Scene(key=f"state:{name}", roster=start, state=state, px_per_mm=px_per_mm)
        super().__init__(draw_state(state, px_per_mm), name, scene, fps)


@dataclass(frozen=True)
class SampleScene:
    """One frame of the bundled sample with its scene (camera.json, and its truth file as the roster)."""

    image_bgr: NDArray[np.uint8]
    scene: Scene


class SampleFeed(Feed):
    """The bundled sample game: each frame held for ``hold_s`` at ``fps``, then a ``move_s`` cross-fade to the
    next (the table changing, so not settled), looping for ever."""

    kind = "sample"
    live = False

    def __init__(self, scenes: Sequence[SampleScene], hold_s: float, move_s: float, fps: float) -> None:
        if not scenes:
            raise SourceError("the sample game has no frames")
        self.scenes = list(scenes)
        self.name = "bundled sample game (" + ", ".join(s.scene.key for s in scenes) + ")"
        self.hold_s = hold_s
        self.move_s = move_s
        self.fps = fps

    def frames(self) -> Iterator[FeedFrame]:
        pacer = _Pacer(self.fps)
        k = 0
        n = 0
        while True:
            here = self.scenes[n % len(self.scenes)]
            after = self.scenes[(n + 1) % len(self.scenes)]
            end = time.monotonic() + self.hold_s
            while time.monotonic() < end:
                pacer.wait()
                yield FeedFrame(k, here.image_bgr, here.scene)
                k += 1
            if len(self.scenes) > 1:
                target = after.image_bgr
                if target.shape != here.image_bgr.shape:
                    size = (here.image_bgr.shape[1], here.image_bgr.shape[0])
                    target = np.asarray(cv2.resize(target, size), dtype=np.uint8)
                for s in range(1, _MOVE_STEPS + 1):
                    t = s / (_MOVE_STEPS + 1)
                    blend = _readonly(np.asarray(cv2.addWeighted(here.image_bgr, 1.0 - t, target, t, 0.0), np.uint8))
                    # The camera (and so the calibration) is the next frame's once the picture is mostly that one.
                    scene = here.scene if t < 0.5 else after.scene
                    end = time.monotonic() + self.move_s / _MOVE_STEPS
                    while time.monotonic() < end:
                        pacer.wait()
                        yield FeedFrame(k, blend, scene)
                        k += 1
            n += 1


def sample_available(folder: Path = SAMPLE_DIR) -> bool:
    """True when the sample frames (with camera.json and truth.json) are in ``folder``."""
    return all(
        (folder / f"{name}{suffix}").is_file()
        for name in SAMPLE_FRAMES
        for suffix in (".jpg", ".camera.json", ".truth.json")
    )


def load_sample_scenes(folder: Path = SAMPLE_DIR, names: Sequence[str] = SAMPLE_FRAMES) -> list[SampleScene]:
    """The sample frames of ``folder``, each with its camera and its truth file's units as the roster."""
    scenes = []
    for name in names:
        image = _readonly(read_image(folder / f"{name}.jpg"))
        camera = load_camera(folder / f"{name}.camera.json")
        truth = json.loads((folder / f"{name}.truth.json").read_text("utf-8"))
        scenes.append(SampleScene(image, Scene(key=name, camera=camera, roster=roster_from_json(truth))))
    return scenes


def draw_state(state: rules.TableState, px_per_mm: float) -> NDArray[np.uint8]:
    """(H, W, 3) BGR top-down drawing of a table state: pixel (u, v) covers table square [u, u+1) / px_per_mm."""
    width = max(1, round(state.table.width_mm * px_per_mm))
    height = max(1, round(state.table.depth_mm * px_per_mm))
    image = np.empty((height, width, 3), dtype=np.uint8)
    image[:] = _MAT_BGR

    def px(points_mm: NDArray[np.float64]) -> NDArray[np.int32]:
        # Sub-pixel shift bits keep the anti-aliased outlines in place at small scales.
        return np.round((points_mm * px_per_mm - 0.5) * 16).astype(np.int32)

    for t in state.terrain:
        colour = _TERRAIN_BGR.get(t.kind, _TERRAIN_BGR["area"])
        cv2.fillPoly(image, [px(np.array(t.polygon))], colour, cv2.LINE_AA, 4)
    for m in state.models:
        ring = px(outline_mm(m.base, m.x_mm, m.y_mm, _OUTLINE_VERTICES))
        cv2.fillPoly(image, [ring], _BASE_BGR, cv2.LINE_AA, 4)
        cv2.polylines(image, [ring], True, _RIM_BGR, 2, cv2.LINE_AA, 4)
    return image


def state_feed(path: Path, px_per_mm: float, fps: float, roster: rules.TableState | None = None) -> StateFeed:
    """A feed of the table state JSON at ``path`` (its units are the roster unless ``roster`` is given). Raises
    ``rules.StateError``."""
    state = rules.load_state(path)
    frame_sections = {k: v for k, v in state.extras.items() if k != "calibration"}
    state = replace(state, extras=MappingProxyType(frame_sections))
    return StateFeed(state, path.name, px_per_mm, fps, roster)


def source_feed(spec: str, scene: Scene, fps: float, folder_period_s: float, loop: bool = False) -> Feed:
    """A feed from a command-line word (camera index, stream URL, video, image or folder of images); ``loop``: a
    recording plays again from its start when it ends. Raises ``tableref.sources.SourceError``."""
    source = open_source(spec, folder_period_s)
    if isinstance(source, StillImage):
        return ImageFeed(source.image, source.name, scene, fps)
    return SourceFeed(source, scene, fps, loop)
