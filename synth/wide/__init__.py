"""A second renderer of tabletop frames, written apart from :mod:`synth.render` and randomising the look
very widely, for development and held-out evaluation sets.

Objects are drawn as projected polygons: their 3-D outlines go through the camera's pose and lens
(``cv2.projectPoints``) and are filled (``cv2.fillPoly``) farthest first, on a canvas 2-3 times finer than the frame
that is then averaged down; blur, noise and JPEG follow. Every choice (table, camera, mat, prints, light, base
tops and rims, figures, formations, terrain, dice, hands) comes from the seed.

:func:`random_scene` makes a :class:`WideScene`; :func:`render_frame` draws it into a BGR frame and its truth (the
rules table state with ``camera``, ``visibility`` and ``render`` sections, each model's ``look`` and the frame's);
:func:`write_frame` writes both as ``tableref evaluate`` reads them. ``python -m synth.wide`` renders sets.
"""

from synth.wide.frame import render_frame, write_frame
from synth.wide.layout import random_scene
from synth.wide.scene import WideScene
from synth.wide.tables import TABLES
from synth.wide.view import RESOLUTIONS, View, choose_view, make_camera

__all__ = [
    "RESOLUTIONS",
    "TABLES",
    "View",
    "WideScene",
    "choose_view",
    "make_camera",
    "random_scene",
    "render_frame",
    "write_frame",
]
