"""Reviewing a recording: find the settled states of a video (or a folder of photos), measure only those, and
store the reviewed game as it goes, so that a killed run resumes where it stopped.

Change detection on small blurred copies decides which frames are measured: a frame is sampled every
``sample_interval_s``, the table is settled when no sample moved for ``settle_s``, and a settled spell is measured
once, and only when it differs from the state measured last. Every other frame is only decoded. The recording is
read, and its still spells found, in a thread of its own (:mod:`tableref.review.recording`) while the states are
measured.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import calibration
import rules
import vision
from calibration.camera import CameraModel, load_camera
from calibration.spec import TableSpec, load_table_spec
from calibration.table import TableCalibration, calibrate_table, table_to_rectified
from rules.actions import read_actions
from rules.state import check_regular_file
from tableref.errors import JpegError
from tableref.jpeg import encode_jpeg
from tableref.pipeline.changes import change_view, changed_share, changed_since
from tableref.pipeline.frame import EmptyTable, FrameAnalysis, empty_table, game_sizes
from tableref.pipeline.motion import bases_drawn, bases_explain, reaching_region
from tableref.pipeline.watch import COVERED, SAME, Settled, TableWatch, measure_settled
from tableref.review.recording import Recording, Sample, StillFrame, read_ahead, still_frames
from tableref.review.store import Resume, ReviewStore
from tableref.review.timeline import ReviewedState, review_state, roster_bases_where_seen
from tableref.settings import Settings
from tableref.sources import SourceError, folder_images
from vision.finder import FinderMaps, load_finder
from vision.look_settings import FinderSettings


@dataclass(frozen=True)
class ReviewJob:
    """One recording to review (paths as given on the command line; everything a worker process needs)."""

    source: str
    out: str
    table: str | None
    camera: str | None
    roster: str | None
    profile: str
    actions: str | None
    config: str | None


def _digest(path: str | None) -> str:
    if path is None:
        return "-"
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


# A recording is known by its size and by these many bytes read at each of a few places through it.
_FINGERPRINT_BYTES = 1 << 20
_FINGERPRINT_PLACES = 5


def _file_fingerprint(path: Path, digest: Any, named: bool) -> None:
    # a folder or a pipe named like a photo: refused by name, before it is opened (a pipe would be read for ever)
    check_regular_file(path, "a video file or a photo", SourceError, None)
    size = path.stat().st_size
    digest.update(f"{path.name if named else ''}:{size};".encode())
    with path.open("rb") as f:
        for k in range(_FINGERPRINT_PLACES):
            f.seek(max(0, (size - _FINGERPRINT_BYTES) * k // max(1, _FINGERPRINT_PLACES - 1)))
            digest.update(f.read(_FINGERPRINT_BYTES))


def recording_fingerprint(path: str | Path) -> str:
    """What a recording is, whatever its path: a hash of its size and of bytes from its start, middle and end
    (every photo's, for a folder of photos). Another recording copied to the same path has another."""
    p = Path(path)
    digest = hashlib.sha256()
    files = folder_images(p) if p.is_dir() else [p]
    for f in files:
        _file_fingerprint(f, digest, named=p.is_dir())
    return digest.hexdigest()[:24]


def job_identity(job: ReviewJob, config: Settings) -> dict[str, str]:
    """What a review database must agree on before it is resumed: the recording's path and its content."""
    return {
        "source": str(Path(job.source).resolve()),
        "content": recording_fingerprint(job.source),
        "table": _digest(job.table),
        "camera": _digest(job.camera),
        "roster": _digest(job.roster),
        "actions": _digest(job.actions),
        "profile": job.profile,
        "settings": hashlib.sha256(json.dumps(asdict(config), sort_keys=True).encode()).hexdigest()[:16],
    }


def load_actions(path: str | None) -> dict[str, Any] | None:
    """An actions file (:func:`rules.actions.read_actions`: unit ids to a plan name or ``{"action": ...,
    "attack_used": ...}``), entries kept as written so that the review can store them."""
    if path is None:
        return None
    try:
        return read_actions(path)
    except rules.RulesError as exc:
        raise SourceError(str(exc)) from None


# Errors of one frame that mean "this settled frame cannot be measured" (markers covered, no bases): the scan
# goes on with the next settled frame.
_FRAME_ERRORS = (calibration.CalibrationError, vision.VisionError)


class Reviewer:
    """Reviews one recording into a :class:`~tableref.review.store.ReviewStore`, resuming after whatever the store
    holds."""

    def __init__(
        self,
        recording: Recording,
        store: ReviewStore,
        spec: TableSpec,
        config: Settings,
        profile: rules.RuleProfile,
        camera: CameraModel | None = None,
        roster: rules.TableState | None = None,
        actions: Mapping[str, Any] | None = None,
    ) -> None:
        self.recording = recording
        self.store = store
        self.spec = spec
        self.config = config
        self.settings = config.review
        self.profile = profile
        self.camera = camera
        self.roster = roster
        self.actions = actions
        self.calibration: TableCalibration | None = None
        # the table seen empty: the first settled state, where it shows (almost) no bases
        self.empty: EmptyTable | None = None
        self.skipped = 0
        # why the last settled frame that could not be measured could not (named when none could)
        self.skip_reason: tuple[int, Exception] | None = None
        self.covered = 0
        self.recalibrated = 0
        # the last measured settled frame as a change-detection copy: where a model not found stood, did it change?
        self.last_view: NDArray[np.uint8] | None = None
        # the last stored state's measurement: the next settled frame is measured only where it changed since
        self.last_analysis: FrameAnalysis | None = None

    def _view(self, image: NDArray[np.uint8]) -> NDArray[np.uint8]:
        return change_view(image, self.config.pipeline)

    def _changed(
        self, view: NDArray[np.uint8], previous: ReviewedState | None, cal: TableCalibration, fresh: bool
    ) -> dict[str, float] | None:
        """Per model of the state before (seen or not), the share of its place that changed since: None when that
        cannot be told (the first state, or a camera that moved)."""
        if previous is None or self.last_view is None or fresh or self.last_view.shape != view.shape:
            return None
        mask = changed_since(view, self.last_view, self.config.pipeline)
        models = previous.state.models + previous.state.unseen
        centers = np.array([[m.x_mm, m.y_mm] for m in models], dtype=np.float64).reshape(-1, 2)
        radii = np.array([min(m.base.semi_axes_mm) for m in models], dtype=np.float64)
        shares = changed_share(mask, cal, centers, radii)
        return {m.id: float(x) for m, x in zip(models, shares, strict=True)}

    def _calibrate(self, image: NDArray[np.uint8]) -> TableCalibration:
        if self.calibration is None:
            self.calibration = calibrate_table(image, self.spec, self.camera, settings=self.config.calibration)
        return self.calibration

    def _resume(self, previous: ReviewedState) -> None:
        """Take up a stopped review where its stored states end, ``previous`` the last of them."""
        rec = self.recording
        meta = self.store.meta()
        # Calibrate on the frame the stored states were measured with: the same numbers as before the stop.
        first_frame = int(meta.get("calibration_frame", previous.frame))
        self._calibrate(rec.image(first_frame))
        if "empty_frame" in meta:
            self.empty = empty_table(rec.image(int(meta["empty_frame"])), self.spec, self.config, self.camera)
        self.last_view = self._view(rec.image(previous.frame))
        if "whole_frame" in meta:
            self._replay(int(meta["whole_frame"]), meta.get("empty_frame"))

    def _replay(self, whole_frame: int, empty_frame: str | None) -> None:
        """Measure the stored states again from the last one measured whole (each later one built on the one
        before), so that the next state builds on what it would have built on had the review not stopped."""
        states = self.store.states()
        chain = [k for k, s in enumerate(states) if s.frame >= whole_frame]
        for k in chain:
            state = states[k]
            before = states[k - 1] if k else None
            reference = self.empty if empty_frame is not None and state.frame > int(empty_frame) else None
            sample = Sample(state.frame, state.time_s, self.recording.image(state.frame))
            try:
                analysis = self._measured(sample, before, reference).analysis
            except _FRAME_ERRORS:
                self.last_analysis = None
                return
            if empty_frame is not None and state.frame == int(empty_frame):
                analysis = replace(analysis, state=replace(analysis.state, models=()))
            self.last_analysis = analysis

    def _measured(self, sample: Sample, previous: ReviewedState | None, reference: EmptyTable | None) -> Settled:
        """The settled ``sample`` measured with the roster's bases where last seen, only where it changed since the
        last stored state's measurement; raises the stages' errors."""
        return measure_settled(
            sample.image_bgr,
            self.spec,
            self.config,
            self.camera,
            self.calibration,
            roster_bases_where_seen(self.roster, previous.state if previous else None),
            previous=self.last_analysis,
            keep_overview=True,
            reference=reference,
            whole_roster=True,
            # a base read a standard size off pairs with its model at a price (timeline.size_agreement);
            # snapped to the roster's sizes alone, a 25 mm base read at 29 mm would be a 32 mm one
            snap_to_roster=False,
        )

    def _measure(self, sample: Sample, previous: ReviewedState | None, verdict: str) -> Settled | None:
        """:meth:`_measured`; None (counted as skipped, or as covered where a hand may be over the table) where it
        cannot be."""
        try:
            return self._measured(sample, previous, self.empty)
        except _FRAME_ERRORS as exc:
            if verdict != COVERED:
                self.skipped += 1
                self.skip_reason = (sample.index, exc)
            else:
                self.covered += 1
            return None

    def _store(self, reviewed: ReviewedState, sample: Sample, resume: Resume) -> None:
        s = self.settings
        try:
            image = encode_jpeg(sample.image_bgr, s.stored_frame_max_side_px, s.stored_frame_jpeg_quality)
        except JpegError:
            # the state is kept without its picture: the review does not depend on it
            image = b""
        self.store.add_state(reviewed, resume, image)

    def run(self, progress: Callable[[int], None] = lambda n: None) -> int:
        """Scan the rest of the recording; returns the number of settled states stored in all."""
        s = self.settings
        rec = self.recording
        settle_s = 0.0 if rec.is_photos else s.settle_s
        watch = TableWatch(
            settle_s,
            s.photo_pixel_delta if rec.is_photos else s.motion_pixel_delta,
            s.motion_fraction,
            s.motion_min_region_px,
            s.covered_pixel_delta,
            s.covered_fraction,
        )
        previous: ReviewedState | None = None
        measured: NDArray[np.uint8] | None = None
        spell_done = False
        start = 0
        last = self.store.last()
        if last is not None:
            previous, resume = last
            self._resume(previous)
            watch.update(resume.anchor, resume.spell_time_s)
            measured, spell_done, start = resume.anchor, True, resume.frame + 1
            progress(start)
        step = 1 if rec.is_photos else max(1, round(s.sample_interval_s * rec.fps))

        def still(count: Callable[[int], None]) -> Iterator[StillFrame]:
            return still_frames(rec.samples(start, step, count), watch, s.motion_thumb_px, spell_done)

        # a settled spell held back: something lay over the table inside the picture (see _off_bases)
        held: _Held | None = None
        for frame in read_ahead(still, s.still_frames_ahead, progress):
            sample, thumb = frame.sample, frame.thumb
            verdict = watch.verdict(thumb, measured)
            if verdict == SAME:
                continue
            settled = self._measure(sample, previous, verdict)
            if settled is None:
                continue
            analysis = settled.analysis
            if verdict == COVERED and (
                previous is None
                or self._off_bases(thumb, measured, analysis, previous, sample.image_bgr, anywhere=False) is not None
            ):
                # A hand held still over the table: the next movement (it leaving) starts a new spell.
                self.covered += 1
                continue
            if held is not None:
                if held.stayed(self._changed_region(thumb, measured, anywhere=True), s.covered_stayed_share):
                    previous, measured = self._take(held.frame, held.settled, previous), held.frame.thumb
                else:
                    self.covered += 1
                held = None
            region = (
                None
                if settled.recalibrated
                else self._off_bases(thumb, measured, analysis, previous, sample.image_bgr, anywhere=True)
            )
            if region is not None:
                held = _Held(frame, settled, region)
                continue
            previous, measured = self._take(frame, settled, previous), thumb
        if held is not None:
            # a spell still held back when the recording ends was never seen to go: a state where nothing moved
            # since it began (the watch is done: the recording is read) for longer than a hand is held still
            unbroken = watch.moved_at is not None and watch.moved_at <= held.frame.moved_at_s
            if unbroken and rec.count / rec.fps - held.frame.moved_at_s >= s.covered_last_s:
                self._take(held.frame, held.settled, previous)
            else:
                self.covered += 1
        self._fail_if_nothing_measured()
        self.store.set_meta(complete="1", frames=str(rec.count), fps=str(rec.fps))
        return self.store.count()

    def _take(self, frame: StillFrame, settled: Settled, previous: ReviewedState | None) -> ReviewedState:
        """Store the settled ``frame``, measured as ``settled``, as the state after ``previous``; returns it."""
        s = self.settings
        sample = frame.sample
        analysis, fresh = settled.analysis, settled.recalibrated
        cal = self.calibration = analysis.calibration
        if previous is None and len(analysis.state.models) <= s.empty_max_bases:
            # before the models are deployed: the table seen empty, and no bases on it
            self.empty = EmptyTable(sample.image_bgr, cal)
            self.store.set_meta(empty_frame=str(sample.index))
            analysis = replace(analysis, state=replace(analysis.state, models=()))
        if fresh:
            # A resumed review calibrates on this frame: the camera stood here for the states from now on.
            self.store.set_meta(calibration_frame=str(sample.index))
            self.recalibrated += previous is not None
        view = self._view(sample.image_bgr)
        reviewed = review_state(
            analysis.state,
            sample.index,
            sample.time_s,
            previous,
            self.profile,
            s,
            self.roster,
            self.actions,
            self._changed(view, previous, cal, fresh),
            _BaseThere(sample.image_bgr, analysis, self.config.vision.finder, s.gone_size_share),
        )
        self.last_view, self.last_analysis = view, analysis
        if analysis.remeasured_share >= 1.0:
            # a resumed review measures the states again from here (see _replay)
            self.store.set_meta(whole_frame=str(sample.index))
        self._store(reviewed, sample, Resume(sample.index, frame.moved_at_s, frame.anchor))
        return reviewed

    def _changed_region(
        self, thumb: NDArray[np.uint8], measured: NDArray[np.uint8] | None, anywhere: bool
    ) -> NDArray[np.bool_] | None:
        """(h, w) the regions of ``thumb`` as large as an arm's that changed since ``measured`` and touch the
        picture's edge (``anywhere``: or not); None where there are none."""
        s = self.settings
        if measured is None:
            return None
        return reaching_region(thumb, measured, s.covered_pixel_delta, s.covered_fraction, anywhere)

    def _off_bases(
        self,
        thumb: NDArray[np.uint8],
        measured: NDArray[np.uint8] | None,
        analysis: FrameAnalysis,
        previous: ReviewedState | None,
        frame_bgr: NDArray[np.uint8],
        anywhere: bool,
    ) -> NDArray[np.bool_] | None:
        """The part off the bases (h, w) of the region of a settled frame's ``thumb`` changed since ``measured`` as
        much as an arm changes it, reaching in over the picture's edge (``anywhere``: or inside it), where that region
        is not models moved there (:func:`~tableref.pipeline.motion.bases_explain`: on the bases of the state before
        and of this frame); None where there is none (or no state before to tell by).

        At the edge, such a region is a hand held still over the table: the spell is no state. Inside the picture (a
        hand whose arm the picture does not show up to its edge) the spell is held back: it is a state only if the
        part off the bases is still there at the next settled spell (terrain moved, something set down for good), and
        a hand's spell is dropped once the hand has gone. (A frame whose camera moved changed everywhere: the caller
        does not ask.)"""
        if previous is None:
            return None
        region = self._changed_region(thumb, measured, anywhere)
        if region is None:
            return None
        s = self.settings
        outlines = np.concatenate([analysis.outlines_px(), analysis.outlines_px(models=previous.state.models)])
        on_bases = bases_drawn(region.shape, outlines, frame_bgr.shape[:2], s.covered_base_grow)
        if bases_explain(region, on_bases, s.covered_base_share):
            return None
        # the models set down under a hand stay when it goes: only what lies off the bases tells
        return region & ~on_bases

    def _fail_if_nothing_measured(self) -> None:
        """A recording none of whose settled frames could be measured (markers never seen, say) is not a game of
        no states: raise the last frame's error, with the recording's name. The review is not marked complete, so
        running it again (with a --table or --camera that fits) starts over."""
        if self.skip_reason is None or self.store.count() > 0:
            return
        index, exc = self.skip_reason
        kind = "photo" if self.recording.is_photos else "frame"
        raise type(exc)(
            f"{self.recording.path}: none of its {self.skipped} settled frames could be measured; {kind} {index}: {exc}"
        )


@dataclass(frozen=True)
class _Held:
    """A settled spell held back (:meth:`Reviewer._off_bases`, inside the picture): its first ``frame``, as measured
    (``settled``), and the ``region`` (h, w) of its thumbnail that changed inside the picture."""

    frame: StillFrame
    settled: Settled
    region: NDArray[np.bool_]

    def stayed(self, changed: NDArray[np.bool_] | None, share: float) -> bool:
        """Whether at least ``share`` of the region is still changed in a later spell's ``changed`` regions (same
        thumbnail size; None: none changed)."""
        if changed is None or changed.shape != self.region.shape:
            return False
        return bool(np.count_nonzero(changed & self.region) >= share * np.count_nonzero(self.region))


class _BaseThere:
    """The probability that a base of about a size stands at a table place in one settled frame, by the detector's
    finder (read on the frame's top-down view the first time it is asked: most states lose no model), its most
    probable cell within ``finder.reach_mm`` of the place, as the detector asks it. A base the finder reads more than
    ``size_share`` of that size off it is another (a base of another unit moved onto the place); its diameters err
    in proportion to the size."""

    def __init__(
        self, image: NDArray[np.uint8], analysis: FrameAnalysis, finder: FinderSettings, size_share: float
    ) -> None:
        self.image, self.analysis, self.finder, self.size_share = image, analysis, finder, size_share
        self.maps: FinderMaps | None = None

    def __call__(self, x_mm: float, y_mm: float, diameter_mm: float) -> float:
        scale = self.analysis.px_per_mm
        if self.maps is None:
            view = self.analysis.calibration.rectify(self.image, scale)
            self.maps = load_finder(self.finder.file or None).read(view, scale)
        center_px = table_to_rectified(np.array([[x_mm, y_mm]]), scale)
        read_mm = float(self.maps.diameter_near(center_px, self.finder.reach_mm)[0])
        if not abs(read_mm - diameter_mm) <= self.size_share * diameter_mm:
            return 0.0
        return float(self.maps.probability_near(center_px, self.finder.reach_mm)[0])


def review_job(job: ReviewJob, progress: Callable[[int], None] = lambda n: None) -> dict[str, Any]:
    """Review one recording into ``job.out``; returns a summary. Raises the stages' errors on bad input."""
    from tableref.config import load_config

    profile = rules.load_profile(job.profile)
    config = game_sizes(load_config(job.config), profile)
    spec = load_table_spec(job.table)
    camera = load_camera(job.camera) if job.camera else None
    roster = rules.load_state(job.roster) if job.roster else None
    actions = load_actions(job.actions)
    recording = Recording(job.source, config.review.photo_period_s)
    with ReviewStore(job.out) as store:
        afresh = store.claim(job_identity(job, config))
        # what is resumed or reported must be intact: a damaged file is named here, not met half-way
        store.verify()
        if actions:
            # Kept for judging again when the units are fixed later (the dashboard's review screen).
            store.set_meta(declared_actions=json.dumps(actions, sort_keys=True))
        if store.meta().get("complete") == "1":
            progress(recording.count)
            return {
                "source": job.source,
                "out": job.out,
                "states": store.count(),
                "resumed": True,
                "afresh": False,
                "skipped": 0,
                "covered": 0,
                "recalibrated": 0,
            }
        resumed = store.count() > 0
        reviewer = Reviewer(recording, store, spec, config, profile, camera, roster, actions)
        states = reviewer.run(progress)
        return {
            "source": job.source,
            "out": job.out,
            "states": states,
            "resumed": resumed,
            "afresh": afresh,
            "skipped": reviewer.skipped,
            "covered": reviewer.covered,
            "recalibrated": reviewer.recalibrated,
        }


def review_job_reported(job: ReviewJob, progress: Callable[[int], None] = lambda n: None) -> dict[str, Any]:
    """:func:`review_job` for a worker of many: a failure becomes the summary's one-line ``error`` (with the
    recording's name beside it) instead of stopping the others."""
    try:
        return review_job(job, progress)
    except Exception as exc:  # reported by the caller in one line, with the recording's name
        return {"source": job.source, "out": job.out, "error": f"{type(exc).__name__}: {exc}"}


def _worker(job: ReviewJob, queue: Any) -> dict[str, Any]:
    return review_job_reported(job, queue.put)


def review_many(
    jobs: list[ReviewJob], workers: int, progress: Callable[[int], None] = lambda n: None
) -> list[dict[str, Any]]:
    """Review several recordings, ``workers`` at a time in separate processes; summaries in the jobs' order
    (a failed job's summary has an ``error``)."""
    if workers <= 1 or len(jobs) <= 1:
        return [review_job(j, progress) for j in jobs]
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        queue = manager.Queue()
        with ctx.Pool(min(workers, len(jobs))) as pool:
            pending = pool.starmap_async(_worker, [(j, queue) for j in jobs])
            while not pending.ready():
                pending.wait(0.2)
                while not queue.empty():
                    progress(queue.get())
            while not queue.empty():
                progress(queue.get())
            return list(pending.get())
