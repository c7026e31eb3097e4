"""Every metric, the meta-evaluation's α/λ grid and one whole Table-4 setting at paper scale (issue 19, item 3).

Usage::

    python benchmarks/bench_paper_scale.py [--n 50000] [--k 1400] [--c 1400] [--device cpu|cuda]
                                           [--concepts onehot|probability|both] [--metrics auc,inverse_auprc]
                                           [--skip-table4] [--csv out.csv]

``--concepts`` picks the concept table (default ``both``: the per-metric table is printed for each kind, then one
summary of every metric's ``x_gemm`` per kind, all from one run):

* ``onehot``: ImageNet-like labels (below);
* ``probability``: ``bench_metrics.py``'s soft concepts, sigmoid of N(−3, 2²) rounded to 3 decimals, so that
  ≈ 7 % of the values are ≥ 0.5 (``B(c)`` has ≈ 3,400 positives at n = 50,000), with the same activations'
  generator (half ReLU, no unit tied to a concept).

One-hot data (seeded): ImageNet-like labels. The first ``min(C, 1000)`` concepts are one-hot classes (every input
belongs to exactly one, each class has 0.1 % of the inputs, 50 at n = 50,000); further concepts are independent
binary attributes with the same rarity (0.1 % positives each). Activations are float32: half of the units are
ReLU-like (ties at 0), and unit k < C is tied to concept k (``a = noise + 2·c_k`` before the ReLU), the
others are pure noise, as in a layer where some units detect a class.

Per metric (α = 0.005, λ = 1; the library's defaults otherwise):

* ``time_s``: one ``score`` call on all K·C pairs, after an untimed call on a 500 × 4 × 4 slice (lazy imports, and
  the compiled kernels' load from numba's cache, or their first compilation, are not timed), with no memory tracer
  running: the numpy backend's peak comes from a second, untimed call under ``tracemalloc``, whose bookkeeping of
  every allocation slowed the metrics that allocate many small arrays (Spearman T&R 6.7 s → 11.7 s at the
  default shape; the tables before 2026-11-28 were timed under it);
* ``x_gemm``: ``time_s`` over one float32 GEMM ``(n×K)ᵀ(n×C)`` of the same inputs, timed right before the metric
  (the ratio survives the load of a shared machine far better than seconds do);
* ``peak_gib`` / ``x_input``: peak memory of the call beyond what was allocated before it, over the inputs'
  bytes ``4·n·(K + C)``. numpy backend: ``tracemalloc`` (numpy reports its buffers to it; scipy's sparse
  products allocate through numpy too). torch backend on CPU: the resident-set high-water mark sampled every
  5 ms minus the RSS before the call. CUDA: ``torch.cuda.max_memory_allocated`` (device memory).
* ``lib_s/pair`` and ``x_lib``: the per-pair speed of the usual library function (sklearn's
  ``roc_auc_score``/``average_precision_score``/``recall_score``/…, scipy's ``spearmanr``/``pearsonr``, a
  numpy dot for cosine) on a random sample of pairs, the unit's top-α binarization computed beforehand (not
  timed), *extrapolated* to K·C pairs; ``x_lib`` = extrapolated library seconds / ``time_s``. WPMI and MAD have
  no library function: the repo's per-pair reference stands in (marked ``ref``). ``lib_err``: largest
  |library − engine| on the sampled pairs (a spot check that they compute the same thing).

Metrics named in ``--estimate`` (too slow to run whole, e.g. before a fix) are timed with all units against
C/28 and C/14 concepts and extrapolated as fixed + slope·C; their rows are marked ``est`` (peak: the larger
slice's).

Then the meta-evaluation at this shape (``--skip-table4`` skips it), with ``params.yaml``'s grids (12 α; λ in
0, 0.01, …, 1 for WPMI), 5 % validation units and every unit's own concept as truth:

* ``grid_s``: the α/λ grid of :func:`neuroneval.meta.search._scores_on_grid` on the validation units;
* ``setting_s``: :func:`neuroneval.meta.search.evaluate_metric` (its own grid, test scoring, meta-AUPRC) with
  the shared FeatureCache a Table-4 setting uses; the sum over the 18 metrics is one whole Table-4 setting
  (target ≤ 10 min). ``grid_s`` is measured separately (fresh cache) and is part of ``setting_s``.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import platform
import sys
import threading
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_metrics import make_data as bench_metrics_data
from bench_metrics import params_of, timed

from neuroneval.metrics import METRICS, FeatureCache, NeuronEvalWarning, score
from neuroneval.metrics import reference as ref

CLASS_SHARE = 0.001
#: The concept tables of ``--concepts`` (see the module docstring).
CONCEPT_KINDS = ("onehot", "probability")
ALPHA_GRID = (0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)
LAM_GRID = tuple(round(0.01 * step, 2) for step in range(101))
BLOCK_ROWS = 4096


def make_data(n: int, n_units: int, n_concepts: int, seed: int, kind: str = "onehot") -> tuple[np.ndarray, np.ndarray]:
    """Activations (n, K) and 0/1 concepts (n, C), float32, built in row blocks (see the module docstring).

    ``kind="probability"``: the concepts are instead ``bench_metrics.py``'s probabilities (sigmoid of N(−3, 2²)
    rounded to 3 decimals; B(c) has ≈ 7 % positives), the data behind the engine's earlier ImageNet-shape estimates.
    """
    rng = np.random.default_rng(seed)
    if kind == "probability":
        activations, concepts = bench_metrics_data(n, n_units, n_concepts, seed)
        return activations, concepts
    n_classes = max(1, min(n_concepts, round(1 / CLASS_SHARE)))
    concepts = np.zeros((n, n_concepts), dtype=np.float32)
    classes = rng.permutation(np.arange(n) % n_classes)
    concepts[np.arange(n), classes] = 1.0
    per_attribute = max(1, round(n * CLASS_SHARE))
    for column in range(n_classes, n_concepts):
        concepts[rng.choice(n, size=per_attribute, replace=False), column] = 1.0
    activations = np.empty((n, n_units), dtype=np.float32)
    tied = min(n_units, n_concepts)
    for start in range(0, n, BLOCK_ROWS):
        stop = min(n, start + BLOCK_ROWS)
        block = rng.standard_normal((stop - start, n_units), dtype=np.float32)
        block[:, :tied] += 2.0 * concepts[start:stop, :tied]
        block[:, ::2] = np.maximum(block[:, ::2], 0.0)
        activations[start:stop] = block
    return activations, concepts


# ----------------------------------------------------------------------------------------------- memory probes

class RssSampler:
    """Peak resident memory of the process during a ``with`` block, sampled every 5 ms from /proc."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()

    @staticmethod
    def rss() -> int:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _watch(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.rss())
            time.sleep(0.005)

    def __enter__(self) -> RssSampler:
        self.start = self.rss()
        self.peak = self.start
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.rss())


