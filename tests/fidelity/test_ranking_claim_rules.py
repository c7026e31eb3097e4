"""Paper 000's ranking claims (``fidelity.claims.paper_000_ranking``), rule by rule, at the edges a reader relies on.

Pinned here:

- Settings (Tables F.5–F.7, ``setting_claims``): the metrics listed as tied with the best (within 1e-9: a metric
  exactly 1e-9 below is tied, 2e-9 below is not; an ellipsis after the third only when more than three tie); the
  ceiling read from the setting's own rows (settings that sort before and after it are left alone; none gives a NaN
  ceiling); the band ±0.10 around the paper's best printed in the noise reason, an interval exactly touching the
  band's top within noise, a NaN interval end never; the reason's order (the noise or discrimination sentence
  first, before two or more measured reasons).
- The measured reasons of a setting: a ceiling below 0.9 (exactly 0.9 is not below) and whether the trained model
  is at it (equal or above) or not; a trained model more than 0.10 short of the ceiling (exactly 0.10 short is not)
  with the gap; otherwise the ceiling reached, the world easier or harder than the paper's data by our best
  against the paper's best; a differing setting with no other reason gives our distance to the paper's best; the
  trained units' top-1 only where ``test_top1`` exists; the world
  card (pseudo-label kinds only when given, model quality only when given).
- Settings without a paper counterpart: a model above 0.8 holds; within noise when the ceiling is above 0.9 and
  the model's interval reaches 0.8, or the ceiling's upper end is exactly 0.9; the failing discrimination criterion;
  a setting without a counterpart does not stop the judging of the next one.
- Table 4 (``table4_claims``): the paper's place and average rank of correlation, cosine, AUPRC; our top three; a
  missing top metric skips only its own claim; one or two metrics (no third, no second worst) are judged; a metric
  tied for 3rd place holds; the noise comparison with the 3rd (top claims) or the 2nd worst (Spearman, not the
  last, not the first); a Spearman tied into the 2nd-worst place of the order is compared with the metric it
  ties (names built at run time); no interval columns, no noise; the losing settings (a setting without the
  metric, a tie with the best and a gap of exactly 1e-9 are not losing; intervals exactly touching overlap); the
  Spearman reason's
  per-setting values, Spearman's own rows only (metrics that sort before and after it are left alone), best first.
- The passing-vs-failing gap: the paper's gap (6.07 ranks, computed here by hand from Table 4), ours and the one
  with the paper's pass set, the reason (empty when the gap is positive; a gap of exactly 0 differs and names the
  worst passing metric).
- Table E.2 (``shift_claims``): cosine's drop of exactly 0.2 is no collapse, the reason's drop (negative when cosine
  rises); every other metric unchanged at |Δ| exactly 1e-6 on either side, moved just beyond; cosine never among
  the others; each claim only when its rows exist.
- ``source`` is keyword-only in every builder.

Expected values are written by hand here, never read back from the code under test.
"""

from __future__ import annotations

import pandas as pd
import pytest

from neuroneval.fidelity import claims as fc

NAN = float("nan")
EPS = 1e-4
#: Paper setting 8's best meta-AUPRC is 0.4683 (Table F.6): its band is [0.3683, 0.5683], room on both sides.
LOW_SETTING = 8
#: Paper setting 1's best is 0.9999 (Table F.5): its band is [0.8999, 1.0999].
HIGH_SETTING = 1


def _meta(per_setting: dict[str, dict[str, tuple[float, ...]]], **columns: dict[str, dict[str, float]]) -> pd.DataFrame:
    """meta.csv rows: ``{setting: {metric: (value,) or (value, ci_low, ci_high)}}`` (chance 0.01), plus optional
    extra columns given as ``{column: {setting: value of the setting's best row}}`` (same value on every row)."""
    rows = []
    for setting, metrics in per_setting.items():
        for metric, numbers in metrics.items():
            row = {"setting": setting, "metric": metric, "test_auprc": numbers[0], "chance_auprc": 0.01}
            if len(numbers) == 3:
                row["ci_low"], row["ci_high"] = numbers[1], numbers[2]
            for column, values in columns.items():
                row[column] = values[setting]
            rows.append(row)
    return pd.DataFrame(rows)


def _ceiling(values: dict[str, float], highs: dict[str, float] | None = None) -> pd.DataFrame:
    return pd.DataFrame({"setting": list(values), "meta_auprc": list(values.values()),
                         "ci_high": [(highs or {}).get(s, NAN) for s in values]})


def _one(meta: pd.DataFrame, ceiling: dict[str, float], paper: dict[str, int], **kwargs) -> fc.Claim:
    highs, worlds = kwargs.pop("highs", None), kwargs.pop("worlds", pd.DataFrame())
    (claim,) = fc.setting_claims(meta, _ceiling(ceiling, highs), worlds, paper, **kwargs)
    return claim


# --- settings: the best metric and the metrics tied with it ------------------------------------------------------


