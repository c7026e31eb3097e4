"""Command line: ``neuroneval metrics | validate | score | explain | evaluate | record | concepts tokens | sanity |
cosy | crowd design | crowd ingest | crowd simulate-ratings | crowd analyze | crowd cost | concepteval ratings``.

Examples
--------
List the metrics and their parameters::

    neuroneval metrics

Check a table against the data contract::

    neuroneval validate data/activations/vision_probe/vision_cnn/softmax.parquet --kind activation

Score every (unit, concept) pair of two tables with one or more metrics (``--metric iou,auc``, or ``all``) and
write one tidy table, ``unit,concept,metric,<the metrics' parameters>,score`` (CSV, or Parquet for ``.parquet``)::

    neuroneval score --metric iou,auc,correlation --alpha 0.005 \
        --activations data/activations/vision_probe/vision_cnn/softmax.parquet \
        --concepts data/concepts/vision_probe/labels.parquet --out scores.csv

It works within ``--memory-budget`` (default ``auto``: about the inputs' size; e.g. ``2G``), writing the table in
pieces of that size, and shows a progress bar on stderr once it has run for 2 s (``--no-progress`` turns it off).

Explain every unit of your own activation table with a method of ``neuroneval.explain`` (docs/explain.md) on
your own concept table, written as ``explanations/<setting>/<method>.csv`` is (unit, explanation, length, kind,
scores); ``--option`` sets the method's options (JSON values)::

    neuroneval explain --method compexp --option max_length=2 --option beam_size=5 \
        --activations my_units.parquet --concepts my_concepts.parquet --out explanations/mine/compexp.csv

Score explanation files from any tool on your activations and concepts (docs/evaluate.md)::

    neuroneval evaluate --activations my_units.parquet --concepts my_concepts.parquet \
        --explanations mine=explanations/mine/compexp.csv --out evaluation/

Score your explanation file with CoSy (paper 002): AUC, MAD, Mann–Whitney U and two-sided p-value of each unit's
explanation and of a random one, on synthetic images of a generator (``neuroneval.cosy.cli``)::

    neuroneval cosy --explanations mine.csv --model data/models/vision_cnn.pt --layer softmax \
        --control data/worlds/vision/probe --generator oracle --n-images 20 --out cosy_mine.csv

Record your own model's layers on your own inputs into activation tables (docs/record.md)::

    neuroneval record --factory mymodels:digits_cnn --weights digits_cnn.pt --images digits/ --layer act \
        --out activations/digits_cnn

Build a concept table of the recorded token positions (``tokens.csv`` of ``record --text``) from rules
(``concept: {words: [...]} | {pattern: REGEX} | {between: [OPEN, CLOSE]}``) or a CSV ``token,concept``
(``neuroneval.concepts.tokens``)::

    neuroneval concepts tokens --tokens activations/lm/tokens.csv --rules rules.yaml --out token_concepts.parquet

Design a crowd study (paper 001): for each (unit, explanation) pair of ``pairs.csv``, spend a budget of 180
ratings (90 inputs drawn by importance sampling, Eq. 4, x 2 raters), written as task pages with the world's
images::

    neuroneval crowd design --activations data/activations/vision_probe/vision_cnn/block3.parquet \
        --concepts data/concepts/vision_probe/pseudo-clip.parquet --pairs pairs.csv --budget 180 --raters 2 \
        --world data/worlds/vision/probe --out study/

With your own inputs: ``--images DIR`` (``inputs.csv`` input_id,file, or files named by id), ``--images
FILE.npy --image-ids IDS.npy`` (or ``--image-ids rows`` for row i = input id i) or ``--texts FILE.csv``;
``--prompts FILE`` (concept,text) words what raters read.

Estimate each pair's correlation from the downloaded ratings, with a 95 % bootstrap interval::

    neuroneval crowd ingest --study study/ --ratings ratings_*.csv --out estimates.csv

Analyze collected ratings as paper 001's Setting 2 (RCE against cost, rater error from gold items), price a
design, and build paper 004's Tables 3 and 4 from human readability ratings (docs/crowd_study.md)::

    neuroneval crowd analyze --study study/ --ratings ratings.csv --activations acts.parquet \
        --truth labels.parquet --out analysis/
    neuroneval crowd cost --curve analysis/curve.csv --budget 0.72 --target-rce 0.2
    neuroneval concepteval ratings --ratings human.csv --measures measures.csv --out tables/
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pandas as pd

from neuroneval import __version__, io
from neuroneval.cli_flags import (
    finite_float,
    fraction_below_one,
    fraction_open,
    fraction_up_to_one,
    nonnegative_int,
    positive_float,
    positive_int,
)
from neuroneval.metrics.ties import TIES
from neuroneval.record_cli import add_record_parser, run_record


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``neuroneval`` console script."""
    parser = argparse.ArgumentParser(prog="neuroneval", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"neuroneval {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("metrics", help="list the metrics, their value ranges and parameters")

    validate = commands.add_parser("validate", help="check a Parquet table against the data contract")
    validate.add_argument("table", help="activation or concept table (file or directory of shards)")
    validate.add_argument("--kind", choices=["activation", "concept"], required=True)

    score = commands.add_parser("score", help="score all (unit, concept) pairs with one or more metrics")
    score.add_argument("--metric", required=True,
                       help="metric name(s), comma-separated (e.g. iou or iou,auc,hmean:auc+inverse_auc), or 'all'")
    score.add_argument("--activations", required=True, help="activation table")
    score.add_argument("--concepts", required=True, help="concept table")
    score.add_argument("--out", required=True,
                       help="tidy output: unit,concept,metric,<the metrics' parameters>,score as CSV, or Parquet "
                            "when it ends in .parquet")
    score.add_argument("--alpha", type=fraction_up_to_one,
                       help="top-alpha fraction for binarising activations, in (0, 1] (metrics that take it)")
    score.add_argument("--lam", type=finite_float, help="WPMI lambda")
    score.add_argument("--top-alpha", dest="top_alpha", choices=["at_least_kth", "exactly_k"],
                       help="top-alpha rule: every input >= the k-th largest (default, the authors' code) or "
                            "exactly k inputs")
    score.add_argument("--ties", choices=TIES, default=TIES[0])
    score.add_argument("--seed", type=nonnegative_int, default=0)
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

    add_record_parser(commands)

    from neuroneval.explain.evaluate_report import add_evaluate_parser

    add_evaluate_parser(commands)

    from neuroneval.concepts_cli import add_concepts_parser

    add_concepts_parser(commands)

    crowd = commands.add_parser("crowd", help="crowd-sourced evaluation (paper 001): design a study, ingest ratings")
    crowd_commands = crowd.add_subparsers(dest="crowd_command", required=True)
    design = crowd_commands.add_parser(
        "design", help="pick inputs by importance sampling and write task batches (CSV + HTML pages)")
    design.add_argument("--activations", required=True, help="activation table (Parquet)")
    design.add_argument("--concepts", help="concept (pseudo-label) table whose columns are the explanations (or a "
                        "formula AND/OR/NOT over them, simulated with fuzzy logic); guides sampling (Eq. 4) and is "
                        "the Bayes prior at ingestion")
    design.add_argument("--pairs", required=True, help="CSV with columns unit,explanation (extra columns kept)")
    design.add_argument("--budget", type=positive_int, required=True,
                        help="ratings per pair = inputs drawn x raters per input (paper: 180 = 90 x 2)")
    design.add_argument("--raters", type=positive_int, default=2, help="raters per input (default 2)")
    design.add_argument("--out", required=True, help="study directory to write")
    design.add_argument("--world", help="vision world directory whose images the pages show (default: input ids)")
    design.add_argument("--images", metavar="DIR|FILE.npy",
                        help="your images by input_id: a folder (inputs.csv input_id,file, or files named <id>.png) "
                        "or a .npy/.npz array (see --image-ids)")
    design.add_argument("--image-ids", metavar="FILE|rows",
                        help="input ids of the --images array rows (.npy or CSV with input_id), or 'rows' to declare "
                        "row i = input id i")
    design.add_argument("--texts", metavar="FILE",
                        help="your texts by input_id: CSV input_id,text, or the token table of 'neuroneval record' "
                        "(token shown in its left context)")
    design.add_argument("--prompts", metavar="FILE",
                        help="CSV concept,text: what raters read for each concept (default: the name made readable, "
                        "class:5 -> 'class 5'; formulas in words)")
    design.add_argument("--sampling", choices=["pseudo", "activation", "uniform"], default=None,
                        help="sampling distribution (default: pseudo with --concepts, else activation)")
    design.add_argument("--epsilon", type=positive_float, default=0.001, help="epsilon of the sampling distribution")
    design.add_argument("--inputs-per-task", type=positive_int, default=15, help="inputs shown per task (default 15)")
    design.add_argument("--tasks-per-batch", type=positive_int, default=20, help="tasks per HTML page (default 20)")
    design.add_argument("--title", default="Concept rating", help="title of the pages")
    design.add_argument("--seed", type=nonnegative_int, default=0)
    design.add_argument("--gold", metavar="FILE", help="CSV explanation,input_id,answer of known-answer inputs mixed "
                        "into the tasks, so the ratings estimate the rater error rate ('crowd analyze')")
    design.add_argument("--gold-per-task", type=positive_int, default=1, help="gold items per task (default 1)")

    ingest = crowd_commands.add_parser("ingest", help="estimate each pair's correlation from a ratings CSV")
    ingest.add_argument("--study", required=True, help="study directory written by 'crowd design'")
    ingest.add_argument("--ratings", required=True, nargs="+", help="ratings CSV(s): task,input,rater,label")
    ingest.add_argument("--out", required=True, help="output CSV, one row per pair")
    ingest.add_argument("--method", choices=["average", "majority", "bayes_uniform", "bayes_pseudo"], default=None,
                        help="aggregation (default: bayes_pseudo when the design has priors, else bayes_uniform)")
    ingest.add_argument("--interval", choices=["bootstrap", "posterior", "both"], default="bootstrap",
                        help="bootstrap over the inputs, posterior over the labels, or both")
    ingest.add_argument("--rater-error", type=fraction_below_one, default=0.13,
                        help="rater error rate eta of the Bayes methods, in [0, 1)")
    ingest.add_argument("--uniform-prior", type=fraction_open, default=0.01, help="prior of bayes_uniform, in (0, 1)")
    ingest.add_argument("--n-boot", type=positive_int, default=2000, help="replicates of the interval (>= 1)")
    ingest.add_argument("--ci-level", type=fraction_open, default=0.95, help="coverage of the interval, in (0, 1)")
    ingest.add_argument("--allow-missing", action="store_true", help="drop shown inputs nobody rated")
    ingest.add_argument("--seed", type=nonnegative_int, default=0)

    from neuroneval.ratings_cli import add_concepteval_parser, add_crowd_rating_parsers

    add_crowd_rating_parsers(crowd_commands)
    add_concepteval_parser(commands)

    from neuroneval.cosy.cli import add_cosy_parser

    add_cosy_parser(commands)

    from neuroneval.sanity_cli import add_sanity_parser

    add_sanity_parser(commands)
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
        elif arguments.command == "cosy":
            from neuroneval.cosy.cli import run_cosy

            run_cosy(arguments)
        elif arguments.command == "record":
            run_record(arguments)
        elif arguments.command == "concepts":
            from neuroneval.concepts_cli import run_concepts

            run_concepts(arguments)
        elif arguments.command == "concepteval":
            from neuroneval.ratings_cli import run_concepteval

            run_concepteval(arguments)
        elif arguments.command == "sanity":
            from neuroneval.sanity_cli import run_sanity

            run_sanity(arguments)
        elif arguments.crowd_command == "design":
            _crowd_design(arguments)
        elif arguments.crowd_command == "ingest":
            _crowd_ingest(arguments)
        else:
            from neuroneval.ratings_cli import run_crowd_ratings

            run_crowd_ratings(arguments)
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
    if kind == "activation":
        _list_degenerate_units(frame)


def _list_degenerate_units(frame: pd.DataFrame) -> None:
    """Print the constant and near-dead units of an activation table, one line each (docs/design.md §5.6)."""
    from neuroneval.metrics.unit_checks import degenerate_units

    units = degenerate_units(io.value_matrix(frame), [column for column in frame.columns if column != io.ID_COLUMN])
    if not units.degenerate.any():
        print(f"no constant or near-dead unit (each varies on at least {units.varying_threshold:g} inputs)")
        return
    print(f"degenerate units: {units.summary()}")
    for name, status, varying in zip(units.unit_names, units.status, units.varying_inputs, strict=True):
        if status != "ok":
            print(f"  {name}: {status} (varies on {varying} of {units.n_inputs} inputs)")


def _score(arguments: argparse.Namespace) -> None:
    from neuroneval.metrics import DEFAULTS, get_spec, score_table_chunks
    from neuroneval.metrics.table import metric_names
    from neuroneval.tidy_writer import write_tidy

    names = metric_names(arguments.metric)
    given = {name: value for name in ("alpha", "lam", "top_alpha") if (value := getattr(arguments, name)) is not None}
    unused = sorted(name for name in given if not any(name in get_spec(metric).params for metric in names))
    if unused:
        raise ValueError(f"metric {names[0]!r} takes no parameter(s) {unused}" if len(names) == 1
                         else f"none of the metrics {names} takes parameter(s) {unused}")
    activations, _ = io.read_activation_table(arguments.activations)
    concepts, _ = io.read_concept_table(arguments.concepts)
    io.check_matching_ids(activations, concepts, first_source=arguments.activations,
                          second_source=arguments.concepts)
    pieces = score_table_chunks(names, activations, concepts, progress=arguments.progress, ties=arguments.ties,
                                seed=arguments.seed, memory_budget=arguments.memory_budget, **given)
    alpha = given.get("alpha", DEFAULTS["alpha"]) if any("alpha" in get_spec(m).params for m in names) else None
    rows = write_tidy(arguments.out, _flag_degenerate_pieces(pieces, activations, alpha=alpha),
                      float_format="%.8g")
    print(f"wrote {rows} scores ({len(names)} metric(s)) to {arguments.out}")


def _flag_degenerate_pieces(pieces: Iterator[pd.DataFrame], activations: pd.DataFrame, *,
                            alpha: float | None) -> Iterator[pd.DataFrame]:
    """``score``'s tidy pieces with the ``degenerate`` column (docs/design.md §5.6): one warning naming the
    constant and near-dead units, and one when the top-α selects too few inputs."""
    from neuroneval.metrics.unit_checks import DEGENERATE_COLUMN, degenerate_units, warn_small_probe_set

    if alpha is not None:
        warn_small_probe_set(len(activations), "alpha", alpha, where="score")
    units = degenerate_units(io.value_matrix(activations),
                             [column for column in activations.columns if column != io.ID_COLUMN])
    units.warn("their scores are kept (documented values) but flagged (column 'degenerate'): never rank them as "
               "well explained")
    flags = units.by_name()
    for piece in pieces:
        piece[DEGENERATE_COLUMN] = piece["unit"].astype(str).map(flags).fillna(False).astype(bool)
        yield piece


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
    options = dict(method_option(text) for text in arguments.option)
    options_class = RandomOptions if arguments.method == "random" else METHODS[arguments.method].options
    try:
        options_class.from_params(options)
    except ValueError as error:
        raise ValueError(f"--option: {error}") from None
    activations, _ = io.read_activation_table(arguments.activations)
    concepts, _ = io.read_concept_table(arguments.concepts)
    io.check_matching_ids(activations, concepts, first_source=arguments.activations,
                          second_source=arguments.concepts)
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
    frame = _flag_degenerate_explanations(arguments.method, frame, activations, options)
    write_explanations(arguments.out, frame)
    print(f"wrote {len(frame)} {arguments.method} explanations to {arguments.out}")


def _flag_degenerate_explanations(method: str, frame: pd.DataFrame, activations: pd.DataFrame,
                                  params: dict[str, object]) -> pd.DataFrame:
    """``explain``'s table with the ``degenerate`` column and NaN scores for those units (docs/explain.md); warns
    on a too-small top quantile."""
    from neuroneval.explain import METHODS
    from neuroneval.explain.unit_status import flag_degenerate_explanations, warn_small_quantile
    from neuroneval.metrics.unit_checks import degenerate_units

    if method in METHODS:
        warn_small_quantile(method, METHODS[method].options.from_params(params), len(activations))
    units = degenerate_units(io.value_matrix(activations),
                             [column for column in activations.columns if column != io.ID_COLUMN])
    return flag_degenerate_explanations(frame, units)


def _crowd_design(arguments: argparse.Namespace) -> None:
    from neuroneval.crowd import design_study_files
    from neuroneval.crowd.design import DesignOptions

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
        media=_crowd_media(arguments),
        prompts_path=arguments.prompts,
        title=arguments.title,
        info={"budget": arguments.budget, "raters_per_input": arguments.raters, "sampling": sampling,
              "epsilon": arguments.epsilon, "seed": arguments.seed,
              **({"gold_per_task": arguments.gold_per_task} if arguments.gold else {})},
        options=DesignOptions(n_draws=n_draws, sampling=sampling, epsilon=arguments.epsilon,
                              inputs_per_task=arguments.inputs_per_task, tasks_per_batch=arguments.tasks_per_batch,
                              seed=arguments.seed),
        gold_path=arguments.gold,
        gold_per_task=arguments.gold_per_task,
    )
    pages = sum(path.suffix == ".html" for path in written)
    summary = json.loads((Path(arguments.out) / "design.json").read_text())
    print(f"designed {summary['pairs']} pair(s): {n_draws} draws each ({sampling} sampling), "
          f"{summary['distinct_inputs']} distinct inputs in {summary['tasks']} tasks on {pages} page(s); "
          f"ask {arguments.raters} rater(s) per task; wrote {arguments.out}")


def _crowd_media(arguments: argparse.Namespace):
    """The pages' media of ``crowd design``: at most one of --world, --images, --texts."""
    from neuroneval.input_media import read_image_array, read_image_folder, read_text_table, read_vision_world_media

    given = [flag for flag, value in (("--world", arguments.world), ("--images", arguments.images),
                                      ("--texts", arguments.texts)) if value]
    if len(given) > 1:
        raise ValueError(f"give one of --world, --images, --texts for the pages, not {' and '.join(given)}")
    if arguments.image_ids and not arguments.images:
        raise ValueError("--image-ids names the rows of an --images array; give --images FILE.npy too")
    if arguments.world:
        return read_vision_world_media(arguments.world)
    if arguments.texts:
        return read_text_table(arguments.texts)
    if not arguments.images:
        return None
    images = Path(arguments.images)
    if images.is_dir():
        if arguments.image_ids:
            raise ValueError(f"--images {images} is a folder (ids from inputs.csv or file names); drop --image-ids")
        return read_image_folder(images)
    row_is_id = arguments.image_ids == "rows"
    return read_image_array(images, ids=None if row_is_id else arguments.image_ids, row_is_id=row_is_id)


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
