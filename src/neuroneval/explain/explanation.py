"""The explanation data model: concepts, logical formulas, linear forms, clustered formulas and free text.

An explanation says which concepts drive a unit. Five kinds travel through ``explanations/<setting>/<method>.csv``
(docs/explain.md):

``concept``
    one concept name, a column of the concept table (``colour:red``).
``formula``
    concepts joined by ``AND``, ``OR``, ``NOT`` and parentheses (``a AND (b OR NOT c)``), the compositional
    explanations of Mu & Andreas and INVERT (paper 001, Sec. 5). ``AND`` binds tighter than ``OR``.
``linear``
    ``w1*t1 + w2*t2 + b`` (paper 001, Eq. 15: ``s(x, E) = Σ_j w_j c_{t_j}(x)``, plus a bias).
``clustered``
    ``[l1, u1] F1; [l2, u2] F2``, the Clustered Compositional Explanations of paper 001, Eq. 19: one formula per
    activation range.
``text``
    free text (caption words, LLM descriptions); it can be simulated only by an LLM simulator.

A concept name is written bare when it has no space, quote, parenthesis, ``*``, ``+``, ``;``, ``[``, ``]`` and
is neither a keyword nor a number; otherwise in double quotes with ``\\"`` and ``\\\\`` escaped. The ``length``
of an explanation is its number of distinct concepts (paper 001, Sec. 5.1: "l is the number of unique
concepts in the explanation").
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from neuroneval import io

KINDS = ("concept", "formula", "linear", "clustered", "text")
KEYWORDS = ("AND", "OR", "NOT")

_BARE_NAME = re.compile(r'[^\s()"*+;\[\],]+')
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


class ExplanationSyntaxError(ValueError):
    """A string that is not an explanation of the claimed kind; the message shows where parsing stopped."""


def quote_name(name: str) -> str:
    """``name`` as it appears inside a formula or linear form: bare when unambiguous, else double-quoted.

    >>> quote_name("colour:red"), quote_name("red dog"), quote_name("OR")
    ('colour:red', '"red dog"', '"OR"')
    """
    if not name:
        raise ValueError("a concept name must not be empty")
    bare = _BARE_NAME.fullmatch(name) is not None and name.upper() not in KEYWORDS and not _NUMBER.fullmatch(name)
    if bare and not name.startswith("-"):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---------------------------------------------------------------------------------------------------- formula nodes
@dataclass(frozen=True)
class Concept:
    """A single concept, simulated by its concept vector ``c_t`` (paper 001, Eq. 14)."""

    name: str

    kind = "concept"

    def concepts(self) -> tuple[str, ...]:
        return (self.name,)

    def text(self) -> str:
        return self.name

    def formula_text(self) -> str:
        return quote_name(self.name)


@dataclass(frozen=True)
class Not:
    """``NOT operand``, simulated as ``1 − s(operand)`` (paper 001, Eq. 18)."""

    operand: Formula

    kind = "formula"

    def concepts(self) -> tuple[str, ...]:
        return self.operand.concepts()

    def text(self) -> str:
        return self.formula_text()

    def formula_text(self) -> str:
        inner = self.operand.formula_text()
        return f"NOT {inner}" if isinstance(self.operand, Concept | Not) else f"NOT ({inner})"


@dataclass(frozen=True)
class _Binary:
    """A binary formula node ``left <operator> right``; subclasses name the operator and which operand types
    their text puts in parentheses (those that would otherwise re-associate)."""

    left: Formula
    right: Formula

    kind = "formula"
    operator: ClassVar[str]

    def concepts(self) -> tuple[str, ...]:
        return _unique(self.left.concepts() + self.right.concepts())

    def text(self) -> str:
        return self.formula_text()

    def formula_text(self) -> str:
        left_grouped, right_grouped = self._grouped()
        return f"{_operand_text(self.left, left_grouped)} {self.operator} {_operand_text(self.right, right_grouped)}"

    @staticmethod
    def _grouped() -> tuple[Any, Any]:
        """The operand types to parenthesise on the (left, right) side (``None``: none)."""
        raise NotImplementedError


@dataclass(frozen=True)
class And(_Binary):
    """``left AND right``, simulated as ``s(left)·s(right)`` (paper 001, Eq. 16)."""

    operator = "AND"

    @staticmethod
    def _grouped() -> tuple[Any, Any]:
        return Or, Or | And


@dataclass(frozen=True)
class Or(_Binary):
    """``left OR right``, simulated as ``1 − (1 − s(left))·(1 − s(right))`` (paper 001, Eq. 17)."""

    operator = "OR"

    @staticmethod
    def _grouped() -> tuple[Any, Any]:
        return None, Or


Formula = Concept | Not | And | Or


def _operand_text(node: Formula, parenthesise: type | None) -> str:
    """An operand's text, in parentheses when it is of a type that would otherwise re-associate."""
    inner = node.formula_text()
    return f"({inner})" if parenthesise is not None and isinstance(node, parenthesise) else inner


