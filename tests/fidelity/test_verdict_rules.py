"""Every verdict rule of the fidelity report, one rule at a time, just inside and just outside its threshold.

The thresholds are written here as the rules state them (``VERDICT_RULES``, the papers' text), not read from the
modules: moving a threshold in the code must fail a test. ``within_noise`` is tested beside each rule that has an
interval: the estimate misses, the interval reaches (``within_noise``) or does not (``differs``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neuroneval import published
from neuroneval.fidelity import claims as fc
from neuroneval.fidelity.claims import common, paper_001, paper_002
from tests.fidelity.test_claims import _published_runs, _table3

EPS = 1e-4


# --- common --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("holds", "within", "expected"), [
    (True, False, "holds"), (True, True, "holds"), (False, True, "within_noise"), (False, False, "differs")])
def test_judge(holds: bool, within: bool, expected: str) -> None:
    assert common.judge(holds, within) == expected


def test_interval_helpers_match_closed_forms() -> None:
    low, high = common.normal_interval(0.5, 0.1)
    assert (low, high) == pytest.approx((0.5 - 0.1959964, 0.5 + 0.1959964), abs=1e-7)  # scipy.stats.norm.ppf(0.975)
    assert np.isnan(common.normal_interval(0.5, np.nan)[0])
    assert common.meets(0.1, 0.2, 0.2, 0.3) and not common.meets(0.1, 0.2 - EPS, 0.2, 0.3)
    assert not common.meets(np.nan, 0.5, 0.0, 1.0)  # no interval, no noise
    assert not common.meets(0.5, np.nan, 0.0, 1.0) and not common.meets(0.5, np.inf, 0.0, 1.0)
    assert common.meets(0.3, 0.4, 0.2, 0.3) and not common.meets(0.3 + EPS, 0.4, 0.2, 0.3)  # touching the band's top
    assert common.interval_text(0.5, 0.25, 0.75) == "0.500 [0.250, 0.750]"
    for low, high in ((np.nan, 0.75), (0.25, np.nan), (np.nan, np.nan), (-np.inf, 0.75)):
        assert common.interval_text(0.5, low, high) == "0.500"  # no interval: the value alone
    assert common.absolute_interval(-0.3, 0.1) == (0.0, 0.3)
    assert common.absolute_interval(-0.3, -0.1) == (0.1, 0.3)
    assert common.absolute_interval(0.2, 0.4) == (0.2, 0.4)


def test_a_claim_is_built_with_keywords_names_its_paper_source_and_says_why_it_is_not_testable() -> None:
    fields = {"paper": "000", "table": "t", "claim": "c", "paper_value": "1", "paper_source": "printed table",
              "our_value": "2", "verdict": "holds", "reason": "", "source": "s"}
    assert fc.Claim(**fields).verdict == "holds"
    with pytest.raises(ValueError, match="paper_source"):
        fc.Claim(**fields | {"paper_source": "a blog"})
    with pytest.raises(ValueError, match="needs a reason"):
        fc.Claim(**fields | {"verdict": "not_testable"})
    assert fc.Claim(**fields | {"verdict": "not_testable", "reason": "not built"}).verdict == "not_testable"
    with pytest.raises(ValueError, match="needs a reason"):  # a verdict read from a file is not the interned literal
        fc.Claim(**fields | {"verdict": "".join(["not_", "testable"])})
    for verdict in ("holds", "within_noise", "differs"):  # only a not_testable claim must say why
        assert fc.Claim(**fields | {"verdict": verdict}).reason == ""


# --- 000: a setting's best meta-AUPRC (±0.10 of the paper's) and the informativeness targets (0.9, 0.8) -----------


def _setting_meta(best: float, half_width: float = np.nan) -> pd.DataFrame:
    return pd.DataFrame({"setting": "s", "metric": ["correlation", "auc"], "test_auprc": [best, 0.1],
                         "ci_low": [best - half_width, 0.05], "ci_high": [best + half_width, 0.15],
                         "chance_auprc": 0.01})


def _ceiling(value: float, high: float = np.nan) -> pd.DataFrame:
    return pd.DataFrame({"setting": ["s"], "meta_auprc": [value], "ci_low": [value - 0.01], "ci_high": [high]})


@pytest.mark.parametrize(("offset", "half_width", "expected"), [
    (-(0.10 - EPS), np.nan, "holds"), (-(0.10 + EPS), np.nan, "differs"),
    (0.10 - EPS, np.nan, "holds"), (0.10 + EPS, np.nan, "differs"),
    (-(0.10 + 2 * EPS), 3 * EPS, "within_noise"), (-(0.10 + 2 * EPS), EPS, "differs")])
def test_a_setting_matches_within_a_tenth_of_the_papers_best(offset: float, half_width: float,
                                                             expected: str) -> None:
    paper_best = published.BEST_PER_SETTING[8].meta_auprc  # 0.4683: room on both sides
    (claim,) = fc.setting_claims(_setting_meta(paper_best + offset, half_width), _ceiling(1.0), pd.DataFrame(),
                                 {"s": 8})
    assert claim.verdict == expected and claim.paper_source == "printed table"
    assert (claim.reason == "") == (expected == "holds")
    assert ("bootstrap interval" in claim.reason) == (expected == "within_noise")


@pytest.mark.parametrize(("ceiling", "ceiling_high", "model", "model_half_width", "expected"), [
    (0.9, np.nan, 0.8, np.nan, "holds"),
    (0.9 - EPS, np.nan, 0.8, np.nan, "differs"),
    (0.9, np.nan, 0.8 - EPS, np.nan, "differs"),
    (0.9 - EPS, 0.9 + EPS, 0.8, np.nan, "within_noise"),
    (0.9, np.nan, 0.8 - EPS, 2 * EPS, "within_noise"),
    (0.9 - EPS, 0.9 - EPS / 2, 0.8, np.nan, "differs"),
    (0.9, np.nan, 0.8 - 2 * EPS, EPS, "differs")])
def test_a_setting_without_a_paper_counterpart_needs_a_ceiling_of_09_and_a_model_of_08(
        ceiling: float, ceiling_high: float, model: float, model_half_width: float, expected: str) -> None:
    (claim,) = fc.setting_claims(_setting_meta(model, model_half_width), _ceiling(ceiling, ceiling_high),
                                 pd.DataFrame(), {})
    assert claim.verdict == expected and claim.paper_source == "project target"


@pytest.mark.parametrize(("ceiling", "ceiling_high", "model", "model_half_width", "tied", "expected"), [
    (0.9, np.nan, 0.8, np.nan, False, "holds"),
    (1.0, np.nan, 1.0, 0.0, True, "differs"),  # every metric at 1.000: the targets hold, the setting ranks nothing
    (0.9 - EPS, 0.9 + EPS, 0.8, np.nan, True, "differs"),  # an interval reaching the target does not save it
    (0.9 - EPS, 0.9 + EPS, 0.8, np.nan, False, "within_noise")])
def test_a_setting_without_a_paper_counterpart_must_also_discriminate(
        ceiling: float, ceiling_high: float, model: float, model_half_width: float, tied: bool, expected: str) -> None:
    """The verdict of results/table4_settings.csv, computed by the library from these very rows."""
    from neuroneval.meta.discrimination import DiscriminationOptions, discrimination_table

    meta = _setting_meta(model, model_half_width)
    if tied:
        meta = meta.assign(test_auprc=model, ci_low=model - model_half_width, ci_high=model + model_half_width)
    verdicts = discrimination_table(meta, DiscriminationOptions(), setting_order=["s"])
    assert bool(verdicts["discriminates"].iloc[0]) is not tied
    (claim,) = fc.setting_claims(meta, _ceiling(ceiling, ceiling_high), pd.DataFrame(), {}, discrimination=verdicts)
    assert claim.verdict == expected and "metrics apart beyond their intervals" in claim.claim
    assert ("fails Table 4's discrimination criterion" in claim.reason) == tied
    if tied and model_half_width == 0.0:
        assert "all 2 metrics tie at 1.000" in claim.reason


def test_table4_claims_are_not_testable_without_a_discriminating_setting() -> None:
    table4, meta = _ranking(RANKED)
    (claim,) = fc.table4_claims(table4.assign(mean_rank=np.nan, mean_auprc=np.nan), meta, pd.DataFrame())
    assert claim.verdict == "not_testable" and "no setting of Table 4 discriminates" in claim.reason


# --- 000: Table 4 ranking -----------------------------------------------------------------------------------------

RANKED = ["auprc", "cosine", "recall", "correlation", "mad", "spearman"]


def _ranking(order: list[str], intervals: dict[str, tuple[float, float]] | None = None):
    """Table 4 with ``order`` best first, meta.csv of two settings with those means and the given intervals."""
    values = {metric: 0.9 - 0.1 * position for position, metric in enumerate(order)}
    table4 = pd.DataFrame({"metric": order, "mean_auprc": [values[m] for m in order],
                           "mean_rank": np.arange(1.0, len(order) + 1)})
    rows = []
    for setting in ("s1", "s2"):
        for metric, value in values.items():
            low, high = (intervals or {}).get(metric, (value - 0.01, value + 0.01))
            rows.append({"setting": setting, "metric": metric, "test_auprc": value, "ci_low": low, "ci_high": high})
    return table4, pd.DataFrame(rows)


def _rank_claim(claims: list[fc.Claim], prefix: str) -> fc.Claim:
    return next(claim for claim in claims if claim.claim.startswith(prefix))


@pytest.mark.parametrize(("place", "expected"), [(3, "holds"), (4, "differs")])
def test_a_top_metric_must_be_among_the_3_best(place: int, expected: str) -> None:
    order = [m for m in RANKED if m != "correlation"]
    order.insert(place - 1, "correlation")
    table4, meta = _ranking(order)
    claim = _rank_claim(fc.table4_claims(table4, meta, pd.DataFrame()), "correlation")
    assert claim.verdict == expected


def test_a_top_metric_in_4th_place_is_within_noise_when_its_interval_meets_the_3rd_in_every_setting() -> None:
    order = ["auprc", "cosine", "recall", "correlation", "mad", "spearman"]  # recall 3rd (0.7), correlation 0.6
    table4, meta = _ranking(order, {"correlation": (0.55, 0.7), "recall": (0.7, 0.75)})
    assert _rank_claim(fc.table4_claims(table4, meta, pd.DataFrame()), "correlation").verdict == "within_noise"
    table4, meta = _ranking(order, {"correlation": (0.55, 0.7 - EPS), "recall": (0.7, 0.75)})
    assert _rank_claim(fc.table4_claims(table4, meta, pd.DataFrame()), "correlation").verdict == "differs"
    one_setting_apart = meta.copy()
    one_setting_apart.loc[(one_setting_apart["setting"] == "s2") & (one_setting_apart["metric"] == "correlation"),
                          "ci_high"] = 0.7 + EPS
    assert _rank_claim(fc.table4_claims(table4, one_setting_apart, pd.DataFrame()),
                       "correlation").verdict == "differs"  # s1 still apart


@pytest.mark.parametrize(("place_from_end", "expected"), [(2, "holds"), (3, "differs")])
def test_spearman_must_be_among_the_2_worst(place_from_end: int, expected: str) -> None:
    order = [m for m in RANKED if m != "spearman"]
    order.insert(len(order) + 1 - place_from_end, "spearman")
    table4, meta = _ranking(order)
    assert _rank_claim(fc.table4_claims(table4, meta, pd.DataFrame()), "Spearman").verdict == expected


@pytest.mark.parametrize(("passing_ranks", "expected"), [((1.0, 3.0 - EPS), "holds"), ((1.0, 3.0 + EPS), "differs")])
def test_passing_metrics_must_rank_better_than_failing_ones(passing_ranks: tuple[float, float],
                                                            expected: str) -> None:
    # failing metrics at ranks 2 and 2: mean 2; passing mean (1 + r) / 2 is below 2 iff r < 3
    table4 = pd.DataFrame({"metric": ["f1", "iou", "recall", "mad"], "mean_auprc": 0.5,
                           "mean_rank": [*passing_ranks, 2.0, 2.0]})
    table3 = pd.DataFrame({"metric": ["f1", "iou", "recall", "mad"], "pass": [True, True, False, False]})
    meta = pd.DataFrame({"setting": "s", "metric": ["f1", "iou", "recall", "mad"], "test_auprc": 0.5})
    claim = _rank_claim(fc.table4_claims(table4, meta, table3), "metrics that pass")
    assert claim.verdict == expected


# --- 000: Table 3 (no interval): the verdict equals the paper's; the other tie mode passes above 90 % -------------


@pytest.mark.parametrize("column", ["experimental_missing", "theoretical_missing", "experimental_extra",
                                    "theoretical_extra"])
def test_a_table3_row_holds_exactly_when_our_verdict_at_90_percent_equals_the_papers(column: str) -> None:
    """Our verdict: every one of the four columns above 90 % (just above passes, exactly 90 % fails), whatever
    Table 3's own ``pass`` flag (made with ``sanity.pass_threshold``) says."""
    experimental = pd.DataFrame({"setting": "a", "metric": "cosine", "test": "extra", "ties": "average",
                                 "decrease_acc": [1.0]})
    for value, verdict in ((0.9 + EPS, "holds"), (0.9, "differs")):
        table3 = _table3({"cosine": {column: value}})
        claims = {claim.claim.split(" ")[0]: claim for claim in fc.table3_claims(table3, experimental)}
        assert claims["cosine"].verdict == verdict
        flipped = table3.assign(**{"pass": ~table3["pass"]})
        claims = {claim.claim.split(" ")[0]: claim for claim in fc.table3_claims(flipped, experimental)}
        assert claims["cosine"].verdict == verdict


