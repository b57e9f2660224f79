"""Sub-commands of the camera pipeline: ``detect`` (frame to table state), ``analyze`` (frame + roster to
findings) and ``evaluate`` (accuracy against ground truth)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

import rules
from calibration.camera import CameraModel, load_camera
from calibration.errors import CalibrationError
from calibration.spec import TableSpec, load_table_spec
from calibration.table import TableCalibration
from tableref.cli.options import (
    add_config_option,
    add_json_option,
    add_profile_option,
    add_roster_options,
    add_table_options,
    check_output,
    unfinished_removed,
)
from tableref.config import load_config
from tableref.errors import UsageError
from tableref.evaluate import evaluate, format_report, load_samples, report_dict
from tableref.labels import Circle, Label, place_labels
from tableref.pipeline.frame import EmptyTable, FrameAnalysis, detect_frame, empty_table, fuse_frames, game_sizes
from tableref.pipeline.identity import carry_identities
from tableref.pipeline.state import DoubtedPlace, calibration_section, doubted_of
from tableref.progress import Progress
from tableref.report import format_findings, format_length
from tableref.settings import Settings
from tableref.sources import read_image

EXIT_OK = 0
# Pictures `--annotate` writes: OpenCV has a writer for each of these wherever it is built.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
_PALETTE = ((0, 200, 255), (255, 120, 0), (80, 220, 80), (220, 80, 220), (0, 120, 255), (255, 220, 0))


def _camera(args: argparse.Namespace) -> CameraModel | None:
    return load_camera(args.camera) if args.camera else None


def _empty_table(
    args: argparse.Namespace, spec: TableSpec, config: Settings, camera: CameraModel | None
) -> EmptyTable | None:
    """The table seen empty (``--empty FRAME``), calibrated on its own markers; None without the option."""
    if not args.empty:
        return None
    try:
        return empty_table(read_image(args.empty), spec, config, camera)
    except CalibrationError as exc:
        raise UsageError(f"{args.empty}: the empty table's frame: {exc}") from None


def annotate(frame_bgr: NDArray[np.uint8], analysis: FrameAnalysis) -> NDArray[np.uint8]:
    """The frame with markers, base outlines, model ids and base sizes drawn on it (a copy)."""
    out = frame_bgr.copy()
    scale = max(1, round(out.shape[1] / 1920))
    cal = analysis.calibration
    for marker in cal.spec.markers:
        if marker.id not in cal.markers_used:
            continue
        corners = cal.table_to_image(marker.corners_mm())
        cv2.polylines(out, [np.round(corners).astype(np.int32)], True, (0, 255, 0), 2 * scale, cv2.LINE_AA)
        cv2.putText(
            out,
            f"#{marker.id}",
            tuple(np.round(corners[0]).astype(int)),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.6 * scale,
            (0, 255, 0),
            scale,
            cv2.LINE_AA,
        )
    units = [u.id for u in analysis.state.units]
    colours = []
    outlines = analysis.outlines_px()
    for model, outline in zip(analysis.state.models, outlines, strict=True):
        colour = _PALETTE[units.index(model.unit) % len(_PALETTE)] if model.unit in units else (0, 255, 255)
        cv2.polylines(out, [np.round(outline).astype(np.int32)], True, colour, scale, cv2.LINE_AA)
        colours.append(colour)
    _label_bases(out, analysis.state.models, outlines, colours, scale)
    _draw_doubted(out, cal, doubted_of(analysis.state), scale)
    return out


# Places doubted are drawn in one colour of their own, dashed: not a base found, a place to look at again.
_DOUBT_COLOUR = (0, 140, 255)


def _draw_doubted(out: NDArray[np.uint8], cal: TableCalibration, places: tuple[DoubtedPlace, ...], scale: int) -> None:
    """Each doubted place as a dashed circle with a question mark (on ``out``, in place)."""
    turn = np.linspace(0.0, 2.0 * np.pi, 49)
    for place in places:
        r = 0.5 * place.diameter_mm
        ring_mm = np.stack([place.x_mm + r * np.cos(turn), place.y_mm + r * np.sin(turn)], axis=1)
        ring = np.round(cal.table_to_image(ring_mm)).astype(np.int32)
        for k in range(0, len(ring) - 1, 2):
            cv2.line(out, tuple(ring[k]), tuple(ring[k + 1]), _DOUBT_COLOUR, scale, cv2.LINE_AA)
        x, y = np.round(cal.table_to_image(np.array([[place.x_mm, place.y_mm]]))[0]).astype(int)
        cv2.putText(
            out,
            "?",
            (x - 5 * scale, y + 6 * scale),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.6 * scale,
            _DOUBT_COLOUR,
            2 * scale,
            cv2.LINE_AA,
        )


def _label_bases(
    out: NDArray[np.uint8],
    models: tuple[rules.Model, ...],
    outlines: NDArray[np.float64],
    colours: list[tuple[int, int, int]],
    scale: int,
) -> list[tuple[int, int, int, int]]:
    """Each base's id and size written just above it, or, where that place is taken, beside it with a leader line:
    placed apart as the dashboard places its labels (:mod:`tableref.labels`), measured as OpenCV writes them.
    Returns the box (x0, y0, x1, y1) of each text written."""
    font, size = cv2.FONT_HERSHEY_SIMPLEX, 0.4 * scale
    circles, labels, baselines = [], [], []
    for m, outline in zip(models, outlines, strict=True):
        text = f"{m.id} {m.base.semi_axes_mm[0] * 2:g}"
        centre = outline.mean(axis=0)
        radius = float(np.max(np.hypot(*(outline - centre).T)))
        (w, h), base = cv2.getTextSize(text, font, size, scale)
        circles.append(Circle(m.id, float(centre[0]), float(centre[1]), radius))
        top = float(centre[1]) - radius
        labels.append(Label(text, float(centre[0]), top, w, h + base, 2.0 * scale, above=True, near=radius, own=m.id))
        baselines.append(base)
    placements = place_labels(labels, (0.0, 0.0, float(out.shape[1]), float(out.shape[0])), circles)
    written = []
    for label, placed, colour, base in zip(labels, placements, colours, baselines, strict=True):
        if placed is None:
            continue
        if placed.leader is not None:
            x1, y1, x2, y2 = (round(v) for v in placed.leader)
            cv2.line(out, (x1, y1), (x2, y2), colour, 1, cv2.LINE_AA)
        x0, y0 = round(placed.cx - label.width / 2), round(placed.cy - label.height / 2)
        cv2.putText(out, label.text, (x0, y0 + round(label.height) - base), font, size, colour, scale, cv2.LINE_AA)
        written.append((x0, y0, x0 + round(label.width), y0 + round(label.height)))
    return written


def _detect(
    args: argparse.Namespace, config: Settings, roster: rules.TableState | None = None
) -> tuple[NDArray[np.uint8], FrameAnalysis]:
    spec = load_table_spec(args.table)
    frame = read_image(args.frame)
    camera = _camera(args)
    reference = _empty_table(args, spec, config, camera)
    analysis = detect_frame(
        frame, spec, config, camera, roster=roster, reference=reference, whole_roster=roster is not None
    )
    if not analysis.state.models:
        used = analysis.calibration.markers_used
        raise UsageError(
            f"{args.frame}: found the table (markers {', '.join(map(str, used))}) but no bases on it; expected a "
            "frame with miniatures on round bases"
        )
    return frame, analysis


def camera_hint(frame: Path, camera_given: bool) -> str | None:
    """Where no camera.json was given but one lies beside the frame (``NAME.camera.json``, as the samples have), a
    line that says so: without it the lens is not corrected and every position is that much less sure."""
    beside = frame.with_name(frame.stem + ".camera.json")
    if camera_given or not beside.is_file():
        return None
    return f"hint: {beside} lies beside the frame; --camera {beside} corrects the lens and narrows every sigma"


def calibration_notes(state: rules.TableState) -> list[str]:
    """The calibration's notes on a measured state (lens, parallax, a coarse view), one ``note:`` line each."""
    section = calibration_section(state)
    return [] if section is None else [f"note: {n}" for n in section.report.notes]


