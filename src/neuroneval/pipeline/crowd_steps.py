"""Workflow steps of the simulated crowd study (paper 001, Setting 1), one function per rule of ``crowd.smk``.

The rules read the ``crowd:`` block of params.yaml::

    crowd_sampling     activations + labels + pseudo-labels -> results/crowd_sampling.csv/.png (Fig. 2a)
    crowd_aggregation  activations + labels + pseudo-labels -> results/crowd_aggregation.csv/.png (Fig. 3a)
    crowd_summary      the two per-unit error tables        -> results/crowd_summary.csv (cost factors)

Each curve step also writes its per-unit errors (``results/crowd/*_units.csv``, full float precision) so that
the summary reads exactly the numbers the curves were computed from. Science lives in
:mod:`neuroneval.crowd`; these functions only move data between files and library calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.pipeline.runner import StepIO

#: Float format of the per-unit error tables: 17 significant digits round-trip float64 exactly.
EXACT_FLOAT_FORMAT = "%.17g"


def crowd_inputs(crowd: Mapping[str, Any]) -> dict[str, str]:
    """The files the simulated study reads, named from the ``crowd:`` block of params.yaml.

    Returns
    -------
    dict
        ``activations`` (``data/activations/<dataset>/<model>/<layer>.parquet``), ``concepts`` (the
        ground-truth concept table) and ``pseudo`` (the pseudo-label concept table of ``pseudo_source``).

    Examples
    --------
    >>> crowd_inputs({"dataset": "d", "units": {"model": "m", "layer": "l"}, "concepts": {"source": "labels"},
    ...               "pseudo_source": "pseudo:clip"})["pseudo"]
    'data/concepts/d/pseudo-clip.parquet'
    """
    from neuroneval.settings import activation_path, concept_path

    units = crowd["units"]
    return {
        "activations": str(activation_path(crowd["dataset"], units["model"], units["layer"])),
        "concepts": str(concept_path(crowd["dataset"], crowd["concepts"]["source"])),
        "pseudo": str(concept_path(crowd["dataset"], crowd["pseudo_source"])),
    }


def load_study_units(
    activation_file: str | Path,
    concept_file: str | Path,
    pseudo_file: str | Path,
    *,
    concept_prefixes: Sequence[str],
    min_true_correlation: float,
    max_units: int | None,
):
    """Read the study's tables and explain each unit by its best-correlated concept (Eq. 9–10).

    The ground-truth concepts are the columns of ``concept_file`` that start with ``concept_prefixes``; they
    must be binary. ``pseudo_file`` must have the same input ids and every one of those concept columns.

    Returns
    -------
    neuroneval.crowd.StudyUnits

    Raises
    ------
    ValueError
        Naming the file and the column (non-binary label, missing pseudo-label column) or the input ids.
    """
    from neuroneval.crowd import select_explanations
    from neuroneval.settings import load_setting

    data = load_setting([Path(activation_file)], Path(concept_file), concept_prefixes=list(concept_prefixes))
    non_binary = [
        name
        for index, name in enumerate(data.concept_names)
        if not np.all((data.concepts[:, index] == 0) | (data.concepts[:, index] == 1))
    ]
    if non_binary:
        raise ValueError(
            f"{concept_file}: ground-truth concept column(s) {non_binary[:5]} are not binary (0/1); "
            "the simulated study needs labels, not scores"
        )
    pseudo_frame, _ = io.read_concept_table(pseudo_file)
    concept_frame, _ = io.read_concept_table(concept_file)
    io.check_matching_ids(concept_frame, pseudo_frame, first_source=str(concept_file), second_source=str(pseudo_file))
    missing = [name for name in data.concept_names if name not in pseudo_frame.columns]
    if missing:
        raise ValueError(f"{pseudo_file}: pseudo-label table lacks concept column(s) {missing[:5]} of {concept_file}")
    return select_explanations(
        data.activations,
        data.concepts,
        pseudo_frame[data.concept_names].to_numpy(dtype=np.float64),
        unit_ids=data.unit_names,
        concept_names=data.concept_names,
        min_true_correlation=min_true_correlation,
        max_units=max_units,
    )


def _units(job: StepIO):
    simulation = job.params.simulation
    return load_study_units(
        job.input.activations,
        job.input.concepts,
        job.input.pseudo,
        concept_prefixes=job.params.concepts.get("prefixes", []),
        min_true_correlation=float(simulation["min_true_correlation"]),
        max_units=simulation["max_units"],
    )


def _shared(simulation: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "epsilon": float(simulation["epsilon"]),
        "ddof": int(simulation["ddof"]),
        "n_trials": int(simulation["n_trials"]),
        "seed": int(simulation["seed"]),
    }


def crowd_sampling(job: StepIO) -> None:
    """Sampling curve (Fig. 2a): RCE against labelled inputs per sampling method; table, per-unit errors, figure."""
    from neuroneval.crowd import plot_sampling_curves
    from neuroneval.crowd.study import sampling_study

    units = _units(job)
    knobs = job.params.sampling
    print(f"{len(units.unit_ids)} units explained (Eq. 9), median rho_gt {np.median(units.rho_true):.3f}")
    curve, per_unit = sampling_study(
        units,
        sample_sizes=[int(size) for size in knobs["sample_sizes"]],
        methods=list(knobs["methods"]),
        rater_error=float(knobs["rater_error"]),
        progress=True,
        **_shared(job.params.simulation),
    )
    io.write_csv(job.output.table, curve)
    io.write_csv(job.output.units, per_unit, float_format=EXACT_FLOAT_FORMAT)
    plot_sampling_curves(curve, job.output.figure)


def crowd_aggregation(job: StepIO) -> None:
    """Aggregation curve (Fig. 3a, App. A.3): RCE against cost per aggregation method, best raters per cost."""
    from neuroneval.crowd import plot_aggregation_curves
    from neuroneval.crowd.study import aggregation_study

    units = _units(job)
    knobs = job.params.aggregation
    assumed = knobs["assumed_rater_error"]
    curve, per_unit = aggregation_study(
        units,
        costs=[int(cost) for cost in knobs["costs"]],
        rater_counts=[int(count) for count in knobs["rater_counts"]],
        methods=list(knobs["methods"]),
        sampling=knobs["sampling"],
        rater_error=float(knobs["rater_error"]),
        assumed_rater_error=None if assumed is None else float(assumed),
        uniform_prior=float(knobs["uniform_prior"]),
        prior_clip=(float(knobs["prior_clip"][0]), float(knobs["prior_clip"][1])),
        progress=True,
        **_shared(job.params.simulation),
    )
    io.write_csv(job.output.table, curve)
    io.write_csv(job.output.units, per_unit, float_format=EXACT_FLOAT_FORMAT)
    plot_aggregation_curves(curve, job.output.figure)


def read_unit_errors(path: str | Path, experiment: str) -> pd.DataFrame:
    """Read a per-unit error table written by :func:`crowd_sampling` or :func:`crowd_aggregation`.

    Raises ``ValueError`` naming the file and the missing columns, or the first row with an unreadable error.
    """
    from neuroneval.crowd.study import UNIT_ERROR_COLUMNS

    frame = pd.read_csv(path, dtype={"unit": str, "concept": str, "method": str})
    missing = [column for column in UNIT_ERROR_COLUMNS[experiment] if column not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; expected a per-unit {experiment} error table")
    errors = pd.to_numeric(frame["relative_error"], errors="coerce")
    bad = errors.isna() & frame["relative_error"].notna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise ValueError(
            f"{path}, row {row + 2}, column relative_error: {frame['relative_error'].iloc[row]!r} is not a number"
        )
    return frame.assign(relative_error=errors)


def crowd_summary(job: StepIO) -> None:
    """Cost-reduction factors at equal RCE (IS vs uniform; Bayes prior vs majority) with bootstrap intervals."""
    from neuroneval.crowd.study import cost_reduction_table

    knobs = job.params.summary
    target = knobs["target_rce"]
    summary = cost_reduction_table(
        read_unit_errors(job.input.sampling, "sampling"),
        read_unit_errors(job.input.aggregation, "aggregation"),
        comparisons=[(c["experiment"], c["baseline"], c["method"]) for c in knobs["comparisons"]],
        concept_groups=list(knobs["unit_groups"]),
        target_rce=None if target is None else float(target),
        n_boot=int(knobs["n_boot"]),
        ci_level=float(knobs["ci_level"]),
        seed=int(knobs["seed"]),
    )
    print(summary.to_string(index=False))
    io.write_csv(job.output[0], summary)


def crowd_rarity(job: StepIO) -> None:
    """Cost-reduction factors against concept rarity on planted units (:mod:`neuroneval.crowd.rarity`)."""
    from neuroneval.crowd.rarity import PAPER_RARITY, RarityStudyOptions, rarity_factors
    from neuroneval.figures.crowd import plot_rarity_factors

    factors = rarity_factors(RarityStudyOptions.from_params(dict(job.params.rarity)), progress=True)
    print(factors[["rarity", "experiment", "baseline", "method", "factor", "ci_low", "ci_high"]].to_string(index=False))
    io.write_csv(job.output.table, factors)
    plot_rarity_factors(factors, job.output.figure, paper_rarity=PAPER_RARITY)