def test_the_metrics_tied_with_the_best_are_those_within_1e9_and_the_ceiling_is_the_settings_own() -> None:
    """Tied with the best: 1e-9 below counts, 2e-9 below does not; the ceiling of settings r and t is not s's."""
    meta = _meta({"s": {"correlation": (0.5, 0.48, 0.52), "cosine": (0.5 - 1e-9, 0.47, 0.5),
                        "auc": (0.5 - 2e-9, 0.47, 0.5), "recall": (0.3, 0.28, 0.32)}})
    claim = _one(meta, {"r": 0.99, "s": 0.93, "t": 0.99}, {"s": LOW_SETTING})
    assert claim.our_value == "0.500 [0.480, 0.520] (correlation, cosine); ceiling 0.930; chance 0.010"
    assert claim.verdict == "holds" and claim.reason == ""  # 0.5 is 0.0317 from the paper's 0.4683
    assert claim.table == "Table F.6, setting 8" and claim.paper_value == "0.4683 (correlation)"
    assert claim.claim == "s (stands in for setting 8): best metric's meta-AUPRC matches the paper's within ±0.10"


@pytest.mark.parametrize(("n_tied", "listed"), [
    (1, "(m0)"), (3, "(m0, m1, m2)"), (4, "(m0, m1, m2…)")])
def test_an_ellipsis_follows_the_third_tied_metric_only_when_more_than_three_tie(n_tied: int, listed: str) -> None:
    """Up to three tied metrics are named; a fourth is an ellipsis."""
    values = {f"m{i}": (0.5,) for i in range(n_tied)} | {"low": (0.2,)}
    claim = _one(_meta({"s": values}), {"s": 0.93}, {"s": LOW_SETTING})
    assert claim.our_value == f"0.500 {listed}; ceiling 0.930; chance 0.010"


def test_a_setting_without_ceiling_rows_has_a_nan_ceiling_and_no_ceiling_reason() -> None:
    """No ceiling row for the setting (only for settings sorting before and after it): ceiling nan, no reason."""
    claim = _one(_meta({"s": {"correlation": (0.9,)}}), {"r": 0.95, "t": 0.95}, {"s": LOW_SETTING})
    assert claim.our_value == "0.900 (correlation); ceiling nan; chance 0.010"
    assert claim.verdict == "differs"  # 0.9 is 0.43 above 0.4683


# --- settings with a paper counterpart: ±0.10 of the paper's best, the band in the noise reason --------------------


def test_the_noise_reason_prints_the_band_and_comes_first() -> None:
    """0.36 is 0.1083 below 0.4683; its interval reaches the band [0.3683, 0.5683]: within noise, and the reason
    says so before the measured reasons (the gap to the ceiling, the trained units' top-1)."""
    meta = _meta({"s": {"correlation": (0.36, 0.35, 0.37), "auc": (0.1, 0.05, 0.15)}},
                 test_top1={"s": 0.75})
    claim = _one(meta, {"s": 0.95}, {"s": LOW_SETTING})
    assert claim.verdict == "within_noise"
    assert claim.reason == ("the bootstrap interval [0.350, 0.370] meets [0.368, 0.568]; the trained units fall 0.590 "
                            "short of the ideal units' 0.950; 75% of the trained units score their own concept "
                            "highest")


@pytest.mark.parametrize(("best", "low", "high", "expected"), [
    (0.58, 0.4683 + 0.10, 0.59, "within_noise"),  # the interval's bottom exactly at the band's top
    (0.58, 0.5684, 0.59, "differs"),
    (0.58, NAN, 0.59, "differs"),  # no interval, no noise
    (0.36, 0.35, NAN, "differs"),
    (0.5683 - EPS, NAN, NAN, "holds"), (0.5683 + EPS, NAN, NAN, "differs"),
    (0.3683 + EPS, NAN, NAN, "holds"), (0.3683 - EPS, NAN, NAN, "differs")])
def test_a_setting_is_judged_by_its_distance_to_the_papers_best_and_its_interval_against_the_band(
        best: float, low: float, high: float, expected: str) -> None:
    """Within 0.10 of 0.4683 on either side holds; above it, within noise only when the interval meets the band,
    whose top is 0.4683 + 0.10 (not a power or a floor division of the paper's value)."""
    claim = _one(_meta({"s": {"correlation": (best, low, high), "auc": (0.1, 0.05, 0.15)}}), {"s": 1.0},
                 {"s": LOW_SETTING})
    assert claim.verdict == expected


@pytest.mark.parametrize(("paper", "ceiling", "best", "reason"), [
    (LOW_SETTING, 0.9, 0.85, "the ideal units reach 0.900: the embedded world is easier than the paper's data (best "
                             "0.850 vs 0.4683)"),
    (LOW_SETTING, 0.9 - EPS, 0.85, "the world's ideal units reach only 0.900, the setting's identifiability ceiling "
                                   "(no model is expected to do better)"),
    (LOW_SETTING, 0.7, 0.7, "the world's ideal units reach only 0.700, the setting's identifiability ceiling "
                            "(the trained model, 0.700, is at it)"),
    (LOW_SETTING, 0.7, 0.75, "the world's ideal units reach only 0.700, the setting's identifiability ceiling "
                             "(the trained model, 0.750, is at it)"),
    (LOW_SETTING, 0.7, 0.6, "the world's ideal units reach only 0.700, the setting's identifiability ceiling "
                            "(no model is expected to do better)"),
    (LOW_SETTING, 0.95, 0.85, "the ideal units reach 0.950: the embedded world is easier than the paper's data (best "
                              "0.850 vs 0.4683)"),
    (LOW_SETTING, 0.95, 0.93, "the ideal units reach 0.950: the embedded world is easier than the paper's data (best "
                              "0.930 vs 0.4683)"),
    # both near a ceiling below the paper's 0.9999: harder than the paper's data
    (HIGH_SETTING, 0.95, 0.88, "the ideal units reach 0.950: the embedded world is harder than the paper's data (best "
                               "0.880 vs 0.9999)"),
    (HIGH_SETTING, 0.95, 0.85 - EPS, "the trained units fall 0.100 short of the ideal units' 0.950"),
    (HIGH_SETTING, 0.95, 0.4, "the trained units fall 0.550 short of the ideal units' 0.950")])