@pytest.mark.parametrize(("value", "word"), [(0.9 + EPS, "passes"), (0.9, "fails")])
def test_the_other_tie_mode_passes_above_90_percent(value: float, word: str) -> None:
    table3 = _table3({"spearman": {"experimental_missing": 0.99, "theoretical_missing": 0.99,
                                   "experimental_extra": 0.99, "theoretical_extra": 0.99}})
    ties = pd.DataFrame({"source": ["experimental", "theoretical"] * 2, "case": "mean", "metric": "spearman",
                         "test": ["missing", "missing", "extra", "extra"], "ties": "reference",
                         "decrease_acc": [0.99, 0.99, 0.99, value]})
    experimental = pd.DataFrame({"setting": "a", "metric": "spearman", "test": "extra", "ties": "average",
                                 "decrease_acc": [1.0]})
    claim = next(c for c in fc.table3_claims(table3, experimental, ties) if c.claim.startswith("spearman "))
    assert f"it {word}" in claim.reason


# --- 000: reference mode (C.1-C.4) and closed forms (D.2) ---------------------------------------------------------


def _deterministic_cell(runs: pd.DataFrame) -> pd.Series:
    from neuroneval.sanity.theoretical_reference import compare_with_reference

    cells = compare_with_reference(runs)
    first = cells[cells["kind"] == "deterministic"].iloc[0]
    return ((runs["metric"] == first["metric"]) & (runs["test"] == first["test"])
            & np.isclose(runs["gamma"], first["gamma"]))