def _unique(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


# ----------------------------------------------------------------------------------------------- other explanations
@dataclass(frozen=True)
class Linear:
    """``Σ_j w_j·t_j + bias`` (paper 001, Eq. 15 with a bias term), weights in activation units."""

    weights: tuple[tuple[str, float], ...]
    bias: float = 0.0

    kind = "linear"

    def __post_init__(self) -> None:
        names = [name for name, _ in self.weights]
        if len(set(names)) != len(names):
            raise ValueError(f"a linear explanation names each concept once, got {names}")
        if not all(math.isfinite(w) for _, w in self.weights) or not math.isfinite(self.bias):
            raise ValueError(f"linear weights and bias must be finite, got {self.weights} and {self.bias}")

    def concepts(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.weights)

    def text(self) -> str:
        terms = []
        for position, (name, weight) in enumerate(self.weights):
            sign = "-" if weight < 0 else "+"
            magnitude = f"{abs(weight):.8g}*{quote_name(name)}"
            terms.append(("-" + magnitude if sign == "-" else magnitude) if position == 0 else f"{sign} {magnitude}")
        if self.bias != 0.0 or not terms:
            if terms:
                terms.append(f"{'-' if self.bias < 0 else '+'} {abs(self.bias):.8g}")
            else:
                terms.append(f"{self.bias:.8g}")
        return " ".join(terms)


@dataclass(frozen=True)
class Clustered:
    """Clustered Compositional Explanation: ``((l_j, u_j, F_j))_j`` (paper 001, Eq. 19).

    Simulated as ``Σ_j (l_j + u_j)/2 · s(F_j)``: where cluster j's formula holds, the unit is predicted in the
    middle of that cluster's activation range.
    """

    clusters: tuple[tuple[float, float, Formula], ...]

    kind = "clustered"

    def __post_init__(self) -> None:
        if not self.clusters:
            raise ValueError("a clustered explanation needs at least one cluster")
        for low, high, _ in self.clusters:
            if not (math.isfinite(low) and math.isfinite(high)) or low > high:
                raise ValueError(f"cluster bounds must be finite with lower <= upper, got [{low}, {high}]")

    def concepts(self) -> tuple[str, ...]:
        names: tuple[str, ...] = ()
        for _, _, formula in self.clusters:
            names += formula.concepts()
        return _unique(names)

    def text(self) -> str:
        return "; ".join(f"[{low:.8g}, {high:.8g}] ({formula.formula_text()})" for low, high, formula in self.clusters)


@dataclass(frozen=True)
class Text:
    """Free text; only an LLM (or human) simulator can turn it into predicted activations."""

    description: str

    kind = "text"

    def concepts(self) -> tuple[str, ...]:
        return ()

    def text(self) -> str:
        return self.description


Explanation = Concept | Not | And | Or | Linear | Clustered | Text


def kind_of(explanation: Explanation) -> str:
    """The CSV ``kind`` of an explanation object (``concept`` for a bare :class:`Concept`)."""
    return explanation.kind


def length(explanation: Explanation) -> int:
    """Number of distinct concepts (paper 001's explanation length l); 0 for text."""
    return len(explanation.concepts())


# ----------------------------------------------------------------------------------------------------------- parser
_TOKEN = re.compile(r'\s*(?:(?P<quoted>"(?:[^"\\]|\\.)*")|(?P<punct>[()*+\-;\[\],])|(?P<word>[^\s()"*+;\[\],]+))')


def _tokens(text: str) -> Iterator[tuple[str, str, int]]:
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            if text[position:].strip() == "":
                return
            raise ExplanationSyntaxError(f"cannot read {text!r} at position {position}")
        position = match.end()
        if match.group("quoted") is not None:
            raw = match.group("quoted")[1:-1]
            yield "name", re.sub(r"\\(.)", r"\1", raw), match.start("quoted")
        elif match.group("punct") is not None:
            yield "punct", match.group("punct"), match.start("punct")
        elif match.group("word") is not None:
            word = match.group("word")
            kind = "keyword" if word.upper() in KEYWORDS else "word"
            yield kind, word.upper() if kind == "keyword" else word, match.start("word")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items = list(_tokens(text))
        self.index = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.items[self.index] if self.index < len(self.items) else None

    def take(self) -> tuple[str, str, int]:
        item = self.peek()
        if item is None:
            raise ExplanationSyntaxError(f"{self.text!r} ends too early")
        self.index += 1
        return item

    def expect(self, kind: str, value: str) -> None:
        item = self.take()
        if item[:2] != (kind, value):
            raise ExplanationSyntaxError(f"expected {value!r} at position {item[2]} of {self.text!r}, got {item[1]!r}")

    def fail(self, what: str) -> ExplanationSyntaxError:
        item = self.peek()
        where = f"position {item[2]} ({item[1]!r})" if item else "the end"
        return ExplanationSyntaxError(f"expected {what} at {where} of {self.text!r}")

    def done(self) -> None:
        if self.peek() is not None:
            raise self.fail("the end of the explanation")

    # formula := term (OR term)* ; term := factor (AND factor)* ; factor := NOT factor | name | ( formula )
    def formula(self) -> Formula:
        node = self.term()
        while self.peek() is not None and self.peek()[:2] == ("keyword", "OR"):
            self.take()
            node = Or(node, self.term())
        return node

    def term(self) -> Formula:
        node = self.factor()
        while self.peek() is not None and self.peek()[:2] == ("keyword", "AND"):
            self.take()
            node = And(node, self.factor())
        return node

    def factor(self) -> Formula:
        item = self.peek()
        if item is None:
            raise self.fail("a concept, NOT or '('")
        if item[:2] == ("keyword", "NOT"):
            self.take()
            return Not(self.factor())
        if item[:2] == ("punct", "("):
            self.take()
            node = self.formula()
            self.expect("punct", ")")
            return node
        if item[0] in ("name", "word"):
            self.take()
            return Concept(item[1])
        raise self.fail("a concept, NOT or '('")

    def number(self) -> float:
        sign = 1.0
        item = self.peek()
        if item is not None and item[:2] in (("punct", "-"), ("punct", "+")):
            sign = -1.0 if item[1] == "-" else 1.0
            self.take()
        item = self.take()
        if item[0] != "word" or not _NUMBER.fullmatch(item[1]):
            raise ExplanationSyntaxError(f"expected a number at position {item[2]} of {self.text!r}, got {item[1]!r}")
        return sign * float(item[1])

    # linear := term ((+|-) term)* ; term := number '*' name | number
    def linear(self) -> Linear:
        weights: list[tuple[str, float]] = []
        bias = 0.0
        sign = 1.0
        while True:
            item = self.peek()
            if item is not None and item[:2] in (("punct", "-"), ("punct", "+")):
                self.take()
                sign *= -1.0 if item[1] == "-" else 1.0
            value = sign * self.number()
            nxt = self.peek()
            if nxt is not None and nxt[:2] == ("punct", "*"):
                self.take()
                name_item = self.take()
                is_number = name_item[0] == "word" and _NUMBER.fullmatch(name_item[1]) is not None
                if name_item[0] not in ("name", "word") or is_number:
                    raise ExplanationSyntaxError(f"expected a concept name at position {name_item[2]} of {self.text!r}")
                weights.append((name_item[1], value))
            else:
                bias += value
            sign = 1.0
            nxt = self.peek()
            if nxt is None:
                return Linear(tuple(weights), bias)
            if nxt[:2] not in (("punct", "+"), ("punct", "-")):
                raise self.fail("'+' or '-'")
            self.take()
            sign = -1.0 if nxt[1] == "-" else 1.0

    def clustered(self) -> Clustered:
        clusters = []
        while True:
            self.expect("punct", "[")
            low = self.number()
            self.expect("punct", ",")
            high = self.number()
            self.expect("punct", "]")
            clusters.append((low, high, self.formula()))
            if self.peek() is None:
                return Clustered(tuple(clusters))
            self.expect("punct", ";")


def parse(text: str, kind: str | None = None) -> Explanation:
    """Parse an explanation string of a given ``kind`` (guessed when ``None``).

    The guess: ``[`` first → clustered; a ``*`` outside quotes or a bare number → linear; an ``AND``/``OR``/``NOT``
    keyword → formula; else a concept name. ``kind="concept"`` takes the whole stripped string as the name
    (unquoted if quoted), so names need no quoting in ``concept`` rows.

    >>> parse("a AND (b OR NOT c)").formula_text()
    'a AND (b OR NOT c)'
    >>> parse("2.7*dog + 1.5*cat").weights
    (('dog', 2.7), ('cat', 1.5))
    """
    if not isinstance(text, str) or not text.strip():
        raise ExplanationSyntaxError(f"an explanation must be a non-empty string, got {text!r}")
    if kind is None:
        kind = _guess_kind(text)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind == "text":
        return Text(text.strip())
    if kind == "concept":
        stripped = text.strip()
        items = list(_tokens(stripped)) if stripped.startswith('"') else []
        return Concept(items[0][1] if len(items) == 1 and items[0][0] == "name" else stripped)
    parser = _Parser(text)
    if kind == "formula":
        node: Explanation = parser.formula()
    elif kind == "linear":
        node = parser.linear()
    else:
        node = parser.clustered()
    parser.done()
    return node


def _guess_kind(text: str) -> str:
    items = list(_tokens(text))
    if items and items[0][:2] == ("punct", "["):
        return "clustered"
    if any(item[:2] == ("punct", "*") for item in items) or (
            len(items) == 1 and items[0][0] == "word" and _NUMBER.fullmatch(items[0][1])):
        return "linear"
    if any(item[0] == "keyword" for item in items):
        return "formula"
    return "concept"


def to_text(explanation: Explanation) -> str:
    """The canonical string of an explanation (``parse(to_text(e), kind_of(e)) == e`` for formula trees up to
    associativity of chains of the same operator)."""
    return explanation.text()


# ------------------------------------------------------------------------------------------------------ CSV contract
#: The contract's columns, in file order; method-specific score columns follow them.
CSV_COLUMNS = ("unit", "explanation", "length", "kind")


def explanation_frame(units: Sequence[str], explanations: Sequence[Explanation],
                      scores: Mapping[str, Sequence[float] | np.ndarray] | None = None) -> pd.DataFrame:
    """The table of ``explanations/<setting>/<method>.csv``: ``unit, explanation, length, kind`` and ``scores``.

    ``scores`` maps a column name (e.g. ``iou``, ``auc``, ``val_correlation``) to one value per unit.
    """
    units = [str(unit) for unit in units]
    if len(units) != len(explanations):
        raise ValueError(f"got {len(units)} units but {len(explanations)} explanations")
    frame = pd.DataFrame({"unit": units,
                          "explanation": [to_text(e) for e in explanations],
                          "length": np.array([length(e) for e in explanations], dtype=np.int64),
                          "kind": [kind_of(e) for e in explanations]})
    for column, values in (scores or {}).items():
        if column in CSV_COLUMNS:
            raise ValueError(f"score column {column!r} would overwrite a contract column")
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (len(units),):
            raise ValueError(f"score column {column!r} has shape {values.shape}, expected ({len(units)},)")
        frame[column] = values
    return validate_explanations(frame, source="<explanation_frame>")


def validate_explanations(frame: pd.DataFrame, *, source: str) -> pd.DataFrame:
    """Check an explanations table: contract columns, unique units, known kinds, parseable rows, true lengths.

    Errors name ``source``, the row (0-based, as in pandas) and the offending value.
    """
    missing = [column for column in CSV_COLUMNS if column not in frame.columns]
    if missing:
        raise ValueError(f"{source}: missing column(s) {missing}; an explanations table has {list(CSV_COLUMNS)}")
    units = frame["unit"].astype(str)
    duplicated = units[units.duplicated()]
    if not duplicated.empty:
        raise ValueError(f"{source}: unit {duplicated.iloc[0]!r} appears more than once (row {duplicated.index[0]})")
    for row, (text, kind, size) in enumerate(zip(frame["explanation"], frame["kind"], frame["length"], strict=True)):
        if kind not in KINDS:
            raise ValueError(f"{source}, row {row}: kind {kind!r} is not one of {KINDS}")
        try:
            parsed = parse(text, kind)
        except ValueError as error:
            raise ValueError(f"{source}, row {row}: {error}") from error
        if int(size) != length(parsed):
            raise ValueError(f"{source}, row {row}: length {size} but {text!r} names {length(parsed)} concept(s)")
    for column in frame.columns[len(CSV_COLUMNS):]:
        if not pd.api.types.is_numeric_dtype(frame[column]):
            raise ValueError(f"{source}: score column {column!r} must be numeric, got {frame[column].dtype}")
    return frame


def parse_frame(frame: pd.DataFrame, *, source: str = "<frame>") -> list[Explanation]:
    """The explanation objects of a validated table, row by row."""
    validate_explanations(frame, source=source)
    return [parse(text, kind) for text, kind in zip(frame["explanation"], frame["kind"], strict=True)]


def write_explanations(path: str | os.PathLike, frame: pd.DataFrame) -> Path:
    """Validate and atomically write ``explanations/<setting>/<method>.csv`` (temp file, then rename)."""
    validate_explanations(frame, source=str(path))
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return io.write_csv(target, frame, float_format="%.10g")


def read_explanations(path: str | os.PathLike) -> pd.DataFrame:
    """Read and validate an explanations CSV; ``unit``, ``explanation`` and ``kind`` stay strings, and an empty
    cell of a score column is a missing score (NaN, as :func:`write_explanations` writes one)."""
    frame = pd.read_csv(path, dtype={"unit": str, "explanation": str, "kind": str}, keep_default_na=False)
    for column in frame.columns[len(CSV_COLUMNS):]:
        values = frame[column]
        if pd.api.types.is_numeric_dtype(values):
            continue
        try:
            frame[column] = pd.to_numeric(values.mask(values.astype(str).str.strip() == "", np.nan))
        except (TypeError, ValueError):
            continue  # not numeric: validate_explanations names the column
    return validate_explanations(frame, source=str(path))
