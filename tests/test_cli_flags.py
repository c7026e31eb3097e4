"""Every numeric flag of ``neuroneval`` rejects a bad value with exit code 2 and the flag's name, no traceback
(issue 34): the argparse types of neuroneval.cli against the value ranges the library accepts."""

from __future__ import annotations

import subprocess
import sys

import pytest

from neuroneval.cli import main

SCORE = ["score", "--metric", "iou", "--activations", "a.parquet", "--concepts", "c.parquet", "--out", "o.csv"]
DESIGN = ["crowd", "design", "--activations", "a.parquet", "--pairs", "p.csv", "--out", "study", "--budget", "40"]
INGEST = ["crowd", "ingest", "--study", "study", "--ratings", "r.csv", "--out", "e.csv"]

BAD_VALUES = [
    (SCORE, "--alpha", ["0", "-0.1", "1.5", "nan", "inf", "x"]),
    (SCORE, "--lam", ["nan", "inf", "-inf", "x"]),
    (SCORE, "--seed", ["-1", "1.5", "x"]),
    (DESIGN[:-2], "--budget", ["0", "-5", "2.5", "x"]),
    (DESIGN, "--raters", ["0", "-1", "1.5"]),
    (DESIGN, "--epsilon", ["0", "-0.001", "nan", "inf"]),
    (DESIGN, "--inputs-per-task", ["0", "-3", "2.0"]),
    (DESIGN, "--tasks-per-batch", ["0", "-3", "x"]),
    (DESIGN, "--seed", ["-1", "x"]),
    (INGEST, "--rater-error", ["-0.1", "1", "1.5", "nan"]),
    (INGEST, "--uniform-prior", ["0", "1", "-0.5", "nan"]),
    (INGEST, "--n-boot", ["0", "-5", "10.5", "x"]),
    (INGEST, "--ci-level", ["0", "1", "1.5", "-0.5", "nan"]),
    (INGEST, "--seed", ["-1", "0.5"]),
]
CASES = [(base, flag, value) for base, flag, values in BAD_VALUES for value in values]


@pytest.mark.parametrize(("base", "flag", "value"), CASES, ids=[f"{flag}={value}" for _, flag, value in CASES])
def test_a_bad_numeric_flag_exits_2_naming_it(base, flag, value, capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main([*base, f"{flag}={value}"])
    error = capsys.readouterr().err
    assert stop.value.code == 2
    assert f"argument {flag}: must be " in error and repr(value) in error, error


def test_the_reported_n_boot_zero_ends_without_a_traceback(tmp_path) -> None:
    result = subprocess.run([sys.executable, "-m", "neuroneval.cli", *INGEST, "--n-boot", "0"], cwd=tmp_path,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "argument --n-boot: must be an integer >= 1, got '0'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("flag", "value", "parsed"), [
    ("--alpha", "1", 1.0), ("--alpha", "0.005", 0.005), ("--lam", "-2", -2.0), ("--seed", "0", 0)])
def test_good_values_parse(flag, value, parsed) -> None:
    from neuroneval.cli import build_parser

    arguments = build_parser().parse_args([*SCORE, flag, value])
    assert getattr(arguments, flag.lstrip("-")) == parsed and type(getattr(arguments, flag.lstrip("-"))) is type(parsed)


@pytest.mark.parametrize(("method", "option", "names"), [
    ("compexp", "max_length=-1", "max_length"), ("compexp", "beam_size=0", "beam_size"),
    ("netdissect", "alpha=1.5", "alpha"), ("random", "seed=-3", "seed"), ("compexp", "no_such_key=1", "no_such_key")])
def test_a_bad_explain_option_is_named_before_any_table_is_read(method, option, names, tmp_path, capsys) -> None:
    code = main(["explain", "--method", method, "--option", option, "--activations", str(tmp_path / "none.parquet"),
                 "--concepts", str(tmp_path / "none.parquet"), "--out", str(tmp_path / "out.csv")])
    error = capsys.readouterr().err
    assert code == 2 and "--option: " in error and names in error and "none.parquet" not in error, error
