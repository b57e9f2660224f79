"""``tableref review``: recorded games to reviewed timelines (settled states, moves, findings, events) in SQLite."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from tableref.cli.options import (
    add_config_option,
    add_json_option,
    add_roster_options,
    add_table_options,
    check_output,
)
from tableref.errors import UsageError
from tableref.progress import Progress
from tableref.report import format_game
from tableref.review.recording import Recording
from tableref.review.run import ReviewJob, review_many
from tableref.review.store import ReviewStore

EXIT_OK = 0
EXIT_FAILED = 1
REVIEW_SUFFIX = ".sqlite"
_DATABASE = "a review database (SQLite) to write, or one to resume"


def _outputs(sources: list[str], out: str | None) -> list[str]:
    """One database per recording: ``--out`` itself for one recording, a folder of ``NAME.sqlite`` for several
    (by default ``NAME.sqlite`` in the working folder)."""
    stems = [Path(s.rstrip("/")).stem or "review" for s in sources]
    if len(set(stems)) != len(stems):
        raise UsageError(f"recordings {', '.join(sources)} share a name; expected distinct names for their reviews")
    if len(sources) == 1:
        return [str(check_output(f"{stems[0]}{REVIEW_SUFFIX}" if out is None else out, "--out", _DATABASE))]
    folder = Path("." if out is None else out)
    if folder.suffix == REVIEW_SUFFIX:
        raise UsageError(f"--out {out} is one file, but {len(sources)} recordings need a folder for their reviews")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"--out {out}: cannot make a folder there ({exc.strerror or exc}); {len(sources)} recordings need a "
            "folder for their reviews"
        ) from None
    for stem in stems:
        check_output(folder / f"{stem}{REVIEW_SUFFIX}", "--out", _DATABASE)
    return [str(folder / f"{stem}{REVIEW_SUFFIX}") for stem in stems]


def _on_cluster(
    jobs: list[ReviewJob], args: argparse.Namespace, frames: list[int], timeout_s: float
) -> list[dict[str, Any]]:
    from tableref.review import cluster

    client = cluster.connect(args.dask, args.workers, timeout_s)
    try:
        with Progress(sum(frames), "frames", enabled=not args.quiet) as bar:
            return cluster.review_on_cluster(jobs, client, frames, bar.advance)
    finally:
        cluster.close(client)


def _cmd_review(args: argparse.Namespace) -> int:
    if args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    if args.dask:
        from tableref.review.cluster import check_address

        check_address(args.dask)
    outs = _outputs(args.videos, args.out)
    jobs = [
        ReviewJob(src, out, args.table, args.camera, args.roster, args.profile, args.actions, args.config)
        for src, out in zip(args.videos, outs, strict=True)
    ]
    from tableref.config import load_config

    review_settings = load_config(args.config).review
    photo_period = review_settings.photo_period_s
    total = sum(Recording(j.source, photo_period).count for j in jobs)
    if args.dask:
        frames = [Recording(j.source, photo_period).count for j in jobs]
        summaries = _on_cluster(jobs, args, frames, review_settings.dask_connect_timeout_s)
    else:
        with Progress(total, "frames", enabled=not args.quiet) as bar:
            summaries = review_many(jobs, args.workers, bar.advance)
    failed = [s for s in summaries if "error" in s]
    if len(jobs) == 1 and failed:
        # One recording: its error is the command's error (one line, exit code 2 for bad input).
        raise UsageError(failed[0]["error"])
    if args.json:
        docs: list[dict[str, Any]] = []
        for s in summaries:
            if "error" in s:
                docs.append({"source": s["source"], "error": s["error"]})
                continue
            with ReviewStore(s["out"], readonly=True) as store:
                docs.append(store.timeline())
        print(json.dumps(docs[0] if len(docs) == 1 else docs, indent=2))
    else:
        for s in summaries:
            if "error" in s:
                print(f"{s['source']}: failed: {s['error']}")
                continue
            notes = [" (resumed)"] if s["resumed"] else []
            if s.get("afresh"):
                notes.append(" (another recording than the one reviewed there before: reviewed afresh)")
            if s.get("covered"):
                notes.append(f" ({s['covered']} still spells with something reaching in were not taken)")
            if s.get("recalibrated"):
                notes.append(f" (the camera moved: calibrated again {s['recalibrated']} times)")
            if s.get("skipped"):
                notes.append(f" ({s['skipped']} settled frames could not be measured)")
            print(f"{s['source']}: {s['states']} settled states in {s['out']}{''.join(notes)}")
            with ReviewStore(s["out"], readonly=True) as store:
                print(format_game(store.timeline()))
    return EXIT_FAILED if failed else EXIT_OK


def add_review(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``tableref review VIDEO... [--table SPEC] [--camera camera.json] [--roster STATE.json] [--profile P]
    [--out GAME.sqlite] [--json] [--actions FILE] [--workers N] [--dask ADDRESS] [--config SETTINGS.toml]``."""
    p = sub.add_parser(
        "review",
        help="review recorded games: settled states, moves, findings, events",
        description="Find the settled states of a recorded game (a video or a folder of photos), track every model "
        "from one to the next, check the moves and the table, and store it all in SQLite. Running the same command "
        "again resumes an interrupted review.",
    )
    p.add_argument("videos", nargs="+", metavar="VIDEO", help="video file or folder of photos (several: in parallel)")
    add_table_options(p)
    add_roster_options(p, False, "table state JSON giving ids and units of the models of the first settled state")
    p.add_argument(
        "--out", help="review database (default: NAME.sqlite here); a folder when several recordings are given"
    )
    add_json_option(p, "the timeline as JSON")
    p.add_argument("--actions", help='JSON {"unit": "move|charge|advance|advance+charge"} of declared actions')
    p.add_argument(
        "--workers",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="recordings reviewed at once, each in its own process (default: 2 or the number of cores if fewer); "
        "with --dask local, the number of worker processes",
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="review on a Dask cluster, one task per recording: the scheduler's address (tcp://host:8786; the "
        "workers need tableref and the files at the same paths) or 'local' for worker processes on this machine",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_config_option(p)
    p.set_defaults(func=_cmd_review)