def test_the_measured_reason_blames_a_low_ceiling_or_the_gap_to_it(paper: int, ceiling: float, best: float,
                                                                   reason: str) -> None:
    """A ceiling below 0.9 (exactly 0.9 is not) is the cause, the model at it when equal or above; else a model more
    than 0.10 below the ceiling (exactly 0.10 below is not) falls short by the gap; else the ceiling is reached and
    the world is easier or harder than the paper's data by our best against the paper's best."""
    claim = _one(_meta({"s": {"correlation": (best,), "auc": (0.1,)}}), {"s": ceiling}, {"s": paper})
    assert claim.verdict == "differs" and claim.reason == reason


def test_the_world_card_adds_only_the_figures_it_has() -> None:
    """Pseudo-label kinds given as NaN or an empty text add nothing; model quality only when it is a number."""
    worlds = pd.DataFrame({"setting": ["r", "s", "t", "u", "v", "w"],
                           "pseudo_label_median_auc": [0.5, 0.97, 0.5, 0.8, 0.9, 0.6],
                           "pseudo_label_auc_by_kind": ["x", NAN, "x", "", "colour 0.850", "shape 0.620"],
                           "pseudo_label_positive_rate": [0.1, NAN, 0.1, NAN, NAN, 0.1], "label_positive_rate": 0.02,
                           "model_quality": [0.1, 0.91, 0.1, NAN, NAN, NAN],
                           "model_quality_measure": ["loss", "accuracy", "loss", "accuracy", "", ""],
                           "model_baseline": [0.0, 0.5, 0.0, 0.5, NAN, NAN]})
    meta = _meta({setting: {"correlation": (0.9,)} for setting in ("s", "u", "v", "w")})
    s, u, v, w = fc.setting_claims(meta, _ceiling(dict.fromkeys("suvw", 0.95)), worlds,
                                   dict.fromkeys("suvw", LOW_SETTING))
    ceiling = "the ideal units reach 0.950: the embedded world is easier than the paper's data (best 0.900 vs 0.4683)"
    assert s.reason == f"{ceiling}; pseudo-labels' median per-concept AUC 0.970; model accuracy 0.910 (baseline 0.500)"
    assert u.reason == f"{ceiling}; pseudo-labels' median per-concept AUC 0.800"
    # kinds sorting before "nan" (colour) and after it (shape) alike
    assert v.reason == (f"{ceiling}; pseudo-labels' median per-concept AUC 0.900; the contrastive model's mean AUC "
                        "per concept kind, weakest first: colour 0.850 (a class pseudo-label is only as sharp as its "
                        "weakest attribute)")
    assert w.reason == (f"{ceiling}; pseudo-labels' median per-concept AUC 0.600; the contrastive model's mean AUC "
                        "per concept kind, weakest first: shape 0.620 (a class pseudo-label is only as sharp as its "
                        "weakest attribute); pseudo-labels ≥ 0.5 on 10.00% of (input, concept) entries vs 2.00% for "
                        "the labels")


def test_a_differing_setting_without_ceiling_or_world_facts_still_says_by_how_much() -> None:
    """No ceiling row, no top-1 and no world card: the reason still gives our best's distance to the paper's."""
    meta = _meta({"s": {"correlation": (0.9,), "auc": (0.1,)}, "t": {"correlation": (0.2,), "auc": (0.1,)}})
    above, below = fc.setting_claims(meta, _ceiling({}), pd.DataFrame(), {"s": LOW_SETTING, "t": LOW_SETTING})
    assert above.verdict == "differs" and above.reason == "ours is +0.432 from the paper's"
    assert below.verdict == "differs" and below.reason == "ours is -0.268 from the paper's"


# --- settings without a paper counterpart: ceiling ≥ 0.9, model ≥ 0.8, discrimination --------------------------


@pytest.mark.parametrize(("ceiling", "model"), [(0.95, 0.85), (0.9, 0.8)])
def test_a_model_from_08_under_a_ceiling_from_09_holds(ceiling: float, model: float) -> None:
    """Above both targets, and exactly at both, hold."""
    claim = _one(_meta({"s": {"correlation": (model,), "auc": (0.1,)}}), {"s": ceiling}, {})
    assert claim.verdict == "holds" and claim.reason == "" and claim.paper_source == "project target"
    assert claim.claim == ("s: the setting can rank metrics (ceiling ≥ 0.9, trained model ≥ 0.8; no paper "
                           "counterpart)")


