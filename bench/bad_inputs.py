"""Bad inputs of every kind given to the `tableref` command line and to the dashboard's JSON API, and whether each
one is answered as it should be.

A command-line input passes when the command exits 2 with one line on stderr (``tableref CMD: error: ...``), or
exits 0 without a word on stderr when the input is in fact usable; never a traceback, another exit code, a command
that runs past its time, or a bad value accepted. `serve` passes when it exits so, or when it serves the frame it
was given (and stops cleanly on SIGTERM): nothing left running broken. An API request passes with a JSON 4xx (or a
2xx for a request that is in fact valid), never a 5xx. See bench/README.md for what each category holds.

    .venv/bin/python bench/bad_inputs.py [--only settings files ...] [--limit N] [--out DIR] [--failures F.json]

Each command runs in a process of its own, forked from this one once tableref is imported (a process started
afresh for each would spend most of the sweep importing; ``--subprocess`` does that, to check the fork changes
nothing). `serve` always runs as a process started afresh, through its entry point.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import resource
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import _root  # noqa: F401  (the repository's root on sys.path: the fixtures use the tests' renderers)

# One thread each: the sweep shares the machine, and a forked child must not inherit a pool's threads.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

from tableref.cli import main as tableref_main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# `tableref` as its entry point runs it, from this tree (whichever copy of the repository the script lies in)
TABLEREF = [sys.executable, "-m", "tableref.cli"]
TABLEREF_ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
# A command that takes longer than this is stuck (the slowest good input, a review of a 6 s video, takes 3 s).
TIMEOUT_S = 120.0
# The address space of one command: an input that makes a stage run out of memory fails rather than the machine.
MEMORY_BYTES = 6 * 2**30
EXIT_OK, EXIT_BAD_INPUT = 0, 2

# What a case expects: a bad input refused, or either outcome (refused, or used when it is in fact usable).
FAIL, EITHER, OK = "fail", "either", "ok"


@dataclass
class Case:
    """One command line. ``then``: more command lines with the same input, run only when this one accepts it (a
    refused input is refused alike by every command that reads it, through one loader). ``words``: what the
    error must name (a setting's key, say)."""

    category: str
    label: str
    argv: list[str]
    expect: str = EITHER
    words: str = ""
    then: list[list[str]] = field(default_factory=list)
    timeout_s: float = TIMEOUT_S


@dataclass
class Outcome:
    category: str
    label: str
    argv: list[str]
    code: int | None
    stderr: str
    seconds: float
    problem: str | None


@dataclass
class Run:
    code: int | None
    stdout: str
    stderr: str
    seconds: float


def _child(argv: list[str], out_fd: int, err_fd: int, cwd: str) -> None:
    """In the forked child: `tableref ARGV` as its entry point runs it (an escaping exception is a traceback and
    exit 1), stdout and stderr into the given files."""
    code = 1
    try:
        os.setpgid(0, 0)
        os.chdir(cwd)
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), encoding="utf-8", line_buffering=True)
        sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), encoding="utf-8", line_buffering=True)
        try:
            result = tableref_main(argv)
            code = result if isinstance(result, int) else 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _wait(pid: int, timeout_s: float) -> int | None:
    """The exit code of child ``pid`` (a signal's death as -SIGNAL), or None (and its group killed) on timeout."""
    end = time.monotonic() + timeout_s
    delay = 0.002
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > end:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def run_forked(argv: list[str], cwd: Path, timeout_s: float) -> Run:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _child(argv, out.fileno(), err.fileno(), str(cwd))
        code = _wait(pid, timeout_s)
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return Run(code, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"), seconds)


def run_subprocess(argv: list[str], cwd: Path, timeout_s: float) -> Run:
    import subprocess

    start = time.monotonic()
    try:
        done = subprocess.run(
            [*TABLEREF, *argv],
            cwd=cwd,
            capture_output=True,
            timeout=timeout_s,
            stdin=subprocess.DEVNULL,
            env=TABLEREF_ENV,
        )
    except subprocess.TimeoutExpired:
        return Run(None, "", "", time.monotonic() - start)
    seconds = time.monotonic() - start
    return Run(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"), seconds)


# A progress bar's lines (stderr, on a long job).
_PROGRESS = re.compile(r"^\[[#-]+\] \d+(/\d+)? ")


def judge(argv: list[str], expect: str, words: str, run: Run) -> str | None:
    """What is wrong with how ``argv`` was answered (None: nothing)."""
    command = argv[0] if argv else ""
    err = run.stderr
    if run.code is None:
        return "timeout"
    if "Traceback" in err:
        last = err.strip().splitlines()[-1] if err.strip() else ""
        return f"traceback: {last[:160]}"
    if run.code == EXIT_BAD_INPUT:
        lines = err.splitlines()
        named = lines and (
            lines[0].startswith(f"tableref {command}: error: ") or lines[0].startswith("tableref: error: ")
        )
        if len(lines) != 1 or not named:
            return f"exit 2 but not one line: {err[:200]!r}"
        if expect == OK:
            return f"refused a good input: {lines[0][:160]}"
        if expect == FAIL and words and words not in lines[0]:
            return f"error does not name {words!r}: {lines[0][:160]}"
        return None
    if run.code == EXIT_OK:
        if expect == FAIL:
            return "accepted a bad input (exit 0)"
        if any(not _PROGRESS.match(line) for line in err.strip().splitlines()):
            return f"exit 0 with stderr: {err.strip()[:200]!r}"
        return None
    return f"exit {run.code}: {err.strip()[-200:]!r}"


def run_cases(
    cases: Iterator[Case], cwd: Path, runner: Callable[[list[str], Path, float], Run], log: io.TextIOBase | None
) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for case in cases:
        for n, argv in enumerate([case.argv, *case.then]):
            run = runner(argv, cwd, case.timeout_s)
            # the commands after the first read an input the first accepted: they must accept it too, or say why
            expect = case.expect if n == 0 else EITHER
            problem = judge(argv, expect, case.words, run)
            label = case.label if n == 0 else f"{case.label} ({argv[0]})"
            outcomes.append(Outcome(case.category, label, argv, run.code, run.stderr[-2000:], run.seconds, problem))
            if log is not None:
                status = "FAIL" if problem else "ok"
                log.write(f"{status}\t{case.category}\t{label}\t{run.code}\t{run.seconds:.2f}\t{problem or ''}\n")
                log.flush()
            if run.code != EXIT_OK:
                break
    return outcomes


def summarize(outcomes: list[Outcome]) -> str:
    tried: Counter[str] = Counter(o.category for o in outcomes)
    failed: Counter[str] = Counter(o.category for o in outcomes if o.problem)
    accepted: Counter[str] = Counter(o.category for o in outcomes if o.code == EXIT_OK and not o.problem)
    lines = [f"{'category':<14} {'tried':>6} {'accepted':>9} {'failed':>7}"]
    for category in sorted(tried):
        lines.append(f"{category:<14} {tried[category]:>6} {accepted[category]:>9} {failed[category]:>7}")
    lines.append(f"{'all':<14} {sum(tried.values()):>6} {sum(accepted.values()):>9} {sum(failed.values()):>7}")
    return "\n".join(lines)


def failure_groups(outcomes: list[Outcome]) -> dict[str, list[str]]:
    """Failures grouped by their problem's first words (one cause usually gives one wording)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for o in outcomes:
        if o.problem:
            groups[o.problem[:90]].append(f"{o.category}/{o.label}")
    return dict(sorted(groups.items(), key=lambda kv: -len(kv[1])))


def main() -> int:
    import bad_inputs_cli as cli_cases
    import bad_inputs_make as make
    import bad_inputs_web as web_cases

    categories = {**cli_cases.CATEGORIES, **web_cases.CATEGORIES}
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=sorted(categories), help="run these categories only")
    parser.add_argument("--limit", type=int, help="at most this many cases per category (a quick look)")
    parser.add_argument("--out", type=Path, help="work folder (default: a temporary one)")
    parser.add_argument("--failures", type=Path, help="write every failure here as JSON")
    parser.add_argument("--log", type=Path, help="one line per command run, as it runs")
    parser.add_argument("--subprocess", action="store_true", help="start each command afresh rather than forking")
    args = parser.parse_args()
    work = args.out or Path(tempfile.mkdtemp(prefix="tableref-bad-"))
    work.mkdir(parents=True, exist_ok=True)
    fixtures = make.build_fixtures(work)
    runner = run_subprocess if args.subprocess else run_forked
    log = args.log.open("w") if args.log else None
    outcomes: list[Outcome] = []
    for name in args.only or list(categories):
        started = time.monotonic()
        kind, make = categories[name]
        produced = make(fixtures)
        if kind == "cli":
            cases = iter(list(produced)[: args.limit] if args.limit else list(produced))
            found = run_cases(cases, work, runner, log)
        else:
            found = produced(args.limit)
            if log is not None:
                for o in found:
                    log.write(
                        f"{'FAIL' if o.problem else 'ok'}\t{o.category}\t{o.label}\t{o.code}\t"
                        f"{o.seconds:.2f}\t{o.problem or ''}\n"
                    )
        outcomes += found
        bad = sum(1 for o in found if o.problem)
        print(f"{name}: {len(found)} tried, {bad} failed, {time.monotonic() - started:.0f} s", flush=True)
    print(summarize(outcomes))
    groups = failure_groups(outcomes)
    for problem, where in groups.items():
        print(f"{len(where):>5}  {problem}\n       e.g. {', '.join(where[:3])}")
    if args.failures:
        bad = [o.__dict__ for o in outcomes if o.problem]
        args.failures.write_text(json.dumps(bad, indent=1, ensure_ascii=False))
    return 1 if groups else 0


if __name__ == "__main__":
    sys.exit(main())