def measure(function: Callable[[], Any], device: str | None) -> tuple[float, int, str]:
    """(seconds, peak bytes beyond the start, how the peak was measured) of one call (numpy: two calls, see the
    module docstring)."""
    if device is not None and device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        started = time.perf_counter()
        function()
        torch.cuda.synchronize()
        return time.perf_counter() - started, torch.cuda.max_memory_allocated() - before, "cuda"
    if device is None:  # timed untraced; the peak from a second call (tracemalloc slows allocations)
        started = time.perf_counter()
        function()
        seconds = time.perf_counter() - started
        tracemalloc.start()
        function()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return seconds, peak, "tracemalloc"
    with RssSampler() as sampler:
        started = time.perf_counter()
        function()
        seconds = time.perf_counter() - started
    return seconds, sampler.peak - sampler.start, "rss"


def gemm_seconds(activations: np.ndarray, concepts: np.ndarray, device: str | None) -> float:
    """One float32 (n×K)ᵀ(n×C) product on the benchmark's device (best of 2)."""
    if device is None:
        return timed(lambda: activations.T @ concepts, repeats=2)
    import torch

    a = torch.from_numpy(activations).to(device)
    c = torch.from_numpy(concepts).to(device)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)

    def run() -> None:
        a.T @ c
        sync()

    run()
    return timed(run, repeats=2)


