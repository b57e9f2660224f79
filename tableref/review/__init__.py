"""The review of a recorded game.

- :mod:`~tableref.review.timeline`: pure, on table states: identities from one settled state to the next, moves,
  findings and events, and the timeline document;
- :mod:`~tableref.review.groups`: where each unit went, read from the shape of its group of models;
- :mod:`~tableref.review.run`: a recording scanned for its settled frames, each measured and reviewed;
- :mod:`~tableref.review.store`: the SQLite file a review is kept in (and resumed from);
- :mod:`~tableref.review.cluster`: many recordings on a Dask cluster.
"""
