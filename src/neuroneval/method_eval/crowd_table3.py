"""The explanation methods' simple explanations scored by a simulated crowd study (paper 001 Sec. 4–5, Table 3).

For unit k and the concept t its explanation shows (:func:`~neuroneval.cosy.shown_concept.shown_concept`), a
study of ``n_inputs`` inputs and ``n_raters`` raters per input:

1. draws ``S`` inputs with replacement from the sampling distribution q (001 Eq. 4: ``q ∝ |ā·c̄_pseudo + ε|`` for
   ``pseudo``; :func:`neuroneval.crowd.sampling_distribution`), with importance weights ``p/q``;
2. asks each rater "does this input match the explanation?": the truth is ``B(c_t(x)) = 1[c_t(x) ≥ 0.5]`` from
   the ground-truth concept table, flipped with probability η (the rater error; 001 Sec. 4.2), every draw of one
   input showing the same ratings;
3. aggregates the α positive answers of m raters into a concept value (001 Eq. 7–8; Bayes with a uniform prior β,
   or with the pseudo-label prior; :func:`neuroneval.crowd.aggregate`);
4. estimates the correlation ρ_S between the unit and the aggregated concept (001 Eq. 5–6;
   :func:`neuroneval.crowd.is_correlation`), averaged over ``n_trials`` studies.

Each unit's draws come from a generator seeded with (seed, CRC-32 of "setting/unit", CRC-32 of the concept),
so a unit explained alike by two methods gets the same study (common random numbers). The ceiling rows
(:func:`ideal_crowd_scores`) run the same study on the world's ideal units (:mod:`neuroneval.explain.ideal`).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from neuroneval.crowd.study_options import SimulatedRatersOptions
from neuroneval.options import OptionsError, check_choice, check_range

#: Columns of the per-unit crowd scores (one row per unit and aggregation method).
CROWD_SCORE_COLUMNS = ["setting", "method", "unit", "concept", "aggregation", "crowd_correlation",
                       "label_correlation", "n_inputs", "n_raters", "n_trials"]


@dataclass(frozen=True)
class CrowdBenchmarkOptions(SimulatedRatersOptions):
    """The ``explain.crowd`` block (paper 001 Sec. 5.2: 90 inputs, 2 raters, Bayes aggregation): the simulated
    raters' knobs (:class:`~neuroneval.crowd.study_options.SimulatedRatersOptions`: ``rater_error``,
    ``uniform_prior``, ``prior_clip``, ``n_trials`` studies averaged per unit, ``epsilon``, ``ddof``, ``seed``)
    and these.

    Attributes
    ----------
    settings, methods
        Explained settings and the Table 1 method files studied (``random_l1`` and ``truth`` are always added).
    max_units
        Units per setting (seed-hashed subset); None = all.
    n_inputs, n_raters
        Inputs drawn per study and raters per input.
    sampling
        Sampling distribution q (:data:`neuroneval.crowd.SAMPLING_METHODS`).
    aggregation
        Aggregation methods (:data:`neuroneval.crowd.AGGREGATION_METHODS`); one score per method.
    """

    settings: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    max_units: int | None = None
    n_inputs: int = 90
    n_raters: int = 2
    sampling: str = "pseudo"
    aggregation: tuple[str, ...] = ("bayes_uniform", "bayes_pseudo")

    def validate(self) -> None:
        from neuroneval.crowd import AGGREGATION_METHODS, SAMPLING_METHODS

        super().validate()
        if self.max_units is not None:
            check_range(self, "max_units", 1, integer=True)
        check_range(self, "n_inputs", 3, integer=True)
        check_range(self, "n_raters", 1, integer=True)
        check_choice(self, "sampling", SAMPLING_METHODS)
        unknown = [name for name in self.aggregation if name not in AGGREGATION_METHODS]
        if not self.aggregation or unknown:
            raise OptionsError(f"CrowdBenchmarkOptions.aggregation must name one or more of "
                               f"{list(AGGREGATION_METHODS)}, got {list(self.aggregation)}")

    @property
    def needs_pseudo(self) -> bool:
        """Whether the study reads pseudo-labels (pseudo sampling or the pseudo-label prior)."""
        return self.sampling == "pseudo" or "bayes_pseudo" in self.aggregation


def simulated_study(activations: np.ndarray, labels: np.ndarray, pseudo: np.ndarray | None,
                    options: CrowdBenchmarkOptions, rng: np.random.Generator) -> dict[str, float]:
    """ρ_S of one unit, averaged over ``options.n_trials`` simulated studies, per aggregation method.

    ``activations`` (n,), ``labels`` (n,) in {0, 1} (whether each input matches the explanation) and ``pseudo``
    (n,) pseudo-label scores of the explanation's concept (needed by ``pseudo`` sampling and ``bayes_pseudo``).
    """
    from neuroneval.crowd import aggregate, draw_indices, importance_weights, is_correlation, sampling_distribution

    if options.needs_pseudo and pseudo is None:
        raise ValueError("the crowd study needs pseudo-labels (pseudo sampling or the bayes_pseudo prior)")
    q = sampling_distribution(options.sampling, activations, pseudo, epsilon=options.epsilon)
    weights = importance_weights(q)
    draws = draw_indices(q, (options.n_trials, options.n_inputs), rng)
    estimates: dict[str, list[float]] = {method: [] for method in options.aggregation}
    for trial in draws:
        shown, position = np.unique(trial, return_inverse=True)
        flips = rng.random((len(shown), options.n_raters)) < options.rater_error
        positives = (labels[shown, None].astype(bool) != flips).sum(axis=1)[position]
        for method in options.aggregation:
            concept = aggregate(method, positives, options.n_raters, rater_error=options.rater_error,
                                uniform_prior=options.uniform_prior,
                                pseudo_labels=None if pseudo is None else pseudo[trial],
                                prior_clip=options.prior_clip)
            estimates[method].append(float(is_correlation(activations[trial], concept, weights[trial],
                                                          ddof=options.ddof)))
    return {method: float(np.mean(values)) for method, values in estimates.items()}


def pearson(first: np.ndarray, second: np.ndarray) -> float:
    """Pearson correlation of two vectors; NaN when either is constant."""
    first, second = first - first.mean(), second - second.mean()
    scale = np.sqrt((first @ first) * (second @ second))
    return float(first @ second / scale) if scale > 0 else float("nan")


def crowd_unit_scores(*, setting: str, method: str, units: Sequence[str], concepts: Sequence[str | None],
                      activations: np.ndarray, unit_names: Sequence[str], labels: np.ndarray,
                      pseudo: np.ndarray | None, concept_names: Sequence[str],
                      options: CrowdBenchmarkOptions) -> pd.DataFrame:
    """Rows of :data:`CROWD_SCORE_COLUMNS`: the simulated study of each (unit, shown concept) of one method.

    ``activations`` (n, K) over ``unit_names``; ``labels`` (n, C) ground-truth concept values and ``pseudo``
    (n, C) pseudo-label scores over ``concept_names``. ``label_correlation`` is the noise-free full-data ρ of
    the unit with ``B(c_t)`` (what the study estimates). A unit whose explanation shows no concept gets NaN.
    """
    from neuroneval.concepts.threshold import concept_positive

    unit_column = {str(name): k for k, name in enumerate(unit_names)}
    concept_column = {name: j for j, name in enumerate(concept_names)}
    rows = []
    for unit, concept in tqdm(list(zip(units, concepts, strict=True)), desc=f"crowd {setting}/{method}",
                              mininterval=5.0, disable=len(units) < 50):
        base = {"setting": setting, "method": method, "unit": unit, "concept": concept or "",
                "n_inputs": options.n_inputs, "n_raters": options.n_raters, "n_trials": options.n_trials}
        if not concept:
            rows += [{**base, "aggregation": name, "crowd_correlation": np.nan, "label_correlation": np.nan}
                     for name in options.aggregation]
            continue
        if concept not in concept_column:
            raise ValueError(f"{setting}/{method}: unit {unit} shows concept {concept!r}, not a column of the labels")
        unit_activations = activations[:, unit_column[unit]].astype(np.float64)
        truth = concept_positive(labels[:, concept_column[concept]]).astype(np.float64)
        unit_pseudo = None if pseudo is None else pseudo[:, concept_column[concept]].astype(np.float64)
        rng = np.random.default_rng([options.seed, zlib.crc32(f"{setting}/{unit}".encode()),
                                     zlib.crc32(concept.encode())])
        scores = simulated_study(unit_activations, truth, unit_pseudo, options, rng)
        full = pearson(unit_activations, truth)
        rows += [{**base, "aggregation": name, "crowd_correlation": value, "label_correlation": full}
                 for name, value in scores.items()]
    return pd.DataFrame(rows, columns=CROWD_SCORE_COLUMNS)


def ideal_crowd_scores(truth: pd.DataFrame, ideal: np.ndarray, unit_names: Sequence[str], *, setting: str,
                       labels: np.ndarray, pseudo: np.ndarray | None, concept_names: Sequence[str],
                       options: CrowdBenchmarkOptions) -> pd.DataFrame:
    """The simulated crowd study (001 Sec. 4–5) of the truth explanations on the ideal units (method
    :data:`~neuroneval.explain.ideal.IDEAL`).

    ``truth`` holds the ``truth`` explanation rows of the studied units, ``ideal`` (n, K) the ideal units over
    ``unit_names`` on the held-out inputs (:func:`~neuroneval.meta.ideal_units.load_ideal_units`), ``labels`` /
    ``pseudo`` the concept values on the same inputs; units without an ideal column are left out. Same rows as
    :func:`crowd_unit_scores`, which runs the study exactly as for every method.
    """
    from neuroneval.cosy.shown_concept import shown_concepts
    from neuroneval.explain.ideal import IDEAL

    kept = truth[truth["unit"].astype(str).isin(set(map(str, unit_names)))]
    return crowd_unit_scores(setting=setting, method=IDEAL, units=kept["unit"].astype(str).tolist(),
                             concepts=shown_concepts(kept), activations=ideal, unit_names=unit_names, labels=labels,
                             pseudo=pseudo, concept_names=concept_names, options=options)
