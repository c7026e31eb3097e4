"""``neuroneval concepts tokens``: a concept table of recorded token positions from rules or word lists.

The parser imports nothing heavy; the work is in :mod:`neuroneval.concepts.tokens`.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path


def add_concepts_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``concepts`` subcommand (with its one subcommand ``tokens``) to the ``neuroneval`` parser."""
    parser = commands.add_parser("concepts", help="build concept tables (tokens: from rules over a tokens.csv)")
    concept_commands = parser.add_subparsers(dest="concepts_command", required=True)
    tokens = concept_commands.add_parser(
        "tokens", help="concepts per token of neuroneval record's tokens.csv, from rules and/or word lists",
        description="One column per concept: 1 where the token holds it. Rules (YAML): concept: {words: [...]} | "
                    "{pattern: REGEX} | {between: [OPEN, CLOSE]}, optionally case_sensitive: true.")
    tokens.add_argument("--tokens", required=True, help="tokens.csv written by neuroneval record --text")
    tokens.add_argument("--rules", help="YAML file: concept -> words | pattern | between rule")
    tokens.add_argument("--words", help="CSV token,concept: one word list per concept")
    tokens.add_argument("--source", default="labels",
                        help="the table's concept source in the metadata (default labels)")
    tokens.add_argument("--out", required=True, help="concept table to write (.parquet)")
    return parser


def run_concepts(arguments: argparse.Namespace) -> None:
    """Build and write the token concept table the flags describe, and print what was written."""
    from neuroneval import io
    from neuroneval.concepts.tokens import read_token_rules, read_tokens, read_word_lists, token_concept_table

    if not arguments.rules and not arguments.words:
        raise ValueError("give --rules, --words or both")
    rules = [*(read_token_rules(arguments.rules) if arguments.rules else []),
             *(read_word_lists(arguments.words) if arguments.words else [])]
    frame = token_concept_table(read_tokens(arguments.tokens), rules)
    concepts = [rule.concept for rule in rules]
    metadata = {"source": arguments.source, "concepts": concepts, "tokens": str(Path(arguments.tokens)),
                "rules": {rule.concept: {key: value for key, value in asdict(rule).items()
                                         if key != "concept" and value not in ((), None)} for rule in rules}}
    path = io.write_concept_table(arguments.out, frame, metadata=metadata)
    counts = ", ".join(f"{concept} {int(frame[concept].sum())}" for concept in concepts)
    print(f"wrote {path} ({len(frame)} tokens; positives: {counts})")
