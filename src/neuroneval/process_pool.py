"""Run independent calls in spawned worker processes, safely for Snakemake ``script:`` steps.

Two workarounds make spawned workers behave: each starts with one BLAS/OpenMP thread (a worker is one core's
worth of work, :func:`single_threaded_children`), and none re-runs the parent's main script, which Snakemake
``script:`` files run at top level without a ``__main__`` guard (:func:`main_file_hidden`).
:func:`completed_calls` puts both around a :class:`~concurrent.futures.ProcessPoolExecutor`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from typing import Any

#: Thread-count variables set to 1 in worker processes (each worker is one core's worth of work).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@contextlib.contextmanager
def single_threaded_children() -> Iterator[None]:
    """Child processes start with one BLAS/OpenMP thread each (they inherit the environment at spawn)."""
    saved = {name: os.environ.get(name) for name in THREAD_VARIABLES}
    os.environ.update({name: "1" for name in THREAD_VARIABLES})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def main_file_hidden() -> Iterator[None]:
    """Keep spawned workers from re-running the parent's ``__main__`` file while they start.

    A spawned process executes the parent's main script (unless it was started with ``-m``) before it
    unpickles its task; a script without a ``__main__`` guard — a Snakemake ``script:``, which calls the step
    at top level — would run the whole step again in every worker. The workers need nothing from it.
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is not None:
        del main.__file__
    try:
        yield
    finally:
        if path is not None:
            main.__file__ = path


def completed_calls(function: Callable[..., Any], calls: Sequence[tuple], workers: int) -> Iterator[tuple[int, Any]]:
    """Yield ``(i, function(*calls[i]))`` for every call, in order of completion.

    With ``workers == 1`` the calls run inline, in order; otherwise in ``workers`` spawned processes, each
    single-threaded and blind to the parent's main script. ``function`` and the arguments must pickle.
    """
    if workers == 1:
        for index, arguments in enumerate(calls):
            yield index, function(*arguments)
        return
    with (single_threaded_children(), main_file_hidden(),
          ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool):
        futures = {pool.submit(function, *arguments): index for index, arguments in enumerate(calls)}
        for future in as_completed(futures):
            yield futures[future], future.result()
