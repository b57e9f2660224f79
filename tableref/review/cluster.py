"""Reviews of several recordings on a Dask cluster: one task per recording.

A review job needs nothing from the others and writes only its own SQLite file, and a killed job resumes from that
file, so the mapping is one task per recording; a task lost with its worker is run again by the scheduler (and
resumes from its database). The workers need this package installed and the recordings, spec, camera, roster and
output folder at the same paths (shared storage).

``dask.distributed`` is an optional dependency (``pip install 'tableref[cluster]'``); it is imported only here and
only when a cluster is asked for.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tableref.errors import UsageError
from tableref.review.run import ReviewJob, review_job_reported

# ``--dask local``: a cluster of worker processes on this machine (for trying the flag, or a big single machine).
LOCAL_ADDRESS = "local"


# A scheduler's address: an optional protocol, a host name or address ([...] for IPv6) and a port.
_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+.-]*://)?(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")
_MAX_PORT = 65535


class ClusterError(UsageError):
    """The cluster cannot be reached or used (no dask.distributed installed, no scheduler at the address)."""


def check_address(address: str) -> None:
    """ClusterError unless ``address`` is ``local`` or a scheduler's address (``tcp://host:8786``): told before
    any work, not met deep in the client."""
    if address == LOCAL_ADDRESS:
        return
    match = _ADDRESS.match(address)
    if match is None or not 0 < int(match.group(1)) <= _MAX_PORT:
        raise ClusterError(
            f"--dask {address!r} is no scheduler address; expected one like tcp://host:8786 (a port from 1 to "
            f"{_MAX_PORT}) or {LOCAL_ADDRESS!r}"
        )


def _distributed() -> Any:
    try:
        import dask.distributed
    except ImportError as exc:
        raise ClusterError(
            "--dask needs the dask.distributed package; install it with pip install 'tableref[cluster]' "
            "(or pip install 'dask[distributed]')"
        ) from exc
    return dask.distributed


def connect(address: str, workers: int, timeout_s: float) -> Any:
    """A ``dask.distributed.Client``: to the scheduler at ``address`` (``tcp://host:8786``, waiting at most
    ``timeout_s``), or to a new cluster of ``workers`` single-threaded worker processes on this machine when
    ``address`` is ``local``."""
    distributed = _distributed()
    try:
        if address == LOCAL_ADDRESS:
            cluster = distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            )
            return distributed.Client(cluster)
        return distributed.Client(address, timeout=f"{timeout_s}s")
    except (OSError, TimeoutError, ValueError) as exc:
        # ValueError: an address of a shape that the client parses no further
        raise ClusterError(
            f"cannot reach a Dask scheduler at {address!r} ({exc}); expected an address like tcp://host:8786 "
            f"or {LOCAL_ADDRESS!r}"
        ) from exc


def close(client: Any) -> None:
    """Close ``client`` and, for ``--dask local``, the cluster it started."""
    cluster = getattr(client, "cluster", None)
    client.close()
    if cluster is not None:
        cluster.close()


def review_on_cluster(
    jobs: list[ReviewJob],
    client: Any,
    frames: list[int],
    progress: Callable[[int], None] = lambda n: None,
) -> list[dict[str, Any]]:
    """Review ``jobs`` as one task each on the cluster of ``client`` (a ``dask.distributed.Client``); summaries in
    the jobs' order, as :func:`tableref.review.run.review_many` gives them. ``frames`` (one count per job) feeds
    ``progress`` as each recording finishes: a remote task reports only when it is done."""
    distributed = _distributed()
    # pure=False: the same job submitted again (a resumed review) must run again, not come from a cache
    futures = client.map(review_job_reported, jobs, pure=False)
    where = {f.key: k for k, f in enumerate(futures)}
    out: list[dict[str, Any]] = [{} for _ in jobs]
    for future in distributed.as_completed(futures):
        k = where[future.key]
        out[k] = future.result()
        progress(frames[k])
    return out
