"""``neuroneval evaluate``: the command's parser, and an :class:`~neuroneval.explain.evaluate.Evaluation` written
as ``units.csv``, ``summary.csv``, ``differences.csv``, ``unscorable.csv``, ``report.md`` and ``summary.png``
(docs/evaluate.md), every file atomically."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.explain.evaluate import Evaluation
from neuroneval.explain.text_mapping import TextMapping

#: Files :func:`write_evaluation` writes into the output directory.
OUTPUT_FILES = ("units.csv", "summary.csv", "differences.csv", "unscorable.csv", "report.md", "summary.png")


def add_evaluate_parser(commands: argparse._SubParsersAction) -> None:
    """The ``evaluate`` sub-command and its flags."""
    parser = commands.add_parser("evaluate", help="score explanation files on your activations and concepts")
    parser.add_argument("--activations", required=True, help="activation table (Parquet: input_id + units)")
    parser.add_argument("--concepts", required=True, help="concept table (Parquet: input_id + concepts in [0, 1])")
    parser.add_argument("--explanations", required=True, nargs="+", metavar="NAME=PATH",
                        help="explanation files, each named by its source")
    parser.add_argument("--format", default="auto", help="format of the explanation files (default auto)")
    parser.add_argument("--synonyms", default=None, metavar="CSV",
                        help="synonym table text,concept mapping free text to concept names or formulas")
    parser.add_argument("--embedding-model", default=None, metavar="DIR",
                        help="local text-embedding model folder mapping the remaining text to its nearest concept")
    parser.add_argument("--similarity-threshold", type=float, default=TextMapping().threshold,
                        help="least cosine similarity of an embedding match (default %(default)s)")
    parser.add_argument("--unit-template", default=None,
                        help="unit naming over the format's fields, e.g. '{layer}/{index}' (default: the format's)")
    parser.add_argument("--unit-map", default=None, metavar="CSV",
                        help="CSV source_unit,unit renaming the templated unit names to activation-table columns")
    parser.add_argument("--sanity", default=None,
                        help="sanity results table (results/table3.csv); default: paper 000's Table 3")
    parser.add_argument("--holdout", type=float, default=0.5, help="fraction of inputs held out (default 0.5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the split, floor and bootstraps")
    parser.add_argument("--alpha", type=float, default=0.005, help="top-alpha of the binarizing metrics")
    parser.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples over units (summary)")
    parser.add_argument("--unit-n-boot", type=int, default=20,
                        help="bootstrap resamples over held-out inputs (each unit's interval; 0: none)")
    parser.add_argument("--ci-level", type=float, default=0.95, help="coverage of the intervals")
    parser.add_argument("--out", required=True, help="output directory")


def run_evaluate(arguments: argparse.Namespace) -> None:
    """``neuroneval evaluate``: evaluate, write, print the summary."""
    from neuroneval.explain.evaluate import EvaluateOptions, evaluate, read_sources

    mapping = TextMapping(synonyms=arguments.synonyms, embedding_model=arguments.embedding_model,
                          threshold=arguments.similarity_threshold)
    options = EvaluateOptions(holdout=arguments.holdout, seed=arguments.seed, alpha=arguments.alpha,
                              n_boot=arguments.n_boot, unit_n_boot=arguments.unit_n_boot,
                              ci_level=arguments.ci_level, sanity=arguments.sanity, format=arguments.format,
                              mapping=mapping, unit_template=arguments.unit_template, unit_map=arguments.unit_map)
    evaluation = evaluate(arguments.activations, arguments.concepts, read_sources(arguments.explanations),
                          options=options)
    write_evaluation(evaluation, arguments.out)
    print(f"metrics from {evaluation.sanity_source}")
    chosen = evaluation.summary[evaluation.summary["metric"] == "simulation_correlation"]
    print(chosen[["source", "mean", "ci_low", "ci_high", "n_units"]].round(3).to_string(index=False))
    print(f"wrote {', '.join(OUTPUT_FILES)} to {arguments.out} ({len(evaluation.unscorable)} unscorable rows)")


def _markdown(frame: pd.DataFrame) -> str:
    """A pipe table (numbers to 3 decimals)."""
    shown = frame.copy()
    for column in shown.columns:
        if pd.api.types.is_float_dtype(shown[column]):
            shown[column] = [f"{value:.3f}" if np.isfinite(value) else "" for value in shown[column]]
    lines = ["| " + " | ".join(map(str, shown.columns)) + " |", "|" + "---|" * len(shown.columns)]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in shown.itertuples(index=False)]
    return "\n".join(lines)


def report_text(evaluation: Evaluation) -> str:
    """``report.md``: where the metrics came from, the split, the summary, the differences from the floor and the
    unscorable rows."""
    options = evaluation.options
    summary = evaluation.summary.pivot(index="source", columns="metric", values="mean")
    summary = summary.reindex(columns=["simulation_correlation", *evaluation.metrics]).reset_index()
    floor = evaluation.differences[(evaluation.differences["source_b"] == "random")
                                   & (evaluation.differences["metric"] == "simulation_correlation")]
    counts = evaluation.unscorable.groupby(["source", "reason"]).size().rename("rows").reset_index()
    parts = [
        "# Evaluation of explanations",
        "",
        f"- Metrics that pass both sanity tests, from {evaluation.sanity_source}: {', '.join(evaluation.metrics)}.",
        f"- Scored on {evaluation.n_held_out} held-out inputs of {evaluation.n_inputs} (holdout {options.holdout}, "
        f"seed {options.seed}); top-alpha {options.alpha}.",
        f"- Intervals: {options.ci_level:.0%} percentile bootstrap, {options.n_boot} resamples over units (summary, "
        f"differences), {options.unit_n_boot} over held-out inputs (units.csv).",
        degenerate_line(evaluation),
        "- `random` is the floor (one random concept per unit); `optimum`, where present, the best score any "
        "explanation can reach (the concepts are one categorical variable).",
        "",
        "## Mean score per source",
        "",
        _markdown(summary),
        "",
        "![mean scores](summary.png)",
        "",
        "## Simulation correlation minus the random floor (paired, common units)",
        "",
        _markdown(floor[["source_a", "difference", "ci_low", "ci_high", "n_units"]]),
        "",
        "## Unscorable rows (units.csv leaves them out; unscorable.csv lists each)",
        "",
        _markdown(counts) if len(counts) else "None.",
        "",
    ]
    return "\n".join(parts)


def degenerate_line(evaluation: Evaluation) -> str:
    """The report's line on constant and near-dead units (named once), or that there are none."""
    if not evaluation.degenerate:
        return "- No unit is constant or near-dead on the held-out inputs."
    return (f"- Degenerate units: {evaluation.degenerate_note}. Their scores stay in units.csv (degenerate true, "
            f"listed last); the means and paired differences leave them out (n_units counts the units used).")


