"""The explanation data model: parse ↔ print round trips, quoting, lengths, and the CSV contract."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neuroneval.explain import (
    And,
    Clustered,
    Concept,
    ExplanationSyntaxError,
    Linear,
    Not,
    Or,
    Text,
    explanation_frame,
    length,
    parse,
    read_explanations,
    to_text,
    write_explanations,
)
from neuroneval.explain.explanation import quote_name

NAMES = st.sampled_from(["a", "colour:red", "class:red_striped_circle", "red dog", "OR", "x-1", 'say "hi"', "3"])
FORMULAS = st.recursive(NAMES.map(Concept), lambda inner: st.one_of(
    inner.map(Not), st.tuples(inner, inner).map(lambda p: And(*p)), st.tuples(inner, inner).map(lambda p: Or(*p))),
    max_leaves=8)


def test_the_brief_examples_parse_and_print_back() -> None:
    formula = parse("a AND (b OR NOT c)")
    assert formula == And(Concept("a"), Or(Concept("b"), Not(Concept("c"))))
    assert to_text(formula) == "a AND (b OR NOT c)"
    linear = parse("2.7*dog + 1.5*cat")
    assert linear == Linear((("dog", 2.7), ("cat", 1.5)))
    assert to_text(linear) == "2.7*dog + 1.5*cat"


def test_precedence_and_binds_tighter_than_or() -> None:
    assert parse("a OR b AND c") == Or(Concept("a"), And(Concept("b"), Concept("c")))
    assert parse("not a and b") == And(Not(Concept("a")), Concept("b"))


@settings(max_examples=150, deadline=None)
@given(FORMULAS)
def test_formula_round_trip(formula) -> None:
    text = formula.formula_text()
    assert parse(text, "formula") == formula
    assert length(formula) == len(set(formula.concepts()))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(NAMES, st.floats(-100, 100, allow_nan=False).map(lambda w: round(w, 4))),
                min_size=1, max_size=5, unique_by=lambda item: item[0]),
       st.floats(-10, 10, allow_nan=False).map(lambda b: round(b, 4)))
def test_linear_round_trip(terms, bias) -> None:
    explanation = Linear(tuple(terms), bias)
    assert parse(to_text(explanation), "linear") == explanation
    assert parse(to_text(explanation)) == explanation  # the kind is guessed from the '*'


def test_clustered_round_trip_and_length() -> None:
    explanation = Clustered(((0.0, 0.5, Concept("a")), (0.5, 2.25, And(Concept("b"), Not(Concept("a"))))))
    assert to_text(explanation) == "[0, 0.5] (a); [0.5, 2.25] (b AND NOT a)"
    assert parse(to_text(explanation)) == explanation
    assert length(explanation) == 2


def test_quoting_only_where_needed() -> None:
    assert quote_name("colour:red") == "colour:red"
    assert quote_name("red dog") == '"red dog"'
    assert quote_name("and") == '"and"'
    assert quote_name("0.5") == '"0.5"'
    assert parse('"red dog" OR "and"') == Or(Concept("red dog"), Concept("and"))


def test_concept_rows_take_the_whole_name() -> None:
    assert parse("red dog", "concept") == Concept("red dog")
    assert parse("a AND b", "concept") == Concept("a AND b")
    assert parse("some free text", "text") == Text("some free text")


@pytest.mark.parametrize("text, kind", [("a AND", "formula"), ("(a OR b", "formula"), ("a b", "formula"),
                                        ("2*", "linear"), ("2*dog +", "linear"), ("dog*2", "linear"),
                                        ("[1, 2 a", "clustered"), ("", None)])
def test_syntax_errors_say_where(text: str, kind: str | None) -> None:
    with pytest.raises(ExplanationSyntaxError):
        parse(text, kind)


def test_csv_round_trip(tmp_path) -> None:
    explanations = [Concept("colour:red"), parse("a AND (b OR NOT c)"), parse("2.5*dog + 1*cat - 0.25"),
                    parse("[0, 1] (a); [1, 3] (b OR c)"), Text("striped things, mostly")]
    frame = explanation_frame(["u0", "u1", "u2", "u3", "u4"], explanations, {"iou": [0.5, 0.25, 0.0, 1.0, 0.125]})
    path = write_explanations(tmp_path / "explanations" / "setting" / "method.csv", frame)
    back = read_explanations(path)
    assert list(back.columns) == ["unit", "explanation", "length", "kind", "iou"]
    pd.testing.assert_frame_equal(back, frame)
    assert [parse(t, k) for t, k in zip(back["explanation"], back["kind"], strict=True)] == explanations
    assert list(back["length"]) == [1, 3, 2, 3, 0]
    assert not list(path.parent.glob("*.tmp*"))


def test_csv_round_trip_keeps_missing_scores_and_the_degenerate_flag(tmp_path) -> None:
    frame = explanation_frame(["u0", "u1", "u2"], [Concept("a"), Concept("b"), Concept("a")],
                              {"iou": [0.5, float("nan"), 0.25]}).assign(degenerate=[False, True, False])
    back = read_explanations(write_explanations(tmp_path / "m.csv", frame))
    pd.testing.assert_frame_equal(back, frame)
    frame.assign(iou=["0.5", "", "high"]).to_csv(tmp_path / "text.csv", index=False)
    with pytest.raises(ValueError, match="score column 'iou' must be numeric"):
        read_explanations(tmp_path / "text.csv")


@pytest.mark.parametrize("change, message", [
    ({"kind": ["concept", "sentence"]}, "kind 'sentence'"),
    ({"length": [1, 5]}, "length 5"),
    ({"unit": ["u", "u"]}, "appears more than once"),
    ({"explanation": ["a", "a AND"]}, "row 1"),
])
def test_reading_rejects_broken_rows(tmp_path, change, message) -> None:
    frame = pd.DataFrame({"unit": ["u", "v"], "explanation": ["a", "a AND b"], "length": [1, 2],
                          "kind": ["concept", "formula"]})
    for column, values in change.items():
        frame[column] = values
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match=message):
        read_explanations(path)
    with pytest.raises(ValueError, match=message):
        write_explanations(tmp_path / "out.csv", frame)
    assert not (tmp_path / "out.csv").exists()
