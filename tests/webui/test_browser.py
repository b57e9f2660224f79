"""The dashboard in a real browser (Playwright driving Debian's Chromium): it loads on the bundled sample, shows
the findings the API gives, measures two clicked bases as the API does, changes findings when a unit is assigned,
and downloads the judge report. Screenshots of every screen go to tests/artifacts/."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tableref.review.store import ReviewStore
from tests.webui.browser import WAIT_MS, Served, shot
from tests.webui.browser import wait_results as _wait_results
from tests.webui.conftest import fast_settings, sample_state_dict, start_live, state_live, two_sides, wait_for
from tests.webui.test_review import make_review_db
from webui.blueprints.review import REVIEW_KEY
from webui.feeds import SampleFeed, load_sample_scenes, sample_available


@pytest.fixture
def sample_state() -> Iterator[Served]:
    served = Served(state_live(sample_state_dict(), name="sample_state.json"))
    yield served
    served.close()


def _page_findings(pg: Any) -> list[dict[str, str]]:
    """The findings as the page lists them, strongest first, each with its index in the API's list."""
    return pg.eval_on_selector_all(
        "#findings .finding",
        "els => els.map(e => ({models: e.dataset.models, cls: e.className, index: Number(e.dataset.index)}))",
    )


def _in_page_order(served: Served) -> list[int]:
    """The findings in the page's order: group by group (webui/groups.py, strongest first), each strongest first."""
    return [i for g in served.get("/api/result")["groups"] for i in g["findings"]]


@pytest.mark.skipif(not sample_available(), reason="the sample frames are not in this checkout")
def test_dashboard_loads_on_the_bundled_sample(page: Any):
    settings = fast_settings(replay_fps=10.0, max_process_fps=10.0)
    feed = SampleFeed(load_sample_scenes(), settings.sample_hold_s, settings.sample_move_s, settings.replay_fps)
    served = Served(start_live(feed, settings))
    try:
        page.goto(served.url + "/")
        _wait_results(page, frames=3)
        api = served.get("/api/findings")
        shown = _page_findings(page)
        assert [f["index"] for f in shown] == _in_page_order(served)
        assert [f["models"] for f in shown] == [",".join(api["findings"][f["index"]]["models"]) for f in shown]
        if not api["findings"]:
            assert "No findings" in page.inner_text("#findings")
        state = served.get("/api/state")
        models, unseen = state["models"], state.get("unseen", [])
        assert page.locator("#overlay .base[data-model]").count() == len(models)
        assert page.locator("#map .base[data-model]").count() == len(models)
        # every roster model not seen is drawn where it was last seen, and said in words
        assert page.locator("#map .ghost").count() == len(unseen)
        said = sum(len(f["models"]) for f in api["findings"] if f["kind"] == "unseen")
        assert said == len(unseen)
        assert "camera: live" in page.inner_text("#st-camera")
        assert "8/8 markers" in page.inner_text("#st-calibration") or "markers" in page.inner_text("#st-calibration")
        assert page.evaluate("window.tableref.link") == "live updates"
        shot(page, "table-sample")
    finally:
        served.close()


@pytest.fixture
def uncertain_state() -> Iterator[Served]:
    """The sample state measured with 0.5 mm sigmas: the touching bases become close calls of overlap."""
    data = sample_state_dict()
    for m in data["models"]:
        m["sigma_mm"] = 0.5
    served = Served(state_live(data, name="uncertain.json"))
    yield served
    served.close()


def test_findings_appear_and_match_the_api(page: Any, uncertain_state: Served):
    page.goto(uncertain_state.url + "/")
    _wait_results(page)
    api = uncertain_state.get("/api/findings")["findings"]
    assert {f["call"] for f in api} == {"clear", "close"}
    shown = _page_findings(page)
    assert [s["index"] for s in shown] == _in_page_order(uncertain_state)
    listed = [api[s["index"]] for s in shown]
    assert [s["models"] for s in shown] == [",".join(f["models"]) for f in listed]
    assert [f"call-{f['call']}" in s["cls"] for f, s in zip(listed, shown, strict=True)] == [True] * len(api)
    assert [f"kind-{f['kind']}" in s["cls"] for f, s in zip(listed, shown, strict=True)] == [True] * len(api)
    # Clicking a finding (its group opened first) highlights its models in the frame and on the map.
    overlap = next(f for f in api if f["kind"] == "overlap")
    key = ",".join(overlap["models"])
    page.click(f'#findings .group:has(.finding[data-models="{key}"]) summary')
    page.click(f'#findings .finding[data-models="{key}"]')
    lit = page.eval_on_selector_all("#overlay .hl, #map .hl", "els => els.map(e => e.dataset.model)")
    assert sorted(lit) == sorted(overlap["models"] * 2)
    assert page.locator("#overlay .cross").count() == sum(f["kind"] == "overlap" for f in api)
    # Close calls are drawn apart from clear ones: their own class (dashed, amber) and a question mark each.
    close = sum(f["call"] == "close" for f in api)
    assert page.locator("#overlay .cross.close").count() == close
    assert page.locator("#overlay .qmark").count() == close
    assert page.locator("#findings .finding .badge.close").count() == close
    shot(page, "table")