# ------------------------------------------------------------------------------------------ library per pair

def _library_pair(metric: str) -> tuple[Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], float], str]:
    """f(a, c, B(a), sample) → value with the library function the metric is usually computed with."""
    from scipy import stats
    from sklearn import metrics as skm

    def bin_c(c: np.ndarray) -> np.ndarray:
        return c >= 0.5

    table: dict[str, tuple[Callable[..., float], str]] = {
        "recall": (lambda a, c, b, s: skm.recall_score(b, bin_c(c), zero_division=0), "sklearn recall_score"),
        "precision": (lambda a, c, b, s: skm.precision_score(b, bin_c(c), zero_division=0),
                      "sklearn precision_score"),
        "f1": (lambda a, c, b, s: skm.f1_score(b, bin_c(c), zero_division=0), "sklearn f1_score"),
        "iou": (lambda a, c, b, s: skm.jaccard_score(b, bin_c(c), zero_division=0), "sklearn jaccard_score"),
        "accuracy": (lambda a, c, b, s: skm.accuracy_score(b, bin_c(c)), "sklearn accuracy_score"),
        "balanced_accuracy": (lambda a, c, b, s: skm.balanced_accuracy_score(b, bin_c(c)),
                              "sklearn balanced_accuracy_score"),
        "inverse_balanced_accuracy": (lambda a, c, b, s: skm.balanced_accuracy_score(bin_c(c), b),
                                      "sklearn balanced_accuracy_score"),
        "auc": (lambda a, c, b, s: skm.roc_auc_score(b, c), "sklearn roc_auc_score"),
        "inverse_auc": (lambda a, c, b, s: skm.roc_auc_score(bin_c(c), a), "sklearn roc_auc_score"),
        "auprc": (lambda a, c, b, s: skm.average_precision_score(b, c), "sklearn average_precision_score"),
        "inverse_auprc": (lambda a, c, b, s: skm.average_precision_score(bin_c(c), a),
                          "sklearn average_precision_score"),
        "correlation": (lambda a, c, b, s: stats.pearsonr(a, c)[0], "scipy pearsonr"),
        "spearman": (lambda a, c, b, s: stats.spearmanr(a, c)[0], "scipy spearmanr"),
        "correlation_tr": (lambda a, c, b, s: stats.pearsonr(a[s], c[s])[0], "scipy pearsonr on the sample"),
        "spearman_tr": (lambda a, c, b, s: stats.spearmanr(a[s], c[s])[0], "scipy spearmanr on the sample"),
        "cosine": (lambda a, c, b, s: float(a @ c / (np.linalg.norm(a) * np.linalg.norm(c))), "numpy dot/norm"),
        "wpmi": (lambda a, c, b, s: ref.wpmi(a, c, alpha=0.005, lam=1.0), "ref (no library)"),
        "mad": (lambda a, c, b, s: ref.mad(a, c), "ref (no library)"),
    }
    return table[metric]


def library_per_pair(metric: str, activations: np.ndarray, concepts: np.ndarray, engine: np.ndarray | None,
                     budget_s: float, rng: np.random.Generator) -> tuple[float, str, float]:
    """Mean library seconds per pair on random pairs whose concept has a positive, and max |library − engine|."""
    function, label = _library_pair(metric)
    n_units, n_concepts = activations.shape[1], concepts.shape[1]
    spent, count, error = 0.0, 0, 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while count < 3 or (spent < budget_s and count < 100):
            k, t = int(rng.integers(n_units)), int(rng.integers(n_concepts))
            a = activations[:, k].astype(np.float64)
            c = concepts[:, t].astype(np.float64)
            binary = ref.top_alpha(a, 0.005)
            sample = ref.top_and_random_sample(a, rng)
            started = time.perf_counter()
            value = function(a, c, binary, sample)
            spent += time.perf_counter() - started
            count += 1
            if engine is not None and metric not in ("correlation_tr", "spearman_tr") and np.isfinite(value):
                error = max(error, abs(float(value) - float(engine[k, t])))
    return spent / count, label, error if engine is not None and metric not in ("correlation_tr",
                                                                                "spearman_tr") else math.nan


