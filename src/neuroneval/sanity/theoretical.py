"""Theoretical Missing/Extra Labels tests on ideal binary neurons (paper 000, App. C, Tables C.1–C.4).

Setting (App. C): for each activation frequency γ, an *ideal* unit whose activations equal its concept,
``a = c``, both binary with the first ``s = round(γ·n)`` of n inputs positive (the layout of the authors'
notebook; the γ columns are therefore nested). Each draw perturbs c into c⁻ (Eq. 9) or c⁺ (Eq. 12) and
records the normalised difference ``Δs_d = (s(a, c±_d) − s(a, c)) / (max − min)``. Per γ and test the
result is the mean Δs over the draws (Tables C.3–C.4) and Decrease Acc = mean_d 1[Δs_d < −ε] (Eq. 11,
Tables C.1–C.2); the paper uses n = 500,000 and 1,000 draws.

Metric parameters follow the authors: binary metrics, AUC, AUPRC and WPMI binarize the unit with
top-α at α = s/n, which selects exactly the s positive inputs (the authors skip the binarization of
already-binary units); WPMI uses λ = 1. Scores are normalised by the width of the metric's value range
(:func:`neuroneval.sanity.delta.value_span`); for MAD and WPMI (unbounded) by ``max − min`` over the
γ × γ score matrices of all ideal units against all original concepts and against the first draw of the
missing- and extra-labels concepts, exactly what the authors' ``run_test`` does (it gives WPMI a span of
≈ 23.2 at the paper's size).

Computation: each chunk of draws is an (n × D) matrix of perturbed concepts, scored against the unit with
one :func:`neuroneval.metrics.score_pairs` call per metric (pairs (0, j)), shared by every metric. For the
top-and-random metrics the unit column is repeated D times (pairs (j, j)) so that each draw gets its own
random sample, as in the authors' loop. The original score s(a, c) is computed once per metric and γ, as
the authors do. Perturbations are seeded by (seed, γ index, draw) (:mod:`neuroneval.sanity.perturb`), so
they do not depend on chunking. In ``ties="reference"`` mode the engine's tie-breaking noise and T&R
samples are seeded per chunk by (seed, γ index, test, chunk index): those numbers are reproducible for a
given ``chunk_draws`` but change with it (they are random draws either way).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.metrics import METRICS, MetricOptions, NeuronEvalWarning, get_spec, options_for, score, score_pairs
from neuroneval.process_pool import completed_calls
from neuroneval.progress import progress_bar
from neuroneval.sanity.delta import DEFAULT_EPSILON, has_fixed_span, summarize_deltas, value_span
from neuroneval.sanity.params import derived_seed, is_sampled, metric_params
from neuroneval.sanity.perturb import TESTS, default_strength, perturb_labels

#: Activation frequencies γ of Tables C.1–C.4.
PAPER_GAMMAS = (0.499, 0.1, 0.01, 0.001, 0.0001)
#: Number of inputs n and of draws per γ used in the paper (App. C).
PAPER_N = 500_000
PAPER_DRAWS = 1_000
#: λ of WPMI in the authors' theoretical test.
PAPER_LAM = 1.0


def positive_counts(gammas: Sequence[float], n: int) -> np.ndarray:
    """``s = round(γ·n)`` per γ (the authors get 249500, 50000, 5000, 500, 50 at n = 500,000)."""
    counts = np.array([round(gamma * n) for gamma in gammas], dtype=np.int64)
    if np.any(counts < 1) or np.any(counts >= n):
        raise ValueError(f"every γ·n must round to 1 … n − 1 positives; got {counts.tolist()} for n = {n}")
    return counts


def ideal_concepts(gammas: Sequence[float], n: int) -> np.ndarray:
    """(n, G) float32 binary matrix whose column t has its first ``round(γ_t·n)`` rows equal to 1.

    It is both the ideal units' activations and their concepts (``a = c``).
    """
    counts = positive_counts(gammas, n)
    return (np.arange(n)[:, None] < counts[None, :]).astype(np.float32)


@dataclass(frozen=True)
class _Setup:
    n: int
    gammas: tuple[float, ...]
    counts: np.ndarray
    concepts: np.ndarray
    ties: str
    lam: float
    seed: int
    strengths: dict[str, float]
    device: Any = None

    def options(self, metric: str, column: int, seed: int) -> MetricOptions:
        """The metric's options on γ column ``column``: α = s/n (the ideal unit's positives), λ, ties, device."""
        taken = metric_params(metric, alpha=float(self.counts[column]) / self.n, lam=self.lam)
        return options_for(metric, ties=self.ties, seed=seed, device=self.device, **taken)


def _observed_span(metric: str, setup: _Setup) -> float:
    """``max − min`` over the γ × γ score matrices of ideal units vs original, c⁻ and c⁺ (first draw)."""
    concepts = setup.concepts
    matrices = [concepts]
    for test in TESTS:
        perturbed = perturb_labels(test, concepts, [0], strength=setup.strengths[test], seed=setup.seed)
        matrices.append(perturbed[:, :, 0])
    observed = []
    for unit in range(concepts.shape[1]):
        for matrix in matrices:
            observed.append(score(metric, concepts[:, unit:unit + 1], matrix,
                                  options=setup.options(metric, unit, derived_seed(setup.seed, 5, unit))))
    return value_span(metric, *observed)


def _chunks(draws: int, chunk_draws: int) -> list[tuple[int, int]]:
    return [(start, min(draws, start + chunk_draws)) for start in range(0, draws, chunk_draws)]


@dataclass(frozen=True)
class _ChunkTask:
    """Draws ``start … stop − 1`` of one (γ column, test): everything a worker needs to score them."""

    column: int
    test_index: int
    test: str
    chunk_index: int
    start: int
    stop: int


def _chunk_deltas(setup: _Setup, metric_names: Sequence[str], spans: dict[str, float],
                  original: dict[str, float], task: _ChunkTask) -> dict[str, np.ndarray]:
    """Δs_d of every metric for the draws of ``task`` (a pure function of its arguments)."""
    unit = setup.concepts[:, task.column:task.column + 1]
    block = perturb_labels(task.test, unit, range(task.start, task.stop), strength=setup.strengths[task.test],
                           seed=setup.seed, concept_ids=[task.column])[:, 0, :]
    width = task.stop - task.start
    engine_seed = derived_seed(setup.seed, 7, task.column, task.test_index, task.chunk_index)
    deltas = {}
    with warnings.catch_warnings():
        # Documented conventions of undefined values (e.g. a c⁻ that lost every label) are expected here.
        warnings.simplefilter("ignore", NeuronEvalWarning)
        for metric in metric_names:
            if is_sampled(metric):  # each draw gets its own top-and-random sample, as in the authors' loop
                units, pairs = np.repeat(unit, width, axis=1), np.arange(width)[:, None].repeat(2, 1)
            else:
                units, pairs = unit, np.column_stack([np.zeros(width, int), np.arange(width)])
            scores = score_pairs(metric, units, block, pairs, options=setup.options(metric, task.column, engine_seed))
            deltas[metric] = (scores - original[metric]) / spans[metric]
    return deltas


def theoretical_deltas(metrics: Sequence[str] | None = None, *, gammas: Sequence[float] = PAPER_GAMMAS,
                       n: int = 50_000, draws: int = 100, tests: Sequence[str] = TESTS, ties: str = "reference",
                       seed: int = 0, lam: float = PAPER_LAM, keep: float | None = None,
                       multiplier: float | None = None, chunk_draws: int | None = None,
                       progress: bool = True, device: Any = None, workers: int = 1,
                       ) -> tuple[dict[tuple[str, int, str], np.ndarray], dict[str, float]]:
    """Per-draw normalised differences Δs_d of the theoretical test (see :func:`theoretical_test`).

    Returns
    -------
    deltas : dict
        ``(metric, γ index, test) → (draws,)`` float64 array of Δs_d.
    spans : dict
        ``metric → max − min`` used to normalise it.
    """
    metric_names = list(METRICS) if metrics is None else list(metrics)
    for metric in metric_names:
        get_spec(metric)
    if draws < 1 or n < 2:
        raise ValueError(f"need draws ≥ 1 and n ≥ 2, got draws={draws}, n={n}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    strengths = {"missing": default_strength("missing") if keep is None else keep,
                 "extra": default_strength("extra") if multiplier is None else multiplier}
    gammas = tuple(float(gamma) for gamma in gammas)
    counts = positive_counts(gammas, n)
    setup = _Setup(n, gammas, counts, ideal_concepts(gammas, n), ties, lam, seed, strengths, device)
    chunk_draws = chunk_draws or max(1, min(draws, 2**23 // n))
    tasks = [_ChunkTask(column, test_index, test, chunk_index, start, stop)
             for column in range(len(gammas)) for test_index, test in enumerate(tests)
             for chunk_index, (start, stop) in enumerate(_chunks(draws, chunk_draws))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NeuronEvalWarning)
        spans = {m: (value_span(m) if has_fixed_span(m) else _observed_span(m, setup)) for m in metric_names}
        originals = []
        for column in range(len(gammas)):
            unit = setup.concepts[:, column:column + 1]
            originals.append({m: score_pairs(m, unit, unit, [[0, 0]],
                                             options=setup.options(m, column, derived_seed(seed, 6, column)))[0]
                              for m in metric_names})
    deltas = {(m, column, test): np.empty(draws) for m in metric_names
              for column in range(len(gammas)) for test in tests}
    calls = [(setup, metric_names, spans, originals[task.column], task) for task in tasks]
    with progress_bar(total=len(tasks), enabled=progress, desc="theoretical test", unit="chunk") as bar:
        for index, chunk in completed_calls(_chunk_deltas, calls, min(workers, len(tasks))):
            task = tasks[index]
            for metric, values in chunk.items():
                deltas[(metric, task.column, task.test)][task.start:task.stop] = values
            bar.update()
    return deltas, spans


def theoretical_test(metrics: Sequence[str] | None = None, *, gammas: Sequence[float] = PAPER_GAMMAS,
                     n: int = 50_000, draws: int = 100, tests: Sequence[str] = TESTS, ties: str = "reference",
                     epsilon: float = DEFAULT_EPSILON, seed: int = 0, lam: float = PAPER_LAM,
                     keep: float | None = None, multiplier: float | None = None, chunk_draws: int | None = None,
                     progress: bool = True, device: Any = None, workers: int = 1) -> pd.DataFrame:
    """Run the theoretical Missing/Extra Labels tests (paper 000, App. C) and summarise them.

    Parameters
    ----------
    metrics : sequence of str, optional
        Registered metrics or ``hmean:`` combinations (default: all 18 metrics of ``METRICS``).
    gammas : sequence of float, default ``PAPER_GAMMAS`` = (0.499, 0.1, 0.01, 0.001, 0.0001)
        Activation frequencies γ.
    n : int, default 50,000
        Inputs per ideal unit; the paper uses ``PAPER_N`` = 500,000 (≈ 10× slower). Every γ·n must round to
        at least 1 positive; the paper's 1e-4 gives 50 positives at 500,000 but 5 at 50,000, where rates are
        coarse.
    draws : int, default 100
        Perturbation draws per γ and test; the paper uses ``PAPER_DRAWS`` = 1,000.
    tests : sequence of {"missing", "extra"}
    ties : {"reference", "average"}, default "reference"
        Tie convention of the metric engine; ``"reference"`` reproduces the published tables.
    epsilon : float, default 1e-3
        ε of Decrease Acc (Eq. 11).
    seed : int, default 0
    lam : float, default 1.0
        λ of WPMI (the authors' choice).
    keep, multiplier : float, optional
        Strengths r₋ (missing; default 0.5) and r₊ (extra; default 2) of App. E.1.
    chunk_draws : int, optional
        Draws scored per engine call (default: about 2**23 / n, bounding each perturbed block to 32 MiB).
    progress : bool, default True
        Show a tqdm progress bar.
    device : None or torch device, default None
        Where the metric engine computes (:func:`neuroneval.metrics.score`): ``None`` numpy on the CPU,
        ``"cuda"`` a GPU — the paper's size (n = 500,000, 1,000 draws) is hours on two CPU cores and minutes on
        one GPU (``benchmarks/bench_theoretical.py``). Perturbations, reference-mode tie noise and T&R samples are
        drawn on the CPU either way, so a device changes only the engine's float rounding (≤ 1e-6).
    workers : int, default 1
        Processes that score chunks of draws in parallel (spawned, one thread each;
        :func:`neuroneval.process_pool.completed_calls`). Every chunk's randomness
        derives from (seed, γ, test, chunk), so the result does not depend on ``workers``.

    Returns
    -------
    pandas.DataFrame
        One row per (metric, γ, test) with columns ``metric, test, gamma, n, positives, draws, ties,
        epsilon, seed, strength, span, mean_delta, delta_se, decrease_acc, increase_frac, seconds``;
        ``decrease_acc``/``increase_frac`` are fractions in [0, 1], ``delta_se`` the standard error of
        ``mean_delta`` over draws, ``seconds`` the wall time of the whole run.

    Examples
    --------
    >>> table = theoretical_test(["recall", "iou"], gammas=[0.1], n=2_000, draws=20, progress=False)
    >>> table[["metric", "test", "decrease_acc"]].values.tolist()
    [['recall', 'missing', 1.0], ['recall', 'extra', 0.0], ['iou', 'missing', 1.0], ['iou', 'extra', 1.0]]
    """
    started = time.perf_counter()
    metric_names = list(METRICS) if metrics is None else list(metrics)
    deltas, spans = theoretical_deltas(metric_names, gammas=gammas, n=n, draws=draws, tests=tests, ties=ties,
                                       seed=seed, lam=lam, keep=keep, multiplier=multiplier,
                                       chunk_draws=chunk_draws, progress=progress, device=device,
                                       workers=workers)
    seconds = time.perf_counter() - started
    counts = positive_counts(gammas, n)
    rows = []
    for metric in metric_names:
        for column, gamma in enumerate(gammas):
            for test in tests:
                summary = summarize_deltas(deltas[(metric, column, test)], epsilon)
                strength = (keep if test == "missing" else multiplier) or default_strength(test)
                rows.append({
                    "metric": metric, "test": test, "gamma": float(gamma), "n": n, "positives": int(counts[column]),
                    "draws": draws, "ties": ties, "epsilon": epsilon, "seed": seed, "strength": strength,
                    "span": spans[metric], "mean_delta": summary["mean_delta"], "delta_se": summary["delta_se"],
                    "decrease_acc": summary["decrease_acc"], "increase_frac": summary["increase_frac"],
                    "seconds": seconds,
                })
    return pd.DataFrame(rows)