@pytest.mark.parametrize(("shift", "expected"), [(0.005 - EPS, "holds"), (0.005 + EPS, "differs")])
def test_a_deterministic_cell_agrees_within_0005_of_the_published_delta(shift: float, expected: str) -> None:
    runs = _published_runs(0).assign(delta_se=1e-9)  # tiny standard errors: only the absolute tolerance can pass
    cell = _deterministic_cell(runs)
    runs.loc[cell, "mean_delta"] += shift
    test = runs.loc[cell, "test"].iloc[0]
    claims = fc.reference_mode_claims(fc.reference_cells(runs), source="x")
    delta_claim = next(c for c in claims if "mean Δs" in c.claim and f"{test}-labels" in c.claim)
    assert delta_claim.verdict == expected and delta_claim.paper_source == "printed table"


@pytest.mark.parametrize(("shift", "expected"), [(0.02 - EPS, "holds"), (0.02 + EPS, "differs")])
def test_a_deterministic_cell_agrees_within_2_points_of_the_published_decrease_acc(shift: float,
                                                                                   expected: str) -> None:
    runs = _published_runs(0)
    cell = _deterministic_cell(runs)
    runs.loc[cell, "decrease_acc"] -= shift
    test = runs.loc[cell, "test"].iloc[0]
    claims = fc.reference_mode_claims(fc.reference_cells(runs), source="x")
    assert next(c for c in claims if "Decrease Acc" in c.claim and f"{test}-labels" in c.claim).verdict == expected


def test_reference_mode_without_runs_is_not_testable_and_says_why() -> None:
    empty = fc.reference_cells(_published_runs(0)).iloc[:0]
    claims = fc.reference_mode_claims(empty, source="x")
    assert {c.verdict for c in claims} == {"not_testable"} and all("no judged" in c.reason for c in claims)


