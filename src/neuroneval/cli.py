"""Command line: ``neuroneval metrics | validate | score | explain | evaluate | crowd design | crowd ingest``.

Examples
--------
List the metrics and their parameters::

    neuroneval metrics

Check a table against the data contract::

    neuroneval validate data/activations/vision_probe/vision_cnn/softmax.parquet --kind activation

Score every (unit, concept) pair of two tables with one metric and write a tidy CSV::

    neuroneval score --metric iou --alpha 0.005 \
        --activations data/activations/vision_probe/vision_cnn/softmax.parquet \
        --concepts data/concepts/vision_probe/labels.parquet --out iou.csv

It works within ``--memory-budget`` (default ``auto``: about the inputs' size; e.g. ``2G``) and shows a progress
bar on stderr once it has run for 2 s (``--no-progress`` turns it off).

Explain every unit of your own activation table with a method of ``neuroneval.explain`` (docs/explain.md) on
your own concept table, written as ``explanations/<setting>/<method>.csv`` is (unit, explanation, length, kind,
scores); ``--option`` sets the method's options (JSON values)::

    neuroneval explain --method compexp --option max_length=2 --option beam_size=5 \
        --activations my_units.parquet --concepts my_concepts.parquet --out explanations/mine/compexp.csv

Score explanation files from any tool on your activations and concepts (docs/evaluate.md)::

    neuroneval evaluate --activations my_units.parquet --concepts my_concepts.parquet \
        --explanations mine=explanations/mine/compexp.csv --out evaluation/

Design a crowd study (paper 001): for each (unit, explanation) pair of ``pairs.csv``, spend a budget of 180
ratings (90 inputs drawn by importance sampling, Eq. 4, x 2 raters), written as task pages with the world's
images::

    neuroneval crowd design --activations data/activations/vision_probe/vision_cnn/block3.parquet \
        --concepts data/concepts/vision_probe/pseudo-clip.parquet --pairs pairs.csv --budget 180 --raters 2 \
        --world data/worlds/vision/probe --out study/

Estimate each pair's correlation from the downloaded ratings, with a 95 % bootstrap interval::

    neuroneval crowd ingest --study study/ --ratings ratings_*.csv --out estimates.csv
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval import __version__, io
from neuroneval.metrics.validation import TIES


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``neuroneval`` console script."""
    parser = argparse.ArgumentParser(prog="neuroneval", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"neuroneval {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("metrics", help="list the metrics, their value ranges and parameters")

    validate = commands.add_parser("validate", help="check a Parquet table against the data contract")
    validate.add_argument("table", help="activation or concept table (file or directory of shards)")
    validate.add_argument("--kind", choices=["activation", "concept"], required=True)

    score = commands.add_parser("score", help="score all (unit, concept) pairs with one metric")
    score.add_argument("--metric", required=True, help="metric name, e.g. iou or hmean:auc+inverse_auc")
    score.add_argument("--activations", required=True, help="activation table")
    score.add_argument("--concepts", required=True, help="concept table")
    score.add_argument("--out", required=True, help="output CSV: unit,concept,score")
    score.add_argument("--alpha", type=float, help="top-alpha fraction for binarising activations")
    score.add_argument("--lam", type=float, help="WPMI lambda")
    score.add_argument("--top-alpha", dest="top_alpha", choices=["at_least_kth", "exactly_k"],
                       help="top-alpha rule: every input >= the k-th largest (default, the authors' code) or "
                            "exactly k inputs")
    score.add_argument("--ties", choices=TIES, default=TIES[0])
    score.add_argument("--seed", type=int, default=0)
    score.add_argument("--memory-budget", dest="memory_budget", type=memory_budget, default="auto",
                       help="working memory beyond the inputs: bytes with an optional K/M/G suffix (e.g. 2G), "
                            "'auto' (default: the inputs' float32 size, at least 256M) or 'unbounded' (fastest "
                            "on small tables, ~10-20x the inputs on large ones)")
    score.add_argument("--no-progress", dest="progress", action="store_false",
                       help="no progress bar (by default one appears on stderr after 2 s)")

    explain = commands.add_parser("explain", help="explain every unit of an activation table with one method")
    explain.add_argument("--method", required=True,
                         help="a method of neuroneval.explain.METHODS (netdissect, compexp, invert, cce, le_label, "
                              "le_pseudo, captions) or random")
    explain.add_argument("--activations", required=True, help="activation table")
    explain.add_argument("--concepts", required=True, help="concept table (labels or pseudo-labels)")
    explain.add_argument("--out", required=True, help="output CSV: unit,explanation,length,kind,<method scores>")
    explain.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                         help="a method option (repeatable); VALUE is read as JSON where it parses, else as text")
    explain.add_argument("--captions", help="CSV with input_id,caption (the captions method)")

    from neuroneval.explain.evaluate_report import add_evaluate_parser

    add_evaluate_parser(commands)
    crowd = commands.add_parser("crowd", help="crowd-sourced evaluation (paper 001): design a study, ingest ratings")
    crowd_commands = crowd.add_subparsers(dest="crowd_command", required=True)
    design = crowd_commands.add_parser(
        "design", help="pick inputs by importance sampling and write task batches (CSV + HTML pages)")
    design.add_argument("--activations", required=True, help="activation table (Parquet)")
    design.add_argument("--concepts", help="concept (pseudo-label) table whose columns are the explanations; "
                        "guides sampling (Eq. 4) and is the Bayes prior at ingestion")
    design.add_argument("--pairs", required=True, help="CSV with columns unit,explanation (extra columns kept)")
    design.add_argument("--budget", type=int, required=True,
                        help="ratings per pair = inputs drawn x raters per input (paper: 180 = 90 x 2)")
    design.add_argument("--raters", type=int, default=2, help="raters per input (default 2)")
    design.add_argument("--out", required=True, help="study directory to write")
    design.add_argument("--world", help="vision world directory whose images the pages show (default: input ids)")
    design.add_argument("--sampling", choices=["pseudo", "activation", "uniform"], default=None,
                        help="sampling distribution (default: pseudo with --concepts, else activation)")
    design.add_argument("--epsilon", type=float, default=0.001, help="epsilon of the sampling distribution")
    design.add_argument("--inputs-per-task", type=int, default=15, help="inputs shown per task (default 15)")
    design.add_argument("--tasks-per-batch", type=int, default=20, help="tasks per HTML page (default 20)")
    design.add_argument("--title", default="Concept rating", help="title of the pages")
    design.add_argument("--seed", type=int, default=0)

    ingest = crowd_commands.add_parser("ingest", help="estimate each pair's correlation from a ratings CSV")
    ingest.add_argument("--study", required=True, help="study directory written by 'crowd design'")
    ingest.add_argument("--ratings", required=True, nargs="+", help="ratings CSV(s): task,input,rater,label")
    ingest.add_argument("--out", required=True, help="output CSV, one row per pair")
    ingest.add_argument("--method", choices=["average", "majority", "bayes_uniform", "bayes_pseudo"], default=None,
                        help="aggregation (default: bayes_pseudo when the design has priors, else bayes_uniform)")
    ingest.add_argument("--interval", choices=["bootstrap", "posterior", "both"], default="bootstrap",
                        help="bootstrap over the inputs, posterior over the labels, or both")
    ingest.add_argument("--rater-error", type=float, default=0.13, help="rater error rate eta of the Bayes methods")
    ingest.add_argument("--uniform-prior", type=float, default=0.01, help="prior of bayes_uniform")
    ingest.add_argument("--n-boot", type=int, default=2000, help="replicates of the interval")
    ingest.add_argument("--ci-level", type=float, default=0.95, help="coverage of the interval")
    ingest.add_argument("--allow-missing", action="store_true", help="drop shown inputs nobody rated")
    ingest.add_argument("--seed", type=int, default=0)
    return parser