def test_clicking_two_bases_measures_like_the_api(page: Any, sample_state: Served):
    page.goto(sample_state.url + "/judge")
    _wait_results(page)
    # One base on the map, the other on the frame.
    page.click('#map [data-model="c1"]')
    page.click('#overlay [data-model="d1"]')
    page.wait_for_selector("#gap", timeout=WAIT_MS)
    api = sample_state.post("/api/measure", {"a": "c1", "b": "d1"})
    assert float(page.get_attribute("#gap", "data-gap-mm")) == pytest.approx(api["gap_mm"], abs=1e-3)
    text = page.inner_text("#gap")
    assert f'{api["gap_in"]:.2f}"' in text and f"{api['gap_mm']:.2f} mm" in text
    lines = page.eval_on_selector_all(".verdicts li", "els => els.map(e => [e.dataset.line, e.className])")
    assert lines == [[v["line"], f"call-{v['call']}"] for v in api["verdicts"]]
    # Freeze, then the report of the measurement downloads.
    page.click("#freeze")
    page.wait_for_function("document.getElementById('st-settled').textContent.startsWith('frozen')", timeout=WAIT_MS)
    assert sample_state.get("/api/status")["frozen"] is True
    shot(page, "judge")
    with page.expect_download(timeout=WAIT_MS) as download:
        page.click("#report")
    html = Path(download.value.path()).read_text("utf-8")
    assert "Judge report" in html and "c1 – d1" in html and f"({api['gap_mm']:.2f} mm)" in html
    assert "frozen for judging" in html


def test_assigning_a_unit_changes_the_findings(page: Any):
    served = Served(state_live(two_sides(), name="two_sides.json"))
    try:
        page.goto(served.url + "/units")
        _wait_results(page, frames=0)
        assert served.get("/api/findings")["findings"] == []
        page.click('#umap [data-model="x1"]')
        assert page.inner_text("#sel-list") == "x1"
        page.select_option("#unit-pick", "b")
        page.click("#assign")
        page.wait_for_function("document.getElementById('units-message').textContent.includes('assigned')")
        wait_for(lambda: served.get("/api/findings")["findings"] != [], what="findings after the assignment")
        kinds = {f["kind"] for f in served.get("/api/findings")["findings"]}
        assert kinds == {"engaged", "cohesion"}
        page.wait_for_function("document.querySelectorAll('#umap .link').length === 1", timeout=WAIT_MS)
        # Drag a box around red's two models: both selected.
        # the table's rectangle on screen (a band under it holds the scale bar)
        box = page.locator("#umap .table-edge").bounding_box()
        sx, sy = box["width"] / 1200.0, box["height"] / 800.0
        page.mouse.move(box["x"] + 270 * sx, box["y"] + 270 * sy)
        page.mouse.down()
        page.mouse.move(box["x"] + 345 * sx, box["y"] + 330 * sy, steps=5)
        page.mouse.up()
        assert page.inner_text("#sel-list") == "r1, r2"
        shot(page, "units")
        page.goto(served.url + "/")
        _wait_results(page, frames=1)
        assert len(_page_findings(page)) == 2
    finally:
        served.close()


@pytest.mark.parametrize(
    ("height", "declared", "message"),
    [
        ("", {"diameter_mm": 32}, "set to 32 mm."),
        ("3.5", {"diameter_mm": 32, "height_mm": 3.5}, "set to 32 mm (rim 3.5 mm)."),
    ],
)
def test_overriding_a_base_declares_its_size_and_rim_height(
    page: Any, height: str, declared: dict[str, float], message: str
):
    served = Served(state_live(two_sides(), name="two_sides.json"))
    try:
        page.goto(served.url + "/units")
        _wait_results(page, frames=0)
        page.click('#umap [data-model="r1"]')
        page.fill("#base-mm", "32")
        page.fill("#base-height", height)
        page.click("#base-set")
        page.wait_for_function(
            f"document.getElementById('units-message').textContent.includes({json.dumps(message)})", timeout=WAIT_MS
        )
        overrides = served.get("/api/roster").get("base_overrides", {})
        assert overrides.get("r1") == declared
    finally:
        served.close()


