"""Time a from-scratch build of the embedded default, then a no-op rebuild (issue 36: `make run` ≤ 6 min, every
result ≤ 30 min, on 2 cores).

Usage: ``python benchmarks/bench_build.py [--cores 2] [--target results/table4.csv | --full] [--top 30] [--keep DIR]``.
Copies the workflow into a scratch directory, runs Snakemake there, and prints the wall time, the jobs run, the
machine's load average before and after, the CPU seconds of the whole build (Snakemake and every job, from
``getrusage``), Σ job seconds and the slowest jobs from Snakemake's ``benchmark:`` files (wall), the CPU seconds
of every job from the last line of its log (:data:`neuroneval.pipeline.runner.RESOURCE_LINE`: imports included,
unlike the benchmark files' sampled ``cpu_time``) and the rest (Snakemake itself), then the time and outcome of
a second run that should do nothing. ``--full`` builds every
target behind the fidelity report (:data:`FULL_TARGETS`: Table 4, sanity, crowd, CoSy, the explanation
benchmark, concept evaluation, the viewer); it takes over an hour on 2 cores.

On a shared machine the wall time follows the load; the CPU seconds follow the work, so compare those between
builds. On Linux with autogroups a ``nice``d process in another session still takes its share of the cores
(docs/design.md §7): the load average printed before and after tells whether the build had the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from neuroneval.pipeline.runner import RESOURCE_LINE

ROOT = Path(__file__).resolve().parents[1]
COPIED = ["Snakefile", "workflow", "profiles", "environment.yml", "params.yaml"]
#: Every target behind ``fidelity``: those the tiny end-to-end run builds (tests/test_bench_build.py checks that
#: both lists agree).
FULL_TARGETS = ["results/table4.csv", "results/table4.png", "results/worlds_report.csv", "results/ceiling.csv",
                "results/crowd_summary.csv", "sanity_results", "cosy_results", "fidelity", "explain_results",
                "concepteval_results", "viewer"]


def children_cpu_seconds() -> float:
    """User + system seconds of the children this process has waited for (``getrusage``)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_snakemake(workspace: Path, cores: int, targets: list[str]) -> tuple[float, float, str]:
    """Run the venv's Snakemake on ``targets`` in ``workspace``; (wall seconds, CPU seconds of Snakemake and every
    job it ran, its stdout + stderr)."""
    started, cpu_before = time.perf_counter(), children_cpu_seconds()
    result = subprocess.run([str(Path(sys.executable).parent / "snakemake"), "--cores", str(cores), *targets],
                            cwd=workspace, capture_output=True, text=True)
    elapsed, cpu = time.perf_counter() - started, children_cpu_seconds() - cpu_before
    if result.returncode != 0:
        raise SystemExit(f"snakemake failed:\n{result.stderr[-4000:]}")
    return elapsed, cpu, result.stdout + result.stderr


def job_resources(workspace: Path) -> pd.DataFrame:
    """One row per job log under ``workspace/logs`` whose last resource line (:data:`RESOURCE_LINE`) it finds:
    ``log`` (its path there), ``cpu_seconds`` and ``max_rss_mb``, most CPU first."""
    rows = []
    for path in sorted((workspace / "logs").rglob("*.log")):
        records = [line[len(RESOURCE_LINE):] for line in path.read_text(errors="replace").splitlines()
                   if line.startswith(RESOURCE_LINE)]
        if records:
            record = json.loads(records[-1])
            rows.append({"log": str(path.relative_to(workspace / "logs")), "cpu_seconds": float(record["cpu_seconds"]),
                         "max_rss_mb": float(record["max_rss_mb"])})
    frame = pd.DataFrame(rows, columns=["log", "cpu_seconds", "max_rss_mb"])
    return frame.sort_values("cpu_seconds", ascending=False, kind="stable").reset_index(drop=True)


