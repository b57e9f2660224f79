"""Sub-commands of the calibration stage: ``markers`` and ``board`` (printouts), ``calibrate-camera`` (lens)."""

from __future__ import annotations

import argparse

import calibration
from tableref.cli.options import add_config_option, add_table_options, check_output, unfinished_removed
from tableref.config import load_config
from tableref.sources import read_image

EXIT_OK = 0


def _settings(args: argparse.Namespace) -> calibration.CalibrationSettings:
    return load_config(args.config).calibration


def _cmd_markers(args: argparse.Namespace) -> int:
    check_output(args.out, "--out", "a PDF file to write")
    spec = calibration.load_table_spec(args.table)
    with unfinished_removed(args.out):
        pages = calibration.markers_pdf(spec, args.out, settings=_settings(args))
    source = args.table or "the bundled default table"
    print(
        f"Wrote {args.out}: {len(spec.markers)} markers of {source} at true size and a placement sheet "
        f"({pages} pages). Print at 100 % and check the 100 mm scale bar with a ruler."
    )
    return EXIT_OK


def _cmd_board(args: argparse.Namespace) -> int:
    check_output(args.out, "--out", "a PDF file to write")
    settings = _settings(args)
    with unfinished_removed(args.out):
        calibration.board_pdf(args.out, settings=settings)
    print(
        f"Wrote {args.out}: ChArUco board of {settings.board_squares_x} x {settings.board_squares_y} squares of "
        f"{settings.board_square_mm:g} mm ({settings.board_dictionary}). Print at 100 %, keep it flat, and "
        f"photograph it from 8 or more different angles (at least {settings.lens_min_views} must show the board)."
    )
    return EXIT_OK


def _cmd_calibrate_camera(args: argparse.Namespace) -> int:
    check_output(args.out, "--out", "a camera.json to write")
    settings = _settings(args)
    images = [read_image(path) for path in args.images]
    camera, rms_px, views = calibration.calibrate_camera(images, settings)
    with unfinished_removed(args.out):
        calibration.save_camera(camera, args.out)
    for view in views:
        detail = f"reprojection error {view.rms_px:.3f} px" if view.rms_px is not None else f"skipped: {view.reason}"
        print(f"  {args.images[view.index]}: {view.corners_found} corners, {detail}")
    k = camera.camera_matrix
    d = camera.dist_coeffs
    print(
        f"Wrote {args.out}: {camera.image_width}x{camera.image_height}, fx {k[0, 0]:.1f} fy {k[1, 1]:.1f} "
        f"cx {k[0, 2]:.1f} cy {k[1, 2]:.1f}, k1 {d[0]:.4f} k2 {d[1]:.4f}"
    )
    print(f"Reprojection error: {rms_px:.3f} px rms over {sum(v.used for v in views)} of {len(views)} photos")
    return EXIT_OK


def add_markers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``tableref markers [--table SPEC] --out FILE.pdf``."""
    p = sub.add_parser(
        "markers",
        help="print the table's ArUco markers at true size, with a placement sheet (PDF)",
        description="Write a PDF of the table spec's markers at true size, each with its id and place, a 100 mm "
        "scale bar to check the printer, and a placement sheet of the whole table.",
    )
    add_table_options(p, camera=False)
    p.add_argument("--out", required=True, help="PDF file to write")
    add_config_option(p, "calibration")
    p.set_defaults(func=_cmd_markers)


def add_board(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``tableref board --out board.pdf``."""
    p = sub.add_parser(
        "board",
        help="print the ChArUco board for lens calibration (PDF)",
        description="Write a PDF of the ChArUco board that 'tableref calibrate-camera' looks for, at true size.",
    )
    p.add_argument("--out", required=True, help="PDF file to write")
    add_config_option(p, "calibration")
    p.set_defaults(func=_cmd_board)


def add_calibrate_camera(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``tableref calibrate-camera IMAGES... --out camera.json``."""
    p = sub.add_parser(
        "calibrate-camera",
        help="lens intrinsics and distortion from photos of the ChArUco board",
        description="Calibrate the camera's lens from photos of the board printed by 'tableref board' and write "
        "camera.json; prints the reprojection error per photo and overall.",
    )
    p.add_argument("images", nargs="+", help="photos of the board, all from one camera at one size")
    p.add_argument("--out", required=True, help="camera.json to write")
    add_config_option(p, "calibration")
    p.set_defaults(func=_cmd_calibrate_camera)