def test_a_model_interval_reaching_08_is_within_noise_and_says_so_first() -> None:
    """Ceiling 0.95 (above the target, no interval); model 0.79 whose interval reaches 0.81: within noise, the
    interval sentence before the gap and the top-1 reasons."""
    meta = _meta({"s": {"correlation": (0.79, 0.77, 0.81), "auc": (0.1, 0.05, 0.15)}}, test_top1={"s": 0.6})
    claim = _one(meta, {"s": 0.95}, {})
    assert claim.verdict == "within_noise"
    assert claim.reason == ("the bootstrap intervals reach the targets (best metric up to 0.810, ceiling up to "
                            "0.950); the trained units fall 0.160 short of the ideal units' 0.950; 60% of the "
                            "trained units score their own concept highest")


@pytest.mark.parametrize(("high", "expected"), [(0.95, "within_noise"), (0.9, "within_noise"),
                                               (0.9 - EPS, "differs")])
def test_a_ceiling_interval_ending_at_09_or_above_reaches_the_target(high: float, expected: str) -> None:
    """Ceiling 0.89 with its interval's top above 0.9 or exactly at it (within noise) or just below (differs)."""
    claim = _one(_meta({"s": {"correlation": (0.85,), "auc": (0.1,)}}), {"s": 0.89}, {}, highs={"s": high})
    assert claim.verdict == expected
    world = ("the world's ideal units reach only 0.890, the setting's identifiability ceiling (no model is expected "
             "to do better)")
    assert claim.reason == (f"the bootstrap intervals reach the targets (best metric up to 0.850, ceiling up to "
                            f"{high:.3f}); {world}" if expected == "within_noise" else world)


@pytest.mark.parametrize(("ceiling", "ceiling_high", "model", "low", "high", "expected"), [
    (0.9, NAN, 0.79, 0.77, 0.81, "within_noise"),  # ceiling exactly at its target, the model's interval above
    (0.95, NAN, 0.79, 0.77, 0.8, "within_noise"),  # the model's interval ends exactly at 0.8
    (0.95, NAN, 0.79, 0.77, 0.8 - EPS, "differs"),
    (0.95, NAN, 0.79, NAN, NAN, "differs"),
    (0.89, 0.91, 0.8, NAN, NAN, "within_noise"),  # the model exactly at its target, the ceiling's interval above
    (0.89, 0.91, 0.8 - EPS, NAN, NAN, "differs")])
def test_each_estimate_or_its_interval_must_reach_its_target(ceiling: float, ceiling_high: float, model: float,
                                                             low: float, high: float, expected: str) -> None:
    """Within noise needs the ceiling (≥ 0.9) or its interval's top, and the model (≥ 0.8) or its interval's top."""
    claim = _one(_meta({"s": {"correlation": (model, low, high), "auc": (0.1, 0.05, 0.15)}}), {"s": ceiling}, {},
                 highs={"s": ceiling_high})
    assert claim.verdict == expected


def test_a_setting_that_fails_discrimination_says_so_first() -> None:
    """Targets met but every metric ties: differs, the criterion's reason first, before the measured reasons."""
    meta = _meta({"s": {"correlation": (1.0,), "auc": (1.0,)}}, test_top1={"s": 1.0})
    discrimination = pd.DataFrame({"setting": ["r", "s", "t"], "discriminates": [True, False, True],
                                   "reason": ["apart", "all 2 metrics tie at 1.000", "apart"]})
    claim = _one(meta, {"s": 1.0}, {}, discrimination=discrimination)
    assert claim.verdict == "differs" and "metrics apart beyond their intervals" in claim.claim
    assert claim.reason == ("it fails Table 4's discrimination criterion (all 2 metrics tie at 1.000): it cannot "
                            "rank metrics and stays out of Table 4's means; the trained units come within 0.10 of the "
                            "ideal units' 1.000; 100% of the trained units score their own concept highest")


def test_a_setting_without_a_counterpart_does_not_stop_the_next_setting() -> None:
    """One claim per setting, in meta's order (not sorted), whichever kind comes first."""
    meta = _meta({"b": {"correlation": (0.85,)}, "a": {"correlation": (0.5,)}})
    first, second = fc.setting_claims(meta, _ceiling({"a": 0.95, "b": 0.95}), pd.DataFrame(), {"a": LOW_SETTING})
    assert (first.table, first.verdict) == ("Table 4 (setup)", "holds")
    assert (second.table, second.verdict) == ("Table F.6, setting 8", "holds")


# --- Table 4: top three, Spearman in the bottom two, passing ahead ------------------------------------------------


def _table4(ranks: dict[str, float], auprc: dict[str, float] | None = None) -> pd.DataFrame:
    return pd.DataFrame({"metric": list(ranks), "mean_auprc": [(auprc or {}).get(m, 0.5) for m in ranks],
                         "mean_rank": list(ranks.values())})


def _claim(claims: list[fc.Claim], prefix: str) -> fc.Claim:
    return next(claim for claim in claims if claim.claim.startswith(prefix))


