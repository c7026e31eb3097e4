"""The metric engine: ``s_M(a_k, c_t)`` for every unit k and concept t in one call (paper 000, App. A).

Public API (docs/design.md §3)::

    score(metric, activations, concepts, *, options=None, cache=None, progress=False) -> (K, C) float64
    score_pairs(metric, activations, concepts, pairs, *, options=None) -> (m,) float64
    score_units(metric, activations, concepts, units, *, options=None) -> (len(units), C) float64
    score_grid(metric, activations, concepts, units, grid, *, options=None) -> [(len(units), C) float64, ...]
    score_table(metrics, activations, concepts, *, options=None, grid=None) -> tidy DataFrame
        (unit, concept, metric, <the metrics' parameters>, score); score_table_chunks yields it in pieces

Inputs are arrays or DataFrames (docs/design.md §3.1, :mod:`neuroneval.metrics.frames`): frames with an
``input_id`` column are matched by id (same ids in any order; different id sets are a ``ValueError`` naming them),
never scoring ``input_id``; when either input is a DataFrame, the (units × concepts) results are DataFrames
indexed by unit name with one column per concept name; arrays in, arrays out.
    METRICS: Mapping[str, MetricSpec]   one entry per metric: facts, kernel, per-pair reference, options class
    MetricOptions and its subclasses: the typed options (``METRICS[name].options``)

``options`` is the metric's frozen options object (``METRICS["iou"].options(alpha=0.01)``, or any
:class:`MetricOptions` whose non-default fields the metric takes). As a convenience, each function also takes the
options as keyword parameters (``score("iou", a, c, alpha=0.01)``); they become the metric's options at once
(:meth:`MetricSpec.make_options`: an unknown name is a ``TypeError``, one the metric does not take or a value out of
range a ``ValueError``), and are not combined with ``options=``.
    FeatureCache(max_bytes): unit features shared by calls on one activations matrix (``cache=``)

``neuroneval.metrics.reference`` holds obvious per-pair implementations of the same definitions (tests and
benchmarks compare against them). See ``help(neuroneval.metrics.score)`` for every metric and parameter.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from neuroneval.metrics.binarize import TOP_ALPHA_RULES, TopAlphaRule
from neuroneval.metrics.context import FeatureCache
from neuroneval.metrics.edgecases import NeuronEvalWarning
from neuroneval.metrics.engine import run, run_grid
from neuroneval.metrics.frames import align, label
from neuroneval.metrics.metric_options import (
    MetricOptions,
    TopAlphaAndRandomOptions,
    TopAlphaOptions,
    TopAndRandomOptions,
    WpmiAndRandomOptions,
    WpmiOptions,
)
from neuroneval.metrics.registry import COMBINATION_PREFIX, DEFAULTS, METRICS, MetricSpec, get_spec

__all__ = ["DEFAULTS", "METRICS", "TOP_ALPHA_RULES", "FeatureCache", "MetricOptions", "MetricSpec",
           "NeuronEvalWarning", "TopAlphaAndRandomOptions", "TopAlphaOptions", "TopAlphaRule", "TopAndRandomOptions",
           "WpmiAndRandomOptions", "WpmiOptions", "get_spec", "options_for", "score", "score_grid", "score_pairs",
           "score_table", "score_table_chunks", "score_units"]

#: Public names whose module is imported on first use (PEP 562), since it imports pandas: name → module.
LAZY_NAMES = {"score_table": "neuroneval.metrics.table", "score_table_chunks": "neuroneval.metrics.table"}


def __getattr__(name: str) -> Any:
    if name in LAZY_NAMES:
        return getattr(importlib.import_module(LAZY_NAMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def options_for(metric: str, options: MetricOptions | None = None, **params: Any) -> MetricOptions:
    """The options of ``metric`` (its :attr:`MetricSpec.options` class) from ``options`` or keyword parameters.

    >>> options_for("wpmi", alpha=0.01)
    WpmiOptions(ties='average', seed=0, device=None, chunk_size=None, memory_budget='auto', alpha=0.01, \
top_alpha='at_least_kth', lam=1.0)
    """
    return get_spec(metric).make_options(options, params)


def score(metric: str, activations: Any, concepts: Any, *, options: MetricOptions | None = None,
          cache: FeatureCache | None = None, progress: bool = False, **params: Any) -> Any:
    """Score every (unit, concept) pair with one metric."""
    inputs = align(activations, concepts)
    scores = run(metric, inputs.activations, inputs.concepts, None, options_for(metric, options, **params),
                 cache=cache, progress=progress, cache_source=inputs.cache_source)
    return label(scores, inputs)


def score_pairs(metric: str, activations: Any, concepts: Any, pairs: Any, *, units: Any = None,
                options: MetricOptions | None = None, cache: FeatureCache | None = None, progress: bool = False,
                **params: Any) -> np.ndarray:
    """Score only the listed (unit, concept) pairs.

    Parameters
    ----------
    metric, activations, concepts, options, **params
        As for :func:`score` (same definitions, defaults and edge cases; same random samples for a seed; frames
        matched by ``input_id``).
    pairs : array of int, shape (m, 2)
        Rows ``(k, t)``: column position of the unit in ``activations`` and of the concept in ``concepts``
        (positions among the value columns of a DataFrame, ``input_id`` not counted).
    units : 1-D array of int, optional
        The units whose features are prepared, a superset of the pairs' units (default: the pairs' units).
        Calls that pass the same ``units`` and one :class:`FeatureCache` as ``cache`` prepare them once.

    Returns
    -------
    numpy.ndarray of float64, shape (m,)
        ``score(metric, activations, concepts, **params)[k, t]`` for each row, computed from the listed
        units and concepts only (cost grows with m, not with K·C). An array also for DataFrame inputs: the
        rows of ``pairs`` label it.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[3.0], [2.0], [0.0], [0.0]]); c = np.array([[1.0, 0.0], [1.0, 1.0], [0, 0], [0, 1]])
    >>> score_pairs("iou", a, c, [[0, 0], [0, 1]], alpha=0.5).tolist()
    [1.0, 0.3333333333333333]
    """
    inputs = align(activations, concepts)
    return run(metric, inputs.activations, inputs.concepts, pairs, options_for(metric, options, **params),
               units=units, cache=cache, progress=progress, cache_source=inputs.cache_source)


def score_units(metric: str, activations: Any, concepts: Any, units: Any, *, options: MetricOptions | None = None,
                cache: FeatureCache | None = None, progress: bool = False, **params: Any) -> Any:
    """Score the listed units against every concept.

    Parameters
    ----------
    metric, activations, concepts, options, **params
        As for :func:`score`.
    units : 1-D array of int
        Column positions of distinct units in ``activations`` (among a DataFrame's value columns), in any order.

    Returns
    -------
    numpy.ndarray of float64, shape (len(units), C)
        ``score(metric, activations, concepts, **params)[units]``, computed from the listed units only — the
        same batched kernels as :func:`score`, at a cost that grows with ``len(units)`` (meta-evaluation scores
        a small validation set of units at every α of a grid). A DataFrame indexed by the listed units' names
        when either input is a DataFrame (as for :func:`score`).

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[3.0, 0.0], [2.0, 1.0], [0.0, 5.0], [0.0, 0.0]])
    >>> c = np.array([[1.0], [1.0], [0.0], [0.0]])
    >>> score_units("iou", a, c, [1], alpha=0.25).tolist()
    [[0.0]]
    """
    inputs = align(activations, concepts)
    scores = run(metric, inputs.activations, inputs.concepts, None, options_for(metric, options, **params),
                 units=units, cache=cache, progress=progress, cache_source=inputs.cache_source)
    return label(scores, inputs, units)


def score_grid(metric: str, activations: Any, concepts: Any, units: Any, grid: Sequence[Mapping[str, float]], *,
               options: MetricOptions | None = None, cache: FeatureCache | None = None, progress: bool = False,
               **params: Any) -> list[Any]:
    """Score the listed units at every point of an α/λ grid, in one pass over the concepts.

    Parameters
    ----------
    metric, activations, concepts, options, **params
        As for :func:`score`; the options are shared by every grid point.
    units : 1-D array of int or None
        As for :func:`score_units`; ``None`` scores every unit.
    grid : sequence of mappings
        Each point sets only ``alpha`` and/or ``lam`` (e.g. ``[{"alpha": 0.001}, {"alpha": 0.01}]``).

    Returns
    -------
    list of numpy.ndarray of float64, shape (len(units), C)
        Element i equals ``score_units(metric, activations, concepts, units, **params, **grid[i])`` (a DataFrame
        when either input is a DataFrame, as for :func:`score_units`). Concept-side
        features (binarized concepts, ranks, norms) are built once per concept block and shared by all points,
        so a grid of g points costs far less than g calls (paper 000 Sec. 5's hyperparameter search).

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[3.0], [2.0], [1.0], [0.0]])
    >>> c = np.array([[1.0], [1.0], [0.0], [0.0]])
    >>> [s.tolist() for s in score_grid("iou", a, c, None, [{"alpha": 0.25}, {"alpha": 0.5}, {"alpha": 0.75}])]
    [[[0.5]], [[1.0]], [[0.6666666666666666]]]
    """
    inputs = align(activations, concepts)
    scores = run_grid(metric, inputs.activations, inputs.concepts, units, list(grid),
                      options_for(metric, options, **params), cache=cache, progress=progress,
                      cache_source=inputs.cache_source)
    return [label(point_scores, inputs, units) for point_scores in scores]


def _metric_lines() -> str:
    lines = []
    for name, spec in METRICS.items():
        low, high = spec.value_range
        extra = f"; params: {', '.join(spec.params)}" if spec.params else ""
        lines.append(f"    ``{name}`` [{low:g}, {high:g}] ({spec.kind}{extra})\n        {spec.formula}")
    return "\n".join(lines)


score.__doc__ = f"""Score every (unit, concept) pair with one metric: ``s_M(a_k, c_t)`` of paper 000.

    Parameters
    ----------
    metric : str
        A registered metric (below) or a harmonic-mean combination ``"{COMBINATION_PREFIX}m1+m2[+…]"``
        (000 App. E.6; e.g. ``"hmean:auc+inverse_auc"``). ``hmean:recall+precision`` equals ``f1``.
    activations : array or DataFrame, shape (n, K)
        Unit activations ``a_k`` (one column per unit, one row per input); finite numbers. A DataFrame may have an
        ``input_id`` column (the data contract, docs/design.md §2.1): it is never scored.
    concepts : array or DataFrame, shape (n, C)
        Concept activations ``c_t = P(t | x_i)`` (one column per concept), finite and in [0, 1]. With
        ``input_id`` columns on both sides, rows are matched by id (:mod:`neuroneval.metrics.frames`): the same ids
        in any order give the result of both frames sorted by ``input_id``; different id sets are a
        ``ValueError`` that names the ids found on one side only; ``input_id`` on one side only is an error.

    options : MetricOptions, optional
        The metric's typed options, ``METRICS[metric].options`` (:mod:`neuroneval.metrics.metric_options`), or any
        :class:`MetricOptions` whose non-default fields the metric takes. Default: every option at its default.
    **params
        Convenience: the same options as keywords (below), turned into the metric's options at once; not together
        with ``options``.

    Other Parameters
    ----------------
    alpha : float in (0, 1], default {DEFAULTS['alpha']}
        Top-α binarization of activations (000 Eq. A.1): ``k = ⌈α·n⌉`` and ``B(a) = 1[a ≥ k-th largest]``.
        Used by the binary metrics, AUC, AUPRC and WPMI. The default is paper 000's fixed value for hidden
        layers (App. F); the paper tunes α per metric on a validation split of units.
    top_alpha : {{"at_least_kth", "exactly_k"}}, default "{DEFAULTS['top_alpha']}"
        Rule of the top-α binarization (:mod:`neuroneval.metrics.binarize`), in both tie modes, for the metrics
        that take ``alpha``. ``"at_least_kth"``: ``B(a) = 1[a ≥ k-th largest a]``, every input tied at the
        cutoff active (000 Eq. A.1; the authors' ``_binarize_act``, behind every published number with an α:
        Tables 3–4, App. E–F; their theoretical tables use ``B(a) = a``, which both rules give at α = s/n).
        ``"exactly_k"``: exactly k inputs, the k largest of the activations (``ties="average"``) or of the
        noised activations (``ties="reference"``), remaining ties at the cutoff going to the later inputs.
    lam : float, default {DEFAULTS['lam']}
        λ of WPMI. λ = 1 makes WPMI a pointwise mutual information (mean log c over active inputs minus log
        mean c); the paper searches λ ∈ {{0, 0.01, …, 1}}. WPMI is linear in λ.
    tr_top_fraction : float in (0, 1], default {DEFAULTS['tr_top_fraction']}
        Top-and-random: the top pool is each unit's ``⌈tr_top_fraction·n⌉`` largest activations (ties at the
        cutoff go to the lower input index).
    tr_n_top : int, default {DEFAULTS['tr_n_top']}
        Top-and-random: inputs drawn without replacement from the top pool (the whole pool if smaller).
    tr_n_random : int, default {DEFAULTS['tr_n_random']}
        Top-and-random: inputs drawn without replacement, uniformly from the remaining inputs.
    ties : {{"average", "reference"}}, default "{DEFAULTS['ties']}"
        ``"average"`` is statistically correct: tied values share their average rank (Spearman of any
        vector with itself is 1; AUC counts ties ½), top-α keeps every input tied at the cutoff active, and
        Pearson is the textbook estimate. ``"reference"`` reproduces the published numbers of paper 000
        (its theoretical sanity checks, Tables C.1–C.4): ties are broken by float32 noise ``x + 1e-7·U``
        followed by a stable sort (so ranks are never averaged and equal values near 1 are ordered by input
        position — Spearman of a binary vector with itself is ≈ 0.78 at γ = 0.5; this artefact largely
        explains Spearman's collapse in Table 4), every Pearson-type value (correlation, Spearman, both T&R
        variants) carries the factor (n−1)/n of the authors' implementation, AUC and inverse AUC of a label
        with no positive or no negative input are 0 (their clipped denominator) instead of 0.5, and
        top-and-random on units whose activations are all 0/1 uses *all* positive inputs plus
        ``tr_n_random`` random ones (their binary variant). Top-α is the same in both modes (``top_alpha``),
        so AUPRC, cosine, WPMI, MAD and the confusion metrics are identical in both modes.
    seed : int ≥ 0, default {DEFAULTS['seed']}
        Seeds the top-and-random samples and the reference-mode noise. Each quantity uses its own stream
        ``numpy.random.default_rng([seed, stream])`` and each unit/concept its own row of it, so results do
        not depend on the backend, on chunking, or on which other pairs are scored.
    device : None or torch device, default None
        ``None`` computes with numpy; ``"cpu"``, ``"cuda"``, ``torch.device(...)`` with torch on that
        device. Both give the same numbers to 1e-6 (0/1 products are exact float32 GEMMs, everything else
        float64; random numbers always come from numpy).
    chunk_size : int, optional
        Concepts per chunk (pairs per group for ``score_pairs``). By default chosen from ``memory_budget``.
    memory_budget : int or {{"auto", "unbounded"}}, default "{DEFAULTS['memory_budget']}"
        Working memory of the call beyond its inputs, in bytes (at least 16 MiB). Units are scored in blocks and
        concepts in chunks whose features and temporaries fit in it (:mod:`neuroneval.metrics.budget`); results
        do not depend on it beyond float rounding. ``"auto"``: the size of the inputs as float32,
        ``4·n·(K + C)`` bytes, at least 256 MiB, so a call peaks at about 2–3× its inputs. ``"unbounded"``:
        every unit in one block and 2**24-element temporaries (the fastest; ≈ 20× the inputs for rank metrics
        on large tables).
    progress : bool, default False
        Show a tqdm bar on stderr over the call's blocks once it has run for 2 s.
    cache : FeatureCache, optional
        Keeps the units' prepared features (float64 rows, ranks, standardized rows, top-α binarizations) for
        later calls on the same activations, up to its byte budget: scoring several metrics on one layer
        prepares each feature once (``score_pairs`` shares them when given the same ``units``). Results are
        unchanged.

    Returns
    -------
    numpy.ndarray of float64, shape (K, C), or DataFrame
        ``s_M(a_k, c_t)``; for every metric a larger value means a better explanation. When either input is a
        DataFrame, a DataFrame: index ``unit`` = the activations' column names, columns ``concept`` = the
        concepts' column names (an array side is labelled 0…K−1 or 0…C−1). Arrays in, ndarray out.

    Notes
    -----
    Simulation framing (000 App. A.2, docs/design.md §3.2): the binarized neuron ``B(a)`` is the label and the
    concept ``c`` is the prediction, so Recall = TP/|B(a)| and Precision = TP/|B(c)|; ``B(c) = 1[c ≥ 0.5]``
    (Eq. A.2). "Inverse" metrics swap the roles (activation = score, ``B(c)`` = label).
    ``TP = B(a)·B(c)``, ``FN = B(a)·(1 − B(c))``, ``FP = (1 − B(a))·B(c)``, ``TN = (1 − B(a))·(1 − B(c))``.

    Metrics ([value range] (kind; metric-specific parameters) and definition):

