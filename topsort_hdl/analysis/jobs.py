"""Where the independent jobs run: a local process pool, or a Dask cluster when a scheduler's
address is given. Each job is a pure function of its arguments (a block's Verilog from its
class and arguments, the synthesis of one Verilog text), so the results are the same wherever
it ran; only the caller writes its cache."""

import concurrent.futures
import os

__all__ = ["run_jobs", "local_workers"]


def local_workers():
    """Workers of the local pool: one per core this process may use."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else os.cpu_count() or 1)


def run_jobs(function, jobs, scheduler=None, workers=None):
    """Run ``function(*args)`` for each ``(key, args)`` of ``jobs``; yield ``(key, result)``
    as each finishes. ``scheduler``: a Dask scheduler's address (``tcp://HOST:PORT``), else a
    local pool of ``workers`` processes (one per core by default). A job's exception is raised
    here, once the jobs already running have finished."""
    jobs = list(jobs)
    if not jobs:
        return
    if scheduler:
        yield from _dask_jobs(function, jobs, scheduler)
        return
    with concurrent.futures.ProcessPoolExecutor(workers or local_workers()) as pool:
        futures = {pool.submit(function, *args): key for key, args in jobs}
        for future in concurrent.futures.as_completed(futures):
            yield futures[future], future.result()


def _dask_jobs(function, jobs, scheduler):
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise RuntimeError("a Dask scheduler needs the distributed package: pip install "
                           "'topsort-hdl[explore]'") from None
    with Client(scheduler) as client:
        # pure=False: a job is run even when Dask has seen the same arguments (the worker may
        # have lost its files); the caller's cache already skips the jobs it has.
        futures = {client.submit(function, *args, pure=False, key=f"topsort-{key}"): key
                   for key, args in jobs}
        for future in as_completed(futures):
            yield futures[future], future.result()