def _summary(analysis: FrameAnalysis) -> str:
    section = calibration_section(analysis.state)
    assert section is not None, "a measured state holds its calibration section"
    cal = section.report
    lines = [
        f"{len(analysis.state.models)} bases found; markers used {list(cal.markers_used)} of "
        f"{list(cal.markers_expected)}, reprojection error {cal.reprojection_error_mm:.2f} mm, "
        f"{cal.px_per_mm:.2f} px/mm, {analysis.timings_ms['total']:.0f} ms"
    ]
    lines += calibration_notes(analysis.state)
    for m in analysis.state.models:
        lines.append(
            f"  {m.id:>5}  x {m.x_mm:8.1f} mm  y {m.y_mm:8.1f} mm  base {m.base.semi_axes_mm[0] * 2:g} mm  "
            f"± {m.sigma_mm:.2f} mm"
        )
    lines += doubted_lines(doubted_of(analysis.state))
    return "\n".join(lines)


def doubted_lines(places: tuple[DoubtedPlace, ...]) -> list[str]:
    """The places doubted, said plainly: a heading line and one line each (none where there are none)."""
    if not places:
        return []
    n = len(places)
    lines = [
        f"{n} place{'s' if n > 1 else ''} may hold a base the detector did not accept (a base missed, or a print, "
        "a token or a figure's part): look again"
    ]
    lines += [
        f"      ?  x {p.x_mm:8.1f} mm  y {p.y_mm:8.1f} mm  about {p.diameter_mm:.0f} mm across, "
        f"finder {p.probability:.2f}"
        for p in places
    ]
    return lines


