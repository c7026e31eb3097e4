"""Subcommands for collected ratings: ``crowd simulate-ratings | analyze | cost`` (paper 001, Setting 2 and App. A.3)
and ``concepteval ratings`` (paper 004, Tables 3 and 4); docs/crowd_study.md walks through them.

The parsers import nothing heavy; the work is in :mod:`neuroneval.crowd.setting2_files`,
:mod:`neuroneval.crowd.cost_model` and :mod:`neuroneval.concepteval.human_ratings`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

CROWD_COMMANDS = ("simulate-ratings", "analyze", "cost")
_AGGREGATIONS = ("average", "majority", "bayes_uniform", "bayes_pseudo")


def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers such as 10,20,45; got {text!r}") from error
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def _name_list(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(","))
    unknown = [name for name in names if name not in _AGGREGATIONS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown aggregation method(s) {unknown}; expected some of {_AGGREGATIONS}")
    return names


def _rater_error(text: str) -> float:
    from neuroneval.cli_flags import number_flag

    return float(number_flag(text, integer=False, low=0, high=0.5, high_open=True))


def _prices(parser: argparse.ArgumentParser) -> None:
    from neuroneval.cli_flags import positive_float, positive_int

    parser.add_argument("--price-per-task", type=positive_float, default=0.06, help="dollars per task (paper: 0.06)")
    parser.add_argument("--inputs-per-task", type=positive_int, default=15, help="inputs per task (paper: 15)")


def add_crowd_rating_parsers(crowd_commands: argparse._SubParsersAction) -> None:
    """Add ``simulate-ratings``, ``analyze`` and ``cost`` to the ``crowd`` subcommands."""
    from neuroneval.cli_flags import nonnegative_int, positive_float, positive_int

    simulate = crowd_commands.add_parser(
        "simulate-ratings", help="ratings of a study by simulated raters with a known error rate (ingest format)")
    simulate.add_argument("--study", required=True, help="study directory written by 'crowd design'")
    simulate.add_argument("--truth", required=True, help="concept table of ground-truth 0/1 labels (Parquet) whose "
                          "columns include every explanation of the study")
    simulate.add_argument("--raters", type=positive_int, default=9, help="raters per task (paper's Setting 2: 9)")
    simulate.add_argument("--rater-error", type=_rater_error, default=0.13, help="probability eta in [0, 0.5) "
                          "that a rater flips a label (paper: 0.13)")
    simulate.add_argument("--seed", type=nonnegative_int, default=0)
    simulate.add_argument("--out", required=True, help="ratings CSV to write (task,input,rater,label)")

    analyze = crowd_commands.add_parser(
        "analyze", help="Setting 2 (paper 001 Figs. 2b, 3b, 4): RCE against cost by subsampling raters and inputs")
    analyze.add_argument("--study", required=True, action="append", metavar="[NAME=]DIR",
                         help="a rated study directory, named by its sampling (design.json) or NAME; repeat per "
                              "study, each followed by its --ratings")
    analyze.add_argument("--ratings", required=True, action="append", nargs="+", metavar="CSV",
                         help="the ratings CSV(s) of the preceding --study")
    analyze.add_argument("--activations", required=True, help="activation table the studies were designed from")
    analyze.add_argument("--truth", required=True, help="concept table of ground-truth 0/1 labels: rho_gt (Eq. 10)")
    analyze.add_argument("--sizes", type=_int_list, default=(10, 20, 45, 90), help="inputs per subset (draws)")
    analyze.add_argument("--raters", type=_int_list, default=(1, 2, 3), help="raters per input of a subset")
    analyze.add_argument("--methods", type=_name_list, default=_AGGREGATIONS, help="aggregation methods")
    analyze.add_argument("--trials", type=positive_int, default=200, help="random subsets per point (paper: 1000)")
    analyze.add_argument("--rater-error", type=_rater_error, default=0.13,
                         help="eta in [0, 0.5) assumed by the Bayes methods")
    analyze.add_argument("--seed", type=nonnegative_int, default=0)
    _prices(analyze)
    analyze.add_argument("--out", required=True, help="output directory (curve.csv, pair_errors.csv, "
                         "rater_error.csv, setting2.png)")

    cost = crowd_commands.add_parser(
        "cost", help="dollars of a design; with --curve its expected RCE, a budget's best design, the cheapest design "
                     "for a target RCE")
    _prices(cost)
    cost.add_argument("--inputs", type=positive_int, default=90, help="inputs per pair (paper: 90)")
    cost.add_argument("--raters", type=positive_int, default=2, help="raters per input (paper: 2)")
    cost.add_argument("--curve", help="curve.csv of 'crowd analyze' (or any table with its columns)")
    cost.add_argument("--method", choices=_AGGREGATIONS, default="bayes_pseudo", help="aggregation method")
    cost.add_argument("--sampling", help="which study's curve (default: the only one, else pseudo)")
    cost.add_argument("--budget", type=positive_float, help="dollars per pair to spend on the best rater count")
    cost.add_argument("--target-rce", type=positive_float, help="RCE to reach at the lowest cost")
    cost.add_argument("--out", help="CSV to write the answers to (default: print only)")


def run_crowd_ratings(arguments: argparse.Namespace) -> None:
    """Run ``crowd simulate-ratings | analyze | cost``."""
    from neuroneval.crowd.cost_model import CostModel

    if arguments.crowd_command == "simulate-ratings":
        from neuroneval.crowd.setting2_files import simulate_ratings_file

        ratings = simulate_ratings_file(arguments.study, arguments.truth, arguments.out, n_raters=arguments.raters,
                                        rater_error=arguments.rater_error, seed=arguments.seed)
        print(f"simulated {len(ratings)} ratings ({arguments.raters} raters, eta = {arguments.rater_error:g}); "
              f"wrote {arguments.out}")
        return
    model = CostModel(price_per_task=arguments.price_per_task, inputs_per_task=arguments.inputs_per_task)
    if arguments.crowd_command == "analyze":
        _analyze(arguments, model)
    else:
        _cost(arguments, model)


def _analyze(arguments: argparse.Namespace, model) -> None:
    from neuroneval.crowd.real_study import Setting2Options
    from neuroneval.crowd.setting2_files import analyze_study_files

    if len(arguments.study) != len(arguments.ratings):
        raise ValueError(f"{len(arguments.study)} --study but {len(arguments.ratings)} --ratings; give each study "
                         "its ratings right after it")
    studies = []
    for text, ratings in zip(arguments.study, arguments.ratings, strict=True):
        name, _, directory = text.rpartition("=") if "=" in text else (None, "", text)
        studies.append((name or None, directory, ratings))
    options = Setting2Options(sample_sizes=arguments.sizes, rater_counts=arguments.raters, methods=arguments.methods,
                              n_trials=arguments.trials, rater_error=arguments.rater_error, seed=arguments.seed)
    written = analyze_study_files(studies, arguments.activations, arguments.truth, arguments.out, options, model)
    import pandas as pd

    eta = pd.read_csv(written["rater_error"])
    for row in eta[eta["rater"] == "all"].itertuples(index=False):
        print(f"{row.study}: eta from {row.items} = {row.rater_error:.3f} [{row.ci_low:.3f}, {row.ci_high:.3f}] "
              f"({row.wrong} of {row.gold_ratings} ratings wrong)")
    print(f"wrote {', '.join(str(path) for path in written.values())}")


def _cost(arguments: argparse.Namespace, model) -> None:
    import pandas as pd

    from neuroneval.crowd.setting2_files import cost_table
    from neuroneval.io import write_csv

    curve, sampling = None, arguments.sampling
    if arguments.curve:
        curve = pd.read_csv(arguments.curve)
        if sampling is None and "sampling" in curve.columns:
            names = list(dict.fromkeys(curve["sampling"]))
            sampling = names[0] if len(names) == 1 else "pseudo"
    table = cost_table(model, curve=curve, method=arguments.method, sampling=sampling, n_inputs=arguments.inputs,
                       n_raters=arguments.raters, budget=arguments.budget, target_rce=arguments.target_rce)
    print(table.to_string(index=False, float_format=lambda value: f"{value:.4g}"))
    if arguments.out:
        write_csv(arguments.out, table)
        print(f"wrote {arguments.out}")


def add_concepteval_parser(commands: argparse._SubParsersAction) -> None:
    """Add ``concepteval ratings``: paper 004's Tables 3 and 4 from a human-ratings file."""
    from neuroneval.cli_flags import nonnegative_int, positive_int

    concepteval = commands.add_parser("concepteval", help="paper 004 from your files: human readability ratings")
    subcommands = concepteval.add_subparsers(dest="concepteval_command", required=True)
    ratings = subcommands.add_parser("ratings", help="Table 3 (inter-rater Kendall tau) and Table 4 (concurrent "
                                                     "validity of every measure against the human mean)")
    ratings.add_argument("--ratings", required=True, help="CSV rater,concept,aspect,rating (aspect optional)")
    ratings.add_argument("--measures", required=True, help="CSV concept,measure,value (e.g. the concepteval "
                         "measures.csv; filter it with --run and --model)")
    ratings.add_argument("--run", help="keep the rows of this run of --measures (its run column)")
    ratings.add_argument("--model", help="keep the rows of this model of --measures (its model column)")
    ratings.add_argument("--levels", type=positive_int, default=5, help="points of the rating scale (paper: 1 to 5)")
    ratings.add_argument("--tau-variant", choices=["a", "b"], default="b", help="Kendall tau a (Eq. 15) or b (scipy)")
    ratings.add_argument("--n-boot", type=nonnegative_int, default=1000,
                         help="bootstrap resamples over concepts (0: none)")
    ratings.add_argument("--seed", type=nonnegative_int, default=0)
    ratings.add_argument("--out", required=True, help="output directory (table3_inter_rater.csv, "
                         "table4_validity.csv)")


