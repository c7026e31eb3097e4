"""Concept tables of token positions: which concepts each recorded token holds, by rules a researcher writes.

``neuroneval record --text …`` writes a ``tokens.csv`` beside its per-token tables (``input_id, document,
position, token_id, token, context``; docs/record.md). :func:`token_concept_table` turns it into a concept table
(docs/design.md §2.1): one column per concept, 1.0 where the token at ``input_id`` holds it, else 0.0. A concept is
one :class:`TokenRule`, of one of three kinds, matched against the token's text (:func:`token_text`: the token
without the word-start marker of byte-level BPE ``Ġ`` or SentencePiece ``▁``):

- ``words``: the token is one of a word list (``colour: {words: [red, green, blue]}``);
- ``pattern``: the token matches a regular expression as a whole (``number: {pattern: "[0-9]+"}``,
  :func:`re.fullmatch`);
- ``between``: the token lies strictly inside a span of its document opened by the token ``open`` and closed by
  ``close`` (``quoted: {between: ['"', '"']}``); the delimiters themselves are outside. Spans do not nest: inside a
  span, only ``close`` ends it. This reads each document's tokens in order, so every position of a document up to
  its last recorded one must be in ``tokens.csv`` (record without ``--max-positions``, or with
  ``--position-sampling first``).

Matching ignores case unless the rule says ``case_sensitive: true``. Rules come from a YAML mapping
(:func:`read_token_rules`) or from a CSV ``token,concept`` of word lists (:func:`read_word_lists`), or both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: Columns of ``tokens.csv`` this module reads.
TOKEN_COLUMNS = ("input_id", "document", "position", "token")
#: Keys of one rule in a rules file; exactly one of :data:`RULE_KINDS` must be given.
RULE_KINDS = ("words", "pattern", "between")
RULE_KEYS = (*RULE_KINDS, "case_sensitive")
#: Word-start markers of byte-level BPE (GPT-2) and SentencePiece tokens.
WORD_START_MARKERS = "Ġ▁"


@dataclass(frozen=True)
class TokenRule:
    """One concept of a token concept table: ``words``, ``pattern`` or ``between`` (exactly one; module docstring)."""

    concept: str
    words: tuple[str, ...] = ()
    pattern: str | None = None
    between: tuple[str, str] | None = None
    case_sensitive: bool = False

    def __post_init__(self) -> None:
        given = [kind for kind, value in (("words", self.words), ("pattern", self.pattern),
                                          ("between", self.between)) if value]
        if not self.concept:
            raise ValueError("a token rule needs a concept name")
        if len(given) != 1:
            raise ValueError(f"concept {self.concept!r}: give exactly one of {list(RULE_KINDS)}, got {given}")
        if self.between is not None and (len(self.between) != 2 or not all(self.between)):
            raise ValueError(f"concept {self.concept!r}: between is [open, close], two non-empty tokens, got "
                             f"{list(self.between)}")
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except re.error as error:
                raise ValueError(f"concept {self.concept!r}: pattern {self.pattern!r} is not a regex: {error}"
                                 ) from error


def token_text(token: str) -> str:
    """The token without a leading word-start marker (``Ġred`` → ``red``, ``▁red`` → ``red``).

    >>> token_text("Ġred"), token_text("red"), token_text("Ġ")
    ('red', 'red', 'Ġ')
    """
    stripped = token.lstrip(WORD_START_MARKERS)
    return stripped or token


def token_concept_table(tokens: pd.DataFrame, rules: Sequence[TokenRule]) -> pd.DataFrame:
    """The concept table of the token positions of ``tokens`` (a ``tokens.csv`` frame) under ``rules``.

    Returns ``input_id`` (as in ``tokens``) and one float32 column per rule, in the rules' order:
    c_k(i) = 1 if token i holds concept k (module docstring), else 0.

    >>> tokens = pd.DataFrame({"input_id": [0, 1, 2, 3], "document": 0, "position": [0, 1, 2, 3],
    ...                        "token": ['"', "Red", '"', "7"]})
    >>> rules = [TokenRule("colour", words=("red",)), TokenRule("number", pattern="[0-9]+"),
    ...          TokenRule("quoted", between=('"', '"'))]
    >>> token_concept_table(tokens, rules).drop(columns="input_id").to_numpy().T.tolist()
    [[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0]]
    """
    _check_tokens(tokens)
    names = [rule.concept for rule in rules]
    if not rules:
        raise ValueError("no token rules: give at least one concept")
    if len(set(names)) != len(names):
        raise ValueError(f"concept names repeat: {sorted({name for name in names if names.count(name) > 1})}")
    texts = tokens["token"].astype(str).map(token_text)
    columns = {"input_id": tokens["input_id"].to_numpy(np.int64)}
    for rule in rules:
        columns[rule.concept] = _matches(rule, tokens, texts).astype(np.float32)
    return pd.DataFrame(columns)


def _matches(rule: TokenRule, tokens: pd.DataFrame, texts: pd.Series) -> np.ndarray:
    fold = (lambda text: text) if rule.case_sensitive else str.casefold
    folded = texts.map(fold)
    if rule.words:
        return folded.isin({fold(word) for word in rule.words}).to_numpy()
    if rule.pattern is not None:
        pattern = re.compile(rule.pattern, 0 if rule.case_sensitive else re.IGNORECASE)
        return texts.map(lambda text: pattern.fullmatch(text) is not None).to_numpy(bool)
    assert rule.between is not None
    open_token, close_token = (fold(token) for token in rule.between)
    inside = np.zeros(len(tokens), dtype=bool)
    order = tokens.assign(_text=folded.to_numpy()).reset_index(drop=True).sort_values(["document", "position"])
    for document, rows in order.groupby("document", sort=False):
        positions = rows["position"].to_numpy()
        if not np.array_equal(positions, np.arange(len(positions))):
            missing = sorted(set(range(int(positions.max()) + 1)) - set(positions.tolist()))
            raise ValueError(f"concept {rule.concept!r} (between) reads whole documents, but document {document} "
                             f"lacks positions {missing[:5]}{' …' if len(missing) > 5 else ''} in tokens.csv; "
                             "record without --max-positions or with --position-sampling first")
        is_open = False
        for row, text in zip(rows.index, rows["_text"], strict=True):
            if not is_open and text == open_token:
                is_open = True
            elif is_open and text == close_token:
                is_open = False
            else:
                inside[row] = is_open
    return inside


def _check_tokens(tokens: pd.DataFrame) -> None:
    missing = [column for column in TOKEN_COLUMNS if column not in tokens.columns]
    if missing:
        raise ValueError(f"tokens.csv lacks the columns {missing} (it has {list(tokens.columns)}); it is written by "
                         "neuroneval record --text")
    if tokens["input_id"].duplicated().any():
        raise ValueError(f"tokens.csv: input_id {tokens['input_id'][tokens['input_id'].duplicated()].iloc[0]} "
                         "repeats")
    if tokens.duplicated(["document", "position"]).any():
        document, position = tokens.loc[tokens.duplicated(["document", "position"]), ["document", "position"]].iloc[0]
        raise ValueError(f"tokens.csv: document {document}, position {position} repeats")


def read_tokens(path: str | Path) -> pd.DataFrame:
    """A ``tokens.csv`` of ``neuroneval record`` (token text kept as written: ``"null"`` stays a token)."""
    frame = pd.read_csv(path, dtype={"token": str}, keep_default_na=False)
    try:
        _check_tokens(frame)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from error
    return frame


def token_rules(mapping: Mapping[str, Any], *, where: str = "rules") -> list[TokenRule]:
    """Rules from a mapping concept → ``{words: [...]} | {pattern: "..."} | {between: [open, close]}``, each with an
    optional ``case_sensitive``; errors name ``where`` and the concept."""
    if not isinstance(mapping, Mapping) or not mapping:
        raise ValueError(f"{where}: expected a mapping concept -> rule, got {type(mapping).__name__}")
    rules = []
    for concept, spec in mapping.items():
        if not isinstance(spec, Mapping):
            raise ValueError(f"{where}, concept {concept!r}: expected a mapping with one of {list(RULE_KINDS)}")
        unknown = sorted(set(spec) - set(RULE_KEYS))
        if unknown:
            raise ValueError(f"{where}, concept {concept!r}: unknown keys {unknown} (known: {list(RULE_KEYS)})")
        words = spec.get("words") or ()
        if isinstance(words, str) or not all(isinstance(word, str | int | float) for word in words):
            raise ValueError(f"{where}, concept {concept!r}: words is a list of tokens, got {words!r}")
        between = spec.get("between")
        if between is not None and (isinstance(between, str) or not isinstance(between, Sequence)):
            raise ValueError(f"{where}, concept {concept!r}: between is a list [open, close], got {between!r}")
        try:
            rules.append(TokenRule(str(concept), words=tuple(str(word) for word in words), pattern=spec.get("pattern"),
                                   between=tuple(str(token) for token in between) if between is not None else None,
                                   case_sensitive=bool(spec.get("case_sensitive", False))))
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from error
    return rules


def read_token_rules(path: str | Path) -> list[TokenRule]:
    """The rules of a YAML file (:func:`token_rules`)."""
    import yaml

    try:
        mapping = yaml.safe_load(Path(path).read_text())
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not YAML: {error}") from error
    return token_rules(mapping, where=str(path))


def read_word_lists(path: str | Path) -> list[TokenRule]:
    """One ``words`` rule per concept of a CSV ``token,concept`` (a token may name several concepts)."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    if list(frame.columns) != ["token", "concept"]:
        raise ValueError(f"{path}: expected the columns token,concept, got {list(frame.columns)}")
    words: dict[str, list[str]] = {}
    for row, (token, concept) in enumerate(frame.itertuples(index=False, name=None), start=2):
        if not token or not concept:
            raise ValueError(f"{path}, line {row}: empty token or concept")
        words.setdefault(concept, []).append(token)
    if not words:
        raise ValueError(f"{path}: no rows")
    return [TokenRule(concept, words=tuple(tokens)) for concept, tokens in words.items()]
