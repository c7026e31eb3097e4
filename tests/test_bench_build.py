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
    assert "benchmarked jobs: 3, Σ job seconds 402.5 wall, 369.8 CPU" in text
    assert "train_clip.tsv" in text and "meta/lm.tsv" in text and "… 1 faster jobs, Σ 12.0 s" in text
    assert "worlds.tsv" in bench_build.summary(times, top=0)


@pytest.mark.parametrize(("log", "count"), [("1 of 52 steps (2%) done\n52 of 52 steps (100%) done\n", 52),
                                            ("Nothing to be done (all requested files are present).", None)])
def test_jobs_done_reads_snakemakes_last_progress_line(log: str, count: int | None) -> None:
    assert bench_build.jobs_done(log) == count
