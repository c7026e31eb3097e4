"""Experimental Missing/Extra Labels tests on real units and their correct concepts (paper 000, Sec. 4.3).

For every correct pair (k, t_k) of a setting (docs/design.md §2.2 ground truth), the correct concept is perturbed
D times (random subsets/supersets, Eq. 9 and 12, or semantic sub/superclasses, App. E.3) and::

    Δs(k) = (1/D) Σ_d [ s(a_k, c±_{t_k, d}) − s(a_k, c_{t_k}) ] / (max − min)        (Eq. 10; D draws, App. E.5)
    Decrease Acc = mean_k 1[Δs(k) < −ε]                                              (Eq. 11)

``max − min`` is the registry's range width (1 or 2) or, for MAD and WPMI, the observed spread over the full
unit × concept score matrix of the original concepts together with every perturbed score of the test
(:func:`neuroneval.sanity.delta.value_span`).

Scoring uses :func:`neuroneval.metrics.score_pairs` on blocks of perturbed columns (concepts × draws,
bounded to ``block_elements`` values). Perturbations are seeded by (seed, concept column, draw), so they do
not depend on the blocks. Top-and-random metrics draw one sample per unit and engine call, so they are
scored one draw per call (engine seed derived from the seed and the draw), giving each draw its own sample.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.metrics import FeatureCache, MetricOptions, options_for, score, score_pairs
from neuroneval.sanity.delta import DEFAULT_EPSILON, has_fixed_span, summarize_deltas, value_span
from neuroneval.sanity.params import derived_seed, is_sampled
from neuroneval.sanity.perturb import (
    TESTS,
    default_strength,
    perturb_labels,
    semantic_extra_labels,
    semantic_missing_labels,
)

PERTURBATIONS = ("random", "semantic")

Block = Callable[[np.ndarray, range], np.ndarray]


def _as_pairs(pairs: Any) -> np.ndarray:
    array = np.asarray(pairs)
    if array.ndim != 2 or array.shape[1] != 2 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"pairs must be an integer (m, 2) array of (unit, concept) positions, got {array.shape}")
    return array.astype(np.int64)


def _perturbation(test: str, perturbation: str, concept_matrix: np.ndarray, draws: int, strength: float,
                  seed: int, names: Sequence[str] | None, hierarchy: Mapping[str, Sequence[str]] | None,
                  subclass_rule: str) -> tuple[np.ndarray, int, Block]:
    """(testable concept columns, draws, function (concept columns, draw range) → (n, b, w) perturbed block)."""
    if perturbation == "random":
        def random_block(columns: np.ndarray, draw_range: range) -> np.ndarray:
            return perturb_labels(test, concept_matrix[:, columns], draw_range, strength=strength, seed=seed,
                                  concept_ids=columns)

        return np.arange(concept_matrix.shape[1]), draws, random_block
    if names is None or hierarchy is None:
        raise ValueError("the semantic perturbation needs concept names and a hierarchy (parent → children)")
    if test == "missing":
        positions, labels = semantic_missing_labels(concept_matrix, names, hierarchy, rule=subclass_rule,
                                                    draws=draws, keep=strength, seed=seed)
    else:
        positions, labels = semantic_extra_labels(concept_matrix, names, hierarchy)
    slot = {int(column): index for index, column in enumerate(positions)}

    def semantic_block(columns: np.ndarray, draw_range: range) -> np.ndarray:
        return labels[:, [slot[int(c)] for c in columns], draw_range.start:draw_range.stop]

    return positions, labels.shape[2], semantic_block


def experimental_deltas(metric: str, activations: Any, concepts: Any, pairs: Any, *, test: str = "missing",
                        draws: int = 1, strength: float | None = None, perturbation: str = "random",
                        names: Sequence[str] | None = None, hierarchy: Mapping[str, Sequence[str]] | None = None,
                        subclass_rule: str = "largest", seed: int = 0, options: MetricOptions | None = None,
                        span: float | None = None, block_elements: int = 2**24,
                        cache: FeatureCache | None = None) -> tuple[np.ndarray, np.ndarray, float, int]:
    """Per-pair Δs(k) of one test (Eq. 10, averaged over draws); see :func:`experimental_test`.

    The mean over the draw axis of :func:`experimental_draw_deltas` (same arguments).

    Returns
    -------
    deltas : numpy.ndarray, shape (m',)
        Δs(k) of each tested pair.
    tested_pairs : numpy.ndarray, shape (m', 2)
        The pairs tested (all of them for random perturbations; those whose concept has a sub/superclass in
        the table for semantic ones).
    span : float
        The ``max − min`` used.
    draws : int
        Draws actually made (1 for the deterministic semantic rules).
    """
    per_draw, tested, span, draws = experimental_draw_deltas(
        metric, activations, concepts, pairs, test=test, draws=draws, strength=strength, perturbation=perturbation,
        names=names, hierarchy=hierarchy, subclass_rule=subclass_rule, seed=seed, options=options, span=span,
        block_elements=block_elements, cache=cache)
    return per_draw.mean(axis=1), tested, span, draws


def experimental_draw_deltas(metric: str, activations: Any, concepts: Any, pairs: Any, *, test: str = "missing",
                             draws: int = 1, strength: float | None = None, perturbation: str = "random",
                             names: Sequence[str] | None = None,
                             hierarchy: Mapping[str, Sequence[str]] | None = None, subclass_rule: str = "largest",
                             seed: int = 0, options: MetricOptions | None = None, span: float | None = None,
                             block_elements: int = 2**24,
                             cache: FeatureCache | None = None) -> tuple[np.ndarray, np.ndarray, float, int]:
    """Per-pair, per-draw differences ``(s(a_k, c±_{t_k,d}) − s(a_k, c_{t_k})) / (max − min)`` of one test.

    Eq. 10 before the expectation over draws. Draw d of a concept is seeded by (seed, concept, d), and the
    top-and-random metrics score one draw per engine call, so the first D' columns of a run with D ≥ D' draws
    are the draws a run with D' draws makes (App. E.5 compares 1, 3, 10 and 100 draws from one run).
    ``options`` are the metric's (:func:`neuroneval.metrics.options_for`; default: its defaults); their ``seed``
    is not used, each engine call gets one derived from ``seed``. In ``ties="reference"`` mode the tie-breaking
    noise of the other metrics is seeded per block of draws, so there the prefix is only equal in distribution.
    For MAD and WPMI the observed ``max − min`` covers the scores of all D draws. Every engine call prepares the
    features of all tested units, so with a ``cache`` (:class:`~neuroneval.metrics.FeatureCache`) they are prepared
    once for all blocks, tests and metrics.

    Returns
    -------
    deltas : numpy.ndarray, shape (m', D)
        Normalised difference of each tested pair (rows) and draw (columns).
    tested_pairs : numpy.ndarray, shape (m', 2)
        The pairs tested (all of them for random perturbations; those whose concept has a sub/superclass in
        the table for semantic ones).
    span : float
        The ``max − min`` used.
    draws : int
        Draws actually made (1 for the deterministic semantic rules).
    """
    if test not in TESTS or perturbation not in PERTURBATIONS:
        raise ValueError(f"test must be one of {TESTS} and perturbation one of {PERTURBATIONS}; got {test!r}, "
                         f"{perturbation!r}")
    if draws < 1:
        raise ValueError(f"draws must be ≥ 1, got {draws}")
    options = options_for(metric, options)
    ties = options.ties

    def seeded(*entropy: int) -> MetricOptions:
        return dataclasses.replace(options, seed=derived_seed(seed, *entropy))

    activation_matrix = activations.to_numpy() if hasattr(activations, "to_numpy") else np.asarray(activations)
    concept_matrix = concepts.to_numpy() if hasattr(concepts, "to_numpy") else np.asarray(concepts)
    pair_array = _as_pairs(pairs)
    strength = default_strength(test) if strength is None else strength
    testable, draws, block_of = _perturbation(test, perturbation, concept_matrix, draws, strength, seed, names,
                                              hierarchy, subclass_rule)
    tested = pair_array[np.isin(pair_array[:, 1], testable)]
    # Every call prepares all tested units, so a cache serves every block; in reference mode each block has its
    # own tie-breaking seed, nothing is reused, and each call prepares only its block's units.
    tested_units = np.unique(tested[:, 0]) if ties == "average" else None
    original = score_pairs(metric, activation_matrix, concept_matrix, tested, units=tested_units, cache=cache,
                           options=seeded(8))
    perturbed = np.empty((tested.shape[0], draws))
    n = concept_matrix.shape[0]
    concepts_used, pair_concept = np.unique(tested[:, 1], return_inverse=True)
    draw_width = 1 if is_sampled(metric) else max(1, min(draws, block_elements // n))
    concepts_per_block = max(1, block_elements // (n * draw_width))
    for block_start in range(0, concepts_used.size, concepts_per_block):
        block = np.arange(block_start, min(concepts_used.size, block_start + concepts_per_block))
        rows = np.nonzero(np.isin(pair_concept, block))[0]
        for draw_start in range(0, draws, draw_width):
            draw_range = range(draw_start, min(draws, draw_start + draw_width))
            width = len(draw_range)
            labels = block_of(concepts_used[block], draw_range).reshape(n, block.size * width)
            slots = (pair_concept[rows] - block_start)[:, None] * width + np.arange(width)[None, :]
            block_pairs = np.column_stack([np.repeat(tested[rows, 0], width), slots.ravel()])
            scores = score_pairs(metric, activation_matrix, labels, block_pairs, units=tested_units, cache=cache,
                                 options=seeded(9, block_start, draw_start))
            perturbed[rows, draw_range.start:draw_range.stop] = scores.reshape(rows.size, width)
    if span is None:
        if has_fixed_span(metric):
            span = value_span(metric)
        else:
            full = score(metric, activation_matrix, concept_matrix, cache=cache, options=seeded(8))
            span = value_span(metric, full, perturbed)
    return (perturbed - original[:, None]) / span, tested, float(span), draws


def experimental_test(metric: str, activations: Any, concepts: Any, pairs: Any, *, tests: Sequence[str] = TESTS,
                      draws: int = 1, epsilon: float = DEFAULT_EPSILON, keep: float | None = None,
                      multiplier: float | None = None, perturbation: str = "random",
                      names: Sequence[str] | None = None, hierarchy: Mapping[str, Sequence[str]] | None = None,
                      subclass_rule: str = "largest", seed: int = 0, options: MetricOptions | None = None,
                      span: float | None = None, cache: FeatureCache | None = None) -> pd.DataFrame:
    """Run the Missing and/or Extra Labels tests of one metric on a setting's correct (unit, concept) pairs.

    Parameters
    ----------
    metric : str
        Registered metric or ``hmean:`` combination.
    activations : array or DataFrame, shape (n, K)
        Unit activations (numeric columns only).
    concepts : array or DataFrame, shape (n, C)
        Concept labels (binary ground truth, as in the paper).
    pairs : int array, shape (m, 2)
        Correct pairs ``(k, t_k)`` as column positions in ``activations`` and ``concepts``.
    tests : sequence of {"missing", "extra"}
    draws : int, default 1
        Perturbations per pair, averaged into Δs(k) (App. E.5 compares 1, 3, 10 and 100; the paper uses 1).
    epsilon : float, default 1e-3
        ε of Decrease Acc (Eq. 11; App. E.4 varies it).
    keep, multiplier : float, optional
        r₋ (default 0.5) and r₊ (default 2) of App. E.1 for the random perturbations; ``keep`` is also the
        inclusion probability of the ``"random_subset"`` semantic rule.
    perturbation : {"random", "semantic"}, default "random"
        ``"semantic"`` (App. E.3) replaces c by its largest subclass (missing; see ``subclass_rule``) or its
        smallest superclass (extra) from ``hierarchy``; pairs whose concept has none are not tested.
    names, hierarchy
        Concept names (one per column) and parent → children mapping, for ``perturbation="semantic"``.
    subclass_rule : {"largest", "random_child", "random_subset"}, default "largest"
    seed : int, default 0
        Seeds the perturbations and, derived per engine call, the metric's random samples and tie noise.
    options : MetricOptions, optional
        The metric's options (``neuroneval.metrics.options_for(metric, alpha=…, ties=…)``: α, λ, top-and-random
        sizes, ``ties``, ``device``, ``chunk_size``); default: its defaults. Their ``seed`` is replaced by seeds
        derived from ``seed``.
    span : float, optional
        Normalising ``max − min`` to use instead of the registry range / observed spread.
    cache : FeatureCache, optional
        Shares the units' prepared features with other tests and metrics on the same activations (results
        are unchanged).

    Returns
    -------
    pandas.DataFrame
        One row per test with ``metric, test, perturbation, strength, draws, epsilon, ties, seed, span,
        mean_delta, delta_se, decrease_acc, increase_frac, n_pairs`` (fractions in [0, 1]; ``delta_se`` is the
        standard error of the mean over pairs).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> concepts = (rng.random((4_000, 3)) < [0.05, 0.1, 0.2]).astype(float)
    >>> activations = concepts + 0.1 * rng.standard_normal((4_000, 3))
    >>> table = experimental_test("iou", activations, concepts, [[0, 0], [1, 1], [2, 2]],
    ...                           options=options_for("iou", alpha=0.1))
    >>> table[["test", "decrease_acc", "n_pairs"]].values.tolist()
    [['missing', 1.0, 3], ['extra', 1.0, 3]]
    """
    unknown = [test for test in tests if test not in TESTS]
    if unknown or perturbation not in PERTURBATIONS:
        raise ValueError(f"tests must be among {TESTS} and perturbation one of {PERTURBATIONS}; got "
                         f"{list(tests)!r}, {perturbation!r}")
    options = options_for(metric, options)
    rows = []
    for test in tests:
        strength = keep if test == "missing" else multiplier
        if perturbation == "random":
            strength = default_strength(test) if strength is None else strength
        elif test == "missing" and subclass_rule == "random_subset":
            strength = default_strength("missing") if strength is None else strength
        else:
            strength = None  # the deterministic semantic rules have no strength
        deltas, tested, used_span, used_draws = experimental_deltas(
            metric, activations, concepts, pairs, test=test, draws=draws, strength=strength,
            perturbation=perturbation, names=names, hierarchy=hierarchy, subclass_rule=subclass_rule, seed=seed,
            options=options, span=span, cache=cache)
        summary = summarize_deltas(deltas, epsilon)
        rows.append({
            "metric": metric, "test": test, "perturbation": perturbation,
            "strength": np.nan if strength is None else strength, "draws": used_draws,
            "epsilon": epsilon, "ties": options.ties, "seed": seed, "span": used_span,
            "mean_delta": summary["mean_delta"],
            "delta_se": summary["delta_se"], "decrease_acc": summary["decrease_acc"],
            "increase_frac": summary["increase_frac"], "n_pairs": int(tested.shape[0]),
        })
    return pd.DataFrame(rows)