def _write_image(path: Path, image: NDArray[np.uint8], option: str) -> None:
    # Encoded in memory and written here: OpenCV's own writer says nothing but False when the folder is read-only or
    # the disk is full, and its PNG codec prints a line of its own on stderr besides.
    ok, data = cv2.imencode(path.suffix.lower(), image)
    if not ok:
        raise UsageError(f"{option} {path}: OpenCV could not encode the picture as {path.suffix}")
    try:
        with unfinished_removed(path):
            path.write_bytes(data.tobytes())
    except OSError as exc:
        raise UsageError(
            f"{option} {path}: could not be written ({exc.strerror or exc}); expected a writable folder with room"
        ) from None


def _cmd_detect(args: argparse.Namespace) -> int:
    if args.annotate:
        check_output(args.annotate, "--annotate", "a picture file to write", IMAGE_SUFFIXES)
    profile = rules.load_profile(args.profile)
    config = game_sizes(load_config(args.config), profile)
    frame, analysis = _detect(args, config)
    if args.annotate:
        _write_image(args.annotate, annotate(frame, analysis), "--annotate")
    if args.json:
        print(json.dumps(rules.state_to_dict(analysis.state), indent=2))
    else:
        print(_summary(analysis))
        note = sizes_note(profile, config)
        if note:
            print(note)
        hint = camera_hint(Path(args.frame), args.camera is not None)
        if hint:
            print(hint)
        if args.annotate:
            print(f"Annotated frame written to {args.annotate}")
    return EXIT_OK


def sizes_note(profile: rules.RuleProfile, config: Settings) -> str | None:
    """Where ``profile`` names its game's base sizes, a line saying the bases were read as them (``config``'s)."""
    if not profile.bases.round_mm:
        return None
    sizes = ", ".join(f"{d:g}" for d in config.vision.base_sizes_mm)
    return f"Bases read as the {profile.name} profile's sizes: {sizes} mm."


