"""The places a measurement doubts (a base the detector did not accept may stand there), listed with the state."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

import rules
from tableref.evaluate import Sample, load_samples
from tableref.pipeline.frame import detect_frame
from tableref.pipeline.state import doubted_of
from tableref.settings import Settings
from tableref.sources import read_image


def _sample(name: str) -> Sample:
    (sample,) = [s for s in load_samples("sample_images") if s.name == name]
    return sample


def _with_bar(config: Settings, bar: float) -> Settings:
    return dataclasses.replace(config, vision=config.vision.replaced({"finder.doubt_probability": bar}))


@pytest.mark.parametrize(("frame", "bar"), [("skirmish_1080p", 0.05), ("melee_hand_1080p", 0.05)])
def test_places_doubted_lie_on_the_table_and_in_no_base_found(config: Settings, frame: str, bar: float) -> None:
    sample = _sample(frame)
    analysis = detect_frame(read_image(sample.image), sample.spec, _with_bar(config, bar), sample.camera)
    places = doubted_of(analysis.state)
    # a bar this low doubts the faintest peaks: there are some on any frame
    assert len(places) >= 1 and len(places) == len(analysis.doubts)
    for p in places:
        assert 0 <= p.x_mm <= sample.spec.width_mm and 0 <= p.y_mm <= sample.spec.depth_mm
        assert bar <= p.probability <= 1 and 10 < p.diameter_mm < 200
        for m in analysis.state.models:
            assert math.hypot(p.x_mm - m.x_mm, p.y_mm - m.y_mm) > 0.5 * m.base.semi_axes_mm[0], (p, m.id)
    # the state's JSON carries them, and reads back the same
    doc = json.loads(json.dumps(rules.state_to_dict(analysis.state)))
    assert doubted_of(rules.state_from_dict(doc)) == places


def test_no_places_are_doubted_when_none_are_asked_for(config: Settings) -> None:
    sample = _sample("skirmish_1080p")
    analysis = detect_frame(read_image(sample.image), sample.spec, _with_bar(config, 0.0), sample.camera)
    assert doubted_of(analysis.state) == () and len(analysis.doubts) == 0


def test_a_frame_measured_in_part_keeps_the_places_doubted_where_nothing_changed(config: Settings) -> None:
    sample = _sample("skirmish_1080p")
    image = read_image(sample.image)
    low = _with_bar(config, 0.05)
    first = detect_frame(image, sample.spec, low, sample.camera, keep_overview=True)
    again = detect_frame(image, sample.spec, low, sample.camera, first.calibration, previous=first)
    assert again.remeasured_share < 1.0
    assert doubted_of(again.state) == doubted_of(first.state)
