"""Meta-AUPRC bootstrap intervals: checkpoint matrices against per-replicate cumulative sums, in one run.

Usage: ``python benchmarks/bench_bootstrap.py [--units 475] [--concepts 500] [--n-boot 200] [--repeats 3]``.

The scores are those of an LM setting of the embedded default (475 test units × 500 next-token concepts, one
correct concept per unit, 200 replicates: ``meta.n_boot``); the meta step draws this interval once per metric and
setting. Both paths give the same interval (printed); the ratio is the median time of the cumulative-sum path
over that of the checkpoint path.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from neuroneval.meta import auprc


def timed(scores: np.ndarray, truth: np.ndarray, n_boot: int, repeats: int) -> tuple[float, tuple[float, float]]:
    times, interval = [], (np.nan, np.nan)
    for _ in range(repeats):
        started = time.perf_counter()
        interval = auprc.bootstrap_meta_auprc(scores, truth, n_boot=n_boot, seed=0)
        times.append(time.perf_counter() - started)
    return statistics.median(times), interval


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=475)
    parser.add_argument("--concepts", type=int, default=500)
    parser.add_argument("--n-boot", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(arguments.units, arguments.concepts))
    truth = np.zeros(scores.shape, dtype=bool)
    truth[np.arange(arguments.units), rng.integers(0, arguments.concepts, arguments.units)] = True
    scores[truth] += 2.0
    fast, fast_interval = timed(scores, truth, arguments.n_boot, arguments.repeats)
    limit = auprc.CHECKPOINT_ELEMENTS
    auprc.CHECKPOINT_ELEMENTS = 0  # force the cumulative-sum path
    try:
        slow, slow_interval = timed(scores, truth, arguments.n_boot, arguments.repeats)
    finally:
        auprc.CHECKPOINT_ELEMENTS = limit
    print(f"{arguments.units} units x {arguments.concepts} concepts, {arguments.n_boot} replicates "
          f"(median of {arguments.repeats})")
    print(f"checkpoint matrices:     {fast:.3f} s  interval {fast_interval[0]:.6f} .. {fast_interval[1]:.6f}")
    print(f"cumulative sums (naive): {slow:.3f} s  interval {slow_interval[0]:.6f} .. {slow_interval[1]:.6f}")
    print(f"speed-up: {slow / fast:.1f}x; largest interval difference "
          f"{max(abs(a - b) for a, b in zip(fast_interval, slow_interval, strict=True)):.1e}")


if __name__ == "__main__":
    main()
