"""The ablations of the experimental sanity test (paper 000 App. E), one table per (ablation, setting).

* ``strength`` (App. E.1): Decrease Acc at each kept fraction r₋ of the Missing Labels test (Eq. 9 generalised)
  and each multiplier r₊ of the Extra Labels test (Eq. 12 generalised);
* ``draws`` (App. E.5: Decrease Acc with the first d draws of Δs averaged, d in ``ablations.draws``) and the ε
  ablation (App. E.4: each ε at ``experimental.draws`` draws), both read off one run of the largest number of draws;
* ``semantic`` (App. E.3): real sub/superclasses from the concept hierarchy (largest child, smallest parent)
  against random subsets/supersets on the same test pairs.

Every metric uses the α/λ chosen for it on the setting's validation units; ``sanity`` is the ``sanity:`` block of
params.yaml as :class:`~neuroneval.sanity.options.SanityOptions` (``seed``, ``epsilon``, ``experimental.draws``,
``ablations``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from neuroneval.metrics import MetricOptions, options_for
from neuroneval.progress import progress_bar
from neuroneval.sanity.delta import decrease_accuracy, summarize_deltas
from neuroneval.sanity.experimental import experimental_draw_deltas, experimental_test
from neuroneval.sanity.options import SanityOptions
from neuroneval.sanity.perturb import TESTS, semantic_subclasses, semantic_superclass
from neuroneval.sanity.units import SanityUnits, chosen_params

#: The ablations, each one rule job per setting (``results/sanity/ablations/<ablation>/<setting>.csv``).
ABLATIONS = ("strength", "draws", "semantic")
#: Columns of an ablation table, in order.
ABLATION_COLUMNS = ["ablation", "setting", "metric", "test", "ties", "perturbation", "strength", "draws", "epsilon",
                    "seed", "span", "mean_delta", "decrease_acc", "n_pairs", "alpha", "lam"]


def ablation_table(ablation: str, units: SanityUnits, metrics: Sequence[str], hyperparameters: pd.DataFrame,
                   sanity: SanityOptions, *, setting: str,
                   hierarchy: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """One ablation (:data:`ABLATIONS`) of every metric in ``sanity.ties`` on ``units``: the tidy table
    (:data:`ABLATION_COLUMNS`). ``hyperparameters``: the chosen α/λ indexed by metric; ``hierarchy``: concept →
    children, needed by ``semantic`` only."""
    if ablation not in ABLATIONS:
        raise ValueError(f"unknown ablation {ablation!r} ({' | '.join(ABLATIONS)})")
    frames = []
    for metric in progress_bar(metrics, desc=f"ablation {ablation}", unit="metric"):
        params = chosen_params(hyperparameters, metric)
        options = options_for(metric, ties=sanity.ties, **params)
        if ablation == "strength":
            new = _strength_rows(units, metric, options, sanity)
        elif ablation == "draws":
            new = _draw_rows(units, metric, options, sanity)
        else:
            new = _semantic_rows(units, metric, options, sanity, hierarchy or {})
        frames += [frame.assign(alpha=params.get("alpha", np.nan), lam=params.get("lam", np.nan)) for frame in new]
    tidy = pd.concat(frames, ignore_index=True).assign(setting=setting)
    return tidy.reindex(columns=ABLATION_COLUMNS)


def _strength_rows(units: SanityUnits, metric: str, options: MetricOptions, sanity: SanityOptions
                   ) -> list[pd.DataFrame]:
    """App. E.1: Decrease Acc at each r₋ (missing) and r₊ (extra)."""
    def run(test: str, keep: float | None = None, multiplier: float | None = None) -> pd.DataFrame:
        return experimental_test(metric, units.activations, units.concepts, units.test_pairs, tests=[test],
                                 keep=keep, multiplier=multiplier, draws=sanity.experimental.draws,
                                 epsilon=sanity.epsilon, seed=sanity.seed, options=options)

    frames = [run("missing", keep=keep) for keep in sanity.ablations.keep]
    frames += [run("extra", multiplier=multiplier) for multiplier in sanity.ablations.multiplier]
    return [frame.assign(ablation="strength") for frame in frames]


def _draw_rows(units: SanityUnits, metric: str, options: MetricOptions, sanity: SanityOptions) -> list[pd.DataFrame]:
    """App. E.5 (Decrease Acc with the first d draws averaged, d in ``ablations.draws``) and App. E.4 (each ε,
    at ``experimental.draws`` draws), both read off one run of the largest number of draws."""
    ablations, base_draws = sanity.ablations, sanity.experimental.draws
    most = max([*ablations.draws, base_draws])
    frames = []
    for test in TESTS:
        deltas, tested, span, _ = experimental_draw_deltas(metric, units.activations, units.concepts,
                                                           units.test_pairs, test=test, draws=most,
                                                           seed=sanity.seed, options=options)
        common = {"metric": metric, "test": test, "perturbation": "random", "ties": options.ties, "seed": sanity.seed,
                  "span": span, "n_pairs": len(tested)}
        for draws in ablations.draws:
            summary = summarize_deltas(deltas[:, :draws].mean(axis=1), sanity.epsilon)
            frames.append(pd.DataFrame([{**common, "ablation": "draws", "draws": draws,
                                         "epsilon": sanity.epsilon, **summary}]))
        base = deltas[:, :base_draws].mean(axis=1)
        for epsilon in ablations.epsilons:
            frames.append(pd.DataFrame([{**common, "ablation": "epsilon", "draws": base_draws, "epsilon": epsilon,
                                         "mean_delta": float(base.mean()),
                                         "decrease_acc": decrease_accuracy(base, epsilon)}]))
    return frames


def _semantic_pairs(units: SanityUnits, test: str, hierarchy: Mapping[str, Sequence[str]]) -> np.ndarray:
    """Test pairs whose concept has a subclass (missing) or a superclass (extra) among the setting's concepts."""
    names = units.concept_names
    if test == "missing":
        testable = semantic_subclasses(names, hierarchy)
    else:
        testable = semantic_superclass(names, hierarchy, units.concepts.sum(axis=0, dtype=np.float64))
    pairs = units.test_pairs
    return pairs[np.isin(pairs[:, 1], list(testable))]


def _semantic_rows(units: SanityUnits, metric: str, options: MetricOptions, sanity: SanityOptions,
                   hierarchy: Mapping[str, Sequence[str]]) -> list[pd.DataFrame]:
    """App. E.3: semantic sub/superclasses (largest child, smallest parent) vs random ones on the same units."""
    frames = []
    for test in TESTS:
        pairs = _semantic_pairs(units, test, hierarchy)
        if len(pairs) == 0:
            continue
        for perturbation in ("random", "semantic"):
            frames.append(experimental_test(metric, units.activations, units.concepts, pairs, tests=[test],
                                            perturbation=perturbation, names=units.concept_names,
                                            hierarchy=hierarchy, subclass_rule=sanity.ablations.subclass_rule,
                                            draws=sanity.experimental.draws, epsilon=sanity.epsilon,
                                            seed=sanity.seed, options=options))
    return [frame.assign(ablation="semantic") for frame in frames]
