"""``neuroneval crowd simulate-ratings | analyze | cost`` and ``concepteval ratings``: answers, flags, errors."""

from __future__ import annotations

import pandas as pd
import pytest

from neuroneval.cli import main

ANALYZE = ["crowd", "analyze", "--study", "s", "--ratings", "r.csv", "--activations", "a.parquet", "--truth",
           "t.parquet", "--out", "analysis"]
SIMULATE = ["crowd", "simulate-ratings", "--study", "s", "--truth", "t.parquet", "--out", "r.csv"]
RATINGS = ["concepteval", "ratings", "--ratings", "h.csv", "--measures", "m.csv", "--out", "tables"]


def test_cost_of_the_papers_design(tmp_path, capsys):
    assert main(["crowd", "cost", "--out", str(tmp_path / "cost.csv")]) == 0
    table = pd.read_csv(tmp_path / "cost.csv")
    assert table["dollars"].item() == pytest.approx(0.72)  # $0.06 / 15 · 90 · 2 (paper 001, Sec. 4.2)
    assert main(["crowd", "cost", "--price-per-task", "0.12", "--inputs", "45", "--raters", "3"]) == 0
    assert "1.08" in capsys.readouterr().out  # $0.12 / 15 · 45 · 3


def test_cost_questions_need_a_curve(capsys):
    assert main(["crowd", "cost", "--budget", "1"]) == 2
    assert "give --curve" in capsys.readouterr().err


@pytest.mark.parametrize(("base", "flag", "value"), [
    (SIMULATE, "--rater-error", "0.5"), (SIMULATE, "--raters", "0"), (ANALYZE, "--sizes", "10,0"),
    (ANALYZE, "--methods", "median"), (ANALYZE, "--trials", "0"), (RATINGS, "--n-boot", "-1"),
    (["crowd", "cost"], "--budget", "0"), (["crowd", "cost"], "--price-per-task", "nan"),
])
def test_bad_flags_exit_2_naming_the_flag(base, flag, value, capsys):
    with pytest.raises(SystemExit) as stop:
        main([*base, flag, value])
    assert stop.value.code == 2
    assert f"argument {flag}" in capsys.readouterr().err


def test_each_study_needs_its_ratings(capsys):
    assert main([*ANALYZE, "--study", "other"]) == 2
    assert "2 --study but 1 --ratings" in capsys.readouterr().err


def test_concepteval_ratings_names_a_bad_line(tmp_path, capsys):
    (tmp_path / "h.csv").write_text("rater,concept,rating\nann,c0,3\nann,c1,0\n")
    (tmp_path / "m.csv").write_text("concept,measure,value\nc0,x,1\n")
    code = main(["concepteval", "ratings", "--ratings", str(tmp_path / "h.csv"), "--measures",
                 str(tmp_path / "m.csv"), "--out", str(tmp_path / "tables")])
    assert code == 2
    assert "h.csv, line 3, column rating: '0' is not an integer in 1 … 5" in capsys.readouterr().err
