"""The sanity-test steps of the workflow (paper 000 Sec. 4, App. C–F), one function per Snakemake rule.

Per setting: ``sanity_hyperparameters`` (α/λ of every metric: Table 4's validation choice, reused from
``results/meta/<setting>.csv`` where it exists, otherwise searched the same way; α fixed to the truth α for
IoU-truth settings, App. F.1) → ``sanity_experimental`` (Missing/Extra Labels tests on the setting's test
units). Once: ``sanity_theoretical`` per tie mode, ``sanity_ablation`` per ablation (App. E.1, E.3–E.5),
``sanity_shift`` (App. E.2). The remaining steps only reshape those tidy files into the paper's tables.

Every output carries a ``ties`` column (or, in ``results/ties.csv``, one row per mode). Random choices are
seeded from params (``sanity.seed``, ``meta.seed``), so equal params give byte-identical tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.pipeline.runner import StepIO

if TYPE_CHECKING:
    from neuroneval.sanity.units import SanityUnits


def _load_units(job: StepIO) -> SanityUnits:
    """Read the setting's tables and truth; split its known units as meta does (``val_fraction``,
    ``min_val_units``, ``seed``)."""
    from neuroneval.meta import MetaOptions, truth_mask, validation_split
    from neuroneval.sanity.units import SanityUnits
    from neuroneval.settings import load_setting

    setting, meta = job.params.setting, job.params.meta
    data = load_setting([Path(path) for path in job.input.activations], Path(job.input.concepts),
                        concept_prefixes=setting["concepts"].get("prefixes", []))
    truth = truth_mask(pd.read_csv(job.input.truth, dtype=str), data.unit_names, data.concept_names)
    val_units, test_units = validation_split(truth, MetaOptions.from_params(meta))
    return SanityUnits(data.activations, data.concepts, data.concept_names, truth, val_units, test_units)


def alpha_grid(setting: Mapping[str, Any], meta: Mapping[str, Any]) -> list[float]:
    """The α values searched: the truth α alone for IoU-truth settings (000 App. F.1), else ``meta.alpha_grid``."""
    from neuroneval.settings import truth_method

    truth = truth_method(setting)
    return [float(truth["alpha"])] if truth["method"] == "iou" else [float(a) for a in meta["alpha_grid"]]


def _search_row(setting_name: str, metric: str, units: SanityUnits, activations: np.ndarray,
                meta: Mapping[str, Any], grid: Sequence[float]) -> dict[str, Any]:
    """Meta-AUPRC of one metric with α/λ chosen on the validation units (000 Sec. 5), as a row of meta.csv."""
    from neuroneval.meta import evaluate_metric
    from neuroneval.metrics import MetricOptions

    result = evaluate_metric(metric, activations, units.concepts, units.truth, val_units=units.val_units,
                             test_units=units.test_units, alpha_grid=grid, lam_grid=meta["lam_grid"],
                             options=MetricOptions(ties=meta["ties"], seed=meta["seed"]))
    return {"setting": setting_name, "metric": metric, "ties": meta["ties"],
            "alpha": result.params.get("alpha", np.nan), "lam": result.params.get("lam", np.nan),
            "grid_tied": result.grid_tied, "val_auprc": result.val_auprc, "test_auprc": result.test_auprc,
            "val_units": result.n_val_units, "test_units": result.n_test_units, "concepts": units.concepts.shape[1],
            "inputs": activations.shape[0], "seed": meta["seed"]}


def _read_hyperparameters(path: str | Path) -> pd.DataFrame:
    return pd.read_csv(path).set_index("metric")


def sanity_hyperparameters(job: StepIO) -> None:
    """α/λ (and meta-AUPRC) of every metric a setting's sanity tests need, chosen on its validation units.

    The searched α grid keeps the α with ``α·n ≥ sanity.min_alpha_inputs`` (the paper's scale of α·n,
    :func:`neuroneval.sanity.alpha_scale.alpha_grid_at_scale`). Where that leaves ``meta.alpha_grid`` whole, rows
    of ``results/meta/<setting>.csv`` (Table 4's own choice) are reused as they are; the other metrics
    (combinations, everything for settings without a meta file, or every metric where α values were dropped)
    are searched the same way, with ``alpha_rule`` saying ``fixed`` where the grid is the truth α alone.
    """
    from neuroneval.progress import progress_bar
    from neuroneval.sanity.alpha_scale import alpha_grid_at_scale
    from neuroneval.settings import truth_method

    units = _load_units(job)
    meta = job.params.meta
    rule = "fixed" if truth_method(job.params.setting)["method"] == "iou" else "validation"
    full_grid = alpha_grid(job.params.setting, meta)
    grid = full_grid if rule == "fixed" else alpha_grid_at_scale(
        full_grid, units.activations.shape[0], min_alpha_inputs=job.params.min_alpha_inputs,
        where=f"sanity hyperparameters {job.wildcards.setting}")
    reused = pd.concat([pd.read_csv(path) for path in job.input.meta], ignore_index=True) \
        if job.input.meta and grid == full_grid else pd.DataFrame(columns=["metric"])
    reused = reused[reused["metric"].isin(list(job.params.metrics))]
    rows = [{**row, "alpha_rule": "validation"} for row in reused.to_dict("records")]
    searched = [metric for metric in job.params.metrics if metric not in set(reused["metric"])]
    for metric in progress_bar(searched, desc=f"hyperparameters {job.wildcards.setting}", unit="metric"):
        rows.append({**_search_row(job.wildcards.setting, metric, units, units.activations, meta, grid),
                     "alpha_rule": rule})
    order = {metric: index for index, metric in enumerate(job.params.metrics)}
    table = pd.DataFrame(rows).sort_values("metric", key=lambda col: col.map(order), ignore_index=True)
    io.write_csv(job.output[0], table)


def sanity_experimental(job: StepIO) -> None:
    """Missing and Extra Labels tests (000 Sec. 4.3, Eq. 9–12) of every metric on a setting's test units:
    :func:`neuroneval.sanity.experimental_table.experimental_table`."""
    from neuroneval.sanity.experimental_table import experimental_table
    from neuroneval.sanity.options import SanityOptions

    table = experimental_table(_load_units(job), job.params.metrics, _read_hyperparameters(job.input.hyperparameters),
                               SanityOptions.from_params(job.params.sanity), setting=job.wildcards.setting,
                               feature_cache_gib=job.params.meta["feature_cache_gib"])
    io.write_csv(job.output[0], table)


def sanity_theoretical(job: StepIO) -> None:
    """Theoretical tests on ideal binary units (000 App. C) in tie mode ``{ties}``: one row per metric, γ, test.

    Chunks of draws are scored in ``threads`` worker processes (the result does not depend on their number).
    """
    from neuroneval.sanity import theoretical_test
    from neuroneval.sanity.options import TheoreticalOptions

    theoretical = TheoreticalOptions.from_params(job.params.theoretical)
    table = theoretical_test(list(job.params.metrics), gammas=list(theoretical.gammas), n=theoretical.n,
                             draws=theoretical.draws, ties=job.wildcards.ties, epsilon=job.params.epsilon,
                             seed=job.params.seed, lam=theoretical.lam, device=theoretical.device,
                             workers=job.threads)
    io.write_csv(job.output[0], table.drop(columns="seconds"))  # wall time would break byte-identical reruns


def sanity_ablation(job: StepIO) -> None:
    """One ablation of 000 App. E (``{ablation}``: strength E.1, draws E.4 + E.5, semantic E.3) on one setting:
    :func:`neuroneval.sanity.ablations.ablation_table`."""
    from neuroneval.sanity.ablations import ablation_table
    from neuroneval.sanity.options import SanityOptions

    hierarchy = {}
    if job.wildcards.ablation == "semantic":
        hierarchy = io.read_concept_table(job.input.concepts)[1].get("hierarchy") or {}
    sanity = SanityOptions.from_params(job.params.sanity)
    table = ablation_table(job.wildcards.ablation, _load_units(job), job.params.metrics,
                           _read_hyperparameters(job.input.hyperparameters), sanity,
                           setting=job.params.setting_name, hierarchy=hierarchy)
    io.write_csv(job.output[0], table)


def sanity_shift(job: StepIO) -> None:
    """Table E.2 (000 App. E.2): meta-AUPRC before and after adding a constant to every activation.

    ``a'_k = a_k + constant``; both runs choose α/λ on the validation units and score in float64 (so the
    shift rounds no input onto another). Every metric except cosine is invariant to the shift (App. A.4).
    """
    from neuroneval.progress import progress_bar

    units = _load_units(job)
    meta, constant = job.params.meta, float(job.params.constant)
    original = units.activations.astype(np.float64)
    grid = alpha_grid(job.params.setting, meta)
    rows = []
    for metric in progress_bar(job.params.metrics, desc="shifted activations", unit="metric"):
        before = _search_row(job.params.setting_name, metric, units, original, meta, grid)
        after = _search_row(job.params.setting_name, metric, units, original + constant, meta, grid)
        rows.append({"metric": metric, "ties": meta["ties"], "setting": job.params.setting_name,
                     "constant": constant, "original_auprc": before["test_auprc"],
                     "shifted_auprc": after["test_auprc"], "delta_auprc": after["test_auprc"] - before["test_auprc"],
                     "original_alpha": before["alpha"], "shifted_alpha": after["alpha"],
                     "original_lam": before["lam"], "shifted_lam": after["lam"]})
    io.write_csv(job.output[0], pd.DataFrame(rows), float_format="%.4f")


def _concat(paths: Sequence[str]) -> pd.DataFrame:
    return pd.concat([pd.read_csv(path) for path in paths], ignore_index=True)


def _write_table(path: str | Path, table: pd.DataFrame) -> None:
    io.write_csv(path, table, float_format="%.4f")


def sanity_table3(job: StepIO) -> None:
    """Table 3 (experimental and theoretical Decrease Acc, pass at the threshold; the experimental mean over
    ``sanity.mean_settings``, the other settings beside it), Tables F.1–F.4, the tidy experimental results of
    every setting (``results/sanity_experimental.csv``) and the figure of Decrease Acc against α·n (the inputs
    each setting's chosen α selects; ``n`` from the ``inputs`` column of its hyperparameter file)."""
    from neuroneval.figures.sanity import plot_decrease_vs_alpha_inputs
    from neuroneval.sanity.options import SanityOptions
    from neuroneval.sanity.tables import paper_groups, per_setting_table, table3

    sanity = SanityOptions.from_params(job.params.sanity)
    experimental = _concat(job.input.experimental)
    theoretical = pd.read_csv(job.input.theoretical)
    metrics, settings, ties = list(sanity.metrics), list(sanity.settings), sanity.ties
    _write_table(job.output.table3, table3(experimental, theoretical, metrics=metrics, settings=settings, ties=ties,
                                           threshold=sanity.pass_threshold,
                                           mean_settings=sanity.averaged_settings()))
    for path, group in zip(job.output.detail, paper_groups(settings, (2, 2, 2)), strict=True):
        _write_table(path, per_setting_table(experimental, metrics=metrics, settings=group, ties=ties))
    io.write_csv(job.output.tidy, experimental)
    inputs = {setting: int(pd.read_csv(path)["inputs"].iloc[0])
              for setting, path in zip(settings, job.input.hyperparameters, strict=True)}
    plot_decrease_vs_alpha_inputs(experimental, inputs, metrics=metrics, ties=ties,
                                  mean_settings=sanity.averaged_settings(), threshold=sanity.pass_threshold,
                                  min_alpha_inputs=sanity.min_alpha_inputs, path=job.output.alpha_inputs)


def sanity_theoretical_tables(job: StepIO) -> None:
    """Tables C.1–C.4 (Decrease Acc and mean Δs per γ, ``lim γ→0`` from App. D), D.2 (closed forms), E.6/E.7
    (combinations) and Figure 3 (Δs against γ, extra labels)."""
    from neuroneval.figures.sanity import plot_delta_vs_gamma
    from neuroneval.sanity.options import SanityOptions
    from neuroneval.sanity.tables import analytical_table, gamma_table, limit_column, with_published_columns

    sanity = SanityOptions.from_params(job.params.sanity)
    theory = sanity.theoretical
    theoretical = pd.read_csv(job.input[0])
    metrics, ties, threshold = list(sanity.metrics), sanity.ties, sanity.pass_threshold
    spans = theoretical.groupby("metric")["span"].first().to_dict()
    out = job.output
    passing = {}
    for test, accuracy_path, delta_path in (("missing", out.c1, out.c3), ("extra", out.c2, out.c4)):
        accuracy = gamma_table(theoretical, metrics=metrics, test=test, ties=ties, threshold=threshold)
        passing[test] = accuracy.loc[accuracy["pass"], "metric"].tolist()
        _write_table(accuracy_path, with_published_columns(accuracy, test=test))
        deltas = gamma_table(theoretical, metrics=metrics, test=test, ties=ties, value="mean_delta")
        limits = limit_column(metrics, test=test, ties=ties, spans=spans, lam=theory.lam)
        deltas = with_published_columns(deltas.assign(limit=deltas["metric"].map(limits)), test=test,
                                        value="mean_delta")
        _write_table(delta_path, deltas)
    combinations = [*sanity.combinations.metrics, "f1"]
    for test, path in (("missing", out.e6), ("extra", out.e7)):
        _write_table(path, gamma_table(theoretical, metrics=combinations, test=test, ties=ties, threshold=threshold))
    io.write_csv(out.d2, analytical_table(metrics, gammas=list(theory.gammas), n=theory.n, spans=spans,
                                          epsilon=sanity.epsilon, lam=theory.lam))
    plot_delta_vs_gamma(theoretical[theoretical["ties"] == ties], metrics=metrics, test="extra",
                        passing=passing["extra"], epsilon=sanity.epsilon, path=out.figure)


def sanity_meta_tables(job: StepIO) -> None:
    """Tables F.5–F.7 (per-setting meta-AUPRC, rank, chosen α/λ; from ``results/meta.csv``) and E.9
    (combinations next to the single metrics)."""
    from neuroneval.sanity.options import SanityOptions
    from neuroneval.sanity.tables import combination_meta_table, meta_detail_table, paper_groups

    meta = pd.read_csv(job.input.meta)
    settings, metrics = list(job.params.meta_settings), list(job.params.meta_metrics)
    for path, group in zip(job.output.detail, paper_groups(settings, (4, 4)), strict=True):
        _write_table(path, meta_detail_table(meta, metrics=metrics, settings=group))
    sanity = SanityOptions.from_params(job.params.sanity)
    combined = _concat(job.input.combinations)
    _write_table(job.output.e9, combination_meta_table(
        combined, combinations=list(sanity.combinations.metrics), metrics=list(sanity.metrics),
        settings=list(sanity.combinations.meta_settings)))


def sanity_ablation_tables(job: StepIO) -> None:
    """Tables E.1 (r₋, r₊), E.3 (random vs semantic), E.4 (ε), E.5 (draws) and E.8 (combinations, experimental)."""
    from neuroneval.sanity.options import SanityOptions
    from neuroneval.sanity.tables import ablation_table, per_setting_table

    sanity = SanityOptions.from_params(job.params.sanity)
    ablations = _concat(job.input.ablations)
    metrics, ties = list(sanity.metrics), sanity.ties
    specs = ((job.output.e1, "strength", "strength", "r"), (job.output.e3, "semantic", "perturbation", ""),
             (job.output.e4, "epsilon", "epsilon", "eps"), (job.output.e5, "draws", "draws", "draws"))
    for path, ablation, column, label in specs:
        _write_table(path, ablation_table(ablations, metrics=metrics, ties=ties, ablation=ablation, column=column,
                                          label=label))
    experimental = _concat(job.input.experimental)
    _write_table(job.output.e8, per_setting_table(experimental, metrics=[*sanity.combinations.metrics, "f1"],
                                                  settings=list(sanity.combinations.settings), ties=ties))


def sanity_ties(job: StepIO) -> None:
    """``results/ties.csv`` and its figure: the tie metrics' Decrease Acc and Δs in average vs reference mode,
    experimental (per setting and mean) and theoretical (per γ and mean)."""
    from neuroneval.figures.sanity import plot_ties
    from neuroneval.sanity.options import SanityOptions
    from neuroneval.sanity.tables import ties_comparison

    sanity = SanityOptions.from_params(job.params.sanity)
    metrics = list(sanity.tie_metrics)
    comparison = ties_comparison(_concat(job.input.experimental), _concat(job.input.theoretical), metrics=metrics,
                                 mean_settings=sanity.averaged_settings())
    io.write_csv(job.output.table, comparison, float_format="%.4f")
    plot_ties(comparison, metrics=metrics, path=job.output.figure)
