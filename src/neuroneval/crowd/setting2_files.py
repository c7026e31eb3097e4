"""File-level entry points of a real crowd study's analysis (``neuroneval crowd simulate-ratings | analyze | cost``).

- :func:`simulate_ratings_file`: a ratings CSV in the ingest format for a study folder, from a ground-truth
  concept table and a known rater error η (:func:`~neuroneval.crowd.real_study.simulate_study_ratings`);
- :func:`analyze_study_files`: Setting 2 of paper 001 from one or more rated study folders (one per sampling
  distribution), written as ``curve.csv`` (:func:`~neuroneval.crowd.real_study.rce_curve`), ``pair_errors.csv``,
  ``rater_error.csv`` (η from gold items and, with the truth table, from all ratings) and ``setting2.png``;
- :func:`cost_table`: the cost model of :mod:`neuroneval.crowd.cost_model` on a ``curve.csv``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from neuroneval.crowd.cost_model import CostModel, cheapest_design, design_for_budget
from neuroneval.crowd.real_study import Setting2Options, reference_correlations, setting2_study, simulate_study_ratings


def simulate_ratings_file(study_directory: str | Path, truth_path: str | Path, out: str | Path, *, n_raters: int,
                          rater_error: float, seed: int = 0) -> pd.DataFrame:
    """Write (atomically) and return ratings of every task of a study folder by ``n_raters`` simulated raters who
    flip the ground-truth label of ``truth_path`` (a concept table) with probability ``rater_error``."""
    from neuroneval.crowd.study_folder import read_design
    from neuroneval.io import read_concept_table, write_csv

    design = read_design(study_directory)
    truth, _ = read_concept_table(truth_path)
    ratings = simulate_study_ratings(design, truth, n_raters=n_raters, rater_error=rater_error, seed=seed,
                                     source=str(truth_path))
    write_csv(out, ratings)
    return ratings


def study_sampling(study_directory: str | Path) -> str:
    """The sampling distribution a study folder was designed with (``design.json``'s ``sampling``)."""
    info = json.loads((Path(study_directory) / "design.json").read_text())
    if "sampling" not in info:
        raise ValueError(f"{Path(study_directory) / 'design.json'} does not say how the study sampled its inputs "
                         "(no 'sampling' key); name the study as NAME=DIR")
    return str(info["sampling"])


def analyze_study_files(studies: Sequence[tuple[str | None, str | Path, Sequence[str | Path]]],
                        activations_path: str | Path, truth_path: str | Path, out_directory: str | Path,
                        options: Setting2Options | None = None, model: CostModel | None = None, *,
                        sampling_method: str = "average", raters_method: str = "bayes_uniform") -> dict[str, Path]:
    """Setting 2 (:func:`~neuroneval.crowd.real_study.setting2_study`) of rated study folders, written to
    ``out_directory``.

    Parameters
    ----------
    studies
        (name or ``None``, study folder, ratings files) per study; a ``None`` name is the study's sampling
        (:func:`study_sampling`). Names must differ.
    activations_path, truth_path
        The activation table the studies were designed from and the ground-truth concept table (one binary
        column per explanation) that gives ρ_gt (Eq. 10).
    out_directory
        Receives ``curve.csv``, ``pair_errors.csv``, ``rater_error.csv`` and ``setting2.png``.
    options, model
        The subsampling grid (:class:`~neuroneval.crowd.real_study.Setting2Options`) and the prices of the figure's
        dollar axis (:class:`~neuroneval.crowd.cost_model.CostModel`); default: their defaults.
    sampling_method, raters_method
        Aggregation of the figure's sampling panel and of its per-rater panel.
    """
    from neuroneval.crowd.gold import rater_error_from_gold, truth_as_gold
    from neuroneval.crowd.ingest import read_ratings
    from neuroneval.crowd.study_folder import read_design
    from neuroneval.figures.crowd_setting2 import plot_setting2
    from neuroneval.io import check_matching_ids, read_activation_table, read_concept_table, write_csv

    options = Setting2Options() if options is None else options
    model = CostModel() if model is None else model
    activations, _ = read_activation_table(activations_path)
    truth, _ = read_concept_table(truth_path)
    check_matching_ids(activations, truth, first_source=str(activations_path), second_source=str(truth_path))
    rated, references, eta_rows = {}, {}, []
    for name, directory, ratings_paths in studies:
        name = study_sampling(directory) if name is None else name
        if name in rated:
            raise ValueError(f"two studies are named {name!r}; name each as NAME=DIR (e.g. uniform=study_u/)")
        design = read_design(directory)
        ratings = read_ratings(ratings_paths, design)
        rated[name] = (design, ratings)
        references[name] = reference_correlations(design, activations, truth, source=str(truth_path))
        if design.gold is not None:
            eta_rows.append(rater_error_from_gold(design, ratings, by_rater=True).assign(study=name, items="gold"))
        by_truth = truth_as_gold(design, truth, source=str(truth_path))
        eta_rows.append(rater_error_from_gold(by_truth, ratings).assign(study=name, items="all (truth table)"))
    curve, pair_errors = setting2_study(rated, references, options)
    target = Path(out_directory)
    target.mkdir(parents=True, exist_ok=True)
    eta = pd.concat(eta_rows, ignore_index=True)
    written = {
        "curve": write_csv(target / "curve.csv", curve.assign(dollars=curve["cost"] * model.price_per_rating)),
        "pair_errors": write_csv(target / "pair_errors.csv", pair_errors),
        "rater_error": write_csv(target / "rater_error.csv", eta[["study", "items", *eta.columns[:-2]]]),
    }
    pseudo_study = "pseudo" if "pseudo" in rated else next(iter(rated))
    written["figure"] = plot_setting2(curve, target / "setting2.png", price_per_rating=model.price_per_rating,
                                      sampling_method=sampling_method, aggregation_sampling=pseudo_study,
                                      raters_method=raters_method)
    return written


def cost_table(model: CostModel, *, curve: pd.DataFrame | None = None, method: str = "bayes_pseudo",
               sampling: str | None = None, n_inputs: int = 90, n_raters: int = 2, budget: float | None = None,
               target_rce: float | None = None) -> pd.DataFrame:
    """The cost model's answers as one table with a ``question`` column.

    Always ``design``: the dollars of ``n_inputs`` × ``n_raters`` (and its expected RCE with a curve); with a
    curve, ``budget`` adds :func:`~neuroneval.crowd.cost_model.design_for_budget` and ``target_rce`` adds
    :func:`~neuroneval.crowd.cost_model.cheapest_design`.
    """
    from neuroneval.crowd.cost_model import expected_rce

    row = {"method": method, "n_raters": n_raters, "n_inputs": n_inputs, "dollars": model.cost(n_inputs, n_raters)}
    if curve is not None:
        row.update(expected_rce(curve, method=method, n_inputs=n_inputs, n_raters=n_raters, sampling=sampling))
    frames = [pd.DataFrame([row]).assign(question="design")]
    if (budget is not None or target_rce is not None) and curve is None:
        raise ValueError("--budget and --target-rce read an RCE curve; give --curve (curve.csv of 'crowd analyze')")
    if budget is not None:
        frames.append(design_for_budget(curve, budget, model, method=method, sampling=sampling)
                      .assign(question=f"budget {budget:g}"))
    if target_rce is not None:
        frames.append(cheapest_design(curve, target_rce, model, method=method, sampling=sampling)
                      .assign(question=f"target rce {target_rce:g}"))
    table = pd.concat(frames, ignore_index=True)
    table = table.assign(price_per_task=model.price_per_task, inputs_per_task=model.inputs_per_task)
    return table[["question", *[c for c in table.columns if c != "question"]]]