def _closed_forms(expected: list[float], simulated: list[float], se: list[float]):
    analytical = pd.DataFrame({"metric": ["f1", "iou", "recall"][: len(expected)], "test": "missing",
                               "gamma": [0.1, 1 / 3, 0.2][: len(expected)], "expected_delta": expected})
    theoretical = pd.DataFrame({"metric": analytical["metric"], "test": "missing",
                                "gamma": analytical["gamma"] + 1e-10,  # joined after rounding γ to 8 decimals
                                "ties": "average", "mean_delta": simulated, "delta_se": se})
    return analytical, theoretical


@pytest.mark.parametrize(("difference_in_se", "expected"), [(4 - 1e-3, "holds"), (4 + 1e-3, "differs")])
def test_a_closed_form_agrees_within_4_standard_errors(difference_in_se: float, expected: str) -> None:
    se = 0.01
    (claim,) = fc.closed_form_claims(*_closed_forms([0.5], [0.5 + difference_in_se * se], [se]), source="x")
    assert claim.verdict == expected and claim.paper_source == "paper text"
    assert ("f1 missing γ=0.1" in claim.reason) == (expected == "differs")


@pytest.mark.parametrize(("difference", "expected"), [(1e-4 - 1e-6, "holds"), (1e-4 + 1e-6, "differs")])
def test_a_closed_form_without_a_standard_error_agrees_within_the_published_rounding(difference: float,
                                                                                     expected: str) -> None:
    (claim,) = fc.closed_form_claims(*_closed_forms([0.5], [0.5 - difference], [np.nan]), source="x")
    assert claim.verdict == expected


def test_closed_form_claims_count_cells_read_only_the_average_tie_mode_and_report_the_largest_gap() -> None:
    analytical, theoretical = _closed_forms([0.5, 0.25, 0.1], [0.501, 0.25, 0.3], [0.001, 0.001, 0.001])
    noise_rows = theoretical.assign(ties="noise", mean_delta=0.9)  # another tie mode: never joined
    (claim,) = fc.closed_form_claims(analytical, pd.concat([theoretical, noise_rows]), source="a, b")
    assert claim.verdict == "differs" and claim.our_value.startswith("2/3 (metric, test, γ) cells within 4 SE")
    assert "largest |difference| 0.2000" in claim.our_value
    assert claim.reason == "recall missing γ=0.2: closed form 0.1000 vs simulated 0.3000"
    assert claim.source == "a, b"
    (empty,) = fc.closed_form_claims(analytical, theoretical.assign(ties="noise"), source="x")
    assert empty.verdict == "not_testable" and empty.reason


# --- 000: Table E.2 (no interval): cosine drops by more than 0.2, every other metric moves at most 1e-6 ------------


def _shift(cosine_drop: float, other_delta: float) -> pd.DataFrame:
    frame = pd.DataFrame({"metric": ["cosine", "correlation"], "setting": "cbm", "constant": 1.0,
                          "original_auprc": [0.85, 0.9], "shifted_auprc": [0.85 - cosine_drop, 0.9 + other_delta]})
    return frame.assign(delta_auprc=frame["shifted_auprc"] - frame["original_auprc"])


@pytest.mark.parametrize(("drop", "expected"), [(0.2 + EPS, "holds"), (0.2 - EPS, "differs")])
def test_cosine_collapses_by_more_than_02(drop: float, expected: str) -> None:
    assert fc.shift_claims(_shift(drop, 0.0))[0].verdict == expected


@pytest.mark.parametrize(("delta", "expected"), [(0.9e-6, "holds"), (1.1e-6, "differs")])
def test_every_other_metric_moves_at_most_1e6(delta: float, expected: str) -> None:
    assert fc.shift_claims(_shift(0.5, delta))[1].verdict == expected


# --- 001: cost factors ≈ F× within [F/2, 2F] ---------------------------------------------------------------------


@pytest.mark.parametrize(("factor", "low", "high", "claimed", "expected"), [
    (15.0 + EPS, np.nan, np.nan, 30.0, "holds"), (15.0 - EPS, np.nan, np.nan, 30.0, "differs"),
    (60.0 - EPS, np.nan, np.nan, 30.0, "holds"), (60.0 + EPS, np.nan, np.nan, 30.0, "differs"),
    (2.5, 1.0, 4.0, 5.0, "holds"), (2.5 - EPS, 1.0, 4.0, 5.0, "within_noise"),
    (2.0, 1.0, 2.5 - EPS, 5.0, "differs"), (12.0, 9.0, 14.0, 5.0, "within_noise"),
    (12.0, 10.0 + EPS, 14.0, 5.0, "differs")])
def test_a_cost_factor_holds_within_half_to_twice_the_claim_and_is_within_noise_when_its_interval_is(
        factor: float, low: float, high: float, claimed: float, expected: str) -> None:
    row = pd.Series({"factor": factor, "ci_low": low, "ci_high": high})
    assert paper_001.factor_verdict(row, claimed) == expected


def test_crowd_claims_take_the_factor_verdict_and_cite_the_paper_text() -> None:
    rarity = pd.DataFrame({"rarity": [0.001, 0.001], "baseline": ["uniform", "majority"],
                           "method": ["pseudo", "bayes_pseudo"], "factor": [14.0, 5.0], "ci_low": [10.0, 4.0],
                           "ci_high": [16.0, 6.0]})
    summary = pd.DataFrame({"baseline": ["uniform", "majority"], "method": ["pseudo", "bayes_pseudo"],
                            "unit_group": "all", "factor": [1.0, 1.0], "ci_low": [0.5, 0.5], "ci_high": [1.5, 1.5]})
    planted_is, embedded_is, planted_bayes, embedded_bayes = fc.crowd_claims(rarity, summary, 0.01,
                                                                             class_rarity=0.001)
    assert (planted_is.verdict, planted_bayes.verdict) == ("within_noise", "holds")
    assert (embedded_is.verdict, embedded_bayes.verdict) == ("differs", "differs")
    assert "planted study measures 14.0× [10.0, 16.0]" in planted_is.reason
    assert {c.paper_source for c in (planted_is, embedded_bayes)} == {"paper text"}


