"""Paper 000's Tables C.1–C.4 as printed, the authors' notebook outputs beside them, and why the two differ.

The printed tables (:data:`neuroneval.published.TABLE_C1` … ``TABLE_C4``, :func:`load_printed_reference`) are the
reference of :func:`~neuroneval.sanity.theoretical_reference.compare_with_reference`; the saved outputs of the
authors' ``theoretical_sanity_check.ipynb`` (:mod:`neuroneval.sanity.reference_data`) stay beside them
(:func:`published_reference`). Where a printed cell differs from the notebook's, :func:`printed_vs_notebook` says
which of the explanations of docs/fidelity.md applies; :func:`span_factor` measures the constant that relates the
printed MAD and WPMI cells to the notebook's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from neuroneval import published

#: Metrics whose printed Δs is the notebook's divided by one constant: the printed run normalised them by another
#: ``max − min`` than the notebook's (docs/fidelity.md; :func:`span_factor` measures the constant).
RESCALED_METRICS = ("mad", "wpmi")
#: Cells printed with a typo: (metric, test, γ) → what the notebook and every neighbouring column show.
PRINTED_TYPOS = {("cosine", "extra", 0.0001): "sign lost: printed +0.1456, the notebook and the other columns −0.146"}
#: Why a printed cell differs from the notebook's, by label (see :func:`printed_vs_notebook`).
DIFFERENCE_LABELS = {
    "same": "equal within the printed rounding",
    "span": "another max − min normalises the printed Δs (printed = notebook / a constant per metric)",
    "random draw": "one random draw each (tie noise or T&R sample of the one original score s(a, c))",
    "coin flip": "expected Δs at −ε: Decrease Acc is a coin flip per draw",
    "sampling": "two runs of 1,000 draws each (sampling error of the mean)",
    "typo": "a typo in the printed table",
}



def load_printed_reference() -> pd.DataFrame:
    """Tables C.1–C.4 as printed in paper 000 (:mod:`neuroneval.published`), one row per metric, γ and test.

    Returns
    -------
    pandas.DataFrame
        Columns ``metric`` (registry name), ``gamma``, ``test``, ``printed_mean_delta`` (C.3/C.4),
        ``printed_decrease_acc`` (C.1/C.2, a fraction) and ``printed_limit`` (the ``lim γ→0`` column, NaN where the
        paper prints "-").
    """
    rows = []
    for test, accuracy_table, delta_table in (("missing", published.TABLE_C1, published.TABLE_C3),
                                              ("extra", published.TABLE_C2, published.TABLE_C4)):
        for metric, accuracy in accuracy_table.items():
            delta = delta_table[metric]
            for gamma in published.TABLE_C_GAMMAS:
                rows.append({"metric": metric, "gamma": gamma, "test": test,
                             "printed_mean_delta": delta.at(gamma), "printed_decrease_acc": accuracy.at(gamma),
                             "printed_limit": np.nan if delta.limit is None else delta.limit})
    return pd.DataFrame(rows)


def span_factor(reference: pd.DataFrame, metric: str) -> float:
    """Median of notebook Δs / printed Δs over the metric's cells with |printed Δs| ≥ 0.01 (a ratio of two
    normalising spans when the printed run used another ``max − min``; 1 when the two agree).

    ``reference`` is :func:`published_reference`. The printed rounding to 4 decimals bounds each cell's ratio
    to ±1e-4/|printed|, so cells near 0 are left out.
    """
    rows = reference[(reference["metric"] == metric) & (reference["ref_source"] == "printed table")
                     & (reference["ref_mean_delta"].abs() >= 0.01)]
    if rows.empty:
        raise ValueError(f"{metric!r} has no printed Δs of at least 0.01 to compare with the notebook")
    return float(np.median(rows["notebook_mean_delta"] / rows["ref_mean_delta"]))


def printed_vs_notebook(metric: str, test: str, gamma: float, *, kind: str, delta_difference: float,
                        accuracy_difference: float) -> str:
    """Label (a key of :data:`DIFFERENCE_LABELS`) of why a printed cell differs from the notebook's.

    ``same`` when Δs agree within the printed rounding (1e-4, plus float slack) and Decrease Acc within 0.1
    point; otherwise ``typo`` (:data:`PRINTED_TYPOS`), ``span`` (:data:`RESCALED_METRICS`), ``random draw``
    (``kind`` stochastic), ``coin flip`` (``kind`` boundary) or ``sampling``.
    """
    if abs(delta_difference) <= 1e-4 + 1e-9 and abs(accuracy_difference) <= 1e-3 + 1e-9:
        return "same"
    if (metric, test, round(float(gamma), 6)) in PRINTED_TYPOS:
        return "typo"
    if metric in RESCALED_METRICS:
        return "span"
    if kind == "stochastic":
        return "random draw"
    if kind == "boundary":
        return "coin flip"
    return "sampling"


def published_reference(notebook: pd.DataFrame) -> pd.DataFrame:
    """The printed Tables C.1–C.4 as the reference, the notebook's saved outputs beside them.

    Parameters
    ----------
    notebook : DataFrame
        :func:`~neuroneval.sanity.theoretical_reference.load_theoretical_reference` output (its ``kind``
        ``"stochastic"`` marks the metrics whose values are random draws).

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`load_theoretical_reference` where ``ref_mean_delta``/``ref_decrease_acc`` are the
        printed values (the notebook's for the combinations of App. E.6, which Tables C.1–C.4 do not print),
        plus ``ref_source`` (``printed table`` or ``authors' code output``), ``notebook_mean_delta``,
        ``notebook_decrease_acc``, ``printed_limit`` and ``printed_vs_notebook`` (a label of
        :data:`DIFFERENCE_LABELS`; empty where nothing is printed). ``kind`` is judged on the printed Decrease Acc.
    """
    stochastic = set(notebook.loc[notebook["kind"] == "stochastic", "metric"])
    notebook = notebook.assign(gamma_key=notebook["gamma"].round(6))
    printed = load_printed_reference()
    printed = printed.assign(gamma_key=printed["gamma"].round(6)).drop(columns="gamma")
    joined = notebook.drop(columns="kind").rename(columns={"ref_mean_delta": "notebook_mean_delta",
                                                          "ref_decrease_acc": "notebook_decrease_acc"}).merge(
        printed, on=["metric", "gamma_key", "test"], how="left")
    has_printed = joined["printed_mean_delta"].notna()
    joined["ref_mean_delta"] = joined["printed_mean_delta"].where(has_printed, joined["notebook_mean_delta"])
    joined["ref_decrease_acc"] = joined["printed_decrease_acc"].where(has_printed, joined["notebook_decrease_acc"])
    joined["ref_source"] = np.where(has_printed, "printed table", "authors' code output")
    accuracy = joined["ref_decrease_acc"]
    deterministic = ~joined["metric"].isin(stochastic)
    joined["kind"] = np.where(~deterministic, "stochastic",
                              np.where((accuracy > 0) & (accuracy < 1), "boundary", "deterministic"))
    joined["printed_vs_notebook"] = [
        printed_vs_notebook(row.metric, row.test, row.gamma, kind=row.kind,
                            delta_difference=row.printed_mean_delta - row.notebook_mean_delta,
                            accuracy_difference=row.printed_decrease_acc - row.notebook_decrease_acc)
        if printed_row else ""
        for row, printed_row in zip(joined.itertuples(index=False), has_printed, strict=True)
    ]
    columns = ["metric", "reference_name", "gamma", "test", "ref_mean_delta", "ref_decrease_acc", "kind",
               "ref_source", "notebook_mean_delta", "notebook_decrease_acc", "printed_limit", "printed_vs_notebook"]
    return joined[columns]
