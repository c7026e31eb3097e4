"""Peak memory of ``neuroneval score`` writing a large tidy table under a small ``--memory-budget``.

Usage::

    python benchmarks/bench_score_cli_memory.py [--n 1000] [--units 1000] [--concepts 2000] [--budget 16M]
                                                [--metrics iou;iou,correlation] [--baseline-src DIR]

Writes an activation table (n × K float32, units named like ``layer4.block2.conv.unit_00042``) and a concept table
(n × C, binary, names like ``broden.object.concept_00042``) once, then runs ``neuroneval score`` in a fresh
subprocess for each metric list (``;``-separated) and output format (CSV, Parquet), and prints each run's peak
resident memory (``ru_maxrss`` of the child: interpreter, libraries, tables, scores and writer), the same for
``neuroneval metrics`` (the interpreter and libraries alone), the inputs' size as float32, the pairs written and
the seconds. The tidy table holds K·C rows per metric with both names in every row; written in pieces of the
budget's size, its strings never exist for all pairs at once, so the peak stays near the baseline plus the inputs
plus one float64 score matrix (8·K·C bytes) per metric.

``--baseline-src DIR`` adds runs of the package in DIR (e.g. the ``src`` of ``git archive <commit>``), single
metrics only, CSV only: the command before multi-metric pieces.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(SRC))

from neuroneval import io  # noqa: E402

GIB = 2**30


def write_tables(folder: Path, n: int, n_units: int, n_concepts: int) -> tuple[Path, Path]:
    """Random tables of the data contract, with long column names (the tidy output repeats them per pair)."""
    rng = np.random.default_rng(0)
    activations = pd.DataFrame(np.maximum(rng.standard_normal((n, n_units)), 0).astype(np.float32),
                               columns=[f"layer4.block2.conv.unit_{k:05d}" for k in range(n_units)], copy=False)
    activations.insert(0, io.ID_COLUMN, np.arange(n))
    concepts = pd.DataFrame((rng.random((n, n_concepts)) < 0.05).astype(np.float32),
                            columns=[f"broden.object.concept_{t:05d}" for t in range(n_concepts)], copy=False)
    concepts.insert(0, io.ID_COLUMN, np.arange(n))
    return (io.write_activation_table(folder / "activations.parquet", activations, metadata={"model": "bench"}),
            io.write_concept_table(folder / "concepts.parquet", concepts, metadata={"source": "labels"}))


def run_cli(source: Path, argv: list[str]) -> tuple[float, float]:
    """(peak RSS in GiB, seconds) of ``neuroneval <argv>`` run from the package in ``source``."""
    code = f"import sys; from neuroneval.cli import main; sys.exit(main({argv!r}))"
    environment = {**os.environ, "PYTHONPATH": str(source)}
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", code], env=environment)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"neuroneval {' '.join(argv)} failed")
    return usage.ru_maxrss * 1024 / GIB, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--units", type=int, default=1000)
    parser.add_argument("--concepts", type=int, default=2000)
    parser.add_argument("--budget", default="16M")
    parser.add_argument("--metrics", default="iou;iou,correlation")
    parser.add_argument("--baseline-src", type=Path)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        activation_path, concept_path = write_tables(Path(folder), arguments.n, arguments.units, arguments.concepts)
        inputs = 4 * arguments.n * (arguments.units + arguments.concepts) / GIB
        pairs = arguments.units * arguments.concepts
        idle, _ = run_cli(SRC, ["metrics"])
        print(f"n={arguments.n} K={arguments.units} C={arguments.concepts}: {pairs:,} pairs per metric; inputs "
              f"{inputs:.3f} GiB as float32; one float64 score matrix {8 * pairs / GIB:.3f} GiB; budget "
              f"{arguments.budget}; 'neuroneval metrics' alone peaks at {idle:.3f} GiB")
        print(f"{'code':9s} {'metrics':24s} {'out':8s} {'rows':>10s} {'peak GiB':>9s} {'- idle':>7s} {'file MiB':>9s} "
              f"{'s':>6s}")
        runs = [(SRC, "this", metrics, suffix) for metrics in arguments.metrics.split(";")
                for suffix in (".csv", ".parquet")]
        if arguments.baseline_src is not None:
            runs += [(arguments.baseline_src, "baseline", metrics, ".csv")
                     for metrics in arguments.metrics.split(";") if "," not in metrics]
        for source, label, metrics, suffix in runs:
            out = Path(folder) / f"scores{suffix}"
            peak, seconds = run_cli(source, ["score", "--metric", metrics, "--activations", str(activation_path),
                                             "--concepts", str(concept_path), "--out", str(out), "--memory-budget",
                                             arguments.budget, "--no-progress"])
            rows = pairs * len(metrics.split(","))
            print(f"{label:9s} {metrics:24s} {suffix:8s} {rows:10,d} {peak:9.3f} {peak - idle:7.3f} "
                  f"{out.stat().st_size / 2**20:9.1f} {seconds:6.1f}")
            out.unlink()


if __name__ == "__main__":
    main()
