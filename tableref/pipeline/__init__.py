"""From a camera frame to a table state, and from one settled frame to the next.

- :mod:`~tableref.pipeline.frame`: one frame measured (:func:`~tableref.pipeline.frame.detect_frame`), a burst of
  frames fused;
- :mod:`~tableref.pipeline.view`: the top-down view a frame is measured in;
- :mod:`~tableref.pipeline.state`: detections as a table state, in millimetres, with their uncertainty;
- :mod:`~tableref.pipeline.incremental`: only what changed since the frame before measured again;
- :mod:`~tableref.pipeline.identity`: which detected model is which, and units suggested for models of none;
- :mod:`~tableref.pipeline.watch`: which frames of a feed or a recording to measure, and measuring one with the
  calibration kept from before (the live dashboard and the review both run it);
- :mod:`~tableref.pipeline.motion` and :mod:`~tableref.pipeline.changes`: cheap change detection on small copies of
  the frames (is the table still, where did it change).
"""
