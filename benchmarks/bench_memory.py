"""Peak memory and time of every metric, bounded (``memory_budget``) against unbounded, in one run.

Usage::

    python benchmarks/bench_memory.py [--n 204800] [--units 512] [--concepts 300] [--budgets unbounded,auto]
                                      [--metrics auprc,inverse_auprc] [--entry library|cli] [--threads 1]

Each (metric, budget) runs in a fresh subprocess, which builds the same random inputs (n × K float32
activations, half of the units ReLU-like; n × C float32 concept probabilities rounded to 3 decimals, as in
``bench_metrics.py``), scores every pair and reports its peak resident memory (``ru_maxrss``, the high-water mark
of the whole process: interpreter, inputs and scoring) and the seconds of the scoring call. ``--entry cli`` runs
``neuroneval score`` on Parquet tables written once beforehand, so reading the tables is included.

``unbounded`` is the engine before memory budgets (every unit's features at once, 2**24-element temporaries);
``auto`` the default (working memory about the size of the inputs); any other value is a budget in bytes (K/M/G
suffixes allowed). ``--baseline-src DIR`` adds a first column, ``baseline``, run with the package in DIR (e.g. the
``src`` of ``git archive <commit before budgets>``) and its defaults: the code before this change, reader included.

The table gives, per metric and budget, peak memory in GiB and as a multiple of the inputs (``4·n·(K + C)``
bytes), seconds, the ratios of the last budget to the first, and the largest difference between their scores.
Before each run the script waits until ``--min-available-gib`` of memory is available.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, os.environ.get("BENCH_MEMORY_SRC", str(SRC)))

BLOCK_ROWS = 4096
#: The column run with ``--baseline-src``.
BASELINE = "baseline"


def make_inputs(n: int, n_units: int, n_concepts: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The benchmark's activations (n, K) and concepts (n, C), float32, generated in row blocks (no float64 copy)."""
    rng = np.random.default_rng(seed)
    activations = np.empty((n, n_units), dtype=np.float32)
    concepts = np.empty((n, n_concepts), dtype=np.float32)
    for start in range(0, n, BLOCK_ROWS):
        stop = min(n, start + BLOCK_ROWS)
        block = rng.standard_normal((stop - start, n_units), dtype=np.float32)
        block[:, : n_units // 2] = np.maximum(block[:, : n_units // 2], 0.0)
        activations[start:stop] = block
        logits = rng.standard_normal((stop - start, n_concepts), dtype=np.float32) * 2.0 - 3.0
        concepts[start:stop] = np.round(1.0 / (1.0 + np.exp(-logits)), 3)
    return activations, concepts


def params_of(metric: str) -> dict[str, float]:
    from neuroneval.metrics import METRICS

    return {"alpha": 0.005} if "alpha" in METRICS[metric].params else {}


def parse_budget(text: str) -> int | str:
    from neuroneval.cli import memory_budget

    return memory_budget(text)


def peak_rss() -> int:
    """High-water resident memory of this process in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(arguments: argparse.Namespace) -> None:
    """One measurement: print a JSON line with seconds, peak RSS and where the scores were saved."""
    baseline = arguments.budget == BASELINE
    budget_options = {} if baseline else {"memory_budget": parse_budget(arguments.budget),
                                          "progress": arguments.progress}
    if arguments.entry == "library":
        from neuroneval.metrics import NeuronEvalWarning, score

        activations, concepts = make_inputs(arguments.n, arguments.units, arguments.concepts, arguments.seed)
        before = peak_rss()
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NeuronEvalWarning)
            scores = score(arguments.metric, activations, concepts, **budget_options, **params_of(arguments.metric))
        seconds = time.perf_counter() - started
    else:
        import pandas as pd

        from neuroneval.cli import main

        before = peak_rss()
        out = Path(arguments.out).with_suffix(".csv")
        command = ["score", "--metric", arguments.metric, "--activations", arguments.activations,
                   "--concepts", arguments.concepts_table, "--out", str(out)]
        for name, value in params_of(arguments.metric).items():
            command += [f"--{name}", str(value)]
        if not baseline:
            command += ["--memory-budget", arguments.budget] + ([] if arguments.progress else ["--no-progress"])
        started = time.perf_counter()
        if main(command) != 0:
            raise SystemExit(f"neuroneval score failed: {command}")
        seconds = time.perf_counter() - started
        scores = pd.read_csv(out)["score"].to_numpy().reshape(arguments.units, arguments.concepts)
    np.save(arguments.out, scores)
    print(json.dumps({"seconds": seconds, "peak_rss": peak_rss(), "rss_before": before, "scores": arguments.out}))


def available_bytes() -> int:
    """MemAvailable of /proc/meminfo in bytes (0 where unknown)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def wait_for_memory(min_gib: float, max_wait_s: float) -> None:
    waited = 0.0
    while available_bytes() < min_gib * 2**30 and waited < max_wait_s:
        print(f"  waiting: {available_bytes() / 2**30:.1f} GiB available < {min_gib} GiB", file=sys.stderr)
        time.sleep(60)
        waited += 60


def write_tables(arguments: argparse.Namespace, folder: Path) -> tuple[Path, Path]:
    """The benchmark inputs as Parquet tables, for ``--entry cli``."""
    import pandas as pd

    from neuroneval import io

    activations, concepts = make_inputs(arguments.n, arguments.units, arguments.concepts, arguments.seed)
    ids = np.arange(arguments.n, dtype=np.int64)
    frame = pd.DataFrame(activations, columns=[f"u{k}" for k in range(arguments.units)], copy=False)
    frame.insert(0, "input_id", ids)
    activation_path = io.write_activation_table(folder / "activations.parquet", frame, metadata={"model": "bench"})
    del frame, activations
    frame = pd.DataFrame(concepts, columns=[f"c{t}" for t in range(arguments.concepts)], copy=False)
    frame.insert(0, "input_id", ids)
    concept_path = io.write_concept_table(folder / "concepts.parquet", frame, metadata={"source": "bench"})
    return activation_path, concept_path


def run_one(arguments: argparse.Namespace, metric: str, budget: str, folder: Path,
            tables: tuple[Path, Path] | None) -> dict[str, float]:
    out = folder / f"{metric}.{budget}.npy"
    command = [sys.executable, __file__, "--child", "--metric", metric, "--budget", budget, "--out", str(out),
               "--n", str(arguments.n), "--units", str(arguments.units), "--concepts", str(arguments.concepts),
               "--seed", str(arguments.seed), "--entry", arguments.entry]
    if tables is not None:
        command += ["--activations", str(tables[0]), "--concepts-table", str(tables[1])]
    if arguments.progress:
        command.append("--progress")
    threads = str(arguments.threads)
    source = arguments.baseline_src if budget == BASELINE else str(SRC)
    env = {**os.environ, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads,
           "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")]), "BENCH_MEMORY_SRC": source}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=arguments.timeout)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=204_800, help="inputs (rows)")
    parser.add_argument("--units", type=int, default=512, help="units K (activation columns)")
    parser.add_argument("--concepts", type=int, default=300, help="concepts C (concept columns)")
    parser.add_argument("--budgets", default="unbounded,auto",
                        help="comma-separated memory budgets to compare; ratios are last / first")
    parser.add_argument("--metrics", default=None, help="comma-separated metrics (default: all 18)")
    parser.add_argument("--entry", choices=["library", "cli"], default="library",
                        help="score() on arrays, or 'neuroneval score' on Parquet tables (reading included)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads of each run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per run")
    parser.add_argument("--min-available-gib", type=float, default=0.0,
                        help="wait (up to 30 min) before each run until this much memory is available")
    parser.add_argument("--progress", action="store_true", help="show the engine's progress bars")
    parser.add_argument("--baseline-src", default=None,
                        help="a source tree (the 'src' folder) of an earlier version, run first as column 'baseline'")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--metric", help=argparse.SUPPRESS)
    parser.add_argument("--budget", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--activations", help=argparse.SUPPRESS)
    parser.add_argument("--concepts-table", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        child(arguments)
        return

    from neuroneval.metrics import METRICS

    metrics = arguments.metrics.split(",") if arguments.metrics else list(METRICS)
    budgets = arguments.budgets.split(",")
    for budget in budgets:
        parse_budget(budget)  # fail early on a typo
    if arguments.baseline_src:
        budgets.insert(0, BASELINE)
    n, n_units, n_concepts = arguments.n, arguments.units, arguments.concepts
    inputs = 4 * n * (n_units + n_concepts)
    print(f"n = {n:,} inputs × K = {n_units} units × C = {n_concepts} concepts; inputs (float32) "
          f"{inputs / 2**30:.2f} GiB; entry: {arguments.entry}; {arguments.threads} thread(s); "
          f"peak = process RSS high-water (interpreter + inputs + scoring)")
    header = f"{'metric':27s}" + "".join(f" | {budget[:9]:>9s}: peak GiB  ×in     s" for budget in budgets)
    header += " | peak ratio  time ratio  max|Δscore|"
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory(prefix="bench_memory.") as temporary:
        folder = Path(temporary)
        tables = write_tables(arguments, folder) if arguments.entry == "cli" else None
        for metric in metrics:
            results = []
            for budget in budgets:
                if arguments.min_available_gib:
                    wait_for_memory(arguments.min_available_gib, max_wait_s=1800)
                results.append(run_one(arguments, metric, budget, folder, tables))
            cells = []
            for result in results:
                if "error" in result:
                    cells.append(f" | {'failed: ' + result['error'][:32]:>36s}")
                else:
                    peak = result["peak_rss"]
                    cells.append(f" | {peak / 2**30:17.2f} {peak / inputs:5.2f} {result['seconds']:6.1f}")
            first, last = results[0], results[-1]
            if "error" in first or "error" in last:
                tail = " |          -           -            -"
            else:
                difference = float(np.max(np.abs(np.load(first["scores"]) - np.load(last["scores"]))))
                tail = (f" | {last['peak_rss'] / first['peak_rss']:10.2f}  {last['seconds'] / first['seconds']:10.2f}"
                        f"  {difference:11.1e}")
            print(f"{metric:27s}" + "".join(cells) + tail, flush=True)


if __name__ == "__main__":
    main()
