"""Paper 001's claims (``fidelity.claims.paper_001``), rule by rule, at the edges a reader relies on.

Pinned here:

- Cost factors (``factor_verdict``): "≈ F×" holds on [F/2, 2F] with both ends included (F = 5: 2.5 and 10 hold,
  2.5 − 1e-4 and 10 + 1e-4 do not; F = 30: 15 and 60), within noise when only the interval meets the band (an end
  exactly on the band counts), a NaN factor never holds and a NaN interval end is no noise.
- Crowd study (``crowd_claims``): the planted rows read the (baseline, method) pair's own rows (the other pair's
  baseline or method, each sorting before or after the real one, and other unit groups than ``all`` sorting before
  and after it, are left alone); the sweep listed from the commonest rarity down; the factor judged at
  ``class_rarity`` (the first sweep row within ``np.isclose`` of it), the band printed in the claim; a missing
  rarity not testable with the sweep (or ``not built``) as our value; the embedded factor judged as measured (the
  first ``all`` row), its reason empty when it holds and otherwise naming the concepts' rarity and the planted
  factor at the nearest rarity (none when the sweep is empty); every text exactly; ``class_rarity`` and ``source``
  keyword-only.
- Method cells (``method_cells``): one cell per key value in the order of the table; the baselines (random,
  random_l1, truth, ideal) and the oracle never scored; a NaN score left out with its length; the methods' means best
  first; the truth score read from the cell's own ``truth`` rows (keys and method names sorting before and after are
  left alone), NaN without them; ``label`` keyword-only; the cell frozen.
- ``cell_context``: both methods' lengths when known and finite, the planted concept's score when finite, joined by
  ``; `` only when both are there.
- Method comparisons (paired bootstrap): the best (by mean) of the claimed family against the best other method,
  ``_l1`` runs counted in their family; a cell missing either side skipped; the per-cell verdicts combined, the
  holding cells counted, every non-holding cell named with its verdict (and the context only for a cell that
  differs), the note only when the claim does not hold; the bootstrap options passed through (a 20 % interval holds
  where the default 95 % one is within noise).
- ``le_best_claims``: Table 2 rows only (tables 1 and 3 left alone); paper 001's protocol is ``scored_on:
  setting`` (a string built at run time) on a ``pseudo:`` concept table, hidden groups only; scored_on values
  sorting before and after ``setting`` are not it; the paper's values printed.
- ``broden_claims``: Tables 1 and 2 (0 and 3 left alone); the concept-subset row on protocol settings whose
  ``method_concepts`` list a Broden-style method (one listing only other methods, or none, is not such a setting),
  the secondary row on final-layer groups with its note.
- ``crowd_agreement_claims``: table 1, setting ``all``, reference ``simulation_correlation``, ``crowd:`` metrics
  only (decoys either side of each); τ's interval above 0 holds (exactly 0 does not), within noise when it
  contains 0 (an end at 0 included), differs below 0; a non-finite τ or interval end is not testable; the
  reasons exactly.
- ``crowd_le_claims``: cells per (setting, aggregation), the paper's runner-up printed, an empty table not testable.
- ``source`` (and every other option) is keyword-only in every builder.

Scores are binary fractions so every paired difference is exact; a constant difference has its point as its
bootstrap interval. Expected values are written by hand here, never read back from the code under test.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from neuroneval.fidelity import claims as fc
from neuroneval.fidelity.claims import paper_001
from neuroneval.fidelity.claims.paired import PairedBootstrapOptions, PairedComparison

NAN = float("nan")
EPS = 1e-4
SIM = "simulation_correlation"
#: ``scored_on: setting`` as a config loader hands it over: equal to, but not the same object as, a literal.
SETTING = "".join(["set", "ting"])
#: Where 001's rarity comes from (paper 000), as every crowd row cites it.
RARITY_SOURCE = "one ImageNet class: 0.1 % of the inputs per paper 000 App. F.1; 001 states no rarity"
IS_WHAT = "pseudo-label importance sampling (Eq. 4) over uniform sampling"
BAYES_WHAT = "Bayes aggregation with a pseudo-label prior over majority vote"
CROWD_SOURCE = "results/crowd_rarity.csv, results/crowd_summary.csv"
SCORES_SOURCE = "results/explain/scores/<setting>.csv"

#: Paper 001's Table 2 (RN-50 / ViT-B-16): LE(SigLIP) 0.3772 / 0.3489, LE(label) 0.2924 / 0.3243, the best other
#: l > 1 method INVERT l=3 0.2341 / 0.1101.
LE_PAPER = ("RN-50: LE(SigLIP) 0.377, LE(label) 0.292, best other 0.234; "
            "ViT-B-16: LE(SigLIP) 0.349, LE(label) 0.324, best other 0.110")
#: Tables 1 and 2: best Broden-style CCE l=15 0.151 / 0.057; best other LE(SigLIP) 0.3772 / 0.3489.
BRODEN_PAPER = "RN-50: best Broden 0.151 vs best other 0.377; ViT-B-16: best Broden 0.057 vs best other 0.349"
#: Table 3's average: LE(SigLIP) l=1 0.1946, then CD 0.1601 (not LE itself).
CROWD_PAPER = "LE(SigLIP) best in all 4 rows; average 0.1946 vs CD 0.1601"
#: Kendall τ of Table 1's means (both models) against Table 3's averages: 9 of 10 pairs agree (INVERT l=1 and MAIA
#: swap), τ = (9 − 1) / 10.
AGREEMENT_PAPER = "τ = 0.80 over 5 methods (Table 1 mean of both models vs Table 3 average)"

LE_PRIMARY = ("Linear Explanations beat the best other l > 1 method on hidden units simulated with pseudo-labels "
              "(the paper's units and scorer)")
LE_SECONDARY = ("Linear Explanations beat the best other l > 1 method in the other settings (final-layer class units, "
                "label-simulated hidden units; secondary)")
LE_PRIMARY_EMPTY = ("no hidden-unit setting is simulated with pseudo-labels (explain.settings.<s>.scored_on: setting "
                    "on a pseudo:<model> concept table) with both LE and another l > 1 method")
BRODEN_SECONDARY = ("the best other method beats Broden-style methods (NetDissect, CompExp, CCE) on final-layer class "
                    "units, every method reading the same concepts (secondary)")
BRODEN_SUBSET_EMPTY = ("no hidden-unit setting simulated with pseudo-labels gives the Broden-style methods a concept "
                       "subset (explain.settings.<s>.method_concepts): every method reads the same concepts, so the "
                       "paper's cause (Broden lacks the high-level concepts) is absent")
BRODEN_NOTE = ("every method here reads the same concept set, classes included, so the paper's cause (Broden lacks "
               "the high-level concepts) is absent")

#: Per-unit scores (four units) whose paired differences are exact: the better one 0.25 above, below, or equal.
HIGH, MID, LOW = [0.75] * 4, [0.5] * 4, [0.25] * 4
HOLDS_TEXT = "+0.250 [+0.250, +0.250] (n = 4)"
DIFFERS_TEXT = "-0.250 [-0.250, -0.250] (n = 4)"


def _units(cells: dict[tuple, dict[str, list[float]]], keys: tuple[str, ...] = ("table", "setting", "group"),
           score: str = SIM, lengths: dict[str, float] | None = None) -> pd.DataFrame:
    """Per-unit rows ``{key values: {method: [score of u0, u1, ...]}}``, with a ``length`` column when given."""
    rows = [{**dict(zip(keys, key, strict=True)), "method": method, "unit": f"u{i}", score: value}
            for key, methods in cells.items() for method, values in methods.items() for i, value in enumerate(values)]
    frame = pd.DataFrame(rows)
    if lengths is not None:
        frame["length"] = frame["method"].map(lengths)
    return frame


# --- cost factors: ≈ F× within [F/2, 2F] ---------------------------------------------------------------------------


@pytest.mark.parametrize(("factor", "low", "high", "expected"), [
    (2.5, NAN, NAN, "holds"), (2.5 - EPS, NAN, NAN, "differs"), (2.25, NAN, NAN, "differs"),
    (6.0, NAN, NAN, "holds"), (10.0, NAN, NAN, "holds"), (10.0 + EPS, NAN, NAN, "differs"),
    (2.0, 1.0, 2.5, "within_noise"), (2.0, 1.0, 2.5 - EPS, "differs"),
    (11.0, 10.0, 12.0, "within_noise"), (11.0, 10.0 + EPS, 12.0, "differs"),
    (2.0, NAN, 3.0, "differs"), (11.0, 9.0, NAN, "differs"),
    (NAN, 1.0, 3.0, "within_noise"), (NAN, 11.0, 12.0, "differs")])
def test_a_factor_of_five_holds_from_2_5_to_10_inclusive(factor: float, low: float, high: float,
                                                         expected: str) -> None:
    """F = 5: the band is [2.5, 10] (not 2 = 5 // 2, nor 7 = 5 + 2); an interval touching it is within noise."""
    row = pd.Series({"factor": factor, "ci_low": low, "ci_high": high})
    assert paper_001.factor_verdict(row, 5.0) == expected


@pytest.mark.parametrize(("factor", "expected"), [
    (15.0, "holds"), (15.0 - EPS, "differs"), (60.0, "holds"), (60.0 + EPS, "differs")])
def test_a_factor_of_thirty_holds_from_15_to_60(factor: float, expected: str) -> None:
    """F = 30: the band is [15, 60]."""
    assert paper_001.factor_verdict(pd.Series({"factor": factor, "ci_low": NAN, "ci_high": NAN}), 30.0) == expected


# --- crowd study: planted sweep and embedded study -----------------------------------------------------------------


def _rarity(rows: list[tuple[str, str, float, float, float, float]] | None = None) -> pd.DataFrame:
    """crowd_rarity.csv rows (baseline, method, rarity, factor, ci_low, ci_high); by default the decoys first (each
    pair's baseline or method swapped), then both pairs' sweeps out of order."""
    if rows is None:
        rows = [("majority", "pseudo", 0.001, 99.0, 98.0, 100.0), ("uniform", "bayes_pseudo", 0.001, 77.0, 76.0, 78.0),
                ("uniform", "pseudo", 0.01, 9.0, 7.0, 11.0), ("uniform", "pseudo", 0.1, 2.0, 1.0, 3.0),
                ("uniform", "pseudo", 0.001, 28.0, 25.0, 31.0),
                ("majority", "bayes_pseudo", 0.01, 3.0, 2.0, 4.0), ("majority", "bayes_pseudo", 0.1, 1.5, 1.0, 2.0),
                ("majority", "bayes_pseudo", 0.001, 2.0, 1.0, 2.4)]
    return pd.DataFrame(rows, columns=["baseline", "method", "rarity", "factor", "ci_low", "ci_high"])


def _summary(rows: list[tuple[str, str, str, float, float, float]] | None = None) -> pd.DataFrame:
    """crowd_summary.csv rows (baseline, method, unit_group, factor, ci_low, ci_high); by default decoys first (the
    other pair's baseline or method; unit groups ``a1`` and ``softmax`` either side of ``all``)."""
    if rows is None:
        rows = [("majority", "pseudo", "all", 50.0, 49.0, 51.0), ("uniform", "bayes_pseudo", "all", 40.0, 39.0, 41.0),
                ("uniform", "pseudo", "a1", 70.0, 69.0, 71.0), ("uniform", "pseudo", "softmax", 80.0, 79.0, 81.0),
                ("majority", "bayes_pseudo", "a1", 7.0, 6.0, 8.0),
                ("majority", "bayes_pseudo", "softmax", 8.0, 7.0, 9.0),
                ("uniform", "pseudo", "all", 20.0, 16.0, 24.0), ("majority", "bayes_pseudo", "all", 1.2, 1.0, 1.4)]
    return pd.DataFrame(rows, columns=["baseline", "method", "unit_group", "factor", "ci_low", "ci_high"])


def test_the_crowd_claims_read_each_pairs_own_rows_and_print_every_text() -> None:
    """Planted at γ = 0.001 and embedded (median rarity 0.8 %), importance sampling then Bayes; the decoy rows are
    never read; the sweep runs from γ = 0.1 down; the nearest planted rarity to 0.008 is 0.01 (not the largest,
    not the smallest)."""
    claims = fc.crowd_claims(_rarity(), _summary(), 0.008, class_rarity=0.001)
    assert [claim.verdict for claim in claims] == ["holds", "holds", "differs", "differs"]
    planted_is, embedded_is, planted_bayes, embedded_bayes = claims
    assert planted_is.claim == (f"{IS_WHAT} cuts labelling cost ≈ 30× at the rarity of one ImageNet class, γ = 0.001 "
                                "(within [15, 60]×)")
    assert planted_is.our_value == ("28.0× [25.0, 31.0] at γ = 0.001 (planted units; sweep γ=0.1: 2.0×; γ=0.01: 9.0×; "
                                    f"γ=0.001: 28.0×; {RARITY_SOURCE})")
    assert planted_is.paper_value == "≈ 30× (ImageNet class and superclass concepts; rarity not stated)"
    assert planted_is.reason == ""
    assert embedded_is.claim == f"{IS_WHAT}: ≈ 30× on the embedded world's crowd study"
    assert embedded_is.our_value == "20.0× [16.0, 24.0] (median concept rarity 0.80%)"
    assert embedded_is.reason == ""
    assert embedded_is.paper_value == "≈ 30× (ImageNet class and superclass concepts; rarity not stated)"
    assert planted_bayes.claim == (f"{BAYES_WHAT} cuts labelling cost ≈ 5× at the rarity of one ImageNet class, "
                                   "γ = 0.001 (within [2.5, 10]×)")
    assert planted_bayes.our_value == ("2.0× [1.0, 2.4] at γ = 0.001 (planted units; sweep γ=0.1: 1.5×; γ=0.01: 3.0×; "
                                       f"γ=0.001: 2.0×; {RARITY_SOURCE})")
    assert planted_bayes.reason == "at γ = 0.001 the planted study measures 2.0× [1.0, 2.4]"
    assert embedded_bayes.our_value == "1.2× [1.0, 1.4] (median concept rarity 0.80%)"
    assert embedded_bayes.reason == (
        "the embedded study's concepts have median rarity 0.800% (one ImageNet class 0.1%, the rarest concept 001 "
        f"can draw; {RARITY_SOURCE}); the planted study at the nearest rarity γ=0.01 gives 3.0× [2.0, 4.0]")
    for claim in claims:
        assert (claim.paper, claim.table, claim.paper_source) == ("001", "Sec. 4 / Fig. 2a–3a", "paper text")
        assert claim.source == CROWD_SOURCE


@pytest.mark.parametrize(("factor", "low", "high", "expected", "reason"), [
    (2.0, 1.0, 3.0, "within_noise", "at γ = 0.001 the planted study measures 2.0× [1.0, 3.0]"),
    (2.0, 1.0, 2.4, "differs", "at γ = 0.001 the planted study measures 2.0× [1.0, 2.4]"),
    (2.5, 2.0, 3.0, "holds", "")])
def test_a_planted_factor_names_itself_unless_it_holds(factor: float, low: float, high: float, expected: str,
                                                       reason: str) -> None:
    """The planted reason is empty when the factor holds, and names it when within noise or differing."""
    rarity = _rarity([("majority", "bayes_pseudo", 0.001, factor, low, high)])
    (claim,) = fc.crowd_claims(rarity, _summary([]), 0.008, class_rarity=0.001)[1:]
    assert (claim.verdict, claim.reason) == (expected, reason)


@pytest.mark.parametrize(("factor", "low", "high", "expected"), [
    (20.0, 16.0, 24.0, "holds"), (12.0, 10.0, 16.0, "within_noise"), (12.0, 10.0, 14.0, "differs")])
def test_an_embedded_factor_explains_itself_by_rarity_unless_it_holds(factor: float, low: float, high: float,
                                                                      expected: str) -> None:
    """The embedded reason (concepts' rarity, the planted factor at the nearest rarity) whenever it does not hold."""
    summary = _summary([("uniform", "pseudo", "all", factor, low, high)])
    (claim,) = [c for c in fc.crowd_claims(_rarity(), summary, 0.008, class_rarity=0.001) if "embedded" in c.claim]
    assert claim.verdict == expected
    assert claim.reason == ("" if expected == "holds" else
                            "the embedded study's concepts have median rarity 0.800% (one ImageNet class 0.1%, the "
                            f"rarest concept 001 can draw; {RARITY_SOURCE}); the planted study at the nearest rarity "
                            "γ=0.01 gives 9.0× [7.0, 11.0]")


def test_a_missing_rarity_is_not_testable_and_reports_the_sweep_or_nothing_built() -> None:
    """No γ = 0.001 row: not testable with the sweep as our value (``not built`` without one); an embedded factor
    without a planted sweep cites no nearest rarity."""
    rarity = _rarity([("uniform", "pseudo", 0.01, 9.0, 7.0, 11.0), ("uniform", "pseudo", 0.1, 2.0, 1.0, 3.0)])
    summary = _summary([("majority", "bayes_pseudo", "all", 1.2, 1.0, 1.4)])
    planted_is, planted_bayes, embedded_bayes = fc.crowd_claims(rarity, summary, 0.008, class_rarity=0.001)
    assert planted_is.verdict == planted_bayes.verdict == "not_testable"
    assert planted_is.our_value == "γ=0.1: 2.0×; γ=0.01: 9.0×"
    assert planted_bayes.our_value == "not built"
    assert planted_is.reason == f"crowd.rarity.rarities lacks γ = 0.001 ({RARITY_SOURCE})"
    assert planted_is.claim == f"{IS_WHAT} cuts labelling cost ≈ 30×"
    assert planted_bayes.claim == f"{BAYES_WHAT} cuts labelling cost ≈ 5×"
    assert planted_is.paper_value == "≈ 30× (ImageNet class and superclass concepts)"
    assert (planted_is.table, planted_is.paper_source) == ("Sec. 4 / Fig. 2a–3a", "paper text")
    assert embedded_bayes.verdict == "differs"
    assert embedded_bayes.reason == ("the embedded study's concepts have median rarity 0.800% (one ImageNet class "
                                     f"0.1%, the rarest concept 001 can draw; {RARITY_SOURCE})")


def test_the_factor_is_judged_at_the_class_rarity_given() -> None:
    """``class_rarity`` = 0.01 judges the γ = 0.01 row and is printed as one class's rarity."""
    claims = fc.crowd_claims(_rarity(), _summary([("uniform", "pseudo", "all", 3.0, 2.0, 4.0)]), 0.008,
                             class_rarity=0.01)
    planted_is, embedded_is = claims[:2]
    assert planted_is.verdict == "differs"
    assert planted_is.reason == "at γ = 0.01 the planted study measures 9.0× [7.0, 11.0]"
    assert "one ImageNet class 1.0%" in embedded_is.reason


def test_the_first_row_within_isclose_of_the_class_rarity_and_the_first_all_row_are_judged() -> None:
    """Two sweep rows within ``np.isclose`` of γ: the first of the sweep (the larger γ) is judged; two ``all`` rows:
    the first."""
    rarity = _rarity([("uniform", "pseudo", 0.001, 2.0, 1.0, 3.0),
                      ("uniform", "pseudo", 0.0010000001, 28.0, 25.0, 31.0)])
    summary = _summary([("uniform", "pseudo", "all", 20.0, 16.0, 24.0), ("uniform", "pseudo", "all", 2.0, 1.0, 3.0)])
    planted, embedded = fc.crowd_claims(rarity, summary, 0.008, class_rarity=0.001)[:2]
    assert planted.our_value.startswith("28.0× [25.0, 31.0] at γ = 0.001 (planted units; sweep γ=0.001: 28.0×; "
                                        "γ=0.001: 2.0×;")
    assert planted.verdict == "holds"
    assert embedded.our_value.startswith("20.0× [16.0, 24.0]") and embedded.verdict == "holds"


def test_the_crowd_claims_take_class_rarity_and_source_by_keyword_only() -> None:
    """``class_rarity`` and ``source`` cannot be passed by position; ``source`` reaches every row."""
    with pytest.raises(TypeError):
        fc.crowd_claims(_rarity(), _summary(), 0.008, 0.001)  # type: ignore[misc]
    with pytest.raises(TypeError):
        fc.crowd_claims(_rarity(), _summary(), 0.008, 0.001, "elsewhere.csv")  # type: ignore[misc]
    claims = fc.crowd_claims(_rarity(), _summary(), 0.008, class_rarity=0.001, source="elsewhere.csv")
    assert {claim.source for claim in claims} == {"elsewhere.csv"}


# --- method cells and their context ------------------------------------------------------------------------------


def _cells_table(length: bool = True) -> pd.DataFrame:
    """Cell (b, h2) first, then (a, h4); every baseline and the oracle score above the methods; truth rows also in
    (a, h1) and (c, h3), around (b, h2); ``zeta`` sorts after ``truth``; u3 of le_label has no score."""
    baselines = {name: [0.9375] * 3 for name in ("random", "random_l1", "ideal", "oracle")}
    frame = _units({("b", "h2"): {"le_label": [0.5, 0.625, 0.75, NAN], "invert": [0.25, 0.375, 0.5],
                                  "zeta": [0.125] * 3, "truth": [0.875, 0.75, 0.625], "unscored": [NAN] * 3,
                                  **baselines},
                    ("a", "h4"): {"invert": [0.25, 0.25, 0.25], "le_label": [0.5, 0.5, 0.5]},
                    ("a", "h1"): {"truth": [0.25] * 3}, ("c", "h3"): {"truth": [0.375] * 3}},
                   keys=("setting", "group"))
    if length:
        frame["length"] = frame["method"].map({"le_label": 2.0, "invert": 4.0, "zeta": 1.0, "unscored": 9.0,
                                               "truth": 1.0}).fillna(7.0)
        frame.loc[frame["unit"].eq("u3"), "length"] = 100.0
    return frame


def test_method_cells_split_by_key_in_table_order_and_score_only_the_methods() -> None:
    """Two cells in the order of the table; baselines, the oracle and unscored rows are left out; means best first;
    lengths per method without the unscored unit; the truth score of the cell's own truth rows."""
    first, second = paper_001.method_cells(_cells_table(), ["setting", "group"], SIM, label="T9 ")
    assert (first.name, second.name) == ("T9 b/h2", "T9 a/h4")
    assert first.key == {"setting": "b", "group": "h2"} and second.key == {"setting": "a", "group": "h4"}
    assert sorted(first.scores.columns) == ["invert", "le_label", "zeta"]
    assert sorted(first.scores.index) == ["u0", "u1", "u2"]
    assert first.scores.loc["u1", "le_label"] == 0.625
    assert list(first.means.index) == ["le_label", "invert", "zeta"]
    assert first.means.to_list() == pytest.approx([0.625, 0.375, 0.125])
    assert first.lengths.to_dict() == {"invert": 4.0, "le_label": 2.0, "zeta": 1.0}
    assert first.truth == pytest.approx(0.75)
    assert np.isnan(second.truth)
    assert list(second.means.index) == ["le_label", "invert"]


def test_a_cell_without_a_length_column_has_no_lengths_and_a_single_key_names_it_alone() -> None:
    """No ``length`` column: empty lengths; one key: the cell's name is its value."""
    cells = paper_001.method_cells(_cells_table(length=False), ["setting"], SIM)
    assert [cell.name for cell in cells] == ["b", "a"]
    assert cells[0].key == {"setting": "b"} and cells[0].lengths.empty
    assert cells[1].truth == pytest.approx(0.25)  # setting a's truth rows (group h1)


def test_method_cells_take_the_label_by_keyword_only_and_a_cell_is_frozen() -> None:
    """``label`` cannot be passed by position; a cell cannot be changed."""
    with pytest.raises(TypeError):
        paper_001.method_cells(_cells_table(), ["setting"], SIM, "T9 ")  # type: ignore[misc]
    cell = paper_001.method_cells(_cells_table(), ["setting"], SIM)[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        cell.name = "other"  # type: ignore[misc]


COMPARISON = PairedComparison(better="le_label", worse="cce", difference=-0.25, ci_low=-0.25, ci_high=-0.25,
                              n_units=4, verdict="differs")


@pytest.mark.parametrize(("lengths", "truth", "expected"), [
    ({"le_label": 1.5, "cce": 8.0}, 0.625,
     "concepts per explanation: le_label 1.5, cce 8.0; the planted concept alone scores 0.625, le_label 0.250, "
     "cce 0.500"),
    ({"cce": 8.0, "invert": 2.0}, NAN, "concepts per explanation: cce 8.0"),
    ({"le_label": NAN, "cce": 8.0}, NAN, "concepts per explanation: cce 8.0"),
    (None, 0.625, "the planted concept alone scores 0.625, le_label 0.250, cce 0.500"),
    ({"invert": 2.0}, NAN, ""),
    (None, NAN, "")])
def test_the_context_of_a_cell_names_known_lengths_and_the_planted_concepts_score(
        lengths: dict[str, float] | None, truth: float, expected: str) -> None:
    """Lengths only of the two compared methods and only when finite; the truth only when finite."""
    extra = {} if lengths is None else {"lengths": pd.Series(lengths, dtype=float)}
    cell = paper_001.MethodCell(name="T2 a/b", key={"setting": "a", "group": "b"}, scores=pd.DataFrame(),
                                means=pd.Series({"cce": 0.5, "le_label": 0.25}), truth=truth, **extra)
    assert paper_001.cell_context(cell, COMPARISON) == expected


# --- comparisons: best of a family against the best other method ---------------------------------------------------


def test_each_cells_verdict_is_named_and_counted_and_only_a_differing_cell_gets_its_context() -> None:
    """Six cells: three hold, one differs (with lengths and a truth row), one within noise (with both too) and one
    with a single common unit; the claim differs and names the three that do not hold."""
    within = {"le_label": [0.75, 0.25], "invert": [0.5, 0.5], "truth": [0.875] * 2}
    scores = _units({(2, "s1", "g"): {"le_label": HIGH, "invert": MID},
                     (2, "s2", "g"): {"le_label": LOW, "invert": MID, "truth": [0.875] * 4},
                     (2, "s3", "g"): within,
                     (2, "s4", "g"): {"le_label": HIGH, "invert": MID},
                     (2, "s5", "g"): {"le_label": HIGH, "invert": MID},
                     (2, "s6", "g"): {"le_label": [0.75], "invert": [0.5]}},
                    lengths={"le_label": 1.5, "invert": 8.0, "truth": 1.0})
    _, claim = fc.le_best_claims(scores)
    assert claim.verdict == "differs"
    assert claim.our_value == (
        f"holds in 3 of 6 cells; T2 s1/g: le_label − invert = {HOLDS_TEXT}; T2 s2/g: le_label − invert = "
        f"{DIFFERS_TEXT}; T2 s3/g: le_label − invert = +0.000 [-0.250, +0.250] (n = 2); T2 s4/g: le_label − invert = "
        f"{HOLDS_TEXT}; T2 s5/g: le_label − invert = {HOLDS_TEXT}; T2 s6/g: le_label − invert = +0.250 [+nan, +nan] "
        "(n = 1)")
    assert claim.reason == (
        f"T2 s2/g: le_label − invert = {DIFFERS_TEXT} (differs; concepts per explanation: le_label 1.5, invert 8.0; "
        "the planted concept alone scores 0.875, le_label 0.250, invert 0.500); T2 s3/g: le_label − invert = +0.000 "
        "[-0.250, +0.250] (n = 2) (within noise); T2 s6/g: le_label − invert = +0.250 [+nan, +nan] (n = 1) (not "
        "testable)")
    assert (claim.table, claim.paper_source, claim.source) == ("Table 2", "printed table", SCORES_SOURCE)


def test_a_differing_cell_without_context_is_named_alone_and_counts_no_hold() -> None:
    """No lengths, no truth row: the differing cell is named with its verdict only; 0 of 1 cells hold."""
    _, claim = fc.le_best_claims(_units({(2, "s", "g"): {"le_label": LOW, "invert": MID}}))
    assert claim.our_value == f"holds in 0 of 1 cells; T2 s/g: le_label − invert = {DIFFERS_TEXT}"
    assert claim.reason == f"T2 s/g: le_label − invert = {DIFFERS_TEXT} (differs)"


def test_a_claim_of_only_untestable_cells_is_not_testable() -> None:
    """A single common unit per cell: every comparison not testable, so is the claim (named in its reason)."""
    _, claim = fc.le_best_claims(_units({(2, "s", "g"): {"le_label": [0.75], "invert": [0.5]}}))
    assert claim.verdict == "not_testable"
    assert claim.reason == "T2 s/g: le_label − invert = +0.250 [+nan, +nan] (n = 1) (not testable)"


def test_the_best_of_the_family_meets_the_best_other_and_one_sided_cells_are_skipped() -> None:
    """le_label (0.75) over le_pseudo (0.625) meets invert (0.5) over cce (0.375); a cell with only LE or only other
    methods is no comparison."""
    scores = _units({(2, "s", "g"): {"le_pseudo": [0.625] * 4, "cce": [0.375] * 4, "le_label": HIGH, "invert": MID},
                     (2, "only_le", "g"): {"le_label": HIGH, "le_pseudo": MID},
                     (2, "only_other", "g"): {"invert": HIGH, "cce": MID}})
    _, claim = fc.le_best_claims(scores)
    assert claim.our_value == f"holds in 1 of 1 cells; T2 s/g: le_label − invert = {HOLDS_TEXT}"
    assert claim.verdict == "holds" and claim.reason == ""


def test_the_comparison_claim_takes_its_texts_by_keyword_only() -> None:
    """Table, claim, paper value, source and the empty reason cannot be passed by position."""
    with pytest.raises(TypeError):
        paper_001._comparison_claim([], ("le_label",), PairedBootstrapOptions(), "Table 2", "c", "p",  # type: ignore[misc]
                                    "s", "e")


# --- Table 2: Linear Explanations best ----------------------------------------------------------------------------


#: Settings: h is 001's protocol; c reads labels as concepts; l and u are scored on values sorting before and after
#: ``setting``; m has no protocol.
PROTOCOLS = {"h": {"scored_on": SETTING, "concepts": "pseudo:clip"},
             "c": {"scored_on": SETTING, "concepts": "labels"},
             "l": {"scored_on": "labels", "concepts": "pseudo:clip"},
             "u": {"scored_on": "units", "concepts": "pseudo:clip"}}


def _le_scores() -> pd.DataFrame:
    """le_pseudo beats invert by 0.25 in every Table 2 cell; cce would win in the Table 1 and 3 decoys."""
    cells = {(2, setting, group): {"le_pseudo": HIGH, "invert": MID}
             for setting, group in (("h", "block3"), ("h", "softmax"), ("h", "logits"), ("h", "superclass"),
                                    ("c", "block3"), ("l", "block3"), ("u", "block3"), ("m", "block3"))}
    decoys = {(table, "h", "block3"): {"cce": [0.875] * 4} for table in (1, 3)}
    return _units({**decoys, **cells})


def test_le_best_splits_the_papers_hidden_pseudo_label_units_from_the_rest() -> None:
    """Only h's hidden group is 001's protocol; its final-layer groups, c, l, u and m are the secondary row."""
    primary, secondary = fc.le_best_claims(_le_scores(), PROTOCOLS)
    assert primary.our_value == f"holds in 1 of 1 cells; T2 h/block3: le_pseudo − invert = {HOLDS_TEXT}"
    names = ("h/softmax", "h/logits", "h/superclass", "c/block3", "l/block3", "u/block3", "m/block3")
    assert secondary.our_value == "holds in 7 of 7 cells; " + "; ".join(
        f"T2 {name}: le_pseudo − invert = {HOLDS_TEXT}" for name in names)
    assert (primary.claim, secondary.claim) == (LE_PRIMARY, LE_SECONDARY)
    assert primary.paper_value == secondary.paper_value == LE_PAPER
    assert primary.verdict == secondary.verdict == "holds"
    assert primary.reason == secondary.reason == ""


def test_le_best_without_a_protocol_setting_or_other_cells_is_not_testable() -> None:
    """No protocols: the primary row is not testable; no cells at all: neither is the secondary row."""
    primary, secondary = fc.le_best_claims(_le_scores())
    assert (primary.verdict, primary.reason, primary.our_value) == ("not_testable", LE_PRIMARY_EMPTY, "")
    assert secondary.verdict == "holds" and "holds in 8 of 8 cells" in secondary.our_value
    _, empty = fc.le_best_claims(_units({(1, "h", "block3"): {"le_pseudo": HIGH, "invert": MID}}), PROTOCOLS)
    assert (empty.verdict, empty.reason) == ("not_testable", "no other setting has both LE and another l > 1 method")
    assert (empty.table, empty.paper_source, empty.paper_value) == ("Table 2", "printed table", LE_PAPER)


#: Per-unit differences 0.75, 0.75, 0.75, −0.25 (mean 0.5): the 95 % interval reaches 0 (three of four draws at
#: −0.25 in 5 % of resamples), the 20 % interval is the point 0.5 (one draw at −0.25 in 42 %).
SPREAD = {"better": [1.25, 1.25, 1.25, 0.25], "worse": MID}


def test_le_best_passes_its_options_and_takes_them_by_keyword_only() -> None:
    """The default 95 % interval is within noise, a 20 % one holds; options and source are keyword-only."""
    scores = _units({(2, "h", "block3"): {"le_label": SPREAD["better"], "invert": SPREAD["worse"]}})
    assert [c.verdict for c in fc.le_best_claims(scores, PROTOCOLS)] == ["within_noise", "not_testable"]
    narrow = fc.le_best_claims(scores, PROTOCOLS, options=PairedBootstrapOptions(ci_level=0.2), source="x.csv")
    assert [c.verdict for c in narrow] == ["holds", "not_testable"]
    assert narrow[0].our_value == ("holds in 1 of 1 cells; T2 h/block3: le_label − invert = +0.500 [+0.500, +0.500] "
                                   "(n = 4)")
    assert {c.source for c in narrow} == {"x.csv"}
    with pytest.raises(TypeError):
        fc.le_best_claims(scores, PROTOCOLS, PairedBootstrapOptions())  # type: ignore[misc]
    with pytest.raises(TypeError):
        fc.le_best_claims(scores, PROTOCOLS, None, "x.csv")  # type: ignore[misc]


# --- Tables 1-2: Broden-style methods weak ---------------------------------------------------------------------


def _broden_protocols() -> dict[str, dict]:
    """h and j give Broden-style methods a subset (j all three); k restricts only invert; n and e restrict none;
    all five are 001's protocol; g and m restrict netdissect but are not the protocol (label-simulated, or scored
    on labels)."""
    hidden = {"scored_on": SETTING, "concepts": "pseudo:clip"}
    subset = {"methods": ["netdissect"], "prefixes": ["colour:"]}
    return {"g": {"scored_on": SETTING, "concepts": "labels", "method_concepts": subset},
            "m": {"scored_on": "labels", "concepts": "pseudo:clip", "method_concepts": subset},
            "h": {**hidden, "method_concepts": {"methods": ["netdissect", "compexp"],
                                                "prefixes": ["colour:", "texture:"]}},
            "j": {**hidden, "method_concepts": {"methods": ["netdissect", "compexp", "cce"], "prefixes": ["colour:"]}},
            "k": {**hidden, "method_concepts": {"methods": ["invert"], "prefixes": ["x:"]}},
            "n": dict(hidden), "e": {**hidden, "method_concepts": None}}


def _broden_scores() -> pd.DataFrame:
    """Table 1 and 2 cells (milan would win in the Table 0 and 3 decoys)."""
    return _units({(1, "h", "block3"): {"netdissect": MID, "invert": HIGH},
                   (1, "j", "block3"): {"compexp_l1": MID, "le_label_l1": LOW},
                   (1, "k", "block3"): {"netdissect": MID, "invert": HIGH},
                   (1, "g", "block3"): {"netdissect": MID, "invert": LOW},
                   (1, "m", "block3"): {"netdissect": MID, "invert": LOW},
                   (1, "n", "block3"): {"netdissect": MID, "invert": HIGH},
                   (1, "e", "block3"): {"netdissect": MID, "invert": HIGH},
                   (1, "h", "softmax"): {"netdissect": MID, "invert": HIGH, "random": [1.0] * 4},
                   (0, "h", "softmax"): {"milan": [0.875] * 4}, (3, "h", "softmax"): {"milan": [0.875] * 4},
                   (2, "h", "block3"): {"compexp": MID, "cce": LOW, "le_label": HIGH, "invert": [0.625] * 4},
                   (2, "l", "logits"): {"cce": MID, "le_label": HIGH}})


def test_broden_claims_judge_the_concept_subset_on_protocol_settings_and_final_layers_apart() -> None:
    """The subset row: h (both tables) and j (``_l1`` runs in their families), not k, n or e, nor g or m (outside
    the protocol: neither judged nor named in the claim); the final-layer row:
    T1 h/softmax and T2 l/logits, holding without a note."""
    subset, final = fc.broden_claims(_broden_scores(), _broden_protocols())
    assert subset.claim == ("the best other method beats Broden-style methods (NetDissect, CompExp, CCE) when these "
                            "read only low-level concepts and the others all (h: netdissect, compexp read colour:, "
                            "texture:; j: netdissect, compexp, cce read colour:; hidden units simulated with "
                            "pseudo-labels)")
    assert subset.our_value == (
        f"holds in 2 of 3 cells; T1 h/block3: invert − netdissect = {HOLDS_TEXT}; T1 j/block3: le_label_l1 − "
        f"compexp_l1 = {DIFFERS_TEXT}; T2 h/block3: le_label − compexp = {HOLDS_TEXT}")
    assert subset.verdict == "differs"
    assert subset.reason == f"T1 j/block3: le_label_l1 − compexp_l1 = {DIFFERS_TEXT} (differs)"  # no note here
    assert final.claim == BRODEN_SECONDARY
    assert final.our_value == (f"holds in 2 of 2 cells; T1 h/softmax: invert − netdissect = {HOLDS_TEXT}; "
                               f"T2 l/logits: le_label − cce = {HOLDS_TEXT}")
    assert (final.verdict, final.reason) == ("holds", "")
    for claim in (subset, final):
        assert (claim.table, claim.paper_source, claim.paper_value) == ("Tables 1-2", "printed table", BRODEN_PAPER)
        assert claim.source == SCORES_SOURCE


def test_broden_claims_without_a_subset_setting_or_final_layer_are_not_testable() -> None:
    """No protocols: no such setting (said in the claim); no final-layer cells: the secondary row's reason."""
    subset, final = fc.broden_claims(_units({(1, "h", "block3"): {"netdissect": MID, "invert": HIGH}}))
    assert (subset.verdict, subset.reason, subset.our_value) == ("not_testable", BRODEN_SUBSET_EMPTY, "")
    assert "others all (no such setting; hidden units simulated with pseudo-labels)" in subset.claim
    assert (final.verdict, final.reason) == ("not_testable", "no final-layer setting has both Broden-style and other "
                                                             "methods")


@pytest.mark.parametrize(("better", "expected", "shown"), [
    ([0.75, 0.25], "within_noise", "+0.000 [-0.250, +0.250] (n = 2) (within noise"),
    (LOW, "differs", f"{DIFFERS_TEXT} (differs")])
def test_a_final_layer_row_that_does_not_hold_adds_its_note(better: list[float], expected: str, shown: str) -> None:
    """The note (every method reads the same concepts) follows the named cell when the row does not hold."""
    _, final = fc.broden_claims(_units({(1, "a", "softmax"): {"invert": better, "netdissect": MID[:len(better)]}}))
    assert final.verdict == expected
    assert final.reason == f"T1 a/softmax: invert − netdissect = {shown}); {BRODEN_NOTE}"


def test_broden_claims_pass_their_options_and_take_them_by_keyword_only() -> None:
    """A 20 % interval holds where the default one is within noise; options and source are keyword-only."""
    scores = _units({(1, "a", "softmax"): {"invert": SPREAD["better"], "netdissect": SPREAD["worse"]}})
    assert fc.broden_claims(scores)[1].verdict == "within_noise"
    narrow = fc.broden_claims(scores, {}, options=PairedBootstrapOptions(ci_level=0.2), source="x.csv")
    assert (narrow[1].verdict, narrow[1].source) == ("holds", "x.csv")
    with pytest.raises(TypeError):
        fc.broden_claims(scores, {}, PairedBootstrapOptions())  # type: ignore[misc]
    with pytest.raises(TypeError):
        fc.broden_claims(scores, {}, None, "x.csv")  # type: ignore[misc]


# --- Table 3: the automated ranking agrees with the simulated crowd -----------------------------------------------


def _agreement(rows: list[dict]) -> pd.DataFrame:
    base = {"table": 1, "setting": "all", "reference": SIM, "metric": "crowd:bayes_pseudo", "n_methods": 5,
            "n_units": 30, "tau": 0.25, "ci_low": 0.125, "ci_high": 0.375}
    return pd.DataFrame([{**base, **row} for row in rows])


def test_the_agreement_reads_only_table_1_pooled_simulation_rows_of_crowd_metrics() -> None:
    """Decoys before the real row differ in one column each, sorting before and after its value."""
    decoys = [{"table": 0}, {"table": 2}, {"setting": "a"}, {"setting": "b"}, {"reference": "cosy_auc"},
              {"reference": "test_correlation"}, {"metric": "f1"}]
    (claim,) = fc.crowd_agreement_claims(_agreement([{**row, "tau": 0.9, "metric": row.get("metric", "crowd:decoy")}
                                                     for row in decoys] + [{}]))
    assert claim.claim == ("the automated ranking of the simple explanations agrees with the simulated crowd "
                           "(bayes_pseudo aggregation)")
    assert claim.our_value == "τ = 0.250 [0.125, 0.375] over 5 methods, 30 units"
    assert (claim.verdict, claim.reason, claim.paper_value) == ("holds", "", AGREEMENT_PAPER)
    assert (claim.table, claim.paper_source, claim.source) == ("Table 3", "printed table",
                                                               "results/explain/agreement.csv")


@pytest.mark.parametrize(("low", "high", "expected", "reason"), [
    (EPS, 0.5, "holds", ""), (0.5, 0.75, "holds", ""),
    (0.0, 0.5, "within_noise", "the interval [0.00, 0.50] contains 0"),
    (-0.5, 0.5, "within_noise", "the interval [-0.50, 0.50] contains 0"),
    (-0.5, EPS, "within_noise", "the interval [-0.50, 0.00] contains 0"),
    (-0.5, 0.0, "within_noise", "the interval [-0.50, 0.00] contains 0"),
    (-0.5, -EPS, "differs", "the interval [-0.50, -0.00] lies below 0"),
    (-0.75, -0.5, "differs", "the interval [-0.75, -0.50] lies below 0")])
def test_the_agreement_holds_above_zero_is_within_noise_across_it_and_differs_below(
        low: float, high: float, expected: str, reason: str) -> None:
    """τ's interval: above 0 holds (its bottom exactly at 0 does not), containing 0 within noise (its top exactly
    at 0 included, as for the paired differences), below 0 differs."""
    (claim,) = fc.crowd_agreement_claims(_agreement([{"ci_low": low, "ci_high": high}]))
    assert (claim.verdict, claim.reason) == (expected, reason)


@pytest.mark.parametrize("missing", [{"tau": NAN}, {"ci_low": NAN}, {"ci_high": NAN}, {"ci_high": np.inf}])
def test_an_agreement_without_a_finite_tau_or_interval_is_not_testable(missing: dict[str, float]) -> None:
    """τ, its interval's bottom or its top not finite: not testable."""
    (claim,) = fc.crowd_agreement_claims(_agreement([missing]))
    assert (claim.verdict, claim.reason) == ("not_testable", "fewer than 2 methods or units")


def test_an_agreement_table_without_crowd_rows_is_one_untestable_claim() -> None:
    """No crowd scorer: one not-testable row; ``source`` is keyword-only."""
    (claim,) = fc.crowd_agreement_claims(_agreement([{"metric": "f1"}]), source="x.csv")
    assert (claim.claim, claim.verdict, claim.our_value) == ("the automated ranking agrees with the simulated crowd",
                                                            "not_testable", "")
    assert (claim.reason, claim.paper_value, claim.source) == ("agreement.csv has no crowd scorer", AGREEMENT_PAPER,
                                                               "x.csv")
    assert (claim.table, claim.paper_source) == ("Table 3", "printed table")
    with pytest.raises(TypeError):
        fc.crowd_agreement_claims(_agreement([{}]), "x.csv")  # type: ignore[misc]


# --- Table 3: Linear Explanations lead the simulated crowd --------------------------------------------------------


def test_crowd_le_claims_compare_per_setting_and_aggregation() -> None:
    """le_pseudo_l1 is LE; baselines never compete; the majority cell differs with the planted concept's score."""
    crowd = _units({("a", "bayes_pseudo"): {"le_pseudo_l1": HIGH, "le_label_l1": [0.625] * 4, "invert_l1": MID,
                                            "truth": [0.875] * 4, "random_l1": [1.0] * 4},
                    ("a", "majority"): {"le_label_l1": LOW, "invert_l1": MID, "truth": [0.875] * 4}},
                   keys=("setting", "aggregation"), score="crowd_correlation")
    (claim,) = fc.crowd_le_claims(crowd)
    assert claim.claim == "Linear Explanations beat the best other studied method in (simulated) crowd correlation"
    assert claim.our_value == (f"holds in 1 of 2 cells; a/bayes_pseudo: le_pseudo_l1 − invert_l1 = {HOLDS_TEXT}; "
                               f"a/majority: le_label_l1 − invert_l1 = {DIFFERS_TEXT}")
    assert claim.reason == (f"a/majority: le_label_l1 − invert_l1 = {DIFFERS_TEXT} (differs; the planted concept alone "
                            "scores 0.875, le_label_l1 0.250, invert_l1 0.500)")
    assert (claim.verdict, claim.paper_value, claim.table) == ("differs", CROWD_PAPER, "Table 3")
    assert claim.source == "results/explain/crowd/<setting>.csv"


def test_crowd_le_claims_on_an_empty_study_are_not_testable_and_pass_their_options() -> None:
    """No crowd rows: not testable; a 20 % interval holds where the default one is within noise; keyword-only."""
    (empty,) = fc.crowd_le_claims(pd.DataFrame())
    assert (empty.verdict, empty.reason, empty.paper_value) == ("not_testable", "no crowd study was run with LE and "
                                                                "another method", CROWD_PAPER)
    crowd = _units({("a", "u"): {"le_label_l1": SPREAD["better"], "invert_l1": SPREAD["worse"]}},
                   keys=("setting", "aggregation"), score="crowd_correlation")
    assert fc.crowd_le_claims(crowd)[0].verdict == "within_noise"
    (narrow,) = fc.crowd_le_claims(crowd, options=PairedBootstrapOptions(ci_level=0.2), source="x.csv")
    assert (narrow.verdict, narrow.source) == ("holds", "x.csv")
    with pytest.raises(TypeError):
        fc.crowd_le_claims(crowd, PairedBootstrapOptions())  # type: ignore[misc]