def test_crowd_claims_report_the_rarity_sweep_without_attributing_one_class_rarity_to_001() -> None:
    # 001 prints no concept rarity (class and superclass labels); γ = 0.001 is paper 000's "0.1 %" per ImageNet class
    rarity = pd.DataFrame({"rarity": [0.1, 0.01, 0.001] * 2, "baseline": ["uniform"] * 3 + ["majority"] * 3,
                           "method": ["pseudo"] * 3 + ["bayes_pseudo"] * 3,
                           "factor": [2.0, 9.0, 28.0, 1.5, 3.0, 6.0], "ci_low": 1.0, "ci_high": 40.0})
    summary = pd.DataFrame({"baseline": ["uniform", "majority"], "method": ["pseudo", "bayes_pseudo"],
                            "unit_group": "all", "factor": [2.0, 1.0], "ci_low": [1.5, 0.8], "ci_high": [2.5, 1.2]})
    claims = fc.crowd_claims(rarity, summary, 0.05, class_rarity=0.001)
    assert len(claims) == 4
    for claim in claims:
        assert "0.001" not in claim.paper_value and "0.1" not in claim.paper_value and "γ" not in claim.paper_value
        assert "rarity not stated" in claim.paper_value
    planted_is, embedded_is = claims[0], claims[1]
    assert "sweep γ=0.1: 2.0×; γ=0.01: 9.0×; γ=0.001: 28.0×" in planted_is.our_value
    assert "0.1 % of the inputs per paper 000 App. F.1; 001 states no rarity" in planted_is.our_value
    assert "one ImageNet class, γ = 0.001" in planted_is.claim
    assert embedded_is.verdict == "differs" and "paper 000 App. F.1" in embedded_is.reason
    assert "paper ≈" not in embedded_is.reason
    (missing, _) = fc.crowd_claims(rarity[rarity["rarity"] > 0.001], summary.iloc[:0], 0.05, class_rarity=0.001)
    assert missing.verdict == "not_testable" and "lacks γ = 0.001" in missing.reason


# --- 002: CoSy Table 2 (true ≥ 0.90, random within 0.10 of 0.5) and Table 3 (INVERT ≥ 0.73, CLIP-Dissect ≥ 0.78) -


def _cosy(true: float, random: float, std: float = 0.0, units: int = 100) -> pd.DataFrame:
    return pd.DataFrame({"setting": "s", "generator": "g", "control": "all", "method": ["true", "random"],
                         "auc_mean": [true, random], "auc_std": std, "n_units": units})


@pytest.mark.parametrize(("true", "random", "std", "expected"), [
    (0.9, 0.5, 0.0, "holds"), (0.9 - EPS, 0.5, 0.0, "differs"),
    (0.9, 0.6 - EPS, 0.0, "holds"), (0.9, 0.6 + EPS, 0.0, "differs"),
    (0.9, 0.4 + EPS, 0.0, "holds"), (0.9, 0.4 - EPS, 0.0, "differs"),
    # std 0.01 over 100 units: standard error 0.001, interval ± 0.00196
    (0.9 - 0.0019, 0.5, 0.01, "within_noise"), (0.9 - 0.0021, 0.5, 0.01, "differs"),
    (0.9, 0.6 + 0.0019, 0.01, "within_noise"), (0.9, 0.6 + 0.0021, 0.01, "differs"),
    (0.9, 0.4 - 0.0019, 0.01, "within_noise"), (0.9, 0.4 - 0.0021, 0.01, "differs")])
def test_cosy_true_explanations_reach_090_and_random_ones_stay_near_chance(true: float, random: float, std: float,
                                                                           expected: str) -> None:
    (claim,) = fc.cosy_claims(_cosy(true, random, std))
    assert claim.verdict == expected


@pytest.mark.parametrize(("invert", "clip", "se", "expected"), [
    (0.73, 0.78, np.nan, "holds"), (0.73 - EPS, 0.78, np.nan, "differs"), (0.73, 0.78 - EPS, np.nan, "differs"),
    (0.73 - 0.019, 0.78, 0.01, "within_noise"), (0.73 - 0.021, 0.78, 0.01, "differs")])
def test_cosy_benchmark_reaches_the_papers_lowest_auc(invert: float, clip: float, se: float, expected: str) -> None:
    table = pd.DataFrame({"setting": "a", "generator": "g", "method": ["invert_l1", "clip_dissect"],
                          "auc_mean": [invert, clip], "auc_se": se})
    (claim,) = fc.cosy_benchmark_claims(table)
    assert claim.verdict == expected


def test_a_cosy_benchmark_generator_without_invert_or_clip_dissect_is_not_testable() -> None:
    table = pd.DataFrame({"setting": "a", "generator": "g", "method": ["milan"], "auc_mean": [0.7]})
    (claim,) = fc.cosy_benchmark_claims(table)
    assert claim.verdict == "not_testable" and "no INVERT or CLIP-Dissect" in claim.reason



def test_a_random_row_without_an_interval_is_judged_on_its_mean_alone() -> None:
    """True just below 0.90 but within noise, random 0.05 from chance with no spread measured (auc_std NaN): within
    noise, since the random row's own mean meets the rule (it needs no interval)."""
    table = _cosy(0.9 - 0.0019, 0.45, 0.01)
    table.loc[table["method"] == "random", "auc_std"] = np.nan
    (claim,) = fc.cosy_claims(table)
    assert claim.verdict == "within_noise"


@pytest.mark.parametrize(("units", "expected"), [(2, "within_noise"), (1, "differs")])
def test_two_units_give_an_interval_and_one_unit_none(units: int, expected: str) -> None:
    """n = 2: standard error 0.02/√2, so 0.9 − 0.01 reaches 0.90 within 1.96 SE; n = 1 has no interval."""
    (claim,) = fc.cosy_claims(_cosy(0.9 - 0.01, 0.5, 0.02, units=units))
    assert claim.verdict == expected