def plot_summary(evaluation: Evaluation, path: str | os.PathLike) -> Path:
    """One panel per score: each source's mean with its bootstrap interval."""
    from neuroneval.figures import style

    names = ["simulation_correlation", *evaluation.metrics]
    with style.style():
        figure, axes = style.subplots(1, len(names), height=3.0, squeeze=False)
        for axis, name in zip(axes[0], names, strict=True):
            rows = evaluation.summary[evaluation.summary["metric"] == name]
            positions = np.arange(len(rows))
            errors = np.abs(np.vstack([rows["mean"] - rows["ci_low"], rows["ci_high"] - rows["mean"]]))
            axis.bar(positions, rows["mean"], yerr=np.nan_to_num(errors), color=style.series_style(0).color)
            axis.set_xticks(positions, rows["source"], rotation=60, ha="right")
            axis.set_title(name)
        return style.savefig(figure, path)


def write_evaluation(evaluation: Evaluation, directory: str | os.PathLike) -> Path:
    """Write :data:`OUTPUT_FILES` into ``directory`` (created), each atomically."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    io.write_csv(target / "units.csv", evaluation.units, float_format="%.10g")
    io.write_csv(target / "summary.csv", evaluation.summary, float_format="%.10g")
    io.write_csv(target / "differences.csv", evaluation.differences, float_format="%.10g")
    io.write_csv(target / "unscorable.csv", evaluation.unscorable)
    plot_summary(evaluation, target / "summary.png")
    io.write_text(target / "report.md", report_text(evaluation))
    return target
