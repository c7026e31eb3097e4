"""Workflow steps of the meta-evaluation (``meta.smk``): Table 4 and the identifiability ceiling (000 Sec. 5).

One function per Snakemake rule (same name); the science lives in :mod:`neuroneval.meta`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from neuroneval import io
from neuroneval.pipeline.runner import StepIO


def meta_setting(job: StepIO) -> None:
    """Meta-AUPRC of every metric on one setting: α/λ chosen on validation units, reported on test units."""
    from neuroneval.meta import MetaOptions, evaluate_setting
    from neuroneval.settings import load_setting

    data = load_setting([Path(path) for path in job.input.activations], Path(job.input.concepts),
                        concept_prefixes=job.params.setting["concepts"].get("prefixes", []))
    truth = pd.read_csv(job.input.truth, dtype=str)
    rows = evaluate_setting(data, truth, MetaOptions.from_params(job.params.meta), setting=job.wildcards.setting)
    io.write_csv(job.output[0], rows)


def ceiling_setting(job: StepIO) -> None:
    """Meta-AUPRC of the world's ideal units of one setting (``results/ceiling/<setting>.csv``).

    With ``input.ideal`` (generative-probability tables, e.g. the text world's next-token units) those are the
    units; otherwise each known unit becomes the ground-truth label of its concept (``input.labels``).
    """
    from neuroneval.meta import MetaOptions, ceiling_frame, evaluate_setting
    from neuroneval.meta.ideal_units import load_ideal_units

    truth = pd.read_csv(job.input.truth, dtype=str)
    data, source = load_ideal_units(job.input.activations, job.input.concepts, job.input.labels, truth,
                                    ideal_files=job.input.ideal,
                                    concept_prefixes=job.params.setting["concepts"].get("prefixes", []))
    rows = evaluate_setting(data, truth, MetaOptions.from_params(job.params.meta), setting=job.wildcards.setting)
    io.write_csv(job.output[0], ceiling_frame(rows, ideal_source=source))


def ceiling(job: StepIO) -> None:
    """``results/ceiling.csv`` (every setting's ceiling rows, in the order of ``input.settings``) and
    ``results/ceiling.png``: floor, best model metric and ceiling per setting, read with ``results/meta.csv``."""
    from neuroneval.figures.results import plot_ceiling

    frame = pd.concat([pd.read_csv(path) for path in job.input.settings], ignore_index=True)
    io.write_csv(job.output.table, frame)
    plot_ceiling(frame, pd.read_csv(job.input.meta), list(dict.fromkeys(frame["setting"])), job.output.figure)


def table4(job: StepIO) -> None:
    """Assemble Table 4 (meta-AUPRC per metric and setting; mean AUPRC and mean rank over the settings that
    discriminate), the verdict per setting (``results/table4_settings.csv``), its tidy source and plot."""
    from neuroneval.figures.results import plot_table4
    from neuroneval.meta.discrimination import DiscriminationOptions, build_table4_discriminating

    tidy = pd.concat([pd.read_csv(path) for path in job.input], ignore_index=True)
    table, settings = build_table4_discriminating(tidy, DiscriminationOptions.from_params(job.params.discrimination),
                                                  metric_order=list(job.params.metrics),
                                                  setting_order=list(job.params.settings))
    io.write_csv(job.output.tidy, tidy)
    io.write_csv(job.output.table, table, float_format="%.4f")
    io.write_csv(job.output.settings, settings)
    summary = {row.metric: {"mean_auprc": round(float(row.mean_auprc), 6), "mean_rank": round(float(row.mean_rank), 6)}
               for row in table.itertuples()}
    io.write_json(job.output.summary, summary)
    plot_table4(table, list(job.params.settings), job.output.figure,
                excluded=settings.loc[~settings["in_mean"], "setting"].tolist())