def test_the_top_claims_give_the_papers_place_and_average_rank_and_our_top_three() -> None:
    """The paper: correlation #1 (1.60), cosine #2 (2.30), AUPRC #3 (3.90); ours named with the top three."""
    table4 = _table4({"auprc": 1.0, "cosine": 2.0, "mad": 3.0, "correlation": 4.0, "recall": 5.0, "spearman": 6.0})
    meta = _meta({"s": {m: (0.9 - 0.1 * i,) for i, m in enumerate(table4["metric"])}})
    correlation, cosine, auprc, spearman = fc.table4_claims(table4, meta, pd.DataFrame())
    assert correlation.paper_value == "#1 (avg rank 1.60)"
    assert cosine.paper_value == "#2 (avg rank 2.30)"
    assert auprc.paper_value == "#3 (avg rank 3.90)"
    assert correlation.our_value == "#4 of 6 (avg rank 4.00; top 3: auprc, cosine, mad)"
    assert cosine.our_value == "#2 of 6 (avg rank 2.00; top 3: auprc, cosine, mad)"
    assert (cosine.verdict, cosine.reason, correlation.verdict) == ("holds", "", "differs")
    assert (spearman.verdict, spearman.reason) == ("holds", "")  # last: no reason
    assert spearman.our_value == "#6 of 6 (avg AUPRC 0.500)"


def test_a_metric_tied_for_third_place_is_among_the_top_three() -> None:
    """Positions are minimum ranks: correlation shares 3rd place with recall, listed before it."""
    table4 = _table4({"auprc": 1.0, "cosine": 2.0, "recall": 3.0, "correlation": 3.0, "mad": 5.0})
    claim = _claim(fc.table4_claims(table4, _meta({"s": {"auprc": (0.9,)}}), pd.DataFrame()), "correlation")
    assert claim.verdict == "holds" and claim.reason == ""
    assert claim.our_value == "#3 of 5 (avg rank 3.00; top 3: auprc, cosine, recall)"


def test_a_missing_top_metric_skips_only_its_own_claim() -> None:
    """Without correlation in Table 4, cosine and AUPRC are still judged."""
    table4 = _table4({"auprc": 1.0, "cosine": 2.0, "mad": 3.0})
    claims = fc.table4_claims(table4, _meta({"s": {"auprc": (0.9,)}}), pd.DataFrame())
    assert [c.claim for c in claims] == ["cosine is among the 3 best metrics by average rank",
                                         "auprc is among the 3 best metrics by average rank"]


@pytest.mark.parametrize("metrics", [["correlation"], ["correlation", "cosine"], ["spearman"],
                                     ["spearman", "mad"]])
def test_one_or_two_metrics_are_judged_without_a_third_or_a_second_worst(metrics: list[str]) -> None:
    """With fewer than three metrics every top metric holds; Spearman among one or two metrics holds."""
    table4 = _table4({m: float(i + 1) for i, m in enumerate(metrics)})
    claims = fc.table4_claims(table4, _meta({"s": {m: (0.5,) for m in metrics}}), pd.DataFrame())
    assert len(claims) == len(metrics) if "correlation" in metrics else len(claims) == 1
    assert {(c.verdict, c.reason) for c in claims} == {("holds", "")}


def test_a_top_metric_within_noise_of_the_third_says_so_before_its_losing_settings() -> None:
    """Correlation 4th; its interval's top exactly at recall's (3rd) bottom: overlap, within noise."""
    table4 = _table4({"auprc": 1.0, "cosine": 2.0, "recall": 3.0, "correlation": 4.0, "mad": 5.0})
    meta = _meta({"s1": {"auprc": (0.9, 0.88, 0.92), "cosine": (0.8, 0.78, 0.82), "recall": (0.7, 0.7, 0.75),
                         "correlation": (0.6, 0.55, 0.7), "mad": (0.1, 0.0, 0.2)}})
    claim = _claim(fc.table4_claims(table4, meta, pd.DataFrame()), "correlation")
    assert claim.verdict == "within_noise"
    assert claim.reason == ("its meta-AUPRC interval overlaps that of recall (3rd) in every setting; behind the best "
                            "metric in 1 settings, 1 of them beyond the bootstrap noise: s1 −0.300 vs auprc "
                            "(intervals apart)")
    apart = meta.assign(ci_high=meta["ci_high"].where(meta["metric"] != "correlation", 0.7 - EPS))
    claim = _claim(fc.table4_claims(table4, apart, pd.DataFrame()), "correlation")
    assert claim.verdict == "differs"
    assert claim.reason == ("behind the best metric in 1 settings, 1 of them beyond the bootstrap noise: s1 −0.300 "
                            "vs auprc (intervals apart)")


def test_without_interval_columns_a_misplaced_metric_differs() -> None:
    """No ci_low/ci_high in meta.csv: no noise, and no setting is counted as apart."""
    table4 = _table4({"auprc": 1.0, "cosine": 2.0, "recall": 3.0, "correlation": 4.0})
    meta = _meta({"s1": {"auprc": (0.9,), "cosine": (0.8,), "recall": (0.6,), "correlation": (0.6,)}})
    claim = _claim(fc.table4_claims(table4, meta, pd.DataFrame()), "correlation")
    assert claim.verdict == "differs"
    assert claim.reason == ("behind the best metric in 1 settings, 0 of them beyond the bootstrap noise: s1 −0.300 vs "
                            "auprc")


