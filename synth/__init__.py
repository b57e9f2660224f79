"""Synthetic camera frames of a wargame table with exact ground truth.

Describe a scene (:class:`Scene`: table spec, :class:`Camera`, models, clutter, mat, light, imaging) or let
:func:`random_scene` make a plausible game, then :func:`render` it into a BGR frame and its :class:`Truth` (the
exact table state, the camera.json, per-model visibility, and how the frame was made). :func:`render_sequence`
streams frames of a game in motion; :func:`move_scenes` makes the moves between two states, hand included.
"""

from synth.camera import Camera
from synth.errors import SceneError
from synth.generate import (
    CLUTTER,
    RESOLUTIONS,
    Clutter,
    fit_camera,
    make_figure,
    plain_scene,
    random_camera,
    random_hand,
    random_scene,
    with_models,
)
from synth.render import Truth, render, visibility
from synth.scene import (
    BASE_COLOURS,
    Capsule,
    Die,
    Ellipsoid,
    Figure,
    Hand,
    Imaging,
    Lighting,
    Mat,
    PrintedCircle,
    Scene,
    SceneModel,
    TerrainBlock,
    Token,
)
from synth.sequence import move_scenes, render_sequence

__all__ = [
    "BASE_COLOURS",
    "CLUTTER",
    "RESOLUTIONS",
    "Camera",
    "Capsule",
    "Clutter",
    "Die",
    "Ellipsoid",
    "Figure",
    "Hand",
    "Imaging",
    "Lighting",
    "Mat",
    "PrintedCircle",
    "Scene",
    "SceneError",
    "SceneModel",
    "TerrainBlock",
    "Token",
    "Truth",
    "fit_camera",
    "make_figure",
    "move_scenes",
    "plain_scene",
    "random_camera",
    "random_hand",
    "random_scene",
    "render",
    "render_sequence",
    "visibility",
    "with_models",
]