def declared_note(state: rules.TableState, listed: int, min_px_per_mm: float, camera_given: bool) -> str:
    """How many models were measured at the bases the roster declares (:func:`tableref.pipeline.frame.detect_frame`)."""
    section = calibration_section(state)
    declared = None if section is None else section.declared_bases
    if declared is not None and declared.sizes:
        return (
            f"Measured {declared.sizes} of the roster's {listed} models at their declared base sizes, "
            f"{declared.rim_heights} of them at their declared rim heights too."
        )
    px_per_mm = 0.0 if section is None else section.report.px_per_mm
    needs = "a frame of" if camera_given else "a camera.json (--camera) and a frame of"
    return (
        f"The roster's base sizes were taken after measuring: measuring at them needs {needs} at least "
        f"{min_px_per_mm:g} px/mm on the table (this one: {px_per_mm:.2f})."
    )


def _cmd_analyze(args: argparse.Namespace) -> int:
    roster = rules.load_state(args.roster)
    profile = rules.load_profile(args.profile)
    config = game_sizes(load_config(args.config), profile)
    _, analysis = _detect(args, config, roster)
    state = carry_identities(analysis.state, roster, config.pipeline.roster_gate_mm, take_bases=True)
    findings = rules.check(state, profile)
    if args.json:
        doc = rules.findings_document(profile.name, findings)
        doc["missing"] = [m.id for m in state.unseen]
        doc["state"] = rules.state_to_dict(state)
        print(json.dumps(doc, indent=2))
    else:
        print(format_findings(state, profile, findings, source=str(args.frame)))
        print(declared_note(state, len(roster.models), config.vision.known.min_px_per_mm, args.camera is not None))
        for line in calibration_notes(state) + doubted_lines(doubted_of(analysis.state)):
            print(line)
    return EXIT_OK


_LINE_NAMES = {"engagement": "within engagement range", "base_contact": "in base contact", "cohesion": "in cohesion"}


def format_measurement(m: rules.Measurement, frames: int) -> str:
    """The judge's answer: the gap with its uncertainty, then a verdict per line of the profile."""
    source = f"{frames} frames fused" if frames > 1 else "1 frame"
    lines = [f"{m.a} to {m.b}: gap {format_length(m.gap_mm, m.sigma_mm)} edge to edge ({source})"]
    for v in m.verdicts:
        answer = "yes" if v.within else "no"
        call = "too close to call" if v.call == rules.CLOSE else "clear"
        name = _LINE_NAMES.get(v.line, v.line)
        lines.append(f"  {name + ' (' + format_length(v.limit_mm) + ')?':44} {answer:4} {call}")
    return "\n".join(lines)


def _cmd_measure(args: argparse.Namespace) -> int:
    if len(args.items) < 3:
        raise UsageError("expected FRAME... A B: at least one frame and two model ids")
    *frames, a, b = args.items
    profile = rules.load_profile(args.profile)
    config = game_sizes(load_config(args.config), profile)
    spec = load_table_spec(args.table)
    camera = _camera(args)
    roster = rules.load_state(args.roster)
    reference = _empty_table(args, spec, config, camera)
    analyses: list[FrameAnalysis] = []
    with Progress(len(frames), "frames", enabled=len(frames) > 1 and not args.json) as bar:
        for path in frames:
            calibration = analyses[0].calibration if analyses else None
            frame = read_image(path)
            analyses.append(
                detect_frame(frame, spec, config, camera, calibration, roster, reference=reference, whole_roster=True)
            )
            bar.advance()
    fused = fuse_frames(analyses, config.pipeline.roster_gate_mm)
    state = carry_identities(fused, roster, config.pipeline.roster_gate_mm, take_bases=True)
    measurement = rules.measure(state, a, b, profile)
    if args.json:
        section = calibration_section(state)
        declared = None if section is None or section.declared_bases is None else section.declared_bases.to_dict()
        doc = {**measurement.to_dict(), "frames": len(frames), "profile": profile.name, "declared_bases": declared}
        print(json.dumps(doc, indent=2))
    else:
        print(format_measurement(measurement, len(frames)))
        print(declared_note(state, len(roster.models), config.vision.known.min_px_per_mm, args.camera is not None))
        for line in calibration_notes(state):
            print(line)
    return EXIT_OK