def test_the_reason_names_only_the_part_that_fails() -> None:
    (random_fails,) = fc.cosy_claims(_cosy(0.9, 0.75))
    assert random_fails.reason == "true AUC 0.900; random AUC 0.750 is not within 0.10 of chance"
    (true_fails,) = fc.cosy_claims(_cosy(0.8, 0.45))
    assert true_fails.reason == "true AUC 0.800 < 0.90; random AUC 0.450"
    (random_fails_above,) = fc.cosy_claims(_cosy(0.95, 0.75))
    assert random_fails_above.reason == "true AUC 0.950; random AUC 0.750 is not within 0.10 of chance"


@pytest.mark.parametrize("true", [0.9, 0.95])
def test_a_true_row_without_an_interval_is_judged_on_its_mean_alone(true: float) -> None:
    """True at or above 0.90 with no spread measured, random just outside the chance band but within noise."""
    table = _cosy(true, 0.6 + 0.0019, 0.01)
    table.loc[table["method"] == "true", "auc_std"] = np.nan
    (claim,) = fc.cosy_claims(table)
    assert claim.verdict == "within_noise"


def test_the_first_control_listed_is_judged() -> None:
    """Table 2 has a row block per control set; the claim reads the first one listed, whatever its name sorts as."""
    blocks = [_cosy(true, 0.5).assign(control=control) for control, true in (("m", 0.95), ("a", 0.7), ("z", 0.8))]
    (claim,) = fc.cosy_claims(pd.concat(blocks, ignore_index=True))
    assert claim.verdict == "holds" and claim.our_value.startswith("true 0.950")


def test_a_generator_needs_a_true_and_a_random_row_and_may_have_more() -> None:
    more = pd.concat([_cosy(0.95, 0.5), _cosy(0.3, 0.5).iloc[:1].assign(method="milan")], ignore_index=True)
    (claim,) = fc.cosy_claims(more)
    assert claim.verdict == "holds"
    assert fc.cosy_claims(_cosy(0.95, 0.5).iloc[:1]) == []  # no random row: nothing to judge
    after_a_skipped_one = pd.concat([_cosy(0.95, 0.5).iloc[:1].assign(generator="g0"), _cosy(0.95, 0.5)])
    assert [claim.claim.split(" on ")[0] for claim in fc.cosy_claims(after_a_skipped_one)] == ["g"]


def _natural_rows(setting: str, generator: str, natural: list[float], synthetic: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"setting": setting, "generator": generator, "auc_natural": natural,
                         "auc_synthetic": synthetic, "mad_natural": 1.0, "mad_synthetic": 1.0})


def test_the_natural_gap_reads_only_its_own_setting_and_generator() -> None:
    """Rows of other settings and of generators whose names sort before or after are left out."""
    natural = pd.concat([_natural_rows("s", "g", [0.95, 0.97], [0.6, 0.7]),
                         _natural_rows("s", "a", [0.1] * 5, [0.1] * 5), _natural_rows("s", "z", [0.1] * 7, [0.1] * 7),
                         _natural_rows("t", "g", [0.1] * 4, [0.1] * 4), _natural_rows("r", "g", [0.1] * 6, [0.1] * 6)])
    reason = paper_002.natural_gap_reason(natural, "s", "g")
    assert reason.startswith("against the same control images, 2 units' natural images of their own class reach AUC "
                             "0.960")
    gap = np.array([0.35, 0.27])  # two units already give an interval: mean ± Z_95 · std/√2
    half = 1.959963984540054 * gap.std(ddof=1) / np.sqrt(2)
    assert f"{gap.mean():+.3f} [{gap.mean() - half:+.3f}, {gap.mean() + half:+.3f}]" in reason


@pytest.mark.parametrize(("natural", "synthetic", "cause"), [
    (0.9, 0.8, "the shortfall is g's synthetic-vs-natural gap, not the units"),
    (0.95, 0.95, "both reach 0.90 on these units"), (0.9, 0.95, "both reach 0.90 on these units"),
    (0.95, 0.9, "both reach 0.90 on these units"),
    (0.8, 0.95, "natural images of the same classes stay below 0.90 too")])
def test_the_natural_gap_blames_the_generator_only_when_natural_images_reach_090(natural: float, synthetic: float,
                                                                                  cause: str) -> None:
    reason = paper_002.natural_gap_reason(_natural_rows("s", "g", [natural], [synthetic]), "s", "g")
    assert reason.endswith(cause) or f"{cause}:" in reason
    assert f"natural − synthetic AUC {natural - synthetic:+.3f} (" in reason  # one unit: no interval


def test_the_benchmark_reads_exactly_invert_and_clip_dissect() -> None:
    """Methods whose names sort before or after ``invert_l1`` / ``clip_dissect`` are not read as them."""
    table = pd.DataFrame({"setting": "a", "generator": "g",
                          "method": ["invert_l1", "clip_dissect", "milan", "a_method", "falcon", "z_method"],
                          "auc_mean": [0.80, 0.85, 0.1, 0.1, 0.1, 0.1]})
    (claim,) = fc.cosy_benchmark_claims(table)
    assert claim.our_value == "INVERT a 0.80; CLIP-Dissect a 0.85" and claim.verdict == "holds"


def test_the_cosy_claims_take_their_source_by_keyword_only() -> None:
    with pytest.raises(TypeError):
        fc.cosy_claims(_cosy(0.95, 0.5), None, "elsewhere.csv")  # type: ignore[misc]
    with pytest.raises(TypeError):
        fc.cosy_benchmark_claims(pd.DataFrame(), "elsewhere.csv")  # type: ignore[misc]

# --- 001: explanation methods (paired bootstrap over units of the difference) --------------------------------------