def test_the_losing_settings_skip_ties_and_missing_rows_and_count_touching_intervals_as_overlapping() -> None:
    """s0 lacks correlation, s1 ties it with the best, s5 puts it exactly 1e-9 behind: none is losing; s2's intervals
    touch (overlap), s3's are apart, s4's overlap; listed in meta's order (s4 first), not sorted."""
    table4 = _table4({"auprc": 1.0, "cosine": 2.0, "mad": 3.0, "correlation": 4.0})
    meta = _meta({
        "s0": {"auprc": (0.9, 0.85, 0.95)},
        "s1": {"auprc": (0.8, 0.75, 0.85), "correlation": (0.8, 0.75, 0.85)},
        "s4": {"cosine": (0.7, 0.6, 0.8), "correlation": (0.65, 0.55, 0.75)},
        "s2": {"auprc": (0.9, 0.85, 0.95), "correlation": (0.4, 0.35, 0.85), "mad": (0.1, 0.1, 0.1)},
        "s3": {"cosine": (0.7, 0.65, 0.75), "correlation": (0.6, 0.5, 0.64)},
        "s5": {"auprc": (1e-9, 1e-9, 1e-9), "correlation": (0.0, 0.0, 0.0)}})
    claim = _claim(fc.table4_claims(table4, meta, pd.DataFrame()), "correlation")
    assert claim.verdict == "differs"
    assert claim.reason == ("behind the best metric in 3 settings, 1 of them beyond the bootstrap noise: s4 −0.050 vs "
                            "cosine; s2 −0.500 vs auprc; s3 −0.100 vs cosine (intervals apart)")


def test_spearman_within_noise_is_compared_with_the_second_worst() -> None:
    """Spearman 4th of 6: within noise when its interval meets mad's (2nd worst, touching), not the last's
    (recall) nor the best's."""
    table4 = _table4({"auprc": 1.0, "cosine": 2.0, "correlation": 3.0, "spearman": 4.0, "mad": 5.0, "recall": 6.0},
                     {"spearman": 0.3})
    meta = _meta({"s1": {"auprc": (0.9, 0.85, 0.95), "spearman": (0.3, 0.25, 0.4), "mad": (0.4, 0.4, 0.45),
                         "recall": (0.2, 0.1, 0.2)}})
    claim = _claim(fc.table4_claims(table4, meta, pd.DataFrame()), "Spearman")
    assert claim.verdict == "within_noise"
    assert claim.reason == ("its meta-AUPRC interval overlaps that of mad (2nd worst) in every setting; Spearman "
                            "meta-AUPRC per setting: s1 0.300")
    assert claim.our_value == "#4 of 6 (avg AUPRC 0.300)"
    assert claim.paper_value == "last (avg AUPRC 0.0853, avg rank 16.20)"


def test_spearmans_reason_lists_its_own_rows_best_setting_first() -> None:
    """Spearman 3rd of 5, apart from mad everywhere: differs; per-setting values of spearman only (auprc sorts
    before it, spearman_tr and wpmi after), highest first."""
    table4 = _table4({"auprc": 1.0, "cosine": 2.0, "spearman": 3.0, "mad": 4.0, "recall": 5.0})
    values = {"s1": 0.2, "s2": 0.4, "s3": 0.3}
    meta = _meta({s: {"auprc": (0.9, 0.85, 0.95), "spearman": (v, v - 0.01, v + 0.01),
                      "spearman_tr": (v + 0.05, v, v + 0.1), "wpmi": (0.5, 0.45, 0.55), "mad": (0.7, 0.69, 0.71)}
                  for s, v in values.items()})
    claim = _claim(fc.table4_claims(table4, meta, pd.DataFrame()), "Spearman")
    assert claim.verdict == "differs"
    assert claim.reason == "Spearman meta-AUPRC per setting: s2 0.400, s3 0.300, s1 0.200"


@pytest.mark.parametrize(("mad", "verdict"), [(0.35, "within_noise"), (0.6, "differs")])
def test_a_spearman_tied_into_the_second_worst_place_is_compared_with_the_metric_it_ties(mad: float,
                                                                                       verdict: str) -> None:
    """Spearman shares 3rd place with mad (position 3 of 5, not in the bottom 2) and sorts after it, into the 2nd
    worst place of the order: its interval is compared with mad's (never with itself), within noise when they meet
    (mad 0.35 ± 0.06 against Spearman 0.30 ± 0.06), differs when not (mad 0.60). The names come from a file (built
    at run time), not from the module's literals."""
    names = ["".join(parts) for parts in (["au", "prc"], ["cos", "ine"], ["m", "ad"], ["spear", "man"],
                                           ["rec", "all"])]
    table4 = _table4(dict(zip(names, [1.0, 2.0, 3.0, 3.0, 5.0], strict=True)))
    meta = _meta({"s1": {name: (value, value - 0.06, value + 0.06)
                         for name, value in zip(names, [0.9, 0.8, mad, 0.3, 0.1], strict=True)}})
    claim = _claim(fc.table4_claims(table4, meta, pd.DataFrame()), "Spearman")
    assert claim.our_value == "#3 of 5 (avg AUPRC 0.500)"
    assert claim.verdict == verdict
    noise = "its meta-AUPRC interval overlaps that of mad (2nd worst) in every setting; " if mad < 0.5 else ""
    assert claim.reason == f"{noise}Spearman meta-AUPRC per setting: s1 0.300"


