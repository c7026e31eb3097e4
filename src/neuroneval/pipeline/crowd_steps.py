"""Workflow steps of the simulated crowd study (paper 001, Setting 1), one function per rule of ``crowd.smk``.

The rules read the ``crowd:`` block of params.yaml::

    crowd_sampling     activations + labels + pseudo-labels -> results/crowd_sampling.csv/.png (Fig. 2a)
    crowd_aggregation  activations + labels + pseudo-labels -> results/crowd_aggregation.csv/.png (Fig. 3a)
    crowd_summary      the two per-unit error tables        -> results/crowd_summary.csv (cost factors)

Each curve step also writes its per-unit errors (``results/crowd/*_units.csv``, full float precision,
:mod:`neuroneval.crowd.study_files`) so that the summary reads exactly the numbers the curves were computed from.
Science, options and input checks live in :mod:`neuroneval.crowd`; these functions only move data between files
and library calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from neuroneval import io
from neuroneval.pipeline.runner import StepIO

if TYPE_CHECKING:
    from neuroneval.crowd import SimulationOptions, StudyUnits


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


def _units(job: StepIO, simulation: SimulationOptions) -> StudyUnits:
    from neuroneval.crowd import read_study_units

    return read_study_units(
        job.input.activations,
        job.input.concepts,
        job.input.pseudo,
        concept_prefixes=job.params.concepts.get("prefixes", []),
        min_true_correlation=simulation.min_true_correlation,
        max_units=simulation.max_units,
    )


def crowd_sampling(job: StepIO) -> None:
    """Sampling curve (Fig. 2a): RCE against labelled inputs per sampling method; table, per-unit errors, figure."""
    from neuroneval.crowd import (
        SamplingOptions,
        SimulationOptions,
        plot_sampling_curves,
        sampling_study,
        write_unit_errors,
    )

    simulation = SimulationOptions.from_params(job.params.simulation)
    options = SamplingOptions.from_params({**job.params.sampling, "simulation": simulation})
    units = _units(job, simulation)
    print(f"{len(units.unit_ids)} units explained (Eq. 9), median rho_gt {np.median(units.rho_true):.3f}")
    curve, per_unit = sampling_study(units, options, progress=True)
    io.write_csv(job.output.table, curve)
    write_unit_errors(job.output.units, per_unit)
    plot_sampling_curves(curve, job.output.figure)


def crowd_aggregation(job: StepIO) -> None:
    """Aggregation curve (Fig. 3a, App. A.3): RCE against cost per aggregation method, best raters per cost."""
    from neuroneval.crowd import (
        AggregationOptions,
        SimulationOptions,
        aggregation_study,
        plot_aggregation_curves,
        write_unit_errors,
    )

    simulation = SimulationOptions.from_params(job.params.simulation)
    options = AggregationOptions.from_params({**job.params.aggregation, "simulation": simulation})
    curve, per_unit = aggregation_study(_units(job, simulation), options, progress=True)
    io.write_csv(job.output.table, curve)
    write_unit_errors(job.output.units, per_unit)
    plot_aggregation_curves(curve, job.output.figure)


def crowd_summary(job: StepIO) -> None:
    """Cost-reduction factors at equal RCE (IS vs uniform; Bayes prior vs majority) with bootstrap intervals."""
    from neuroneval.crowd import CostReductionOptions, cost_reduction_table, read_unit_errors

    summary = cost_reduction_table(
        read_unit_errors(job.input.sampling, "sampling"),
        read_unit_errors(job.input.aggregation, "aggregation"),
        CostReductionOptions.from_params(job.params.summary),
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
