"""The Dask cluster a sweep or a multi-start runs on: a local one, or a running scheduler by address.

The local cluster is ``dask.distributed.LocalCluster(n_workers=N,
threads_per_worker=1, processes=True)``: IPOPT and CasADi hold the GIL, so one
process per solve.  Dask is an optional dependency (``python -m pip install
"colloc[sweep]"``), imported only here and only when a cluster is wanted.
"""
from __future__ import annotations

import logging
import os
import signal
import threading

from ..errors import MissingDependencyError, OptionError
from ..solvers.ipopt import sigint_as

#: How long to try to reach a scheduler given by address.
CONNECT_TIMEOUT = "10s"
#: How long a running scheduler may take to show one worker (seconds).
WORKER_TIMEOUT = 10.0


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
    cores = os.cpu_count() or 1
    if workers is None:
        return min(2, cores)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise OptionError(f"`workers` must be a positive whole number; got {workers!r}.")
    if workers > cores:  # each worker runs one solve at a time on one core: more only compete (and take minutes to start)
        raise OptionError(f"`workers` is {workers} but this machine has {cores} core{'s' if cores != 1 else ''}; each worker "
                          f"runs one solve on one core, so give at most {cores} (or a running scheduler for more machines).")
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
        try:  # a scheduler without workers would take the tasks and never run them, silently
            client.wait_for_workers(1, timeout=WORKER_TIMEOUT)
        except (OSError, TimeoutError):
            client.close()
            raise OptionError(f"The Dask scheduler at `{scheduler}` has no workers (none joined within {WORKER_TIMEOUT:g} s); "
                              f"start some with `dask worker {scheduler}`.") from None
        return client, [client]
    import dask
    from dask.distributed import LocalCluster

    # a point that kills its worker is reported at once (no retries that would kill more workers), and
    # each worker holds one point at a time, so a crash or a restart after a timeout hits no other point
    # (and the workers log errors only: a point cancelled by Ctrl-C is not a warning worth a screen of text)
    quiet = {"distributed.logging.distributed": "error"}
    with dask.config.set({"distributed.scheduler.allowed-failures": 0, "distributed.scheduler.worker-saturation": 1.0, **quiet}), \
            _workers_ignore_ctrl_c():
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    logging.getLogger("distributed").setLevel(logging.ERROR)  # the nannies run here: their warnings too
    try:
        client.register_plugin(_IgnoreCtrlC(), name="colloc-ignore-ctrl-c")  # also for workers restarted later
    except Exception:  # noqa: BLE001  an older Dask without it: the inherited SIG_IGN still holds for the first workers
        pass
    return client, [client, cluster]


def _ignore_sigint():
    import logging

    # a point cancelled by Ctrl-C, or a worker stopped after it, is not a warning worth a screen of text
    logging.getLogger("distributed").setLevel(logging.ERROR)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _IgnoreCtrlC():
    """A Dask worker plugin: the worker ignores SIGINT (see :func:`_workers_ignore_ctrl_c`)."""
    from distributed import WorkerPlugin

    class IgnoreCtrlC(WorkerPlugin):
        def setup(self, worker):
            _ignore_sigint()

    return IgnoreCtrlC()


def _workers_ignore_ctrl_c():
    """Start the worker processes with SIGINT ignored (inherited through exec; Python then installs no
    KeyboardInterrupt handler): Ctrl-C in a terminal reaches the whole process group, and the client
    alone stops the run and closes the cluster, instead of every worker printing its traceback."""
    return sigint_as(signal.SIG_IGN)


__all__ = ["MissingDependencyError", "dask_client_class", "check_cluster", "connect", "CONNECT_TIMEOUT", "WORKER_TIMEOUT"]