def test_of_three_metrics_a_spearman_tied_with_the_first_is_compared_with_it() -> None:
    """Three metrics, Spearman tied with auprc for 1st place and sorting after it (the 2nd worst of the order):
    position 1 < 2, so it fails, compared with auprc's overlapping interval (within noise), not with itself."""
    names = ["".join(parts) for parts in (["au", "prc"], ["spear", "man"], ["rec", "all"])]
    table4 = _table4(dict(zip(names, [1.0, 1.0, 3.0], strict=True)))
    meta = _meta({"s1": {name: (value, value - 0.06, value + 0.06)
                         for name, value in zip(names, [0.35, 0.3, 0.1], strict=True)}})
    claim = _claim(fc.table4_claims(table4, meta, pd.DataFrame()), "Spearman")
    assert claim.our_value == "#1 of 3 (avg AUPRC 0.500)"
    assert claim.verdict == "within_noise"
    assert claim.reason.startswith("its meta-AUPRC interval overlaps that of auprc (2nd worst) in every setting; ")


def test_a_second_worst_metric_sorting_after_spearman_is_the_one_compared() -> None:
    """Spearman first of four (fails); the 2nd worst is wpmi, a name sorting after "spearman": Spearman's interval
    is compared with wpmi's (they meet: within noise), not with the metric above it (auc, apart)."""
    table4 = _table4({"spearman": 1.0, "auc": 2.0, "wpmi": 3.0, "recall": 4.0})
    meta = _meta({"s1": {"spearman": (0.3, 0.25, 0.35), "auc": (0.8, 0.75, 0.85), "wpmi": (0.32, 0.27, 0.37),
                         "recall": (0.1, 0.05, 0.15)}})
    claim = _claim(fc.table4_claims(table4, meta, pd.DataFrame()), "Spearman")
    assert claim.verdict == "within_noise"
    assert claim.reason.startswith("its meta-AUPRC interval overlaps that of wpmi (2nd worst) in every setting; ")


# --- Table 4: passing metrics rank better ------------------------------------------------------------------------


def _gap_claim(ranks: dict[str, float], passing: set[str]) -> fc.Claim:
    table3 = pd.DataFrame({"metric": [*ranks, "cosine"], "pass": [m in passing for m in ranks] + [True]})
    claims = fc.table4_claims(_table4(ranks), _meta({"s": {"f1": (0.5,)}}), table3)
    return _claim(claims, "metrics that pass")


def test_a_negative_gap_names_the_worst_passing_metric_and_the_gap_with_the_papers_pass_set() -> None:
    """Passing here correlation, recall, auc (mean rank 4) vs failing f1, iou, mad (2.5): gap −1.5; the paper's pass
    set present here is f1, iou, correlation (mean 2) vs the rest (4.5): 2.5. Cosine (not in Table 4) is dropped.
    The paper's gap from its Tables 3 and 4: failing mean 134.0 / 13 = 10.3077 minus passing 21.2 / 5 = 4.24."""
    claim = _gap_claim({"f1": 1.0, "iou": 2.0, "correlation": 3.0, "recall": 4.0, "mad": 4.5, "auc": 5.0},
                       {"correlation", "recall", "auc"})
    assert claim.verdict == "differs"
    assert claim.paper_value == "6.07 ranks"
    assert claim.our_value == "-1.50 ranks (passing here: correlation, recall, auc); 2.50 with the paper's pass set"
    assert claim.reason == ("passing metrics' mean rank 4.00 vs failing 2.50; worst passing: auc (rank 5.00); with "
                            "the paper's pass set (f1, iou, correlation) the gap on our ranks is 2.50")
    assert claim.source == "results/table4.csv, results/meta.csv, results/table3.csv"


def test_a_gap_of_exactly_zero_differs() -> None:
    """Passing f1, auc (1 and 4) vs failing iou, mad (2 and 3): both means 2.5."""
    claim = _gap_claim({"f1": 1.0, "iou": 2.0, "mad": 3.0, "auc": 4.0}, {"f1", "auc"})
    assert claim.verdict == "differs" and claim.our_value.startswith("0.00 ranks")
    assert claim.reason == ("passing metrics' mean rank 2.50 vs failing 2.50; worst passing: auc (rank 4.00); with "
                            "the paper's pass set (f1, iou) the gap on our ranks is 2.00")


def test_a_positive_gap_below_one_rank_holds_without_a_reason() -> None:
    """Passing f1, iou (1 and 3) vs failing mad, auc (2 and 3): gap 0.5."""
    claim = _gap_claim({"f1": 1.0, "iou": 3.0, "mad": 2.0, "auc": 3.0}, {"f1", "iou"})
    assert (claim.verdict, claim.reason) == ("holds", "")
    assert claim.our_value == "0.50 ranks (passing here: f1, iou); 0.50 with the paper's pass set"


