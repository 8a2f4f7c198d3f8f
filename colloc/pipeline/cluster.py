"""The Dask cluster a sweep or a multi-start runs on: a local one, or a running scheduler by address.

The local cluster is ``dask.distributed.LocalCluster(n_workers=N,
threads_per_worker=1, processes=True)``: IPOPT and CasADi hold the GIL, so one
process per solve.  Dask is an optional dependency (``python -m pip install
"colloc[sweep]"``), imported only here and only when a cluster is wanted.
"""
from __future__ import annotations

from ..errors import MissingDependencyError, OptionError

#: How long to try to reach a scheduler given by address.
CONNECT_TIMEOUT = "10s"


def dask_client_class():
    try:
        from dask.distributed import Client
    except ImportError:
        raise MissingDependencyError('Sweeps run on Dask, which is not installed; install colloc[sweep] '
                                     '(python -m pip install "colloc[sweep]").') from None
    return Client


def check_cluster(workers, scheduler):
    """The number of local workers (``None`` with a scheduler), or an error for a bad combination."""
    if scheduler is not None:
        if workers is not None:
            raise OptionError("Give either `workers` (a local cluster) or `scheduler` (a running one), not both; "
                              "a running scheduler has its own workers.")
        return None
    workers = 2 if workers is None else workers
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise OptionError(f"`workers` must be a positive whole number; got {workers!r}.")
    return workers


def connect(Client, workers, scheduler):
    """A client and what to close afterwards (nothing for a client the caller passed)."""
    if scheduler is not None:
        if not isinstance(scheduler, str):
            return scheduler, []
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as e:  # ValueError: an address Dask cannot parse
            raise OptionError(f"Cannot connect to the Dask scheduler at `{scheduler}` ({e}); start one with "
                              "`dask scheduler` and workers with `dask worker ADDRESS`.") from None
        return client, [client]
    import dask
    from dask.distributed import LocalCluster

    # a point that kills its worker is reported at once (no retries that would kill more workers), and
    # each worker holds one point at a time, so a crash or a restart after a timeout hits no other point
    with dask.config.set({"distributed.scheduler.allowed-failures": 0, "distributed.scheduler.worker-saturation": 1.0}):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    return client, [client, cluster]


__all__ = ["MissingDependencyError", "dask_client_class", "check_cluster", "connect", "CONNECT_TIMEOUT"]
