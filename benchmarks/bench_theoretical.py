"""The theoretical Missing/Extra Labels test (paper 000, App. C) at paper size, timed and checked.

Usage: ``python benchmarks/bench_theoretical.py [--n 500000] [--draws 1000] [--ties reference] [--metrics a,b]
[--device cuda] [--workers 16] [--together]``.

Runs :func:`neuroneval.sanity.theoretical.theoretical_test` on ideal binary units (a = c) at the five
activation frequencies γ of the paper, in one process, and prints

* the wall time of the whole run and per metric (each metric is run on its own so its time is its own);
* in reference tie mode, the comparison with the printed Tables C.1–C.4 (:mod:`neuroneval.published`; the
  authors' notebook outputs of :mod:`neuroneval.sanity.reference_data` beside them, via
  :func:`neuroneval.sanity.theoretical_reference.compare_with_reference`): rows compared, rows within ±0.005 Δs and
  ±2 pp Decrease Acc (deterministic rows), and the largest |Δs difference| with its row; a row outside tolerance
  shows the notebook's value and why the printed one differs (docs/fidelity.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from neuroneval.metrics import METRICS
from neuroneval.sanity.theoretical import theoretical_test
from neuroneval.sanity.theoretical_reference import compare_with_reference, seed_spread_with_reference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=500_000, help="inputs per ideal unit (paper: 500,000)")
    parser.add_argument("--draws", type=int, default=1000, help="c+/c- draws per γ and test (paper: 1,000)")
    parser.add_argument("--ties", choices=["reference", "average"], default="reference")
    parser.add_argument("--metrics", default=",".join(METRICS), help="comma-separated metric names")
    parser.add_argument("--device", default=None, help="torch device of the metric engine (e.g. cuda); default numpy")
    parser.add_argument("--workers", type=int, default=1, help="processes scoring chunks of draws in parallel")
    parser.add_argument("--seeds", default="0", help="comma-separated seeds; with several, the published random "
                        "(stochastic/boundary) rows are checked against the spread of our seeds")
    parser.add_argument("--together", action="store_true",
                        help="one run for all metrics (shared perturbations, as in the workflow)")
    parser.add_argument("--out", type=Path, help="write the results table here (CSV)")
    args = parser.parse_args()

    metrics = args.metrics.split(",")
    print(f"theoretical test: n = {args.n:,}, draws = {args.draws:,}, ties = {args.ties}, {len(metrics)} metrics, "
          f"device = {args.device or 'numpy (CPU)'}, workers = {args.workers}")
    tables, started = [], time.perf_counter()
    seeds = [int(seed) for seed in args.seeds.split(",")]
    for seed in seeds:
        for group in ([metrics] if args.together else [[metric] for metric in metrics]):
            began = time.perf_counter()
            tables.append(theoretical_test(group, n=args.n, draws=args.draws, ties=args.ties, seed=seed,
                                           progress=args.together, device=args.device, workers=args.workers))
            label = ",".join(group) if len(group) == 1 else "all metrics"
            print(f"  {label:28s} seed {seed:3d} {time.perf_counter() - began:8.1f} s", flush=True)
    total = time.perf_counter() - started
    results = pd.concat(tables, ignore_index=True)
    print(f"total {total:.1f} s ({total / 60:.1f} min)")
    if args.out:
        results.to_csv(args.out, index=False)
    if args.ties != "reference":
        return
    if len(seeds) > 1:
        spread = seed_spread_with_reference(results)
        print(f"random rows (stochastic/boundary) with the published value inside our {len(seeds)} seeds' range: "
              f"Δs {int(spread['delta_within'].sum())}/{len(spread)}, "
              f"Decrease Acc {int(spread['accuracy_within'].sum())}/{len(spread)}")
        print(spread.to_string())
        results = results[results["seed"] == seeds[0]]
    comparison = compare_with_reference(results)
    deterministic = comparison[comparison["kind"] == "deterministic"]
    judged = comparison[comparison["delta_ok"].notna()]
    worst = comparison.loc[comparison["delta_diff"].abs().idxmax()]
    print(f"published rows matched: {len(comparison)}; Δs within ±0.005: {int(judged['delta_ok'].sum())}/"
          f"{len(judged)}; deterministic rows within ±0.005 Δs and ±2 pp: {int(deterministic['ok'].sum())}/"
          f"{len(deterministic)}")
    print(f"largest |Δs difference| {abs(worst['delta_diff']):.4f} ({worst['metric']}, γ = {worst['gamma']}, "
          f"{worst['test']}, kind {worst['kind']})")
    failing = comparison[(comparison["delta_ok"] == False) | (comparison["ok"] == False)]  # noqa: E712
    if len(failing):
        print("rows outside tolerance:")
        print(failing[["metric", "gamma", "test", "kind", "delta_diff", "accuracy_diff", "delta_z",
                       "notebook_mean_delta", "printed_vs_notebook"]].to_string())


if __name__ == "__main__":
    main()
