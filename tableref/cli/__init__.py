"""The ``tableref`` command line: one sub-command per job, one-line errors with exit code 2 on bad input."""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import unicodedata
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import NoReturn

import cv2

import calibration
import rules
import vision
from tableref.cli import calibrate, frames, melee, moves, review
from tableref.cli.options import add_json_option, add_profile_option
from tableref.config import ConfigError
from tableref.data import sample_state_path
from tableref.errors import UsageError
from tableref.report import format_findings
from tableref.sources import SourceError

EXIT_OK = 0
EXIT_BAD_INPUT = 2
# Entry point group of sub-commands from other packages: each is called with the sub-parsers object.
COMMANDS_GROUP = "tableref.commands"


def _cmd_check(args: argparse.Namespace) -> int:
    path = Path(args.state) if args.state else sample_state_path()
    profile = rules.load_profile(args.profile)
    state = rules.load_state(path)
    if not args.state and not args.json:
        print(f"No state given: checking the bundled sample {path.name}.\n")
    findings = rules.check(state, profile)
    if args.json:
        print(json.dumps(rules.findings_document(profile.name, findings), indent=2))
    else:
        print(format_findings(state, profile, findings, source=str(path)))
    return EXIT_OK


def _add_check(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "check",
        help="run the rules on a table state JSON",
        description="Report engaged units, cohesion breaks, overlaps and illegal placements of a table state.",
    )
    p.add_argument("state", nargs="?", help="table state JSON (default: the bundled sample)")
    add_profile_option(p)
    add_json_option(p, "the findings document as JSON")
    p.set_defaults(func=_cmd_check)


class OneLineParser(argparse.ArgumentParser):
    """argparse's own refusals (an argument missing, a value of the wrong type) in one line as every other error,
    saying where the usage is, rather than the usage first. Its sub-commands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {one_line(message)} (usage: {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = OneLineParser(
        prog="tableref", description="A camera referee for tabletop wargames."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_check(sub)
    moves.add_check_move(sub)
    melee.add_melee(sub)
    calibrate.add_markers(sub)
    calibrate.add_board(sub)
    calibrate.add_calibrate_camera(sub)
    frames.add_commands(sub)
    review.add_review(sub)
    # Packages above this one (the dashboard) add their sub-commands through entry points: tableref never imports
    # them.
    for entry in sorted(entry_points(group=COMMANDS_GROUP), key=lambda e: e.name):
        entry.load()(sub)
    return parser


# Unicode categories of control characters, lone surrogates, line and paragraph separators.
_BREAKING = frozenset({"Cc", "Cs", "Zl", "Zp"})
# Errors that mean "the input was wrong": reported in one line, never as a traceback.
BAD_INPUT: tuple[type[BaseException], ...] = (
    rules.RulesError,
    calibration.CalibrationError,
    vision.VisionError,
    ConfigError,
    SourceError,
    UsageError,
)


def _quiet_output_edge() -> None:
    """Once at start-up: OpenCV's and FFmpeg's own warnings (a corrupt video frame, a backend tried) would stand on
    stderr before the one-line error that already says what was wrong (a user's OPENCV_LOG_LEVEL and
    OPENCV_FFMPEG_LOGLEVEL still win); and text that the terminal's encoding cannot carry (a lone surrogate in an id
    read from JSON) is printed escaped rather than ending the command."""
    if "OPENCV_LOG_LEVEL" not in os.environ:
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    # read by OpenCV's FFmpeg backend when it first opens a video: -8 is FFmpeg's AV_LOG_QUIET
    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def one_line(text: str) -> str:
    """``text`` with its control characters and line breaks escaped: a message quotes what the input said (an id,
    a name), and an id holding a line break would break the error's one line in two."""
    return "".join(c if unicodedata.category(c) not in _BREAKING else repr(c)[1:-1] for c in text)


def _refuse(command: str, message: str) -> int:
    print(f"tableref {command}: error: {one_line(message)}", file=sys.stderr)
    return EXIT_BAD_INPUT


def main(argv: Sequence[str] | None = None) -> int:
    _quiet_output_edge()
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    # Commands that take positionals on both sides of their options (`measure FRAME... --roster R A B`) collect
    # what argparse left over; for any other command a leftover is an error.
    if extra and getattr(args, "intermixed", False) and not any(x.startswith("-") for x in extra):
        args.items += extra
    elif extra:
        return _refuse(
            args.command, f"unrecognized arguments: {' '.join(extra)} (usage: tableref {args.command} --help)"
        )
    words = list(sys.argv[1:] if argv is None else argv)
    for n, word in enumerate(words):
        # an empty word would be taken as an option not given (the bundled sample checked, the lens left
        # uncorrected): what the caller meant is unknown
        if not word.strip():
            after = f" after {words[n - 1]}" if n and words[n - 1].startswith("-") else ""
            return _refuse(args.command, f"an empty argument{after}; expected a name or a value")
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except BAD_INPUT as exc:
        return _refuse(args.command, str(exc))
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