# ----------------------------------------------------------------------------------------------- meta-evaluation

def meta_rows(activations: np.ndarray, concepts: np.ndarray, metrics: list[str], device: str | None,
              gemm: float, cache_gib: float = 4.0) -> list[dict[str, Any]]:
    """Grid and whole-setting seconds per metric, scored in the meta-evaluation's order with one FeatureCache."""
    from neuroneval.meta.search import _scores_on_grid, evaluate_metric, hyperparameter_grid, scoring_order, split_units

    n_units, n_concepts = activations.shape[1], concepts.shape[1]
    truth = np.zeros((n_units, n_concepts), dtype=bool)
    tied = min(n_units, n_concepts)
    truth[np.arange(tied), np.arange(tied)] = True
    val_units, test_units = split_units(n_units, val_fraction=0.05, seed=0)
    fixed: dict[str, Any] = {"ties": "average", "seed": 0}
    if device is not None:
        fixed["device"] = device
    rows = []
    cache = FeatureCache(max_bytes=int(cache_gib * 2**30))
    for metric in scoring_order(metrics):
        grid = hyperparameter_grid(metric, alpha_grid=ALPHA_GRID, lam_grid=LAM_GRID)
        grid_s = math.nan
        if len(grid) > 1:
            started = time.perf_counter()
            _scores_on_grid(metric, activations, concepts, val_units, grid, fixed, FeatureCache(max_bytes=2**30))
            grid_s = time.perf_counter() - started
        started = time.perf_counter()
        result = evaluate_metric(metric, activations, concepts, truth, val_units=val_units, test_units=test_units,
                                 alpha_grid=ALPHA_GRID, lam_grid=LAM_GRID, fixed_params=fixed, cache=cache)
        setting_s = time.perf_counter() - started
        rows.append({"metric": metric, "grid_points": len(grid), "grid_s": grid_s, "grid_x_gemm": grid_s / gemm,
                     "setting_s": setting_s, "setting_x_gemm": setting_s / gemm,
                     "chosen": dict(result.params), "test_auprc": result.test_auprc})
        print(f"  {metric:26s} grid {len(grid):5d} pts {grid_s:8.1f} s  setting {setting_s:8.1f} s "
              f"({setting_s / gemm:6.1f} GEMM)  test meta-AUPRC {result.test_auprc:.3f}  load {os.getloadavg()[0]:.2f}",
              flush=True)
    return rows


# ------------------------------------------------------------------------------------------------------ main

