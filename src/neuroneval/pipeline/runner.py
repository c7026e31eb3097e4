"""Running one workflow step: log redirection, thread limits, and a plain-object view of the job."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class StepIO:
    """What a step sees of its job: named ``input``/``output``/``params``/``wildcards`` and ``threads``.

    Snakemake's named lists fit, and so does any object with attributes (tests use SimpleNamespace).
    """

    input: Any
    output: Any
    params: Any
    wildcards: Any
    threads: int = 1


def run_step(step: Callable[[StepIO], None], snakemake: Any) -> None:
    """Run ``step`` for a Snakemake job with stdout/stderr appended to its log and torch limited to its threads."""
    job = StepIO(snakemake.input, snakemake.output, snakemake.params, snakemake.wildcards, snakemake.threads)
    log_path = Path(snakemake.log[0]) if len(snakemake.log) else None
    with _redirected(log_path):
        _limit_threads(job.threads)
        try:
            step(job)
        except Exception:
            traceback.print_exc()
            raise
        finally:
            print(RESOURCE_LINE + json.dumps(job_resources()), flush=True)


#: Prefix of the last line of every job's log: the job's CPU time and peak memory as JSON (:func:`job_resources`;
#: ``benchmarks/bench_build.py`` sums them). Snakemake's own ``benchmark:`` ``cpu_time`` samples the process
#: tree now and then and misses what ran between samples and before the first (imports included).
RESOURCE_LINE = "neuroneval job resources: "


def job_resources() -> dict[str, float]:
    """This process's CPU seconds since it started (user + system, imports included) plus those of the children
    it waited for (``cpu_seconds``), and the larger peak resident memory of the two in MB (``max_rss_mb``),
    from ``getrusage``."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    return {"cpu_seconds": round(cpu, 2), "max_rss_mb": round(max(own.ru_maxrss, children.ru_maxrss) / 1024, 1)}


def run_rule(snakemake: Any) -> None:
    """Run the step function a rule names in its ``step`` param (``"<module>:<function>@<code version>"``, made by
    ``step_version("<function>")`` in ``workflow/rules/common.smk``): the workflow's one entry script,
    ``workflow/scripts/step.py``, calls this for every rule."""
    import importlib

    value = str(snakemake.params.get("step", "")) if hasattr(snakemake.params, "get") else ""
    module, _, function = value.partition("@")[0].partition(":")
    if not module.startswith("neuroneval.pipeline.") or not function:
        raise ValueError(f"rule {getattr(snakemake, 'rule', '?')}: params.step must be step_version(\"<step>\"), "
                         f"got {value!r}")
    run_step(getattr(importlib.import_module(module), function), snakemake)


@contextlib.contextmanager
def _redirected(log_path: Path | None):
    if log_path is None:
        yield
        return
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log_file, contextlib.redirect_stdout(log_file), contextlib.redirect_stderr(log_file):
        yield


#: OpenMP threads that wait for work sleep instead of spinning (a user's own setting wins): with a core taken by
#: another job or process, spinning threads of a two-thread torch job starve the working ones (docs/design.md §7).
WAIT_POLICY = ("OMP_WAIT_POLICY", "PASSIVE")


def _limit_threads(threads: int) -> None:
    """Cap BLAS/OpenMP/torch threads at the job's ``threads`` and let waiting OpenMP threads sleep
    (:data:`WAIT_POLICY`), before torch is imported where possible."""
    count = str(max(1, int(threads)))
    os.environ.setdefault(*WAIT_POLICY)
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[variable] = count
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(int(count))