_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def memory_budget(text: str) -> int | str:
    """``--memory-budget``: ``auto``, ``unbounded`` or bytes with an optional binary suffix (``512M``, ``2G``)."""
    if text in ("auto", "unbounded"):
        return text
    number, unit = text.rstrip("KMGTkmgt"), text[len(text.rstrip("KMGTkmgt")):].upper()
    if unit not in _UNITS or not number.isdigit():
        raise argparse.ArgumentTypeError(f"expected 'auto', 'unbounded' or bytes such as 536870912, 512M or 2G; "
                                         f"got {text!r}")
    return int(number) * _UNITS[unit]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``neuroneval`` console script; returns the exit status."""
    arguments = build_parser().parse_args(argv)
    try:
        if arguments.command == "metrics":
            _print_metrics()
        elif arguments.command == "validate":
            _validate(arguments.table, arguments.kind)
        elif arguments.command == "score":
            _score(arguments)
        elif arguments.command == "explain":
            _explain(arguments)
        elif arguments.command == "evaluate":
            from neuroneval.explain.evaluate_report import run_evaluate

            run_evaluate(arguments)
        elif arguments.crowd_command == "design":
            _crowd_design(arguments)
        else:
            _crowd_ingest(arguments)
    except (io.TableError, ValueError, KeyError, OSError) as error:
        print(f"neuroneval: error: {error}", file=sys.stderr)
        return 2
    return 0


def _print_metrics() -> None:
    from neuroneval.metrics import METRICS

    for name, spec in METRICS.items():
        direction = "higher is better" if spec.higher_is_better else "lower is better"
        params = ", ".join(spec.params) or "-"
        print(f"{name:28s} range {spec.value_range}  {direction:17s} params: {params}")


def _validate(table: str, kind: str) -> None:
    reader = io.read_activation_table if kind == "activation" else io.read_concept_table
    frame, metadata = reader(table)
    print(f"{table}: ok, {len(frame)} inputs x {frame.shape[1] - 1} {kind} columns; metadata keys: "
          f"{sorted(metadata)}")


def _score(arguments: argparse.Namespace) -> None:
    from neuroneval.metrics import options_for, score

    given = {name: getattr(arguments, name) for name in ("alpha", "lam", "top_alpha")}
    options = options_for(arguments.metric, ties=arguments.ties, seed=arguments.seed,
                          memory_budget=arguments.memory_budget,
                          **{name: value for name, value in given.items() if value is not None})
    activations, _ = io.read_activation_table(arguments.activations)
    concepts, _ = io.read_concept_table(arguments.concepts)
    io.check_matching_ids(activations, concepts, first_source=arguments.activations,
                          second_source=arguments.concepts)
    scores = score(arguments.metric, io.value_matrix(activations), io.value_matrix(concepts),
                   progress=arguments.progress, options=options)
    unit_names = [column for column in activations.columns if column != io.ID_COLUMN]
    concept_names = [column for column in concepts.columns if column != io.ID_COLUMN]
    tidy = pd.DataFrame({
        "unit": np.repeat(unit_names, len(concept_names)),
        "concept": np.tile(concept_names, len(unit_names)),
        "score": scores.ravel(),
    })
    io.write_csv(arguments.out, tidy, float_format="%.8g")
    print(f"wrote {len(tidy)} scores to {arguments.out}")


def method_option(text: str) -> tuple[str, object]:
    """``--option key=value``: the value as JSON where it parses (``3``, ``0.01``, ``["AND", "OR"]``), else text."""
    key, separator, value = text.partition("=")
    if not separator or not key:
        raise ValueError(f"--option expects KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def _explain(arguments: argparse.Namespace) -> None:
    from neuroneval.explain import (
        METHODS,
        ProbingData,
        RandomOptions,
        explain,
        random_explanations,
        write_explanations,
    )

    if arguments.method not in (*METHODS, "random"):
        raise ValueError(f"unknown explanation method {arguments.method!r}; known: {[*METHODS, 'random']}")
    activations, _ = io.read_activation_table(arguments.activations)
    concepts, _ = io.read_concept_table(arguments.concepts)
    io.check_matching_ids(activations, concepts, first_source=arguments.activations,
                          second_source=arguments.concepts)
    options = dict(method_option(text) for text in arguments.option)
    if arguments.method == "random":
        units = [column for column in activations.columns if column != io.ID_COLUMN]
        names = [column for column in concepts.columns if column != io.ID_COLUMN]
        frame = random_explanations(units, names, RandomOptions.from_params(options))
    else:
        captions = None
        if arguments.captions:
            table = pd.read_csv(arguments.captions, keep_default_na=False, dtype={"caption": str})
            by_id = dict(zip(table[io.ID_COLUMN], table["caption"], strict=True))
            missing = [int(i) for i in activations[io.ID_COLUMN] if i not in by_id]
            if missing:
                raise ValueError(f"{arguments.captions}: no caption for input_id {missing[0]}")
            captions = [by_id[i] for i in activations[io.ID_COLUMN]]
        probing = ProbingData.build(concepts, captions=captions)
        frame = explain(arguments.method, activations, probing, options)
    write_explanations(arguments.out, frame)
    print(f"wrote {len(frame)} {arguments.method} explanations to {arguments.out}")


def _crowd_design(arguments: argparse.Namespace) -> None:
    from neuroneval.crowd import design_study_files
    from neuroneval.crowd.design import DesignOptions

    if arguments.raters < 1:
        raise ValueError(f"--raters must be >= 1, got {arguments.raters}")
    n_draws = arguments.budget // arguments.raters
    if n_draws < 2:
        raise ValueError(f"--budget {arguments.budget} with {arguments.raters} rater(s) per input leaves "
                         f"{n_draws} input(s) per pair; need at least 2")
    sampling = arguments.sampling or ("pseudo" if arguments.concepts else "activation")
    written = design_study_files(
        arguments.activations,
        arguments.pairs,
        arguments.out,
        pseudo_labels_path=arguments.concepts,
        world_path=arguments.world,
        title=arguments.title,
        info={"budget": arguments.budget, "raters_per_input": arguments.raters, "sampling": sampling,
              "epsilon": arguments.epsilon, "seed": arguments.seed},
        options=DesignOptions(n_draws=n_draws, sampling=sampling, epsilon=arguments.epsilon,
                              inputs_per_task=arguments.inputs_per_task, tasks_per_batch=arguments.tasks_per_batch,
                              seed=arguments.seed),
    )
    pages = sum(path.suffix == ".html" for path in written)
    summary = json.loads((Path(arguments.out) / "design.json").read_text())
    print(f"designed {summary['pairs']} pair(s): {n_draws} draws each ({sampling} sampling), "
          f"{summary['distinct_inputs']} distinct inputs in {summary['tasks']} tasks on {pages} page(s); "
          f"ask {arguments.raters} rater(s) per task; wrote {arguments.out}")


def _crowd_ingest(arguments: argparse.Namespace) -> None:
    from neuroneval.crowd import estimate_correlations, read_design, read_ratings

    design = read_design(arguments.study)
    method = arguments.method
    if method is None:
        method = "bayes_uniform" if design.samples["prior"].isna().any() else "bayes_pseudo"
    ratings = read_ratings(arguments.ratings, design)
    estimates = estimate_correlations(
        design,
        ratings,
        method=method,
        rater_error=arguments.rater_error,
        uniform_prior=arguments.uniform_prior,
        interval=arguments.interval,
        n_boot=arguments.n_boot,
        ci_level=arguments.ci_level,
        allow_missing=arguments.allow_missing,
        seed=arguments.seed,
    )
    io.write_csv(arguments.out, estimates, float_format="%.6g")
    print(f"estimated {len(estimates)} pair(s) from {len(ratings)} ratings ({method}, {arguments.interval} "
          f"interval); wrote {arguments.out}")


if __name__ == "__main__":
    raise SystemExit(main())