def metric_rows(kind: str, activations: np.ndarray, concepts: np.ndarray, metrics: list[str], estimated: set[str],
                device: str | None, arguments: argparse.Namespace) -> list[dict[str, Any]]:
    """One row per metric (see the module docstring) on one concept table, printed as it is measured."""
    n, n_units = activations.shape
    n_concepts = concepts.shape[1]
    input_bytes = activations.nbytes + concepts.nbytes
    print(f"\n# concepts {kind}: B(c) has {(concepts >= 0.5).sum(axis=0).mean():.1f} positives each "
          f"({100 * (concepts >= 0.5).mean():.3f} % of values ≥ 0.5); inputs {input_bytes / 2**30:.3f} GiB (float32); "
          f"load {os.getloadavg()}")
    header = (f"{'metric':26s} {'time_s':>8s} {'gemm_s':>7s} {'x_gemm':>7s} {'peak_gib':>8s} {'x_input':>7s} "
              f"{'mem':>5s} {'lib_s/pair':>10s} {'x_lib':>8s} {'lib_err':>8s}  {'library':32s} load1")
    print(header, flush=True)
    rows: list[dict[str, Any]] = []
    rng = np.random.default_rng(arguments.seed + 1)
    extra = {} if device is None else {"device": device}
    for metric in metrics:
        params = {**params_of(metric), **extra}
        score(metric, activations[:500, :4], concepts[:500, :4], **params)  # warm-up: lazy imports, numba kernels
        gemm = gemm_seconds(activations, concepts, device)
        engine = None
        if metric in estimated:  # fixed + slope·C from all units against two slices of the concepts
            small_c, large_c = max(1, n_concepts // 28), max(2, n_concepts // 14)
            small = measure(lambda m=metric, p=params, c=small_c: score(m, activations, concepts[:, :c], **p), device)
            large = measure(lambda m=metric, p=params, c=large_c: score(m, activations, concepts[:, :c], **p), device)
            slope = max(large[0] - small[0], 0.0) / (large_c - small_c)
            seconds, peak, how = max(large[0] - slope * large_c, 0.0) + slope * n_concepts, large[1], "est"
        else:
            holder: dict[str, np.ndarray] = {}

            def run(m: str = metric, p: dict = params, out: dict = holder) -> None:
                out["scores"] = score(m, activations, concepts, **p)

            seconds, peak, how = measure(run, device)
            engine = holder["scores"]
        per_pair, label, error = library_per_pair(metric, activations, concepts, engine, arguments.lib_budget, rng)
        row = {"concepts": kind, "metric": metric, "time_s": seconds, "gemm_s": gemm, "x_gemm": seconds / gemm,
               "peak_gib": peak / 2**30, "x_input": peak / input_bytes, "mem": how,
               "lib_s_per_pair": per_pair, "x_lib": per_pair * n_units * n_concepts / seconds,
               "lib_err": error, "library": label, "load1": os.getloadavg()[0], "n": n, "k": n_units,
               "c": n_concepts, "device": arguments.device}
        rows.append(row)
        print(f"{metric:26s} {seconds:8.2f} {gemm:7.2f} {row['x_gemm']:7.2f} {row['peak_gib']:8.3f} "
              f"{row['x_input']:7.2f} {how:>5s} {per_pair:10.2e} {row['x_lib']:8.0f} {error:8.1e}  {label:32s} "
              f"{row['load1']:.2f}", flush=True)
        del engine
    if rows:
        total = sum(row["time_s"] for row in rows)
        print(f"# {kind}: all {len(rows)} metrics, one score call each: {total:.1f} s; worst x_gemm "
              f"{max(row['x_gemm'] for row in rows):.2f}, worst x_input "
              f"{np.nanmax([row['x_input'] for row in rows]):.2f}")
    return rows


def print_summary(rows: list[dict[str, Any]], kinds: list[str], limit: float = 10.0) -> None:
    """Every metric's ``x_gemm`` per concept kind side by side, and the metrics above ``limit`` GEMMs."""
    by_key = {(row["metric"], row["concepts"]): row["x_gemm"] for row in rows}
    metrics = list(dict.fromkeys(row["metric"] for row in rows))
    print("\n# x_gemm per concept kind (one run)\n" + f"{'metric':26s}" + "".join(f" {kind:>12s}" for kind in kinds))
    for metric in metrics:
        print(f"{metric:26s}" + "".join(f" {by_key.get((metric, kind), math.nan):12.2f}" for kind in kinds))
    over = [f"{metric} ({kind}, {value:.1f})" for (metric, kind), value in by_key.items() if value > limit]
    print(f"# metrics above {limit:g} GEMMs: {', '.join(over) if over else 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=50_000, help="inputs")
    parser.add_argument("--k", type=int, default=1_400, help="units")
    parser.add_argument("--c", type=int, default=None, help="concepts (default: = K)")
    parser.add_argument("--concepts", choices=(*CONCEPT_KINDS, "both"), default="both",
                        help="onehot: ImageNet-like 0/1 classes; probability: soft concepts with ≈ 7 %% of values "
                             "≥ 0.5 (bench_metrics.py's); both (default): each, one table per kind and a summary")
    parser.add_argument("--device", default="numpy", help="numpy (default), cpu (torch) or cuda")
    parser.add_argument("--metrics", default=",".join(METRICS), help="comma-separated subset")
    parser.add_argument("--estimate", default="",
                        help="comma-separated metrics timed on two slices of the concepts and extrapolated")
    parser.add_argument("--lib-budget", type=float, default=1.0, help="seconds of library calls per metric")
    parser.add_argument("--skip-table4", action="store_true", help="skip the grid and Table-4 setting timings")
    parser.add_argument("--only-table4", action="store_true", help="skip the per-metric table")
    parser.add_argument("--cache-gib", type=float, default=4.0,
                        help="FeatureCache of the meta-evaluation (params.yaml meta.feature_cache_gib; default 4)")
    parser.add_argument("--csv", type=Path, help="also write the per-metric rows to this CSV")
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    warnings.simplefilter("ignore", NeuronEvalWarning)
    device = None if arguments.device == "numpy" else arguments.device
    device_note = "numpy backend"
    if device is not None:
        import torch

        if device.startswith("cuda") and not torch.cuda.is_available():
            parser.error("--device cuda needs a CUDA device (torch.cuda.is_available() is False)")
        device_note = f"torch {torch.__version__} backend on {device}" + (
            f" ({torch.cuda.get_device_name(device)})" if device.startswith("cuda") else "")
    metrics = [name for name in arguments.metrics.split(",") if name]
    estimated = {name for name in arguments.estimate.split(",") if name}
    kinds = list(CONCEPT_KINDS) if arguments.concepts == "both" else [arguments.concepts]
    n, n_units = arguments.n, arguments.k
    n_concepts = arguments.c or n_units

    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    print(f"# bench_paper_scale: n={n}, K={n_units}, C={n_concepts}, device={arguments.device}, "
          f"{device_note}, cpus={os.cpu_count()}, OMP_NUM_THREADS={threads}, python {platform.python_version()}, "
          f"numpy {np.__version__}; concepts {', '.join(kinds)}")
    print(f"# load average at start: {os.getloadavg()}")
    print("# x_gemm = seconds / one float32 (n×K)ᵀ(n×C) GEMM timed just before the metric; x_input = peak / "
          "inputs; x_lib = library seconds per pair × K·C (extrapolated from sampled pairs) / engine seconds")
    rows: list[dict[str, Any]] = []
    for kind in kinds:
        activations, concepts = make_data(n, n_units, n_concepts, arguments.seed, kind)
        if not arguments.only_table4:
            rows += metric_rows(kind, activations, concepts, metrics, estimated, device, arguments)
        del activations, concepts
    if len(kinds) > 1 and rows:
        print_summary(rows, kinds)

    if not arguments.skip_table4:  # the meta-evaluation needs a unit tied to each concept: the first kind's table
        activations, concepts = make_data(n, n_units, n_concepts, arguments.seed, kinds[0])
        input_bytes = activations.nbytes + concepts.nbytes
        gemm = gemm_seconds(activations, concepts, device)
        print(f"\n# meta-evaluation (Table-4 setting, {kinds[0]} concepts): {len(ALPHA_GRID)} α × {len(LAM_GRID)} λ "
              f"(WPMI), 5 % validation units; GEMM {gemm:.2f} s; load {os.getloadavg()}", flush=True)
        with RssSampler() as sampler:
            meta = meta_rows(activations, concepts, metrics, device, gemm, arguments.cache_gib)
        print(f"# meta-evaluation peak RSS beyond the inputs: {(sampler.peak - sampler.start) / 2**30:.2f} GiB = "
              f"{(sampler.peak - sampler.start) / input_bytes:.2f}x inputs (the FeatureCache holds up to "
              f"{arguments.cache_gib:g} GiB of unit features shared by the metrics)")
        grid_total = np.nansum([row["grid_s"] for row in meta])
        setting_total = sum(row["setting_s"] for row in meta)
        print(f"# grids alone (validation units): {grid_total:.1f} s; whole Table-4 setting ({len(meta)} metrics, "
              f"grids + test scoring + meta-AUPRC): {setting_total:.1f} s = {setting_total / 60:.2f} min "
              f"(target ≤ 10 min: {'ok' if setting_total <= 600 else 'MISSED'}); load {os.getloadavg()}")
        by_metric = {row["metric"]: row for row in meta}
        for row in rows:
            if row["concepts"] == kinds[0]:
                row.update({key: by_metric[row["metric"]][key] for key in ("grid_s", "setting_s")})
        if not rows:
            rows = [{**row, "chosen": str(row["chosen"])} for row in meta]
    print(f"# load average at end: {os.getloadavg()}")
    if arguments.csv:
        with open(arguments.csv, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(dict.fromkeys(key for row in rows for key in row)))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