{_metric_lines()}

    Top-and-random samples (``correlation_tr``, ``spearman_tr``): per unit, ``tr_n_top`` inputs from its top
    ``⌈tr_top_fraction·n⌉`` plus ``tr_n_random`` uniform ones (50 inputs by default), drawn once per call.

    Undefined cases get these values, and each distinct case raises one ``NeuronEvalWarning`` per call:

    * zero-variance vector (constant activations or concept; also on a T&R sample): correlation, Spearman,
      T&R correlations = 0; all-zero vector: cosine = 0;
    * concept with no positive (``c < 0.5`` everywhere), or every input positive: precision, inverse
      balanced accuracy terms 0/0 = 0; inverse AUC = 0.5; inverse AUPRC = 0; MAD = 0;
    * top-α binarization with every input active (constant unit, α = 1, ties at the cutoff): terms
      divided by the number of inactive inputs (balanced accuracy's TN rate) = 0; AUC = 0.5;
    * 0/0 in recall, F1, IoU (impossible here, since ``|B(a)| ≥ 1``) = 0;
    * WPMI: ``log c`` uses ``max(c, 1e-8)`` (part of the definition, no warning); a concept with mean 0
      has ``log mean(c)`` replaced by ``log 1e-8`` (warned).

    Cost: all pairs come from a few GEMMs (confusion counts ``B(A)ᵀB(C)``; standardized or rank matrices
    for correlation, Spearman, cosine, AUC; ``B(A)ᵀ log C`` for WPMI; ``A'ᵀB(C)`` for MAD), one sort per
    concept and unit for ranks, and for AUPRC a sort of each label's positives (sparse labels) or one sort
    per score vector with cumulative sums over all labels (dense labels). Binary concept tables give AUC and
    AUPRC in closed form from the confusion counts.

    Raises
    ------
    ValueError
        Unknown metric, malformed inputs (not 2-D, different numbers of rows, non-finite, non-numeric), a
        concept value outside [0, 1] (the message names its row and column), or a parameter out of range or
        not used by the metric.
    TypeError
        An unknown parameter name.

    Examples
    --------
    The "pet" neuron of paper 000, Table 2 (inputs: dog, cat, dog, bear, monkey, flamingo):

    >>> import numpy as np
    >>> pet_neuron = np.array([[1.0], [1.0], [1.0], [0.0], [0.0], [0.0]])
    >>> concepts = np.array([[1, 0, 1, 1], [0, 1, 1, 1], [1, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 1]])
    >>> score("iou", pet_neuron, concepts, alpha=0.5).round(2).tolist()  # dog, cat, pet, animal
    [[0.67, 0.33, 1.0, 0.5]]

    Tables with ``input_id`` are matched by id, whatever their row order, and give a labelled result:

    >>> import pandas as pd
    >>> units = pd.DataFrame({{"input_id": [3, 1, 2, 0], "unit_a": [0.0, 2.0, 0.1, 3.0]}})
    >>> labels = pd.DataFrame({{"input_id": [0, 1, 2, 3], "dog": [1.0, 1.0, 0, 0], "cat": [0.0, 0, 1, 1]}})
    >>> score("iou", units, labels, alpha=0.5).loc["unit_a"].to_dict()
    {{'dog': 1.0, 'cat': 0.0}}
    """
