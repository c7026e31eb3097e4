"""Speed of the metric engine against the per-pair reference and against one float32 GEMM.

Usage: ``python benchmarks/bench_metrics.py [--n 10000] [--units 500] [--concepts 500] [--skip-imagenet]``.

For each of the 18 metrics, on random data of n inputs × K units × C concepts (continuous activations with
a block of ReLU zeros, continuous concept probabilities with ties from rounding to 3 decimals):

* engine: seconds for ``score`` on all K·C pairs (one run, numpy backend);
* reference: ``neuroneval.metrics.reference`` timed on a random subset of pairs and extrapolated to K·C;
* ratio reference / engine, and engine / GEMM where GEMM is one float32 (n, K)ᵀ(n, C) product, the floor.

Then the ImageNet setting of paper 000 (n = 50,000, K = C = 1,400) is estimated per metric by timing all
1,400 units against 30 and 90 concepts and extrapolating linearly in the number of concepts (the engine is a
fixed unit-side cost plus a cost linear in C). Binary concept tables (labels) take closed forms for AUC and
AUPRC; their times are printed separately.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from neuroneval.metrics import METRICS, NeuronEvalWarning, score
from neuroneval.metrics import reference as ref

GEMM_TYPE = ("recall", "precision", "f1", "iou", "accuracy", "balanced_accuracy", "inverse_balanced_accuracy",
             "correlation", "cosine", "wpmi", "mad")


def make_data(n: int, n_units: int, n_concepts: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    activations = rng.standard_normal((n, n_units)).astype(np.float32)
    activations[:, : n_units // 2] = np.maximum(activations[:, : n_units // 2], 0.0)
    logits = rng.standard_normal((n, n_concepts)) * 2.0 - 3.0
    concepts = np.round(1.0 / (1.0 + np.exp(-logits)), 3).astype(np.float32)
    return activations, concepts


def params_of(metric: str) -> dict[str, float]:
    params = {"alpha": 0.005} if "alpha" in METRICS[metric].params else {}
    if metric == "wpmi":
        params["lam"] = 1.0
    return params


def timed(function, repeats: int = 1) -> float:
    best = np.inf
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    return best


def reference_seconds_per_pair(metric: str, activations: np.ndarray, concepts: np.ndarray,
                               budget_s: float, rng: np.random.Generator) -> tuple[float, int]:
    """Mean seconds of the per-pair reference on random pairs (at least 3, until ``budget_s`` is spent)."""
    params = params_of(metric)
    n_units, n_concepts = activations.shape[1], concepts.shape[1]
    a64, c64 = activations.astype(np.float64), concepts.astype(np.float64)
    spent, count = 0.0, 0
    while count < 3 or (spent < budget_s and count < 200):
        k, t = int(rng.integers(n_units)), int(rng.integers(n_concepts))
        started = time.perf_counter()
        if metric in ("correlation_tr", "spearman_tr"):
            sample = ref.top_and_random_sample(a64[:, k], rng)
            pair = ref.correlation_on if metric == "correlation_tr" else ref.spearman_on
            pair(a64[:, k], c64[:, t], sample)
        else:
            ref.PER_PAIR[metric](a64[:, k], c64[:, t], **params)
        spent += time.perf_counter() - started
        count += 1
    return spent / count, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--units", type=int, default=500)
    parser.add_argument("--concepts", type=int, default=500)
    parser.add_argument("--reference-budget", type=float, default=1.5, help="seconds of reference per metric")
    parser.add_argument("--skip-imagenet", action="store_true")
    arguments = parser.parse_args()
    warnings.simplefilter("ignore", NeuronEvalWarning)

    n, n_units, n_concepts = arguments.n, arguments.units, arguments.concepts
    activations, concepts = make_data(n, n_units, n_concepts, seed=0)
    gemm = timed(lambda: activations.T @ concepts, repeats=5)
    print(f"# neuroneval metric engine benchmark: n={n}, K={n_units}, C={n_concepts}, "
          f"cpus={os.cpu_count()}, numpy backend")
    print(f"# one float32 GEMM (n,K)^T(n,C): {gemm:.4f} s")
    print(f"{'metric':28s} {'engine_s':>9s} {'ref_s/pair':>11s} {'ref_pairs':>9s} {'ref_total_s':>12s} "
          f"{'ratio':>9s} {'x_gemm':>8s}  goal")
    rng = np.random.default_rng(1)
    for metric in METRICS:
        engine = timed(lambda metric=metric: score(metric, activations, concepts, **params_of(metric)))
        per_pair, count = reference_seconds_per_pair(metric, activations, concepts, arguments.reference_budget, rng)
        total = per_pair * n_units * n_concepts
        ratio = total / engine
        goals = ["≥100x " + ("ok" if ratio >= 100 else "MISSED")]
        if metric in GEMM_TYPE:
            goals.append("≤3 GEMM " + ("ok" if engine <= 3 * gemm else "MISSED"))
        if metric in ("auprc", "inverse_auprc"):
            goals.append("<60 s " + ("ok" if engine < 60 else "MISSED"))
        print(f"{metric:28s} {engine:9.3f} {per_pair:11.2e} {count:9d} {total:12.1f} {ratio:9.0f} "
              f"{engine / gemm:8.1f}  {', '.join(goals)}")

    labels = (concepts >= 0.5).astype(np.float32)
    for metric in ("auc", "auprc"):
        engine = timed(lambda metric=metric: score(metric, activations, labels, alpha=0.005))
        print(f"# binary concept table, {metric} (closed form): {engine:.3f} s = {engine / gemm:.1f} GEMM")

    if arguments.skip_imagenet:
        return
    imagenet_n, imagenet_k = 50_000, 1_400
    small_c, large_c = 30, 90
    big_activations, big_concepts = make_data(imagenet_n, imagenet_k, large_c, seed=2)
    gemm_big = timed(lambda: big_activations.T @ big_activations, repeats=1)
    print(f"\n# ImageNet setting estimate: n={imagenet_n}, K=C={imagenet_k}; one float32 GEMM of that shape: "
          f"{gemm_big:.2f} s (measured)")
    print(f"# estimate = fixed + {imagenet_k}·slope from all units against C={small_c} and C={large_c} concepts")
    print(f"{'metric':28s} {'t(C=' + str(small_c) + ')_s':>10s} {'t(C=' + str(large_c) + ')_s':>11s} "
          f"{'est_total_s':>12s} {'x_gemm':>8s}")
    for metric in METRICS:
        small = timed(lambda m=metric: score(m, big_activations, big_concepts[:, :small_c], **params_of(m)))
        large = timed(lambda m=metric: score(m, big_activations, big_concepts, **params_of(m)))
        slope = max(large - small, 0.0) / (large_c - small_c)
        fixed = max(small - slope * small_c, 0.0)
        estimate = fixed + slope * imagenet_k
        print(f"{metric:28s} {small:10.2f} {large:11.2f} {estimate:12.1f} {estimate / gemm_big:8.1f}")


if __name__ == "__main__":
    main()