def run_concepteval(arguments: argparse.Namespace) -> None:
    """Run ``concepteval ratings``."""
    import pandas as pd

    from neuroneval.concepteval.human_ratings import read_human_ratings, table3_inter_rater, table4_validity
    from neuroneval.concepteval.measurement import BootstrapOptions, MeasurementOptions
    from neuroneval.io import write_csv

    options = MeasurementOptions(tau_variant=arguments.tau_variant,
                                 bootstrap=BootstrapOptions(n_boot=arguments.n_boot, seed=arguments.seed))
    ratings = read_human_ratings(arguments.ratings, levels=arguments.levels)
    scores = pd.read_csv(arguments.measures, dtype={"concept": str, "measure": str})
    for column in ("run", "model"):
        value = getattr(arguments, column)
        if value is not None:
            if column not in scores.columns:
                raise ValueError(f"{arguments.measures}: no {column} column to select --{column} {value!r} from")
            scores = scores[scores[column].astype(str) == value]
            if scores.empty:
                raise ValueError(f"{arguments.measures}: no row with {column} {value!r}")
    out = Path(arguments.out)
    table3 = table3_inter_rater(ratings, options)
    table4 = table4_validity(scores, ratings, options)
    write_csv(out / "table3_inter_rater.csv", table3)
    write_csv(out / "table4_validity.csv", table4)
    print(table3.pivot_table(index=["rater_a", "rater_b"], columns="aspect", values="value").round(2).to_string())
    print(table4.pivot_table(index="measure", columns=["statistic", "aspect"], values="value").round(2).to_string())
    print(f"wrote {out / 'table3_inter_rater.csv'}, {out / 'table4_validity.csv'}")