def _cmd_evaluate(args: argparse.Namespace) -> int:
    profile = rules.load_profile(args.profile)
    config = game_sizes(load_config(args.config), profile)
    samples = load_samples(args.folder, use_camera=not args.no_camera, use_empty=not args.no_empty)
    with Progress(len(samples), "frames", enabled=not args.json) as bar:
        scores = evaluate(
            samples, config, config.evaluate, on_frame=lambda s: bar.advance(note=s.name), roster=args.roster
        )
    by_look = True if args.by_look else None
    print(json.dumps(report_dict(scores, by_look), indent=2) if args.json else format_report(scores, by_look))
    note = sizes_note(profile, config)
    if note and not args.json:
        print(f"\n{note}")
    return EXIT_OK


ROSTER_HELP = "table state JSON whose models give ids and units"


EMPTY_HELP = (
    "a frame of the table empty (its terrain, no models), taken once at set-up: only what changed since counts as a "
    "base, so printed circles and the mat's texture never do"
)


def _frame_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("frame", type=Path, help="a camera frame (JPEG, PNG, ...)")
    add_table_options(p)
    p.add_argument("--empty", type=Path, metavar="FRAME", help=EMPTY_HELP)
    add_config_option(p)
    add_json_option(p)


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("detect", help="measure the bases in a frame", description="Frame to table state.")
    _frame_args(p)
    p.add_argument("--annotate", type=Path, help="write the frame with markers, bases, ids and sizes drawn on it")
    add_profile_option(p, "the game played")
    p.set_defaults(func=_cmd_detect)

    p = sub.add_parser(
        "analyze", help="detect, take identities from a roster, run the rules", description="Findings for a photo."
    )
    _frame_args(p)
    add_roster_options(p, True, ROSTER_HELP)
    p.set_defaults(func=_cmd_analyze)

    p = sub.add_parser(
        "measure",
        help="the judge's measurement of two models",
        description="Edge-to-edge gap of models A and B with its uncertainty, and the verdict against each line of "
        "the profile. Several frames of an unchanged table are fused and the uncertainty shrinks.",
    )
    p.add_argument("items", nargs="+", metavar="FRAME... A B", help="one or more frames, then two model ids")
    add_table_options(p)
    p.add_argument("--empty", type=Path, metavar="FRAME", help=EMPTY_HELP)
    add_config_option(p)
    add_roster_options(p, True, ROSTER_HELP)
    add_json_option(p)
    p.set_defaults(func=_cmd_measure, intermixed=True)

    p = sub.add_parser(
        "evaluate",
        help="score detection against ground truth",
        description="Recall, precision, centre error, base-size accuracy, time and sigma reliability.",
    )
    p.add_argument("folder", nargs="?", default="sample_images", help="frames with NAME.truth.json beside each")
    p.add_argument("--no-camera", action="store_true", help="ignore camera.json files (lens uncorrected)")
    p.add_argument("--no-empty", action="store_true", help="ignore NAME.empty.jpg files (the table seen empty)")
    p.add_argument(
        "--roster",
        action="store_true",
        help="each frame's truth serves as its roster, as for analyze and measure: bases are fitted at the sizes "
        "(and rim heights) it declares",
    )
    p.add_argument(
        "--by-look",
        action="store_true",
        help="break the results down by look (base top, figure, contact, rim height, base size, mat, resolution, "
        "px/mm, light); shown anyway when the truths describe looks",
    )
    add_profile_option(p, "the game the frames show")
    add_config_option(p)
    add_json_option(p)
    p.set_defaults(func=_cmd_evaluate)