def test_setup_changes_the_profile(page: Any, sample_state: Served):
    page.goto(sample_state.url + "/setup")
    _wait_results(page, frames=0)
    page.wait_for_selector("#profile-pick option[value=legion]", state="attached", timeout=WAIT_MS)
    page.select_option("#profile-pick", "legion")
    page.click("#profile-form button")
    page.wait_for_function("document.getElementById('setup-message').textContent.includes('legion')")
    assert sample_state.get("/api/findings")["profile"] == "legion"
    assert '3.00"' in page.inner_text("#profile-limits")
    # Legion's own base sizes, as the camera now reads its bases
    page.wait_for_function("document.getElementById('profile-limits').textContent.includes('27, 50, 70, 100 mm')")
    shot(page, "setup")
    page.goto(sample_state.url + "/review")
    shot(page, "review")


@pytest.mark.skipif(not sample_available(), reason="the sample frames are not in this checkout")
def test_setup_asks_for_the_empty_table_and_says_what_came_of_it(page: Any, sample_state: Served):
    page.goto(sample_state.url + "/setup")
    _wait_results(page, frames=0)
    page.wait_for_function("document.getElementById('empty-status').textContent.includes('Not captured')")
    assert page.is_disabled("#forget-empty")
    page.click("#capture-empty")
    page.wait_for_function("document.getElementById('setup-message').textContent.includes('next settled frame')")
    # a table state has no camera frame to take: the card says so, and nothing waits any more
    page.wait_for_function(
        "document.getElementById('empty-status').textContent.includes('no camera frame')", timeout=WAIT_MS
    )
    got = sample_state.get("/api/empty")
    assert (got["captured"], got["pending"]) == (False, False) and "no camera frame" in got["note"]
    shot(page, "setup_empty")


def test_fixing_a_unit_on_the_review_screen(page: Any, tmp_path: Path):
    db = make_review_db(tmp_path / "game.sqlite")
    served = Served(state_live(two_sides()))
    served.server.app.config[REVIEW_KEY] = str(db)
    try:
        page.goto(served.url + "/review?state=2")
        assert "red: no legal action ILLEGAL" in " ".join(page.inner_text(".verdicts").split())
        # r2 was blue's: the long move becomes blue's illegal move, red's verdict goes
        page.fill('input[data-model="r2"]', "blue")
        page.click("#ru-apply")
        page.wait_for_function(
            "document.querySelector('.verdicts') && document.querySelector('.verdicts').innerText.includes('blue')",
            timeout=WAIT_MS,
        )
        verdicts = " ".join(page.inner_text(".verdicts").split())
        assert "blue: no legal action ILLEGAL" in verdicts and "red:" not in verdicts
        shot(page, "review-units")
    finally:
        served.close()
    with ReviewStore(db, readonly=True) as store:
        units = {m.id: m.unit for s in store.states() for m in s.state.models}
    assert units == {"r1": "red", "r2": "blue", "b1": "blue"}


def test_polling_takes_over_without_server_sent_events(page: Any, sample_state: Served):
    page.add_init_script("delete window.EventSource")
    page.goto(sample_state.url + "/")
    _wait_results(page)
    assert page.evaluate("window.tableref.link") == "polling"
    assert len(_page_findings(page)) == len(sample_state.get("/api/findings")["findings"])


def test_the_status_bar_says_how_much_of_the_table_was_measured_again(page: Any):
    from calibration.camera import camera_from_dict
    from synth.generate import with_models
    from synth.render import render
    from tests.tableref.pipeline.test_changes import moved_scene
    from tests.webui.test_live import _MoveFeed
    from webui.feeds import Scene

    table = moved_scene()
    before, truth = render(table, seed=1)
    after, _ = render(with_models(table, {"b2": (1420.0, 860.0)}), seed=2)
    scene = Scene(key="cam", camera=camera_from_dict(dict(truth.camera)))
    # the frame measured in part stays the last result: no whole frame after it
    settings = fast_settings(whole_after_part=False)
    served = Served(start_live(_MoveFeed(np.asarray(before), np.asarray(after), scene, 20.0), settings))
    try:
        page.goto(served.url + "/")
        wait_for(lambda: served.get("/api/status")["result_seq"] >= 2, what="the frame after the move", timeout_s=60)
        share = served.get("/api/result")["remeasured_share"]
        assert 0.0 < share < 0.4
        page.wait_for_function(
            "document.getElementById('st-calibration').textContent.includes('measured again')", timeout=WAIT_MS
        )
        assert f"{round(share * 100)} % of the table measured again" in page.inner_text("#st-calibration")
    finally:
        served.close()