@pytest.mark.parametrize("passing", [set(), {"f1", "iou", "mad"}])
def test_no_gap_claim_without_both_passing_and_failing_metrics(passing: set[str]) -> None:
    """Every metric of Table 4 failing (cosine, the only passing one, is not in it) or every one passing: no claim."""
    table3 = pd.DataFrame({"metric": ["f1", "iou", "mad", "cosine"],
                           "pass": [m in passing for m in ("f1", "iou", "mad")] + [True]})
    claims = fc.table4_claims(_table4({"f1": 1.0, "iou": 2.0, "mad": 3.0}), _meta({"s": {"f1": (0.5,)}}), table3)
    assert [c.claim for c in claims] == []


# --- Table E.2: the +1 shift -------------------------------------------------------------------------------------


def _shift(cosine: tuple[float, float] | None, deltas: dict[str, float]) -> pd.DataFrame:
    rows = [] if cosine is None else [{"metric": "cosine", "original_auprc": cosine[0], "shifted_auprc": cosine[1]}]
    rows += [{"metric": m, "original_auprc": 0.5, "shifted_auprc": 0.5 + d} for m, d in deltas.items()]
    frame = pd.DataFrame(rows).assign(setting="cbm", constant=1.0)
    return frame.assign(delta_auprc=frame["shifted_auprc"] - frame["original_auprc"])


@pytest.mark.parametrize(("before", "after", "verdict", "reason"), [
    (0.5, 0.3, "differs", "drop only 0.2000"),  # a drop of exactly 0.2 is no collapse
    (0.5, 0.3 - EPS, "holds", ""),
    (0.3, 0.15, "differs", "drop only 0.1500"),
    (0.5, 0.6, "differs", "drop only -0.1000")])
def test_cosine_collapses_only_when_it_drops_by_more_than_02(before: float, after: float, verdict: str,
                                                             reason: str) -> None:
    (claim,) = fc.shift_claims(_shift((before, after), {}))
    assert (claim.verdict, claim.reason) == (verdict, reason)
    assert claim.our_value == f"{before:.4f} → {after:.4f} (cbm, +1)"
    assert claim.paper_value == "0.8985 → 0.0443"
    assert claim.claim == "cosine's meta-AUPRC collapses when a constant is added to the activations (drop > 0.2)"


@pytest.mark.parametrize(("delta", "verdict"), [(1e-6, "holds"), (-1e-6, "holds"), (1.01e-6, "differs"),
                                                (-1.01e-6, "differs")])
def test_another_metric_is_unchanged_up_to_1e6_either_way(delta: float, verdict: str) -> None:
    """|Δ| exactly 1e-6 (the original 0.5 plus ±1e-6 as stored) is unchanged; just beyond it has moved."""
    frame = _shift(None, {"auc": 0.0}).assign(delta_auprc=[delta])
    (claim,) = fc.shift_claims(frame)
    assert claim.verdict == verdict and claim.reason == ("" if verdict == "holds" else f"auc Δ {delta:.4f}")


def test_the_others_claim_names_each_moved_metric_and_never_cosine() -> None:
    """Cosine's collapse is not a change of another metric; auc and wpmi moved, correlation did not."""
    cosine, others = fc.shift_claims(_shift((0.85, 0.05), {"auc": -0.06, "correlation": 0.0, "wpmi": 0.01}))
    assert cosine.verdict == "holds"
    assert others.verdict == "differs" and others.reason == "auc Δ -0.0600; wpmi Δ 0.0100"
    assert others.our_value == "largest |Δ meta-AUPRC| 0.06 over 3 metrics"
    assert others.paper_value == "correlation 0.8883 → 0.8883; all others Δ = 0"


def test_shift_claims_need_their_rows() -> None:
    """Only cosine: only the collapse claim; no cosine: only the unchanged claim."""
    (collapse,) = fc.shift_claims(_shift((0.85, 0.05), {}))
    assert collapse.claim.startswith("cosine's meta-AUPRC collapses")
    (others,) = fc.shift_claims(_shift(None, {"auc": 0.0}))
    assert (others.claim, others.verdict, others.reason) == ("every other metric is unchanged by the shift", "holds",
                                                             "")


# --- keyword-only source ---------------------------------------------------------------------------------------


def test_source_is_keyword_only() -> None:
    """Each builder takes ``source`` by name only; by name it is carried to every claim."""
    shift = _shift((0.85, 0.05), {"auc": 0.0})
    with pytest.raises(TypeError):
        fc.shift_claims(shift, "x")
    assert {c.source for c in fc.shift_claims(shift, source="x")} == {"x"}
    meta = _meta({"s": {"correlation": (0.85,)}})
    with pytest.raises(TypeError):
        fc.setting_claims(meta, _ceiling({"s": 0.95}), pd.DataFrame(), {}, None, "x")
    assert fc.setting_claims(meta, _ceiling({"s": 0.95}), pd.DataFrame(), {}, source="x")[0].source == "x"
    table4 = _table4({"correlation": 1.0})
    with pytest.raises(TypeError):
        fc.table4_claims(table4, meta, pd.DataFrame(), "x")
    assert fc.table4_claims(table4, meta, pd.DataFrame(), source="x")[0].source == "x"
