"""Command line: ``neuroneval metrics | validate | score``.

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
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np
import pandas as pd

from neuroneval import __version__, io


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
    score.add_argument("--ties", choices=["average", "reference"], default="average")
    score.add_argument("--seed", type=int, default=0)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``neuroneval`` console script; returns the exit status."""
    arguments = build_parser().parse_args(argv)
    try:
        if arguments.command == "metrics":
            _print_metrics()
        elif arguments.command == "validate":
            _validate(arguments.table, arguments.kind)
        else:
            _score(arguments)
    except (io.TableError, ValueError, KeyError) as error:
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
    from neuroneval.metrics import METRICS, score

    activations, _ = io.read_activation_table(arguments.activations)
    concepts, _ = io.read_concept_table(arguments.concepts)
    io.check_matching_ids(activations, concepts, first_source=arguments.activations,
                          second_source=arguments.concepts)
    params: dict[str, object] = {"ties": arguments.ties, "seed": arguments.seed}
    accepted = METRICS[arguments.metric].params if arguments.metric in METRICS else ("alpha", "lam")
    for name in ("alpha", "lam"):
        value = getattr(arguments, name)
        if value is not None:
            if name not in accepted:
                raise ValueError(f"metric {arguments.metric!r} takes no parameter {name!r}")
            params[name] = value
    scores = score(arguments.metric, io.value_matrix(activations), io.value_matrix(concepts), **params)
    unit_names = [column for column in activations.columns if column != io.ID_COLUMN]
    concept_names = [column for column in concepts.columns if column != io.ID_COLUMN]
    tidy = pd.DataFrame({
        "unit": np.repeat(unit_names, len(concept_names)),
        "concept": np.tile(concept_names, len(unit_names)),
        "score": scores.ravel(),
    })
    io.write_csv(arguments.out, tidy, float_format="%.8g")
    print(f"wrote {len(tidy)} scores to {arguments.out}")


if __name__ == "__main__":
    raise SystemExit(main())
