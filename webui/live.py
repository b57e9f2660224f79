"""The live loop: a reader thread owns the feed and publishes frames, an analysis thread measures settled frames,
and both publish immutable :class:`Snapshot` objects through a :class:`Hub` that request handlers only read.

- The reader takes frames at the feed's pace, handles at most ``max_process_fps`` of them (the rest are dropped),
  makes each a viewer JPEG, watches for movement on small grey copies, and reopens a live camera that dropped
  with a doubling back-off.
- When the table has been still for ``settle_s`` and differs from the frame last measured, the reader hands the
  frame to the analysis thread (only the newest one waits; an older one is replaced). Until the new result is
  out, the last settled result stays, and the status says the table is not settled.
- Changes from the screens (roster, profile, table spec) re-run the rules on the last measured frame in the
  analysis thread; no request thread does heavy work.

The snapshots are :mod:`webui.hub`'s, the threads' in-tray :mod:`webui.threads`'s, and the documents the screens draw
:mod:`webui.documents`'s; the watch itself (settle, knocked camera, measure) is :mod:`tableref.pipeline.watch`.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

import calibration
import rules
import vision
from calibration.spec import TableSpec
from calibration.table import TableCalibration
from tableref.jpeg import encode_jpeg
from tableref.pipeline.frame import FrameAnalysis, game_sizes
from tableref.pipeline.motion import thumbnail
from tableref.pipeline.watch import COVERED, MEASURE, SAME, TableWatch, measure_settled
from tableref.settings import Settings
from tableref.sources import SourceError
from webui.documents import ToPixels, as_detections, in_frame, place_doubted, place_in_frame, result_document
from webui.empty import EmptyTables
from webui.errors import HTTP_CONFLICT, ApiError, WebuiError
from webui.feeds import Feed, Scene
from webui.hub import STARTING, FrameView, Hub, Result
from webui.roster import declared_bases, empty_roster, follow, roster_match, units_on_table
from webui.settings import WebuiSettings
from webui.threads import DetectJob, Jobs, RateMeter

log = logging.getLogger(__name__)

# Camera states shown in the status bar.
LIVE = "live"
LOST = "lost"
RECONNECTING = "reconnecting"
ENDED = "ended"

# A frame may come this fraction of a period early and still be taken: a feed pacing itself at exactly the cap
# must not lose every other frame to timer jitter.
_RATE_JITTER = 0.25
# How long a change from a screen waits for its re-checked result (s); a check takes milliseconds.
CHANGE_WAIT_S = 5.0
# Shown while a settled table is not measured because something reaches in over it.
COVERED_MESSAGE = "something reaches over the table (a hand held still?): measuring once it has gone"
# The analysis thread looks at the stop flag at least this often (s).
_POLL_S = 1.0


@dataclass(frozen=True)
class _Detected:
    """The last measurement of a scene, kept to re-run the rules when the roster or profile changes."""

    state: rules.TableState
    frame: FrameView
    to_px: ToPixels
    rim_height_mm: float
    analysis_ms: float
    # share (0-1) of the table measured in this frame; the rest kept from the frame measured before
    remeasured_share: float


# Errors of measuring a frame that say what is wrong with the input (shown in the status bar, never raised).
_MEASURE_ERRORS: tuple[type[BaseException], ...] = (
    calibration.CalibrationError,
    vision.VisionError,
    rules.RulesError,
    SourceError,
    WebuiError,
)


class LiveTable:
    """Owns the feed and the two threads; the screens read :attr:`hub` and ask for changes through methods."""

    def __init__(
        self,
        feed: Feed,
        spec: TableSpec,
        config: Settings,
        settings: WebuiSettings,
        profile: rules.RuleProfile,
    ) -> None:
        self.settings = settings
        # the settings as given; the game's profile cuts the base sizes down to its own (see set_profile)
        self._given_config = config
        self.config = game_sizes(config, profile)
        self.hub = Hub(feed.name, feed.kind, profile.name)
        self._lock = threading.Lock()
        self._feed = feed
        self._feed_gen = 0
        self._spec = spec
        self._profile = profile
        self._rosters: dict[str, rules.TableState] = {}
        # per scene, the roster a reset set aside (or a photo of another table), for undo
        self._undo: dict[str, rules.TableState] = {}
        # the feed an uploaded photo replaced, to go back to
        self._resume: Feed | None = None
        # which playing of a looped recording each roster follows
        self._games: dict[str, int] = {}
        self._calibrations: dict[str, TableCalibration] = {}
        # the last measurement of each camera position, for measuring only what changed in the next frame
        self._analyses: dict[str, FrameAnalysis] = {}
        # the table seen empty, per camera position: what changed since is a strong cue of a base
        self.empties = EmptyTables()
        self._detected: dict[str, _Detected] = {}
        self._scene_of_result: str | None = None
        self._force = False
        # the last frame was measured in part: the next settled one is measured whole
        self._whole_due = False
        self._jobs = Jobs()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []
        self._frame_seq = 0
        self._result_seq = 0
        self._got_frames = False

    # ----------------------------------------------------------------------------------------------------------
    # Life

    def start(self) -> None:
        """Start the reader and analysis threads (daemons: they never keep the process alive)."""
        self._threads = [
            threading.Thread(target=self._read_loop, name="tableref-reader", daemon=True),
            threading.Thread(target=self._analysis_loop, name="tableref-analysis", daemon=True),
        ]
        for t in self._threads:
            t.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        self._jobs.close()
        for t in self._threads:
            t.join(timeout_s)

    # ----------------------------------------------------------------------------------------------------------
    # Reads

    @property
    def profile(self) -> rules.RuleProfile:
        with self._lock:
            return self._profile

    @property
    def spec(self) -> TableSpec:
        with self._lock:
            return self._spec

    def _current_scene(self) -> str | None:
        """The scene of the newest result (changes apply to it even while the screens show a frozen one)."""
        result = self.hub.live_result()
        if result is not None:
            return result.frame.scene
        return self.hub.snapshot().status.frame_scene

    def roster(self) -> rules.TableState:
        """The roster of the scene on screen (an empty one before anything was seen)."""
        key = self._current_scene()
        with self._lock:
            if key is not None and key in self._rosters:
                return self._rosters[key]
            return empty_roster(rules.Table(self._spec.width_mm, self._spec.depth_mm))

    # ----------------------------------------------------------------------------------------------------------
    # Changes from the screens

    def _recheck(self) -> bool:
        """Queue a re-run of the rules on the last measurement; False when nothing was measured yet."""
        key = self._current_scene()
        with self._lock:
            known = key is not None and key in self._detected
        if known:
            self._jobs.put_recheck()
        return known

    def _scene_on_screen(self) -> str:
        key = self._current_scene()
        if key is None:
            raise ApiError("no frame yet: the roster belongs to the table the camera sees", HTTP_CONFLICT)
        return key

    def set_roster(self, roster: rules.TableState) -> bool:
        """Replace the roster of the scene on screen; True when a re-checked result will follow."""
        key = self._scene_on_screen()
        with self._lock:
            self._rosters[key] = roster
            self._undo.pop(key, None)
        return self._recheck()

    def reset_roster(self) -> tuple[int, bool]:
        """Forget the roster of the scene on screen (units, ids, base overrides; its terrain stays), kept aside for
        :meth:`undo_reset`. Returns the number of units forgotten, and whether a re-checked result will follow."""
        key = self._scene_on_screen()
        old = self.roster()
        with self._lock:
            self._rosters[key] = empty_roster(old.table, old.terrain)
            self._undo[key] = old
        return len(old.units), self._recheck()

    def undo_reset(self) -> tuple[int, bool]:
        """Bring back the roster the last reset set aside. Returns its number of units, and whether a re-checked
        result will follow; 409 when nothing was reset."""
        key = self._scene_on_screen()
        with self._lock:
            old = self._undo.pop(key, None)
            if old is None:
                raise ApiError("nothing to undo: the roster of the table on screen was not reset", HTTP_CONFLICT)
            self._rosters[key] = old
        return len(old.units), self._recheck()

    def set_profile(self, profile: rules.RuleProfile) -> bool:
        """Judge by ``profile`` from now on; True when a re-checked result will follow. Where the game's base sizes
        differ from the last one's, the next settled frame is measured afresh, whole, with them."""
        config = game_sizes(self._given_config, profile)
        resize = config.vision.base_sizes_mm != self.config.vision.base_sizes_mm
        with self._lock:
            self._profile = profile
            if resize:
                self.config = config
                self._analyses.clear()
                self._force = True
        self.hub.update(profile=profile.name)
        if resize:
            self._wake.set()
        return self._recheck()

    def set_spec(self, spec: TableSpec) -> None:
        """Use another table spec: every calibration is redone on the next settled frame."""
        with self._lock:
            self._spec = spec
            self._calibrations.clear()
            self._analyses.clear()
            self._force = True

    def recalibrate(self) -> None:
        """Calibrate again on the next settled frame (the camera was moved)."""
        with self._lock:
            self._calibrations.clear()
            self._analyses.clear()
            self._force = True

    def capture_empty(self) -> None:
        """Take the next settled frame as the table seen empty (its terrain on it, no models yet)."""
        self.empties.ask()
        with self._lock:
            self._force = True
        self._wake.set()

    def forget_empty(self) -> bool:
        """Detect without the empty table of the scene on screen from now on; False when none was captured."""
        known = self.empties.forget(self._current_scene())
        with self._lock:
            self._analyses.clear()
            self._force = True
        return known

    def empty_status(self) -> dict[str, Any]:
        """The empty table of the scene on screen (see :meth:`webui.empty.EmptyTables.status`)."""
        return self.empties.status(self._current_scene())

    def use_feed(self, feed: Feed) -> None:
        """Watch another feed from now on."""
        with self._lock:
            self._feed = feed
            self._feed_gen += 1
            self._force = True
            back_to = self._resume.name if self._resume is not None else None
        self.hub.update(source=feed.name, source_kind=feed.kind, camera=STARTING, message=None, back_to=back_to)
        self._wake.set()

    def watch_photo(self, feed: Feed) -> None:
        """Watch an uploaded photo's feed instead of the source; the source is kept to go back to
        (:meth:`back_to_source`), however many photos come after it."""
        with self._lock:
            if self._resume is None:
                self._resume = self._feed
        self.use_feed(feed)

    def back_to_source(self) -> str:
        """Put the photo away and watch the source it replaced again (a recording from its start, with its
        roster). Returns the source's name; 409 when no photo is being checked."""
        with self._lock:
            feed, self._resume = self._resume, None
        if feed is None:
            raise ApiError("no photo is being checked: the dashboard already watches its source", HTTP_CONFLICT)
        self.use_feed(feed)
        return feed.name

    # ----------------------------------------------------------------------------------------------------------
    # Reader thread

    def _read_loop(self) -> None:
        s = self.settings
        backoff = s.reconnect_initial_s
        failures = 0  # failed reads in a row: the first says the camera is lost, later ones that it is retried
        watch = TableWatch(
            s.settle_s,
            s.motion_pixel_delta,
            s.motion_fraction,
            s.motion_min_region_px,
            s.covered_pixel_delta,
            s.covered_fraction,
        )
        while not self._stop.is_set():
            with self._lock:
                feed, gen = self._feed, self._feed_gen
            self._wake.clear()
            watch.reset()
            self.hub.update(camera=RECONNECTING if failures else STARTING)
            try:
                outcome = self._read_feed(feed, gen, watch)
                if outcome == "switched" or self._stop.is_set():
                    failures = 0
                    backoff = s.reconnect_initial_s
                    continue
                if not feed.live:
                    self.hub.update(camera=ENDED, settled=True)
                    self._wake.wait()
                    failures = 0
                    continue
                raise SourceError(f"{feed.name}: the {feed.kind} stopped sending frames")
            except SourceError as exc:
                message = str(exc)
            except Exception as exc:  # a broken driver must not end the dashboard: report it and retry
                log.exception("frame source failed")
                message = f"{feed.name}: the frame source failed ({type(exc).__name__})"
            if self._got_frames:
                # It worked until now: a fresh drop starts the back-off again.
                failures = 0
                backoff = s.reconnect_initial_s
            failures += 1
            self.hub.update(
                camera=LOST if failures == 1 else RECONNECTING,
                message=f"{message}; trying again in {backoff:.1f} s",
                settled=False,
            )
            self._wake.wait(backoff)
            backoff = min(backoff * 2.0, s.reconnect_max_s)

    def _read_feed(self, feed: Feed, gen: int, watch: TableWatch) -> str:
        """Read ``feed`` until it ends ("ended"), the feed is switched or the loop stops ("switched")."""
        s = self.settings
        period = 1.0 / s.max_process_fps
        due = time.monotonic()
        meter = RateMeter()
        cached: tuple[NDArray[np.uint8] | None, bytes, NDArray[np.uint8] | None] = (None, b"", None)
        attempted: tuple[str, NDArray[np.uint8]] | None = None
        covered = False
        scene_key: str | None = None
        self._got_frames = False
        frames = feed.frames()
        try:
            for ff in frames:
                if self._stop.is_set() or self._feed_gen != gen:
                    return "switched"
                now = time.monotonic()
                if now < due - period * _RATE_JITTER:
                    continue
                due = max(due, now - period) + period
                if not self._got_frames:
                    self._got_frames = True
                    self.hub.update(camera=LIVE, message=None)
                image = ff.image_bgr
                if image is cached[0]:
                    jpeg, thumb = cached[1], cached[2]
                else:
                    jpeg = encode_jpeg(image, s.display_max_side_px, s.jpeg_quality)
                    thumb = thumbnail(image, s.motion_thumb_px, colour=True)
                    cached = (image, jpeg, thumb)
                assert thumb is not None
                if ff.scene.key != scene_key:
                    # Another camera position or table: nothing seen before counts as still.
                    watch.reset()
                    scene_key = ff.scene.key
                watch.update(thumb, now)
                settled = watch.settled(now)
                self._frame_seq += 1
                view = FrameView(
                    self._frame_seq, ff.index, time.time(), jpeg, image.shape[1], image.shape[0], ff.scene.key
                )
                force = whole = False
                if settled:
                    with self._lock:
                        force, self._force = self._force, False
                        whole, self._whole_due = self._whole_due, False
                verdict = SAME
                if settled:
                    measured = attempted[1] if attempted is not None and attempted[0] == ff.scene.key else None
                    verdict = MEASURE if force else watch.verdict(thumb, measured, again=whole)
                if verdict == COVERED:
                    if not covered:
                        covered = True
                        self.hub.update(message=COVERED_MESSAGE)
                    if whole:
                        # still owed once the hand has gone
                        with self._lock:
                            self._whole_due = True
                elif verdict == MEASURE:
                    covered = False
                    attempted = (ff.scene.key, thumb)
                    self._jobs.put_detect(DetectJob(ff, view, whole))
                self.hub.update(frame=view, settled=settled, fps=meter.tick(now), camera=LIVE)
        finally:
            close = getattr(frames, "close", None)
            if close is not None:
                close()
        return "switched" if self._stop.is_set() or self._feed_gen != gen else "ended"

    # ----------------------------------------------------------------------------------------------------------
    # Analysis thread

    def _analysis_loop(self) -> None:
        while not self._stop.is_set():
            job = self._jobs.take(_POLL_S)
            if job is None:
                continue
            try:
                if isinstance(job, DetectJob):
                    self.hub.update(analysing=True)
                    self._measure(job)
                else:
                    key = self._current_scene()
                    if key is not None:
                        self._judge(key)
            except _MEASURE_ERRORS as exc:
                self.hub.update(analysing=False, message=str(exc))
            except Exception as exc:  # keep serving the last result; the log has the details
                log.exception("measuring a frame failed")
                self.hub.update(analysing=False, message=f"measuring the frame failed ({type(exc).__name__})")

    def _measure(self, job: DetectJob) -> None:
        scene: Scene = job.frame.scene
        start = time.perf_counter()
        if scene.state is not None:
            if self.empties.due():
                self.hub.update(message=self.empties.failed("a table state shows no camera frame"))
            detected = as_detections(scene.state, scene.px_per_mm)
            scale = scene.px_per_mm

            def to_px(points_mm: NDArray[np.float64], height_mm: float) -> NDArray[np.float64]:
                return np.asarray(points_mm, dtype=np.float64) * scale - 0.5

            rim = 0.0
            share = 1.0
        else:
            if self._take_empty(job):
                return
            with self._lock:
                cal = self._calibrations.get(scene.key)
                spec = self._spec
                reference = self.empties.of(scene.key)
                # bases the user declared are measured at their size and rim height, as `tableref analyze` does
                kept = self._rosters.get(scene.key, scene.roster)
                declared = declared_bases(kept)
                # a model of a unit not found where the frame is measured whole is looked for about its last place
                looked_for = units_on_table(kept)
                # only what changed since is measured again, while the calibration and the declared bases hold
                previous = None if job.whole else self._analyses.get(scene.key)
            # a knocked camera is calibrated afresh, and the frame measured whole
            settled = measure_settled(
                job.frame.image_bgr,
                spec,
                self.config,
                scene.camera,
                cal,
                declared,
                previous,
                True,
                reference,
                looked_for=looked_for,
            )
            analysis = settled.analysis
            with self._lock:
                if self._spec is spec:
                    self._calibrations[scene.key] = analysis.calibration
                    self._analyses[scene.key] = analysis
                # nothing measured again (0): every base is the whole frame's before it, which owes nothing
                if 0 < analysis.remeasured_share < 1 and self.settings.whole_after_part:
                    self._whole_due = True
            detected = analysis.state
            to_px = analysis.calibration.table_to_image
            rim = analysis.rim_height_mm
            share = analysis.remeasured_share
        ms = (time.perf_counter() - start) * 1e3
        with self._lock:
            self._detected[scene.key] = _Detected(detected, job.view, to_px, rim, ms, share)
            # a looped recording playing again: the game, and so its roster, starts over
            new_game = self._games.setdefault(scene.key, scene.game) != scene.game
            if scene.key not in self._rosters or new_game:
                roster = scene.roster if scene.roster is not None else empty_roster(detected.table)
                gate_mm = self.config.pipeline.roster_gate_mm
                share = self.settings.roster_mismatch_share
                if scene.fresh_if_other and roster_match(roster, detected, gate_mm, share).mismatch:
                    # another table: its models start afresh, the roster they do not match is kept for undo
                    self._undo[scene.key] = roster
                    roster = empty_roster(roster.table, roster.terrain)
                self._rosters[scene.key] = roster
                self._games[scene.key] = scene.game
        self._judge(scene.key)

    def _take_empty(self, job: DetectJob) -> bool:
        """Keep this settled frame as the table seen empty, where a capture was asked for; True when it was."""
        if not self.empties.due():
            return False
        with self._lock:
            spec = self._spec
        scene = job.frame.scene
        said = self.empties.take(scene.key, job.frame.image_bgr, spec, self.config, scene.camera)
        with self._lock:
            # measured without it before: the next frame is measured whole
            self._analyses.pop(scene.key, None)
            self._force = True
        self.hub.update(analysing=False, message=said)
        return True

    def _judge(self, key: str) -> None:
        """Identities from the roster, the rules, and a new result for the viewers."""
        with self._lock:
            detected = self._detected.get(key)
            if detected is None:
                return
            gate_mm = self.config.pipeline.roster_gate_mm
            before = self._rosters[key]
            state, roster = follow(before, detected.state, gate_mm, self._profile, self.config.review)
            self._rosters[key] = roster
            profile = self._profile
        findings = tuple(rules.check(state, profile))
        outlines, centers = in_frame(state, detected.to_px, detected.rim_height_mm)
        # passed on as the JSON it is, not read: a state drawn without a camera holds no calibration's report
        report = dict(state.extras.get("calibration") or {})
        self._result_seq += 1
        now = time.time()
        doc = result_document(self._result_seq, detected.frame, state, findings, profile, outlines, centers, now)
        last_places = rules.TableState(state.table, models=tuple(replace(m, unit=None) for m in state.unseen))
        ghosts = in_frame(last_places, detected.to_px, detected.rim_height_mm)
        place_in_frame(doc.get("unseen", []), *ghosts)
        place_doubted(doc, detected.to_px, detected.rim_height_mm)
        doc["roster_match"] = roster_match(
            before, detected.state, gate_mm, self.settings.roster_mismatch_share
        ).to_dict()
        with self._lock:
            undo = self._undo.get(key)
        # a roster set aside by a reset or by a photo of another table: how many units undo brings back
        doc["roster_undo"] = {"units": len(undo.units), "models": len(undo.models)} if undo is not None else None
        doc["analysis_ms"] = round(detected.analysis_ms, 1)
        doc["remeasured_share"] = round(detected.remeasured_share, 3)
        result = Result(
            seq=self._result_seq,
            frame=detected.frame,
            state=state,
            findings=findings,
            profile=profile,
            outlines_px=outlines,
            centers_px=centers,
            calibration=MappingProxyType(report),
            analyzed_at=now,
            analysis_ms=detected.analysis_ms,
            json=json.dumps(doc),
            to_px=detected.to_px,
            rim_height_mm=detected.rim_height_mm,
        )
        self.hub.update(result=result, analysing=False, message=None)
