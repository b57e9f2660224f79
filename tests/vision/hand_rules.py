"""The detector as its hand rules stood before the learned verifier and finder took the decision over: a figure on
every base, no finder's look, the appearance fit's centres from 1.2 px/mm, and bases fitted at a roster's sizes
as they were (the fit standing however far from its edges, their sigmas as they were). The rules are still there,
each behind its setting; the tests of a rule's own behaviour run them with these settings, where the rule is on."""

from __future__ import annotations

import dataclasses

from tableref.config import load_config
from tableref.settings import Settings
from vision import VisionSettings

HAND_RULES = {
    "verdicts.min_figure_contrast": 6.0,
    "colour.min_figure_contrast": 8.0,
    "outline.min_px_per_mm": 1.2,
    "known.misfit_scale": 2.5,
    "known.edge_share": 0.5,
    "known.edge_limit_mm": 1000.0,
    "verifier.min_probability": 0.0,
    "finder.seed_probability": 0.0,
}


def hand_rule_settings() -> VisionSettings:
    """The default vision settings with the hand rules on."""
    return load_config().vision.replaced(HAND_RULES)


def hand_rule_config() -> Settings:
    """The default settings with the hand rules of the vision stage on."""
    config = load_config()
    return dataclasses.replace(config, vision=hand_rule_settings())
