"""The method catalogue (neuroneval.explain_catalogue) is the one home of the explanation methods' facts: the
library's dispatch, the step's runners and the claims read it, and it stays light enough for the Snakefile."""

from __future__ import annotations

import subprocess
import sys

import pytest

from neuroneval import explain, explain_catalogue
from neuroneval.explain import options as explain_options
from neuroneval.explain.ideal import IDEAL
from neuroneval.explain_catalogue import (
    BASELINES,
    CATALOGUE,
    EXPLAIN_METHODS,
    REFERENCE_ROWS,
    base_method,
    method_entry,
    method_files,
    method_options,
    method_tables,
    methods_of_family,
)
from neuroneval.fidelity.claims import paper_001
from neuroneval.pipeline.explain_steps import RUNNERS

EXPLAIN = {"max_length": 3, "random_seed": 7, "methods": {"compexp": {"beam_size": 2}, "le_label": {"max_length": 4},
                                                          "llm": {"model": "m"}}}


def test_the_catalogue_imports_no_third_party_module() -> None:
    """The Snakefile reads the catalogue; it must not load the explain package (scipy, scikit-learn) or numpy."""
    code = ("import sys, neuroneval.explain_catalogue; "
            "print(sorted(m for m in ('numpy', 'pandas', 'scipy', 'sklearn', 'torch', 'neuroneval.explain') "
            "if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_the_library_dispatch_is_the_catalogue() -> None:
    """explain.METHODS holds exactly the catalogue's probing-data methods, with the catalogue's options class,
    probing fields and summary; every options class the catalogue names exists in explain.options."""
    probing = [name for name in EXPLAIN_METHODS if CATALOGUE[name].runner in ("probing", "captions", "tokens")]
    assert set(explain.METHODS) == set(probing)
    for name, spec in explain.METHODS.items():
        entry = CATALOGUE[name]
        assert spec.options.__name__ == entry.options and spec.needs == entry.probing and spec.summary == entry.summary
    for entry in CATALOGUE.values():
        assert not entry.options or isinstance(getattr(explain_options, entry.options), type), entry.name


def test_every_runner_of_the_catalogue_has_a_step() -> None:
    assert {entry.runner for entry in CATALOGUE.values()} - {"none"} <= set(RUNNERS)
    assert {"spatial", "external_spatial"} <= set(RUNNERS)


def test_reference_rows_and_families() -> None:
    assert BASELINES == ("random", "random_l1", "truth") and REFERENCE_ROWS == (*BASELINES, IDEAL)
    assert explain_catalogue.IDEAL == IDEAL
    assert methods_of_family("linear") == ("le_label", "le_pseudo") == paper_001.LE_METHODS
    assert methods_of_family("broden") == ("netdissect", "compexp", "cce") == paper_001.BRODEN_METHODS
    assert paper_001.EXPLAIN_BASELINES == REFERENCE_ROWS
    assert set(EXPLAIN_METHODS).isdisjoint(REFERENCE_ROWS)


@pytest.mark.parametrize(("name", "tables"), [
    ("netdissect", (1,)), ("clip_dissect", (1,)), ("top_tokens", (1,)), ("captions", (1,)), ("llm", (1,)),
    ("compexp", (2,)), ("le_pseudo", (2,)), ("compexp_l1", (1,)), ("le_label_l1", (1,)),
    ("random", (2,)), ("random_l1", (1,)), ("truth", (1, 2)), ("ideal", (1, 2)),
])
def test_method_tables(name: str, tables: tuple[int, ...]) -> None:
    """Table 1 holds the one-concept and text methods, the l = 1 runs and the Table 1 floor; Table 2 the rest;
    the truth and the ceiling are reference rows of both."""
    assert method_tables(name) == tables


def test_method_files_and_options() -> None:
    assert method_files({"methods": ["compexp", "netdissect"]}, ["compexp", "le_label"]) == [
        "compexp", "netdissect", "compexp_l1", "random", "random_l1", "truth"]
    assert method_options(EXPLAIN, "compexp") == {"beam_size": 2, "max_length": 3}
    assert method_options(EXPLAIN, "compexp_l1") == {"beam_size": 2, "max_length": 1}
    assert method_options(EXPLAIN, "le_label") == {"max_length": 4}, "LE's length is its own option"
    assert method_options(EXPLAIN, "le_label_l1") == {"max_length": 1}
    assert method_options(EXPLAIN, "random") == {"length": 3, "seed": 7}
    assert method_options(EXPLAIN, "random_l1") == {"length": 1, "seed": 7}
    assert method_options(EXPLAIN, "truth") == {} and method_options(EXPLAIN, "llm") == {"model": "m"}


def test_unknown_method_file_is_an_error_naming_it() -> None:
    assert base_method("random_l1") == ("random_l1", False) and method_entry("cce_l1").name == "cce"
    with pytest.raises(ValueError, match=r"'netdisect'.*known methods"):
        method_entry("netdisect")
