"""Every bundled sample frame, analysed with its truth as roster: the findings are the truth's.

No finding the truth lacks (placement findings whatever their call; engagement and cohesion when clear), and no
truth finding missing unless a model it is about is reported unseen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import rules
from tableref.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_images"
NAMES = sorted(p.name.removesuffix(".truth.json") for p in SAMPLES.glob("*.truth.json"))
PLACEMENT = {"overlap", "off_table", "in_terrain", "multi_contact"}


def _key(f: dict[str, Any]) -> tuple[str, Any]:
    if f["kind"] == "engaged":
        return ("engaged", frozenset(f["units"]))
    if f["kind"] == "cohesion":
        return ("cohesion", f["unit"])
    return (f["kind"], frozenset(f["models"]))


@pytest.mark.parametrize("profile", ["skirmish", "legion"])
@pytest.mark.parametrize("name", NAMES)
def test_sample_findings_are_the_truths(name: str, profile: str, capsys: pytest.CaptureFixture[str]) -> None:
    table = SAMPLES / ("small_table.toml" if name.startswith("small_table") else "table.toml")
    truth_path = SAMPLES / f"{name}.truth.json"
    frame, camera = SAMPLES / f"{name}.jpg", SAMPLES / f"{name}.camera.json"
    args = [frame, "--roster", truth_path, "--camera", camera, "--table", table, "--profile", profile, "--json"]
    code = main(["analyze", *map(str, args)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    truth = [f.to_dict() for f in rules.check(rules.load_state(truth_path), rules.load_profile(profile))]
    unseen = {m for f in doc["findings"] if f["kind"] == "unseen" for m in f["models"]}
    assert unseen == set(doc["missing"])
    wanted = {_key(f) for f in truth}
    found = {_key(f) for f in doc["findings"]}
    extra = [
        f
        for f in doc["findings"]
        if f["kind"] != "unseen" and _key(f) not in wanted and (f["kind"] in PLACEMENT or f["call"] == rules.CLEAR)
    ]
    missing = [f for f in truth if _key(f) not in found and not unseen.intersection(f["models"])]
    assert extra == [] and missing == []
