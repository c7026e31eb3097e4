"""benchmarks/bench_build.py: the per-job table and sums it prints, and the targets of ``--full``."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

from tests.workflow.conftest import TINY_TARGETS

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("bench_build", ROOT / "benchmarks" / "bench_build.py")
bench_build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_build)

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def write_benchmark(path: Path, seconds: float, cpu_seconds: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{seconds}\t0:00:01\t1.0\t1.0\t1.0\t1.0\t0.0\t0.0\t50.0\t{cpu_seconds}\n")


def test_full_build_targets_everything_the_tiny_run_builds() -> None:
    assert bench_build.FULL_TARGETS == TINY_TARGETS and "fidelity" in bench_build.FULL_TARGETS


def test_rule_times_reads_every_benchmark_file_slowest_first(tmp_path: Path) -> None:
    jobs = {"train_clip.tsv": (300.5, 280.25), "meta/lm.tsv": (90.0, 85.5), "worlds.tsv": (12.0, 4.0)}
    for name, (seconds, cpu_seconds) in jobs.items():
        write_benchmark(tmp_path / "logs" / "benchmarks" / name, seconds, cpu_seconds)
    times = bench_build.rule_times(tmp_path)
    expected = pd.DataFrame([{"job": name, "seconds": s, "cpu_seconds": c} for name, (s, c) in jobs.items()])
    pd.testing.assert_frame_equal(times, expected.sort_values("seconds", ascending=False, ignore_index=True))
    text = bench_build.summary(times, top=2)
    assert "benchmarked jobs: 3, Σ job seconds 402.5 wall, 369.8 CPU (Snakemake's sampled cpu_time)" in text
    assert "train_clip.tsv" in text and "meta/lm.tsv" in text and "… 1 faster jobs, Σ 12.0 s" in text
    assert "worlds.tsv" in bench_build.summary(times, top=0)


@pytest.mark.parametrize(("log", "count"), [("1 of 52 steps (2%) done\n52 of 52 steps (100%) done\n", 52),
                                            ("Nothing to be done (all requested files are present).", None)])
def test_jobs_done_reads_snakemakes_last_progress_line(log: str, count: int | None) -> None:
    assert bench_build.jobs_done(log) == count


def test_job_resources_reads_the_last_resource_line_of_every_job_log(tmp_path: Path) -> None:
    """The line the runner writes (same prefix), the last one when a log holds two, logs without one left out."""
    from neuroneval.pipeline.runner import RESOURCE_LINE

    logs = tmp_path / "logs"
    (logs / "models").mkdir(parents=True)
    (logs / "models" / "lm.log").write_text(f"train\n{RESOURCE_LINE}" '{"cpu_seconds": 1.0, "max_rss_mb": 5.0}\n'
                                            f"again\n{RESOURCE_LINE}" '{"cpu_seconds": 120.5, "max_rss_mb": 900.0}\n')
    (logs / "truth.log").write_text(f"{RESOURCE_LINE}" '{"cpu_seconds": 2.25, "max_rss_mb": 150.0}\n')
    (logs / "shell_rule.log").write_text("no resource line here\n")
    jobs = bench_build.job_resources(tmp_path)
    assert jobs.to_dict("records") == [{"log": "models/lm.log", "cpu_seconds": 120.5, "max_rss_mb": 900.0},
                                       {"log": "truth.log", "cpu_seconds": 2.25, "max_rss_mb": 150.0}]
    text = bench_build.cpu_summary(jobs, 130.0, top=1)
    assert "CPU: 130.0 s for the whole build, 122.8 s in 2 job logs, 7.2 s the rest (Snakemake itself)" in text
    assert "models/lm.log" in text and "… 1 lighter jobs, Σ 2.2 CPU s" in text


def test_children_cpu_seconds_counts_a_waited_child(tmp_path: Path) -> None:
    """getrusage's children total grows by the CPU a finished child used (measured by the child itself with
    os.times, a different system call), within the clock's resolution."""
    import json
    import subprocess
    import sys

    burn = ("import json, os, time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass\n"
            "t = os.times()\nprint(json.dumps(t.user + t.system))")
    before = bench_build.children_cpu_seconds()
    child = float(json.loads(subprocess.run([sys.executable, "-c", burn], capture_output=True, text=True,
                                            check=True).stdout))
    grown = bench_build.children_cpu_seconds() - before
    assert child >= 0.4 and child - 0.02 <= grown <= child + 0.1