def cpu_summary(jobs: pd.DataFrame, build_cpu: float, *, top: int) -> str:
    """Σ CPU seconds of the jobs' logs, the rest of the build's CPU (Snakemake itself, jobs without a log line),
    then the ``top`` jobs by CPU (all when ``top`` ≤ 0)."""
    total = jobs["cpu_seconds"].sum()
    shown = jobs if top <= 0 else jobs.head(top)
    lines = [f"CPU: {build_cpu:.1f} s for the whole build, {total:.1f} s in {len(jobs)} job logs, "
             f"{build_cpu - total:.1f} s the rest (Snakemake itself)",
             shown.to_string(index=False, float_format=lambda value: f"{value:.1f}")]
    if len(shown) < len(jobs):
        lines.append(f"… {len(jobs) - len(shown)} lighter jobs, Σ {jobs['cpu_seconds'].iloc[len(shown):].sum():.1f} "
                     "CPU s")
    return "\n".join(lines)


def rule_times(workspace: Path) -> pd.DataFrame:
    """One row per ``logs/benchmarks/**.tsv`` of ``workspace``: ``job`` (its path there), ``seconds`` (wall) and
    ``cpu_seconds`` (Snakemake's ``cpu_time``), slowest first. Jobs of rules without ``benchmark:`` are absent."""
    rows = []
    for path in sorted((workspace / "logs" / "benchmarks").rglob("*.tsv")):
        record = pd.read_csv(path, sep="\t").iloc[0]
        rows.append({"job": str(path.relative_to(workspace / "logs" / "benchmarks")), "seconds": float(record["s"]),
                     "cpu_seconds": float(record.get("cpu_time", float("nan")))})
    frame = pd.DataFrame(rows, columns=["job", "seconds", "cpu_seconds"])
    return frame.sort_values("seconds", ascending=False, kind="stable").reset_index(drop=True)


def jobs_done(log: str) -> int | None:
    """Jobs Snakemake ran, from its last "N of M steps (…) done" line (None when it printed none)."""
    counts = re.findall(r"(\d+) of \d+ steps \([^)]*\) done", log)
    return int(counts[-1]) if counts else None


def summary(times: pd.DataFrame, *, top: int) -> str:
    """Σ wall and CPU seconds of the benchmarked jobs, then the ``top`` slowest (all when ``top`` ≤ 0)."""
    shown = times if top <= 0 else times.head(top)
    lines = [f"benchmarked jobs: {len(times)}, Σ job seconds {times['seconds'].sum():.1f} wall, "
             f"{times['cpu_seconds'].sum():.1f} CPU (Snakemake's sampled cpu_time)",
             shown.to_string(index=False, float_format=lambda value: f"{value:.1f}")]
    if len(shown) < len(times):
        lines.append(f"… {len(times) - len(shown)} faster jobs, Σ {times['seconds'].iloc[len(shown):].sum():.1f} s")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    targets = parser.add_mutually_exclusive_group()
    targets.add_argument("--target", default="all", help="one Snakemake target (default: all)")
    targets.add_argument("--full", action="store_true", help="every target behind fidelity (FULL_TARGETS)")
    parser.add_argument("--top", type=int, default=30, help="slowest jobs listed (0: all)")
    parser.add_argument("--keep", type=Path, help="build here instead of a temporary directory (kept)")
    arguments = parser.parse_args()
    build = FULL_TARGETS if arguments.full else [arguments.target]
    workspace = arguments.keep or Path(tempfile.mkdtemp(prefix="neuroneval-build-"))
    workspace.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, workspace / name, dirs_exist_ok=True)
        else:
            shutil.copy2(source, workspace / name)
    load_before = os.getloadavg()[0]
    first, first_cpu, log = run_snakemake(workspace, arguments.cores, build)
    load_after = os.getloadavg()[0]
    second, _, again = run_snakemake(workspace, arguments.cores, build)
    name = "the full build (every target behind fidelity)" if arguments.full else repr(arguments.target)
    print(f"from-scratch build of {name} on {arguments.cores} cores: {first:.1f} s, {jobs_done(log)} jobs "
          f"(1-minute load average {load_before:.1f} before, {load_after:.1f} after)")
    print(summary(rule_times(workspace), top=arguments.top))
    print(cpu_summary(job_resources(workspace), first_cpu, top=arguments.top))
    nothing = "Nothing to be done" in again
    print(f"second run: {second:.1f} s, {'nothing to be done' if nothing else 'RAN JOBS'}")
    if not arguments.keep:
        shutil.rmtree(workspace)


if __name__ == "__main__":
    main()
