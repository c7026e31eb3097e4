"""Token concept tables (neuroneval.concepts.tokens, ``neuroneval concepts tokens``) against brute-force references:
a per-token loop for word lists and patterns, the parity of the delimiters before a token for a span opened and
closed by the same token, and a regular expression over the document's tokens for distinct delimiters."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from neuroneval import io
from neuroneval.cli import main
from neuroneval.concepts.tokens import TokenRule, read_token_rules, read_word_lists, token_concept_table, token_rules

WORDS = ["the", "Red", "red", "blue", "7", "42", "x7", '"', "(", ")", "Ġgreen", "▁Blue", "said"]


def random_tokens(seed: int, n_documents: int = 6) -> pd.DataFrame:
    """A tokens.csv frame: documents of random lengths, rows shuffled, input ids along the corpus."""
    rng = np.random.default_rng(seed)
    rows = []
    for document in range(n_documents):
        for position in range(int(rng.integers(1, 30))):
            rows.append({"input_id": len(rows), "document": document, "position": position,
                         "token": str(rng.choice(WORDS))})
    return pd.DataFrame(rows).sample(frac=1.0, random_state=seed).reset_index(drop=True)


def plain(token: str) -> str:
    return token[1:] if token[:1] in ("Ġ", "▁") and len(token) > 1 else token


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_words_and_patterns_equal_a_per_token_loop(seed) -> None:
    tokens = random_tokens(seed)
    rules = [TokenRule("colour", words=("red", "GREEN", "blue")), TokenRule("colour_cased", words=("Red",),
                                                                             case_sensitive=True),
             TokenRule("number", pattern="[0-9]+"), TokenRule("has_digit", pattern=r".*\d.*")]
    table = token_concept_table(tokens, rules)
    assert list(table.columns) == ["input_id", "colour", "colour_cased", "number", "has_digit"]
    assert table["input_id"].tolist() == tokens["input_id"].tolist()
    expected = {name: [] for name in ("colour", "colour_cased", "number", "has_digit")}
    for token in tokens["token"]:
        word = plain(token)
        expected["colour"].append(float(word.lower() in {"red", "green", "blue"}))
        expected["colour_cased"].append(float(word == "Red"))
        expected["number"].append(float(word.isdigit()))
        expected["has_digit"].append(float(any(character.isdigit() for character in word)))
    for name, values in expected.items():
        np.testing.assert_array_equal(table[name].to_numpy(), np.array(values, np.float32), err_msg=name)
        assert table[name].dtype == np.float32


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_spans_equal_the_delimiter_parity_and_a_regex_over_each_document(seed) -> None:
    tokens = random_tokens(seed)
    table = token_concept_table(tokens, [TokenRule("quoted", between=('"', '"')),
                                         TokenRule("bracketed", between=("(", ")"))])
    for document, rows in tokens.groupby("document"):
        rows = rows.sort_values("position")
        words = rows["token"].tolist()
        quoted = [float(word != '"' and words[:index].count('"') % 2 == 1) for index, word in enumerate(words)]
        # one character per token; a span runs from "(" to the next ")" (a "(" inside it is an ordinary token)
        marks = "".join({"(": "(", ")": ")"}.get(word, "x") for word in words)
        bracketed = np.zeros(len(words), np.float32)
        for match in re.finditer(r"\(([^)]*)", marks):
            bracketed[match.start(1):match.end(1)] = 1.0
        ours = table.set_index("input_id").loc[rows["input_id"]]
        np.testing.assert_array_equal(ours["quoted"].to_numpy(), np.array(quoted, np.float32), err_msg=str(document))
        np.testing.assert_array_equal(ours["bracketed"].to_numpy(), bracketed, err_msg=str(document))


def test_a_span_rule_names_the_document_whose_positions_are_missing() -> None:
    tokens = pd.DataFrame({"input_id": [0, 1, 2], "document": [0, 0, 1], "position": [0, 1, 3],
                           "token": ['"', "red", "blue"]})
    assert token_concept_table(tokens, [TokenRule("colour", words=("red", "blue"))])["colour"].tolist() == [0, 1, 1]
    with pytest.raises(ValueError, match=r"document 1 lacks positions \[0, 1, 2\].*--position-sampling first"):
        token_concept_table(tokens, [TokenRule("quoted", between=('"', '"'))])


def test_rules_and_word_lists_are_read_with_errors_naming_file_concept_and_line(tmp_path) -> None:
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text('number: {pattern: "[0-9]+"}\ncolour: {words: [red, blue]}\n'
                          'quoted: {between: [\'"\', \'"\']}\n')
    assert read_token_rules(rules_file) == [TokenRule("number", pattern="[0-9]+"),
                                            TokenRule("colour", words=("red", "blue")),
                                            TokenRule("quoted", between=('"', '"'))]
    with pytest.raises(ValueError, match=r"here, concept 'a': unknown keys \['word'\]"):
        token_rules({"a": {"word": ["x"]}}, where="here")
    with pytest.raises(ValueError, match=r"concept 'a': give exactly one of .*got \['words', 'pattern'\]"):
        token_rules({"a": {"words": ["x"], "pattern": "y"}})
    with pytest.raises(ValueError, match="concept 'a': pattern '\\(' is not a regex"):
        token_rules({"a": {"pattern": "("}})
    with pytest.raises(ValueError, match=r"concept 'a': between is \[open, close\]"):
        token_rules({"a": {"between": ['"']}})
    with pytest.raises(ValueError, match=r"concept 'a': between is a list \[open, close\], got '\(\)'"):
        token_rules({"a": {"between": "()"}})
    words_file = tmp_path / "names.csv"
    words_file.write_text("token,concept\nAnn,name\nBo,name\nnull,word\n")
    assert read_word_lists(words_file) == [TokenRule("name", words=("Ann", "Bo")), TokenRule("word", words=("null",))]
    words_file.write_text("token,concept\nAnn,\n")
    with pytest.raises(ValueError, match=r"names\.csv, line 2: empty token or concept"):
        read_word_lists(words_file)
    with pytest.raises(ValueError, match=r"concept names repeat: \['a'\]"):
        token_concept_table(random_tokens(0), [TokenRule("a", words=("x",)), TokenRule("a", pattern="y")])


def test_the_cli_writes_a_valid_concept_table_and_names_bad_input(tmp_path, capsys) -> None:
    tokens = random_tokens(4).sort_values("input_id")
    tokens.assign(token_id=0, context="").to_csv(tmp_path / "tokens.csv", index=False)
    (tmp_path / "rules.yaml").write_text("number: {pattern: '[0-9]+'}\nquoted: {between: ['\"', '\"']}\n")
    (tmp_path / "words.csv").write_text("token,concept\nred,colour\nblue,colour\n")
    out = tmp_path / "concepts.parquet"
    assert main(["concepts", "tokens", "--tokens", str(tmp_path / "tokens.csv"), "--rules",
                 str(tmp_path / "rules.yaml"), "--words", str(tmp_path / "words.csv"), "--out", str(out)]) == 0
    frame, metadata = io.read_concept_table(out)
    rules = [*read_token_rules(tmp_path / "rules.yaml"), *read_word_lists(tmp_path / "words.csv")]
    pd.testing.assert_frame_equal(frame, token_concept_table(tokens.reset_index(drop=True), rules))
    assert metadata["source"] == "labels" and metadata["concepts"] == ["number", "quoted", "colour"]
    assert metadata["rules"]["quoted"] == {"between": ['"', '"'], "case_sensitive": False}
    tokens.drop(columns="position").to_csv(tmp_path / "bad.csv", index=False)
    assert main(["concepts", "tokens", "--tokens", str(tmp_path / "bad.csv"), "--words", str(tmp_path / "words.csv"),
                 "--out", str(tmp_path / "x.parquet")]) == 2
    assert "bad.csv: tokens.csv lacks the columns ['position']" in capsys.readouterr().err
    assert main(["concepts", "tokens", "--tokens", str(tmp_path / "tokens.csv"), "--out", str(tmp_path / "y")]) == 2
    assert "give --rules, --words or both" in capsys.readouterr().err
