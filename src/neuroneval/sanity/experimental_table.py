"""The experimental sanity test of every metric on one setting (paper 000 Sec. 4.3, Eq. 9–12; Table 3's rows).

For each metric, with the α/λ chosen for it on the setting's validation units, the Missing and Extra Labels
tests perturb the concepts of the test units' correct pairs; Decrease Acc = mean over pairs of 1[Δs < −ε]
(Eq. 11). Metrics of ``sanity.tie_metrics`` run in both tie modes, the others in ``sanity.ties``. Metrics are
scored in :func:`neuroneval.meta.scoring_order` so that unit features (ranks, …) are computed once and shared.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from neuroneval.metrics import options_for
from neuroneval.progress import progress_bar
from neuroneval.sanity.experimental import experimental_test
from neuroneval.sanity.options import SanityOptions
from neuroneval.sanity.units import SanityUnits, chosen_params


def experimental_table(units: SanityUnits, metrics: Sequence[str], hyperparameters: pd.DataFrame,
                       sanity: SanityOptions, *, setting: str, feature_cache_gib: float) -> pd.DataFrame:
    """Rows of :func:`~neuroneval.sanity.experimental.experimental_test` for every metric and tie mode, in
    ``metrics`` order, with ``setting`` first and the metric's ``alpha``/``lam`` (NaN where unused) appended.

    ``hyperparameters``: chosen α/λ indexed by metric; ``sanity``: the ``sanity:`` block (``ties``,
    ``tie_metrics`` (:meth:`SanityOptions.tie_modes`), ``experimental.draws``, ``epsilon``, ``seed``);
    ``feature_cache_gib``: memory for unit features shared by the metrics.
    """
    from neuroneval.meta import scoring_order
    from neuroneval.metrics import FeatureCache

    cache = FeatureCache(max_bytes=int(feature_cache_gib * 2**30))
    pairs = units.test_pairs
    frames = {}
    for metric in progress_bar(scoring_order(list(metrics)), desc=f"sanity {setting}", unit="metric"):
        params = chosen_params(hyperparameters, metric)
        for ties in sanity.tie_modes(metric):
            table = experimental_test(metric, units.activations, units.concepts, pairs,
                                      draws=sanity.experimental.draws, epsilon=sanity.epsilon, seed=sanity.seed,
                                      options=options_for(metric, ties=ties, **params), cache=cache)
            frames[metric, ties] = table.assign(setting=setting, alpha=params.get("alpha", np.nan),
                                                lam=params.get("lam", np.nan))
    tidy = pd.concat([frames[metric, ties] for metric in metrics for ties in sanity.tie_modes(metric)],
                     ignore_index=True)
    tidy = with_expected_decrease(tidy, units)
    return tidy[["setting", *[column for column in tidy.columns if column != "setting"]]]


def with_expected_decrease(table: pd.DataFrame, units: SanityUnits) -> pd.DataFrame:
    """``table`` with the closed-form expectation of each one-draw random Missing Labels row of a binary metric
    (:mod:`neuroneval.sanity.decrease_odds`), NaN elsewhere: ``expected_decrease_acc`` and, to read it by,
    ``median_active`` (|B(a)| at the row's α) and ``median_positives`` (|B(c)|) over the test pairs."""
    from neuroneval.sanity.decrease_odds import BINARY_CONCEPTS_ONLY, COUNT_METRICS, mean_decrease_odds, pair_counts

    out = table.assign(expected_decrease_acc=np.nan, median_active=np.nan, median_positives=np.nan)
    pairs = units.test_pairs
    tested = units.concepts[:, np.unique(pairs[:, 1])] if len(pairs) else units.concepts[:, :0]
    binary = bool(np.all((tested == 0) | (tested == 1)))
    for index, row in table.iterrows():
        if not (row["metric"] in COUNT_METRICS and row["test"] == "missing" and row["perturbation"] == "random"
                and row["draws"] == 1 and pd.notna(row["alpha"]) and len(pairs)
                and (binary or row["metric"] not in BINARY_CONCEPTS_ONLY)):
            continue
        alpha = float(row["alpha"])
        counts = pair_counts(units.activations, units.concepts, pairs, alpha=alpha)
        out.loc[index, "expected_decrease_acc"] = mean_decrease_odds(
            row["metric"], counts, units.activations.shape[0], keep=float(row["strength"]),
            epsilon=float(row["epsilon"]))
        out.loc[index, ["median_active", "median_positives"]] = np.median(counts[:, 1:], axis=0)
    return out
