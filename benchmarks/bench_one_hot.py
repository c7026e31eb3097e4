"""Next-token-style one-hot concepts: the engine's sparse path and a shared FeatureCache against dense GEMMs.

Usage: ``python benchmarks/bench_one_hot.py [--n 51200] [--units 300] [--concepts 300] [--seed 0]``.

Data mimic the LM settings of paper 000 (App. F, GPT-2 next-token units): every input's next token is one of
``concepts`` Zipf-distributed tokens (20 % of inputs are other tokens), and each unit is a noisy softmax-like
probability of one token, stored as float32. For each of the 18 metrics (α = 0.01, λ = 1) it prints

* dense: ``score`` with the sparse path switched off (every product a dense float64 GEMM, as before);
* sparse: ``score`` as shipped (one-hot chunks multiplied as CSR matrices: K·nnz instead of K·n·C);
* cached: the same, all 18 metrics in sequence sharing one ``FeatureCache`` (ranks, standardized rows and
  top-α binarizations prepared once, as the meta-evaluation and the experimental test do);

with the ratios dense/sparse and dense/cached and the largest absolute difference between the paths.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from neuroneval.metrics import METRICS, FeatureCache, NeuronEvalWarning, context, score


def make_data(n: int, n_units: int, n_concepts: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, n_concepts + 1)
    tokens = rng.choice(n_concepts, size=n, p=weights / weights.sum())
    known = rng.random(n) < 0.8
    concepts = np.zeros((n, n_concepts), dtype=np.float32)
    concepts[np.flatnonzero(known), tokens[known]] = 1.0
    logits = 2.0 * concepts[:, rng.permutation(n_concepts)[:n_units]] + rng.standard_normal((n, n_units))
    activations = (np.exp(logits - 4.0) / (1.0 + np.exp(logits - 4.0))).astype(np.float32)
    return activations, concepts


def params_of(metric: str) -> dict[str, float]:
    params: dict[str, float] = {}
    if "alpha" in METRICS[metric].params:
        params["alpha"] = 0.01
    if "lam" in METRICS[metric].params:
        params["lam"] = 1.0
    return params


def timed(function, *args, **kwargs) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=51_200)
    parser.add_argument("--units", type=int, default=300)
    parser.add_argument("--concepts", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    warnings.simplefilter("ignore", NeuronEvalWarning)
    activations, concepts = make_data(arguments.n, arguments.units, arguments.concepts, arguments.seed)
    density = np.count_nonzero(concepts) / concepts.size
    print(f"n = {arguments.n:,}, K = {arguments.units}, C = {arguments.concepts}, concept density {density:.4%} "
          f"(sparse below {context.SPARSE_CONCEPTS:.4f})")
    print(f"{'metric':28s} {'dense s':>8s} {'sparse s':>9s} {'cached s':>9s} {'dense/sparse':>13s} "
          f"{'dense/cached':>13s} {'max |diff|':>11s}")
    cache = FeatureCache()
    totals = np.zeros(3)
    for metric in METRICS:
        params = params_of(metric)
        threshold = context.SPARSE_CONCEPTS
        context.SPARSE_CONCEPTS = 0.0
        dense_s, dense = timed(score, metric, activations, concepts, **params)
        context.SPARSE_CONCEPTS = threshold
        sparse_s, sparse = timed(score, metric, activations, concepts, **params)
        cached_s, cached = timed(score, metric, activations, concepts, cache=cache, **params)
        difference = max(float(np.max(np.abs(sparse - dense))), float(np.max(np.abs(cached - dense))))
        totals += [dense_s, sparse_s, cached_s]
        print(f"{metric:28s} {dense_s:8.2f} {sparse_s:9.2f} {cached_s:9.2f} {dense_s / sparse_s:12.1f}x "
              f"{dense_s / cached_s:12.1f}x {difference:11.1e}")
    print(f"{'all 18':28s} {totals[0]:8.2f} {totals[1]:9.2f} {totals[2]:9.2f} {totals[0] / totals[1]:12.1f}x "
          f"{totals[0] / totals[2]:12.1f}x")


if __name__ == "__main__":
    main()
