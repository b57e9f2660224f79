"""`tableref review --dask`: several recordings as one task each on a Dask cluster, the same reviews as locally."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from synth.game import GameVideo
from tableref.cli import main
from tableref.review.cluster import ClusterError, connect, review_on_cluster
from tableref.review.run import ReviewJob, review_job
from tableref.review.store import ReviewStore
from tests.tableref.review_game import copy_recording

distributed = pytest.importorskip("dask.distributed")


def _positions(path: Path) -> list[list[tuple[str, float, float]]]:
    with ReviewStore(path, readonly=True) as store:
        timeline = store.timeline()
    return [sorted((m["id"], m["x_mm"], m["y_mm"]) for m in s["models"]) for s in timeline["states"]]


def _jobs(game: GameVideo, folder: Path, names: list[str]) -> list[ReviewJob]:
    copy_recording(game, folder, [name for name in names if name != "missing"])
    return [
        ReviewJob(
            str(folder / f"{name}{game.path.suffix}"),
            str(folder / f"{name}.sqlite"),
            None,
            None,
            None,
            "skirmish",
            None,
            None,
        )
        for name in names
    ]


def test_the_cluster_gives_the_local_reviews_in_job_order(game: GameVideo, tmp_path: Path) -> None:
    jobs = _jobs(game, tmp_path, ["table1", "missing", "table2"])
    local = tmp_path / "local.sqlite"
    review_job(ReviewJob(str(game.path), str(local), None, None, None, "skirmish", None, None))
    done: list[int] = []
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as client:
        summaries = review_on_cluster(jobs, client, [10, 20, 30], done.append)
    assert [s["source"] for s in summaries] == [j.source for j in jobs]
    assert "error" in summaries[1] and "missing" in summaries[1]["error"]
    assert sorted(done) == [10, 20, 30]
    for k in (0, 2):
        assert summaries[k]["states"] == len(game.holds)
        assert _positions(Path(jobs[k].out)) == _positions(local)


def test_local_worker_processes_from_the_command_line(
    capsys: pytest.CaptureFixture[str], game: GameVideo, tmp_path: Path
) -> None:
    sources = copy_recording(game, tmp_path, ["a", "b"])
    out = tmp_path / "reviews"
    code = main(["review", *map(str, sources), "--out", str(out), "--dask", "local", "--workers", "2", "--quiet"])
    stdout = capsys.readouterr().out
    assert code == 0, stdout
    for name in ("a", "b"):
        assert f"{len(game.holds)} settled states" in stdout
        with ReviewStore(out / f"{name}.sqlite", readonly=True) as store:
            assert store.count() == len(game.holds)


@pytest.mark.parametrize(
    ("address", "hide_dask", "message"),
    [
        ("tcp://127.0.0.1:9", False, "cannot reach a Dask scheduler"),
        ("local", True, "pip install"),
    ],
)
def test_an_unusable_cluster_is_a_named_error(
    monkeypatch: pytest.MonkeyPatch, address: str, hide_dask: bool, message: str
) -> None:
    if hide_dask:
        monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(ClusterError, match=message):
        connect(address, 1, timeout_s=1.0)


def test_the_command_line_error_is_one_line(
    capsys: pytest.CaptureFixture[str], game: GameVideo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    args: list[Any] = ["review", str(game.path), "--out", str(tmp_path / "x.sqlite"), "--dask", "local", "--quiet"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "dask" in err and len(err.strip().splitlines()) == 1