def _units(first: tuple[str, np.ndarray], second: tuple[str, np.ndarray], score: str = "simulation_correlation",
           **keys: object) -> pd.DataFrame:
    """Per-unit scores of two methods on the same units."""
    return pd.concat([pd.DataFrame({"unit": [f"u{i}" for i in range(len(values))], "method": method, **keys,
                                    score: values}) for method, values in (first, second)], ignore_index=True)


#: Constant per-unit differences: the bootstrap interval is the point itself, so EPS either side of 0 decides.
DIFFERENCES = [(EPS, "holds"), (0.0, "within_noise"), (-EPS, "differs")]
BASE = np.linspace(0.1, 0.9, 30)


@pytest.mark.parametrize(("delta", "expected"), DIFFERENCES)
def test_le_must_beat_the_best_other_method_on_the_paired_interval(delta: float, expected: str) -> None:
    scores = _units(("le_pseudo", BASE + delta), ("invert", BASE), setting="h", group="block3", table=2)
    primary, secondary = fc.le_best_claims(scores, {"h": {"scored_on": "setting", "concepts": "pseudo:clip"}})
    assert primary.verdict == expected and secondary.verdict == "not_testable"


@pytest.mark.parametrize(("delta", "expected"), DIFFERENCES)
def test_broden_methods_must_lose_to_the_best_other_method_on_the_paired_interval(delta: float, expected: str
                                                                                  ) -> None:
    scores = _units(("le_label_l1", BASE + delta), ("netdissect", BASE), setting="a", group="softmax", table=1)
    _, secondary = fc.broden_claims(scores)
    assert secondary.verdict == expected


@pytest.mark.parametrize(("delta", "expected"), DIFFERENCES)
def test_le_must_lead_the_simulated_crowd_on_the_paired_interval(delta: float, expected: str) -> None:
    crowd = _units(("le_label_l1", BASE + delta), ("invert_l1", BASE), score="crowd_correlation", setting="a",
                   aggregation="bayes_pseudo")
    (claim,) = fc.crowd_le_claims(crowd)
    assert claim.verdict == expected


@pytest.mark.parametrize(("low", "high", "expected"), [
    (EPS, 0.9, "holds"), (0.0, 0.9, "within_noise"), (-0.5, EPS, "within_noise"), (-0.5, 0.0, "within_noise"),
    (-0.5, -EPS, "differs")])
def test_crowd_agreement_holds_above_zero_and_is_within_noise_when_its_interval_contains_zero(
        low: float, high: float, expected: str) -> None:
    agreement = pd.DataFrame({"table": [1], "setting": "all", "reference": "simulation_correlation",
                              "metric": "crowd:bayes_pseudo", "n_methods": 5, "n_units": 30,
                              "tau": (low + high) / 2, "ci_low": low, "ci_high": high})
    (claim,) = fc.crowd_agreement_claims(agreement)
    assert claim.verdict == expected


# --- 004: reliability 0.9, MTMM ranges, validity and method orderings ----------------------------------------------


def _reliability(retest: dict[str, tuple[float, float, float]]) -> pd.DataFrame:
    """Test-retest rows (value, ci_low, ci_high) per measure; α rows that satisfy the paper everywhere."""
    rows = [{"model": "lm", "measure": m, "statistic": "pearson", "run": "test-retest", "value": v, "ci_low": lo,
             "ci_high": hi} for m, (v, lo, hi) in retest.items()]
    rows += [{"model": "lm", "measure": m, "statistic": "cronbach_alpha", "run": run,
              "value": 0.5 if m in ("GRAD-Loss", "IN-UCI", "IN-UMass") else 0.95, "ci_low": np.nan,
              "ci_high": np.nan} for m in retest for run in ("test", "retest")]
    return pd.DataFrame(rows)


def _concepteval(reliability: pd.DataFrame, *, mtmm: pd.DataFrame | None = None,
                 validity: pd.DataFrame | None = None, methods: pd.DataFrame | None = None) -> pd.DataFrame:
    empty_mtmm = pd.DataFrame(columns=["model", "measure_a", "measure_b", "statistic", "value"])
    empty_validity = pd.DataFrame(columns=["model", "criterion", "measure", "statistic", "value"])
    empty_methods = pd.DataFrame(columns=["model", "family", "measure", "mean"])
    return fc.claims_frame(fc.concepteval_claims(
        reliability, empty_validity if validity is None else validity, empty_mtmm if mtmm is None else mtmm,
        empty_methods if methods is None else methods))


BASE_RETEST = {"GRAD-Loss": (0.95, 0.9, 1.0), "ABL-Div": (0.95, 0.9, 1.0), "IN-EmbCos": (0.95, 0.9, 1.0),
               "SIM-Corr": (0.5, 0.4, 0.6)}


@pytest.mark.parametrize(("value", "interval", "expected"), [
    (0.9, (0.9, 0.95), "holds"), (0.9 - EPS, (0.85, 0.9 - EPS / 2), "differs"),
    (0.9 - EPS, (0.85, 0.92), "within_noise")])
def test_a_reliable_measure_reaches_09(value: float, interval: tuple[float, float], expected: str) -> None:
    frame = _concepteval(_reliability(BASE_RETEST | {"IN-EmbCos": (value, *interval)}))
    row = frame[frame["claim"].str.contains("test-retest")].iloc[0]
    assert row["verdict"] == expected


@pytest.mark.parametrize(("value", "interval", "expected"), [
    (0.9 - EPS, (0.8, 0.95), "holds"), (0.9, (0.9 - EPS / 2, 0.95), "within_noise"),
    (0.9, (0.9 + EPS, 1.0), "differs")])
