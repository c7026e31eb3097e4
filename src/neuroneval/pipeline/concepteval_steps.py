"""Steps of the concept-evaluation benchmark (issue 16; paper 004): concepts as virtual neurons on a hidden layer
of the embedded LMs, their faithfulness and readability, and the measurement-theory meta-evaluation of those
measures (docs/concepteval.md §Workflow).

One function per Snakemake rule (same name), each taking a :class:`~neuroneval.pipeline.runner.StepIO`, reading
its inputs, calling one function of :mod:`neuroneval.concepteval` and writing its outputs:

- ``concepteval_hidden``: :func:`~neuroneval.concepteval.benchmark.hidden_parts` (windows, planted labels, hidden
  states of the fitting windows);
- ``concepteval_sae``: :func:`~neuroneval.concepteval.sae.train_sae` on the fitting hidden states;
- ``concepteval_concepts``: :func:`~neuroneval.concepteval.benchmark.build_families`;
- ``concepteval_measures``: :func:`~neuroneval.concepteval.benchmark.measure_run` per LM and run;
- ``concepteval_tables``: :func:`~neuroneval.concepteval.tables.benchmark_tables`, and the figures.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.concepteval.protocol import RUNS, SUBSET_ALL, family_of
from neuroneval.concepteval.sources import TokenSource, load_token_source
from neuroneval.pipeline.runner import StepIO

__all__ = ["RUNS", "concepteval_concepts", "concepteval_hidden", "concepteval_measures", "concepteval_sae",
           "concepteval_tables"]


def _token_source(job: StepIO) -> TokenSource:
    """The embedded LM and text world (inputs ``model``, ``world``), or the external checkpoint of
    ``params.model_spec`` and its corpus's token stream (inputs ``tokens``, ``vocabulary``)."""
    spec = job.params.model_spec
    if not spec:
        return load_token_source(model=job.input.model, world=job.input.world)
    return load_token_source(model=job.input.model, model_spec=spec, tokens=job.input.tokens,
                             vocabulary=job.input.vocabulary)


def concepteval_hidden(job: StepIO) -> None:
    """``data/concepteval/<lm>/hidden.npz``: the windows of each part (fit, test, retest), the planted labels of
    their tokens (none for a user's corpus), and the hidden states of the fitting windows at the studied site."""
    from neuroneval.concepteval.benchmark import WindowOptions, hidden_parts
    from neuroneval.concepteval.sources import save_npz

    arrays = hidden_parts(_token_source(job), window_length=job.params.window_length,
                          windows=WindowOptions.from_params(job.params.windows), run_seeds=job.params.runs,
                          planted=job.params.planted or (), layer=job.params.layer, site=job.params.site)
    save_npz(job.output.hidden, arrays)


def concepteval_sae(job: StepIO) -> None:
    """``data/concepteval/<lm>/sae.npz`` and its card: a sparse autoencoder on the fitting hidden states."""
    from neuroneval.concepteval import SAEOptions, train_sae
    from neuroneval.concepteval.sources import save_sae

    with np.load(job.input.hidden) as data:
        hidden = data["fit_hidden"].astype(np.float64)
    sae = train_sae(hidden, SAEOptions.from_params(job.params.training))
    save_sae(job.output.sae, sae)
    io.write_json(job.output.card, sae.report)
    print(sae.report)


def concepteval_concepts(job: StepIO) -> None:
    """``data/concepteval/<lm>/concepts.npz`` and ``concepts.csv``: every concept family on the fitting states."""
    from neuroneval.concepteval.benchmark import build_families
    from neuroneval.concepteval.sources import load_sae, save_concepts

    with np.load(job.input.hidden) as data:
        hidden = data["fit_hidden"].astype(np.float64)
        labels, label_names = data["fit_labels"], [str(name) for name in data["label_names"]]
    families, family_set = job.params.families, job.params.family_set or "all"
    sae = load_sae(job.input.sae) if "sae" in families else None
    concepts, card = build_families(hidden, labels, label_names, families, sae, family_set=family_set)
    save_concepts(job.output.concepts, concepts)
    io.write_csv(job.output.card, card)
    print(card.groupby("family", sort=False).size().to_dict())


def concepteval_measures(job: StepIO) -> None:
    """``results/concepteval/runs/<lm>/<run>.csv`` (every measure of every concept, on the run and its subsets),
    ``<run>_patterns.csv`` and ``<run>_truth.csv`` (each concept's best planted AUC on the run's tokens; NaN for
    a user's corpus)."""
    from neuroneval.concepteval.benchmark import MeasureOptions, measure_run
    from neuroneval.concepteval.sources import load_concepts

    run = job.wildcards.run
    options = MeasureOptions.from_params({name: getattr(job.params, name) for name in
                                          ("layer", "site", "subsets", "faithfulness", "patterns", "readability",
                                           "simulation")})
    with np.load(job.input.hidden) as data:
        windows, labels = data[f"{run}_windows"], data[f"{run}_labels"]
        label_names = [str(name) for name in data["label_names"]]
    scores, patterns, truth = measure_run(_token_source(job), windows, labels, label_names,
                                          load_concepts(job.input.concepts), options, threads=int(job.threads))
    scores.insert(0, "run", run)
    scores.insert(0, "model", job.wildcards.lm)
    scores.insert(3, "family", [family_of(name) for name in scores["concept"]])
    io.write_csv(job.output.measures, scores)
    io.write_csv(job.output.patterns, patterns)
    io.write_csv(job.output.truth, truth)
    print(scores[scores["subset"] == SUBSET_ALL].groupby(["family", "measure"])["value"].mean().unstack().round(4)
          .to_string())


def concepteval_tables(job: StepIO) -> None:
    """Every table and figure of ``results/concepteval/`` from the runs of every LM (docs/concepteval.md)."""
    from neuroneval.concepteval.tables import TableOptions, benchmark_tables
    from neuroneval.figures.concepteval import plot_method_comparison, plot_mtmm, plot_reliability

    options = TableOptions.from_params({name: getattr(job.params, name) for name in
                                        ("subsets", "faithfulness_measures", "measurement", "raters", "comparison",
                                         "patterns_shown")})
    measures = pd.concat([pd.read_csv(path, dtype={"subset": str}) for path in job.input.measures],
                         ignore_index=True)
    truths = {(Path(path).parent.name, Path(path).name.removesuffix("_truth.csv")): pd.read_csv(path)
              for path in job.input.truth}
    patterns = pd.concat([pd.read_csv(path, keep_default_na=False).assign(model=Path(path).parent.name)
                          for path in job.input.patterns if Path(path).name.startswith(f"{RUNS[0]}_")],
                         ignore_index=True)
    tables = benchmark_tables(measures, truths, patterns, options)
    for name in ("reliability", "validity", "inter_rater", "mtmm", "methods", "measures"):
        io.write_csv(getattr(job.output, name), getattr(tables, name))
    plot_reliability(tables.reliability, job.output.reliability_figure)
    plot_mtmm(tables.mtmm_matrices, job.output.mtmm_figure)
    plot_method_comparison(tables.methods, job.output.methods_figure)
    io.write_text(job.output.patterns, tables.patterns_markdown)
    print(tables.reliability.pivot_table(index="measure", columns=["model", "statistic", "run"], values="value")
          .round(3).to_string())
    print(tables.methods.round(4).to_string())