def test_the_simulation_score_falls_below_09_on_test_retest(value: float, interval: tuple[float, float],
                                                            expected: str) -> None:
    frame = _concepteval(_reliability(BASE_RETEST | {"SIM-Corr": (value, *interval)}))
    assert frame[frame["claim"].str.contains("test-retest")].iloc[0]["verdict"] == expected


def _mtmm(taus: dict[tuple[str, str], tuple[float, float, float]]) -> pd.DataFrame:
    rows = []
    for (a, b), (value, low, high) in taus.items():
        rows += [{"model": "lm", "measure_a": x, "measure_b": y, "statistic": "kendall_tau_b", "value": value,
                  "ci_low": low, "ci_high": high} for x, y in ((a, b), (b, a))]
    return pd.DataFrame(rows)


def _mtmm_verdict(pair: tuple[str, str], tau: tuple[float, float, float], text: str) -> str:
    frame = _concepteval(_reliability(BASE_RETEST), mtmm=_mtmm({pair: tau}))
    return frame[frame["claim"].str.contains(text, regex=False)].iloc[0]["verdict"]


@pytest.mark.parametrize(("tau", "expected"), [
    ((0.3, 0.2, 0.4), "holds"), ((-(0.3 + EPS), -0.5, -(0.3 + EPS / 2)), "differs"),
    ((0.3 + EPS, 0.3 - EPS, 0.5), "within_noise"), ((-(0.3 + EPS), -0.5, -0.25), "within_noise")])
def test_faithfulness_and_readability_diverge_at_most_03(tau: tuple[float, float, float], expected: str) -> None:
    assert _mtmm_verdict(("ABL-Div", "IN-EmbCos"), tau, "faithfulness and readability") == expected


@pytest.mark.parametrize(("tau", "expected"), [
    ((0.15 - EPS, 0.1, 0.2), "holds"), ((0.15, 0.15, 0.2), "differs"), ((0.152, 0.1, 0.2), "within_noise")])
def test_input_and_output_readability_diverge_below_015(tau: tuple[float, float, float], expected: str) -> None:
    """Issue 33's example: 0.152 vs '< 0.15' with an interval reaching below 0.15 is within noise."""
    assert _mtmm_verdict(("IN-EmbCos", "OUT-EmbCos"), tau, "input- and output-side") == expected


@pytest.mark.parametrize(("tau", "expected"), [
    ((0.3, 0.3, 0.3), "holds"), ((0.7, 0.7, 0.7), "holds"), ((0.3 - EPS, 0.2, 0.3 - EPS / 2), "differs"),
    ((0.7 + EPS, 0.7 + EPS / 2, 0.8), "differs"), ((0.8, 0.69, 0.9), "within_noise"),
    ((-0.2, -0.35, -0.1), "within_noise")])
def test_faithfulness_measures_converge_within_02_of_05(tau: tuple[float, float, float], expected: str) -> None:
    assert _mtmm_verdict(("ABL-Div", "GRAD-Loss"), tau, "converge moderately") == expected


def test_a_block_mean_interval_is_the_mean_of_the_pairs_absolute_interval_ends() -> None:
    taus = {("ABL-Div", "IN-EmbCos"): (0.2, 0.1, 0.3), ("GRAD-Loss", "IN-EmbCos"): (-0.4, -0.6, 0.1)}
    frame = _concepteval(_reliability(BASE_RETEST), mtmm=_mtmm(taus))
    row = frame[frame["claim"].str.contains("faithfulness and readability")].iloc[0]
    # |τ| intervals [0.1, 0.3] and [0, 0.6]: mean [0.05, 0.45]; mean |τ| (0.2 + 0.4) / 2
    assert row["our_value"] == "mean |τ| 0.300 [0.050, 0.450] over 2 pairs"


def _validity(values: dict[str, tuple[float, float, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"model": "lm", "criterion": "raters", "measure": m, "statistic": "kendall_tau_b",
                          "value": v, "ci_low": lo, "ci_high": hi} for m, (v, lo, hi) in values.items()])


@pytest.mark.parametrize(("sim", "expected"), [
    ((0.5 - EPS, 0.4, 0.6), "holds"), ((0.5 + EPS, 0.55, 0.6), "differs"), ((0.5 + EPS, 0.45, 0.6), "within_noise")])
def test_an_embcos_measure_has_the_highest_validity(sim: tuple[float, float, float], expected: str) -> None:
    validity = _validity({"SIM-Corr": sim, "IN-EmbCos": (0.5, 0.45, 0.54), "OUT-EmbCos": (0.3, 0.2, 0.4)})
    frame = _concepteval(_reliability(BASE_RETEST), validity=validity)
    assert frame[frame["table"] == "Table 4"].iloc[0]["verdict"] == expected


def _method_means(sae: tuple[float, float, float], neuron: tuple[float, float, float]) -> pd.DataFrame:
    return pd.DataFrame([{"model": "lm", "family": f, "measure": "ABL-Div", "mean": v, "ci_low": lo, "ci_high": hi}
                         for f, (v, lo, hi) in (("sae", sae), ("neuron", neuron))])


@pytest.mark.parametrize(("sae", "expected"), [
    ((-0.3, -0.35, -0.25), "holds"),  # faithfulness compares |mean|: |−0.3| > 0.2
    ((0.2 - EPS, 0.18, 0.25), "within_noise"), ((0.2 - EPS, 0.1, 0.2 - EPS / 2), "differs"),
    ((-0.2 + EPS, -0.3, -0.15), "within_noise"), ((-0.1, -0.15, 0.05), "differs")])
def test_sae_concepts_score_above_neurons_by_magnitude_on_faithfulness(sae: tuple[float, float, float],
                                                                       expected: str) -> None:
    methods = _method_means(sae, (0.2, 0.2, 0.22))
    frame = _concepteval(_reliability(BASE_RETEST), methods=methods)
    assert frame[frame["table"].str.startswith("Fig. 4")].iloc[0]["verdict"] == expected
