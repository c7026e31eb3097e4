"""Fidelity claims: verdict rules and measured reasons on small hand-made result tables."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from neuroneval import published
from neuroneval.fidelity import COLUMNS, claims_frame, render_markdown
from neuroneval.fidelity import claims as fc


def _table3(overrides: dict[str, dict[str, float]] | None = None) -> pd.DataFrame:
    rows = []
    for metric, printed in published.TABLE3.items():
        row = {"metric": metric, "ties": "average", "experimental_missing": printed.experimental_missing,
               "theoretical_missing": printed.theoretical_missing, "experimental_extra": printed.experimental_extra,
               "theoretical_extra": printed.theoretical_extra}
        row.update((overrides or {}).get(metric, {}))
        rows.append(row)
    table = pd.DataFrame(rows)
    for test in ("missing", "extra"):
        table[f"pass_{test}"] = (table[f"experimental_{test}"] > 0.9) & (table[f"theoretical_{test}"] > 0.9)
    table["pass"] = table["pass_missing"] & table["pass_extra"]
    return table


def _experimental(metric: str, values: dict[str, float], alpha: float = float("nan")) -> pd.DataFrame:
    return pd.DataFrame([{"setting": s, "metric": metric, "test": "extra", "ties": "average", "decrease_acc": v,
                          "alpha": alpha} for s, v in values.items()])


def test_table3_with_the_papers_numbers_holds_everywhere() -> None:
    claims = fc.table3_claims(_table3(), _experimental("cosine", {"a": 1.0}))
    assert {c.verdict for c in claims} == {"holds"}
    assert len(claims) == len(published.TABLE3) + 1


def test_a_metric_that_fails_here_names_the_settings_that_fail() -> None:
    table3 = _table3({"cosine": {"experimental_extra": 0.80}})
    experimental = _experimental("cosine", {"cbm": 0.58, "probe": 0.62, "vit": 1.0})
    f1 = _experimental("f1", {"cnn": 0.43}, alpha=0.0001)
    f1_claim = next(c for c in fc.table3_claims(_table3({"f1": {"experimental_extra": 0.43}}), f1)
                    if c.claim.startswith("f1 "))
    assert "cnn 43% (α = 0.0001)" in f1_claim.reason
    claims = {c.claim.split(" ")[0]: c for c in fc.table3_claims(table3, experimental)}
    assert claims["cosine"].verdict == "differs"
    assert "cbm 58%" in claims["cosine"].reason and "probe 62%" in claims["cosine"].reason
    assert "vit" not in claims["cosine"].reason
    assert claims["the"].verdict == "differs" and "failing here: cosine" in claims["the"].reason


def test_a_failing_missing_labels_row_cites_its_closed_form() -> None:
    """A setting whose row carries the closed-form expectation of the Missing Labels test (sanity.decrease_odds)
    names it with the counts it is read by, and the reason says what the closed form is; a row without it (a rank
    metric) keeps the plain note."""
    table3 = _table3({"f1": {"experimental_missing": 0.51}})
    experimental = pd.DataFrame([
        {"setting": "cnn", "metric": "f1", "test": "missing", "ties": "average", "decrease_acc": 0.509,
         "alpha": 0.0005, "expected_decrease_acc": 0.525, "median_active": 5.0, "median_positives": 91.0},
        {"setting": "lm", "metric": "f1", "test": "missing", "ties": "average", "decrease_acc": 0.64,
         "alpha": 0.0001, "expected_decrease_acc": np.nan, "median_active": np.nan, "median_positives": np.nan}])
    claim = next(c for c in fc.table3_claims(table3, experimental) if c.claim.startswith("f1 "))
    assert "cnn 51% (α = 0.0005; closed form 52% at |B(a)| = 5 vs |B(c)| = 91)" in claim.reason
    assert "lm 64% (α = 0.0001)" in claim.reason
    assert claim.reason.endswith(fc.paper_000_sanity.CLOSED_FORM_REASON)


def test_a_failing_setting_reported_beside_the_mean_is_not_named_as_a_reason() -> None:
    """Digits settings are reported beside Table 3's mean (columns ``<setting>_missing``/``_extra``), outside it:
    a reason lists only the settings of the mean."""
    table3 = _table3({"cosine": {"experimental_extra": 0.80}})
    table3["digits_gt_missing"], table3["digits_gt_extra"] = 0.2, 0.2
    claims = {c.claim.split(" ")[0]: c for c in fc.table3_claims(
        table3, _experimental("cosine", {"cbm": 0.58, "digits_gt": 0.2, "vit": 1.0}))}
    assert "cbm 58%" in claims["cosine"].reason and "digits_gt" not in claims["cosine"].reason


def test_shift_claims_detect_the_cosine_collapse_and_any_other_change() -> None:
    shift = pd.DataFrame({"metric": ["cosine", "correlation", "auc"], "setting": "cbm", "constant": 1.0,
                          "original_auprc": [0.85, 0.92, 0.76], "shifted_auprc": [0.39, 0.92, 0.70]})
    shift["delta_auprc"] = shift["shifted_auprc"] - shift["original_auprc"]
    collapse, others = fc.shift_claims(shift)
    assert collapse.verdict == "holds"
    assert others.verdict == "differs" and "auc" in others.reason and "correlation" not in others.reason


def _meta(values: dict[str, dict[str, float]]) -> pd.DataFrame:
    rows = [{"setting": s, "metric": m, "test_auprc": v, "ci_low": v - 0.02, "ci_high": v + 0.02,
             "chance_auprc": 0.01} for s, per in values.items() for m, v in per.items()]
    return pd.DataFrame(rows)


def test_setting_claims_blame_a_low_ceiling_and_judge_within_the_tolerance() -> None:
    meta = _meta({"good": {"correlation": 0.95, "auc": 0.5}, "capped": {"correlation": 0.6, "auc": 0.55}})
    ceiling = pd.DataFrame({"setting": ["good", "capped"], "meta_auprc": [1.0, 0.7], "test_top1": [1.0, 0.91]})
    worlds = pd.DataFrame({"setting": ["capped"], "pseudo_label_median_auc": [0.97],
                           "pseudo_label_auc_by_kind": ["shape 0.620; colour 0.850"], "model_quality": [np.nan],
                           "model_quality_measure": [""], "model_baseline": [np.nan],
                           "pseudo_label_positive_rate": [0.003], "label_positive_rate": [0.0083]})
    good, capped = fc.setting_claims(meta, ceiling, worlds, {"good": 1, "capped": 2})
    assert good.verdict == "holds"  # 0.95 within 0.10 of the paper's 0.9999
    assert capped.verdict == "differs"
    assert "ideal units reach only 0.700" in capped.reason and "median per-concept AUC 0.970" in capped.reason
    assert "91% of the ideal units still score their own concept highest" in capped.reason
    assert "weakest first: shape 0.620; colour 0.850" in capped.reason
    assert "pseudo-labels ≥ 0.5 on 0.30% of (input, concept) entries vs 0.83% for the labels" in capped.reason


def test_table4_claims_report_whether_gaps_exceed_the_bootstrap_noise() -> None:
    per = {"correlation": 0.80, "auprc": 0.90, "cosine": 0.85, "spearman": 0.05, "recall": 0.6}
    meta = _meta({"s1": per})
    table4 = pd.DataFrame({"metric": list(per), "mean_auprc": list(per.values()),
                           "mean_rank": pd.Series(per).rank(ascending=False).to_numpy()})
    table3 = pd.DataFrame({"metric": list(per), "pass": [True, True, True, False, False]})
    claims = {c.claim: c for c in fc.table4_claims(table4, meta, table3)}
    correlation = next(c for text, c in claims.items() if text.startswith("correlation"))
    assert correlation.verdict == "holds"  # third of five
    spearman = next(c for text, c in claims.items() if text.startswith("Spearman"))
    assert spearman.verdict == "holds"
    meta_far = _meta({"s1": {**per, "correlation": 0.5}})
    table4_far = table4.assign(mean_rank=pd.Series({**per, "correlation": 0.5}).rank(ascending=False).to_numpy())
    far = next(c for c in fc.table4_claims(table4_far, meta_far, table3) if c.claim.startswith("correlation"))
    assert far.verdict == "differs" and "1 of them beyond the bootstrap noise" in far.reason


def test_crowd_claims_explain_an_embedded_factor_by_its_rarity() -> None:
    rarity = pd.DataFrame({"rarity": [0.01, 0.001] * 2, "baseline": ["uniform"] * 2 + ["majority"] * 2,
                           "method": ["pseudo"] * 2 + ["bayes_pseudo"] * 2, "factor": [5.0, 40.0, 3.0, 3.0],
                           "ci_low": [4.0, 31.0, 2.0, 2.1], "ci_high": [7.0, 56.0, 4.0, 4.9]})
    summary = pd.DataFrame({"baseline": ["uniform", "majority"], "method": ["pseudo", "bayes_pseudo"],
                            "unit_group": "all", "factor": [3.0, 1.2], "ci_low": [2.0, 1.0], "ci_high": [4.0, 1.4]})
    claims = fc.crowd_claims(rarity, summary, 0.008, class_rarity=0.001)
    assert [c.verdict for c in claims] == ["holds", "differs", "holds", "differs"]
    assert "median rarity 0.800%" in claims[1].reason and "γ=0.01 gives 5.0×" in claims[1].reason


def test_cosy_claims_per_generator() -> None:
    table2 = pd.DataFrame({"setting": "s", "generator": ["g1", "g1", "g2", "g2"], "control": "all",
                           "method": ["true", "random"] * 2, "auc_mean": [0.97, 0.52, 0.7, 0.65],
                           "auc_std": 0.05, "n_units": 8})
    g1, g2 = fc.cosy_claims(table2)
    assert g1.verdict == "holds" and g2.verdict == "differs" and "0.700 < 0.90" in g2.reason


def _natural(generator: str, auc_natural: list[float], auc_synthetic: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"setting": "s", "generator": generator, "unit": [f"u{i}" for i in range(len(auc_natural))],
                         "auc_natural": auc_natural, "auc_synthetic": auc_synthetic,
                         "mad_natural": 2.0, "mad_synthetic": 0.5})


def test_cosy_claim_that_differs_states_the_synthetic_vs_natural_gap() -> None:
    table2 = pd.DataFrame({"setting": "s", "generator": ["oracle", "oracle", "embedded", "embedded"],
                           "control": "all", "method": ["true", "random"] * 2, "auc_mean": [0.97, 0.52, 0.7, 0.5],
                           "auc_std": 0.05, "n_units": 3})
    natural = pd.concat([_natural("oracle", [0.99] * 3, [0.98] * 3),
                         _natural("embedded", [0.98, 0.96, 0.94], [0.80, 0.70, 0.60])])
    oracle, embedded = fc.cosy_claims(table2, natural)
    assert oracle.verdict == "holds" and oracle.reason == ""
    gap = np.array([0.18, 0.26, 0.34])  # natural − synthetic per unit
    half = 1.959963984540054 * gap.std(ddof=1) / np.sqrt(3)  # scipy.stats.norm.ppf(0.975) · SE
    assert embedded.verdict == "differs" and "0.700 < 0.90" in embedded.reason
    assert "3 units' natural images of their own class reach AUC 0.960 (MAD 2.00)" in embedded.reason
    assert "embedded's images of it 0.700 (MAD 0.50)" in embedded.reason
    assert f"natural − synthetic AUC {gap.mean():+.3f} [{gap.mean() - half:+.3f}, {gap.mean() + half:+.3f}]" \
        in embedded.reason
    assert "the shortfall is embedded's synthetic-vs-natural gap, not the units" in embedded.reason
    # natural images that fall short too put the cause on the units; no natural rows leave the numbers alone
    (units_limit,) = fc.cosy_claims(table2[table2["generator"] == "embedded"],
                                    _natural("embedded", [0.7, 0.8, 0.75], [0.6, 0.7, 0.8]))
    assert "stay below 0.90 too: the units, not embedded, limit the AUC" in units_limit.reason
    (bare,) = fc.cosy_claims(table2[table2["generator"] == "embedded"], _natural("oracle", [0.9] * 3, [0.9] * 3))
    assert bare.reason == "true AUC 0.700 < 0.90; random AUC 0.500"


def _published_runs(seed: int) -> pd.DataFrame:
    """Runs that reproduce every reference cell exactly (the printed Tables C.1–C.4, the notebook for the
    combinations; n = 500,000, 1,000 draws, small standard errors)."""
    from neuroneval.sanity.printed_reference import published_reference
    from neuroneval.sanity.theoretical_reference import load_theoretical_reference

    reference = published_reference(load_theoretical_reference())
    return pd.DataFrame({"metric": reference["metric"], "test": reference["test"], "gamma": reference["gamma"],
                         "n": 500_000, "draws": 1000, "seed": seed, "mean_delta": reference["ref_mean_delta"],
                         "delta_se": 1e-4, "decrease_acc": reference["ref_decrease_acc"]})


def test_reference_cells_judge_deterministic_cells_by_z_and_random_cells_by_the_seed_spread() -> None:
    exact = fc.reference_cells(_published_runs(0))
    assert exact["delta_agrees"].astype(bool).all()
    assert {c.verdict for c in fc.reference_mode_claims(exact, source="x")} == {"holds"}

    moved = _published_runs(0)
    recall = (moved["metric"] == "recall") & (moved["test"] == "missing") & np.isclose(moved["gamma"], 0.1)
    moved.loc[recall, "mean_delta"] -= 0.05  # a deterministic cell 500 standard errors off
    spearman = (moved["metric"] == "spearman") & (moved["test"] == "extra") & np.isclose(moved["gamma"], 0.001)
    moved.loc[spearman, "mean_delta"] += 0.01  # a random cell off for seed 0 ...
    other_seed = _published_runs(1)
    other_seed.loc[spearman, "mean_delta"] -= 0.01  # ... but the published value lies between the two seeds
    cells = fc.reference_cells(pd.concat([moved, other_seed], ignore_index=True))
    c1, c2, c3, c4 = fc.reference_mode_claims(cells, source="x")
    assert c3.verdict == "differs" and "recall γ=0.1 (deterministic)" in c3.reason
    assert c4.verdict == "holds" and "2 seeds" in c4.our_value
    assert c1.verdict == "holds" and c2.verdict == "holds"


def _claim(**fields: str) -> fc.Claim:
    return fc.Claim(**{"paper": "000", "table": "t", "claim": "c", "paper_value": "1", "paper_source": "printed table",
                       "our_value": "2", "verdict": "holds", "reason": "", "source": "y"} | fields)


def test_markdown_has_every_row_and_escapes_pipes() -> None:
    table = claims_frame([_claim(paper="000", table="Table 3", claim="a | b", verdict="holds", source="x"),
                          _claim(paper="001", table="Fig. 2", claim="c", verdict="differs", reason="because"),
                          _claim(paper="001", claim="d", verdict="within_noise", reason="interval",
                                 paper_source="authors' code output"),
                          _claim(paper="001", claim="e", verdict="not_testable", reason="not built")])
    assert list(table.columns) == list(COLUMNS)
    text = render_markdown(table)
    assert "a \\| b" in text and "**1 hold, 1 within noise, 1 differ, 1 not testable** of 4 claims" in text
    assert text.count("\n| ") == 2 + 4  # a header row per paper and one row per claim
    assert "| paper's source |" in text and "| authors' code output |" in text
    assert "**within noise**" in text and "**not testable**" in text
    with pytest.raises(ValueError, match="verdict"):
        _claim(verdict="maybe")
    with pytest.raises(TypeError):
        fc.Claim("000", "t", "c", "p", "printed table", "o", "holds", "", "s")  # all nine fields, but keywords only
    with pytest.raises(dataclasses.FrozenInstanceError):  # a claim, once checked, cannot change its verdict
        _claim().verdict = "maybe"  # type: ignore[misc]


def test_a_rank_metric_that_differs_reports_the_other_tie_mode() -> None:
    table3 = _table3({"spearman": {"experimental_missing": 0.998, "theoretical_missing": 0.998,
                                   "experimental_extra": 0.999, "theoretical_extra": 1.0}})
    ties = pd.DataFrame({"source": ["experimental", "experimental", "theoretical", "theoretical"], "case": "mean",
                         "metric": "spearman", "test": ["missing", "extra"] * 2, "ties": "reference",
                         "decrease_acc": [0.787, 0.613, 0.962, 0.814]})
    claim = next(c for c in fc.table3_claims(table3, _experimental("spearman", {"a": 1.0}), ties)
                 if c.claim.startswith("spearman "))
    assert claim.verdict == "differs"
    assert "with ties = reference (the authors' noise tie-breaking) it fails" in claim.reason
    assert "experimental missing 78.7%" in claim.reason and "theoretical extra 81.4%" in claim.reason


def _concepteval_tables(retest: dict[str, float], alpha: dict[str, float], taus: dict[tuple[str, str], float],
                        rating_taus: dict[str, float], means: dict[tuple[str, str], float]):
    reliability = pd.DataFrame(
        [{"model": "lm", "measure": m, "statistic": "pearson", "run": "test-retest", "value": v}
         for m, v in retest.items()]
        + [{"model": "lm", "measure": m, "statistic": "cronbach_alpha", "run": run, "value": v - shift}
           for m, v in alpha.items() for run, shift in (("test", 0.0), ("retest", 0.01))])
    names = sorted({name for pair in taus for name in pair})
    mtmm = pd.DataFrame([{"model": "lm", "measure_a": a, "measure_b": b,
                          "statistic": "cronbach_alpha" if a == b else "kendall_tau_b",
                          "value": 1.0 if a == b else taus.get((a, b), taus.get((b, a), 0.0))}
                         for a in names for b in names])
    validity = pd.DataFrame([{"model": "lm", "criterion": "raters", "measure": m, "statistic": "kendall_tau_b",
                              "value": v} for m, v in rating_taus.items()])
    methods = pd.DataFrame([{"model": "lm", "family": f, "measure": m, "mean": v} for (f, m), v in means.items()])
    return reliability, validity, mtmm, methods


def test_concepteval_claims_follow_the_papers_rules() -> None:
    """Reliability: exactly the paper's unreliable measures below 0.9 holds, one more differs and is named; MTMM
    block means of |τ| computed by hand; validity and method orderings."""
    measures = ["GRAD-Loss", "ABL-Div", "IN-UCI", "IN-UMass", "IN-EmbCos", "OUT-EmbCos", "SIM-Corr"]
    retest = {m: 0.95 for m in measures} | {"SIM-Corr": 0.5}
    alpha = {m: 0.97 for m in measures} | {"GRAD-Loss": 0.3, "IN-UCI": 0.8, "IN-UMass": 0.85, "ABL-Div": 0.905}
    taus = {("GRAD-Loss", "ABL-Div"): -0.6, ("GRAD-Loss", "IN-EmbCos"): 0.1, ("ABL-Div", "IN-EmbCos"): -0.3,
            ("GRAD-Loss", "OUT-EmbCos"): 0.2, ("ABL-Div", "OUT-EmbCos"): 0.0, ("IN-EmbCos", "OUT-EmbCos"): 0.4}
    rating = {"SIM-Corr": 0.3, "IN-EmbDist": 0.1, "IN-EmbCos": 0.5, "OUT-EmbDist": 0.2, "OUT-EmbCos": 0.45}
    means = {("probe", "ABL-Div"): 0.2, ("probe", "IN-EmbCos"): 0.6, ("sae", "ABL-Div"): 0.1,
             ("sae", "IN-EmbCos"): 0.7, ("neuron", "ABL-Div"): 0.05, ("neuron", "IN-EmbCos"): 0.5,
             ("random", "ABL-Div"): 0.01, ("random", "IN-EmbCos"): 0.4}
    rows = fc.concepteval_claims(*_concepteval_tables(retest, alpha, taus, rating, means))
    frame = claims_frame(rows)
    assert list(frame.columns) == list(COLUMNS) and (frame["paper"] == "004").all()
    verdicts = dict(zip(frame["claim"].str.split(": ", n=1).str[1], frame["verdict"], strict=True))
    assert verdicts["every measure but the simulation-based score passes test-retest 0.9"] == "holds"
    alpha_row = frame[frame["claim"].str.contains("subset consistency")].iloc[0]
    assert alpha_row["verdict"] == "differs" and "ABL-Div 0.895" in alpha_row["reason"]  # min over the two runs
    faithful = frame[frame["claim"].str.contains("GRAD-Loss is the unreliable")].iloc[0]
    assert faithful["verdict"] == "differs" and "ABL-Div retest 0.895 < 0.9" in faithful["reason"]
    mtmm_rows = frame[frame["table"].str.startswith("Fig. 3")]
    divergent = np.mean([0.1, 0.3, 0.2, 0.0])
    assert f"{divergent:.3f}" in mtmm_rows.iloc[0]["our_value"] and mtmm_rows.iloc[0]["verdict"] == "holds"
    assert "0.400 over 1 pairs" in mtmm_rows.iloc[1]["our_value"] and mtmm_rows.iloc[1]["verdict"] == "differs"
    assert "0.600 over 1 pairs" in mtmm_rows.iloc[2]["our_value"] and mtmm_rows.iloc[2]["verdict"] == "holds"
    assert frame[frame["table"] == "Table 4"]["verdict"].iloc[0] == "holds"  # IN-EmbCos 0.5 is the best
    methods = frame[frame["table"].str.startswith("Fig. 4")]["verdict"].tolist()
    assert methods == ["holds", "differs", "holds"]  # sae > neuron; probe < sae on IN-EmbCos; probe > neuron
    assert "not above on IN-EmbCos" in frame[frame["table"].str.startswith("Fig. 4")]["reason"].iloc[1]
    passing = fc.concepteval_claims(*_concepteval_tables(retest, alpha | {"ABL-Div": 0.95}, taus, rating, means))
    assert claims_frame(passing).query("claim.str.contains('GRAD-Loss is')")["verdict"].iloc[0] == "holds"
    flipped = fc.concepteval_claims(*_concepteval_tables(retest, alpha, taus, rating | {"SIM-Corr": 0.9}, means))
    assert "SIM-Corr has the highest" in claims_frame(flipped).query("table == 'Table 4'")["reason"].iloc[0]
    below_neuron = fc.concepteval_claims(*_concepteval_tables(retest, alpha, taus, rating,
                                                              means | {("probe", "ABL-Div"): 0.04}))
    assert claims_frame(below_neuron).query("table.str.startswith('Fig. 4')")["verdict"].tolist()[2] == "differs"


def test_a_low_alpha_is_explained_by_the_subset_noise_of_its_measure() -> None:
    """A faithfulness measure the paper finds reliable but whose α falls below 0.9 gets its measured reason: how
    many concepts keep their effect's sign on every subset, beside GRAD-Loss and the least of the reliable
    measures, and its median effect against the subset spread (read from the α row of the lower run)."""
    measures = ["GRAD-Loss", "ABL-Loss", "ABL-Div", "IN-UCI", "IN-UMass", "IN-EmbCos", "SIM-Corr"]
    alpha = {m: 0.97 for m in measures} | {"GRAD-Loss": 0.3, "IN-UCI": 0.8, "IN-UMass": 0.85, "ABL-Loss": 0.2}
    reliability, validity, mtmm, methods = _concepteval_tables(
        {m: 1.0 for m in measures}, alpha, {("GRAD-Loss", "ABL-Div"): -0.6}, {"SIM-Corr": 0.3, "IN-EmbCos": 0.5},
        {("neuron", "ABL-Div"): 0.1})
    agreement = {"GRAD-Loss": 0.12, "ABL-Loss": 0.16, "ABL-Div": 1.0, "IN-UCI": 0.37, "IN-UMass": 1.0,
                 "IN-EmbCos": 0.68, "SIM-Corr": 0.61}
    lowest = reliability["run"] == "retest"  # the lower run carries the figures the reason reads
    reliability.loc[lowest, "sign_agreement"] = reliability.loc[lowest, "measure"].map(agreement)
    reliability.loc[lowest, "median_effect"] = 3.3e-5
    reliability.loc[lowest, "subset_sd"] = 0.0071
    frame = claims_frame(fc.concepteval_claims(reliability, validity, mtmm, methods))
    expected = ("ABL-Loss: 16% of concepts keep their effect's sign on every data subset (GRAD-Loss, the paper's "
                "unreliable measure, 12%; the measures with α ≥ 0.9 at least 61%); median |effect| 3.3e-05 against a "
                "subset-to-subset SD of 0.0071")
    for claim in ("subset consistency", "GRAD-Loss is the unreliable"):
        row = frame[frame["claim"].str.contains(claim)].iloc[0]
        assert row["verdict"] == "differs" and expected in row["reason"]
    plain = claims_frame(fc.concepteval_claims(*_concepteval_tables(
        {m: 1.0 for m in measures}, alpha, {("GRAD-Loss", "ABL-Div"): -0.6}, {"SIM-Corr": 0.3, "IN-EmbCos": 0.5},
        {("neuron", "ABL-Div"): 0.1})))
    assert "keep their effect's sign" not in " ".join(plain["reason"])  # a table without the columns: no figures


def test_a_reversed_family_order_cites_the_families_planted_alignment() -> None:
    """Fig. 4 reversed (neurons above SAE features) names both families' median planted alignment and, when the SAE
    features are no better aligned, that the paper's premise is absent."""
    means = {("sae", "ABL-Div"): 0.01, ("neuron", "ABL-Div"): 0.05, ("sae", "IN-EmbCos"): 0.2,
             ("neuron", "IN-EmbCos"): 0.3}
    tables = _concepteval_tables({"ABL-Div": 1.0}, {"ABL-Div": 0.97}, {("ABL-Div", "IN-EmbCos"): 0.1},
                                 {"SIM-Corr": 0.3, "IN-EmbCos": 0.5}, means)
    methods = tables[3].assign(median_alignment=tables[3]["family"].map({"sae": 0.502, "neuron": 0.763}))
    row = claims_frame(fc.concepteval_claims(*tables[:3], methods)).query("table.str.startswith('Fig. 4')").iloc[0]
    assert row["verdict"] == "differs" and "not above on ABL-Div, IN-EmbCos" in row["reason"]
    assert ("median planted alignment (best AUC against a planted concept) sae 0.502 vs neuron 0.763: the world's "
            "sae concepts are no more monosemantic than its neuron concepts") in row["reason"]
    better = methods.assign(median_alignment=methods["family"].map({"sae": 0.9, "neuron": 0.7}))
    row = claims_frame(fc.concepteval_claims(*tables[:3], better)).query("table.str.startswith('Fig. 4')").iloc[0]
    assert "sae 0.900 vs neuron 0.700" in row["reason"] and "no more monosemantic" not in row["reason"]


def test_a_deterministic_simulation_score_leaves_test_retest_untested_for_it() -> None:
    """Same-data retest of the offline simulator gives r = 1 exactly: the paper's finding (SIM-Corr unreliable
    because the LLM samples) cannot be tested, so SIM-Corr leaves the judgement, named in the reason; a value just
    below 1 is still judged (and reaching 0.9 it contradicts the paper)."""
    measures = ["GRAD-Loss", "ABL-Div", "IN-EmbCos", "SIM-Corr"]
    tables = dict(taus={("GRAD-Loss", "ABL-Div"): -0.6}, rating_taus={"SIM-Corr": 0.3, "IN-EmbCos": 0.5},
                  means={("neuron", "ABL-Div"): 0.1})
    alpha = {m: 0.97 for m in measures}

    def retest_claim(sim: float) -> pd.Series:
        rows = fc.concepteval_claims(*_concepteval_tables({m: 1.0 for m in measures} | {"SIM-Corr": sim}, alpha,
                                                          **tables))
        return claims_frame(rows).query("claim.str.contains('test-retest')").iloc[0]

    exact = retest_claim(1.0)
    assert exact["verdict"] == "holds" and "not testable for SIM-Corr" in exact["reason"]
    almost = retest_claim(0.999)
    assert almost["verdict"] == "differs" and "SIM-Corr 0.999" in almost["reason"]
def _unit_scores(rows: list[tuple[str, str, int, str, float]], n_units: int = 20) -> pd.DataFrame:
    """Per-unit scores: each (setting, group, table, method, mean) row spread over ``n_units`` units as mean plus
    a unit effect the methods share (so the paired differences are exact)."""
    shared = np.linspace(-0.1, 0.1, n_units)
    return pd.DataFrame([{"setting": setting, "group": group, "table": table, "method": method, "unit": f"u{i}",
                          "simulation_correlation": mean + shared[i]}
                         for setting, group, table, method, mean in rows for i in range(n_units)])


PROTOCOLS = {"h": {"scored_on": "setting", "concepts": "pseudo:clip",
                   "method_concepts": {"methods": ["netdissect", "compexp"], "prefixes": ["colour:", "texture:"]}},
             "a": {"scored_on": "labels", "concepts": "labels", "method_concepts": {}}}


def test_le_best_claims_split_the_papers_protocol_from_the_other_settings() -> None:
    scores = _unit_scores([("a", "softmax", 2, "le_label", 0.6), ("a", "softmax", 2, "compexp", 0.4),
                           ("a", "softmax", 2, "truth", 0.9), ("h", "block3", 2, "le_pseudo", 0.2),
                           ("h", "block3", 2, "invert", 0.3), ("h", "block3", 2, "random", 0.5)])
    primary, secondary = fc.le_best_claims(scores, PROTOCOLS)
    assert primary.verdict == "differs" and "hidden units simulated with pseudo-labels" in primary.claim
    assert "T2 h/block3: le_pseudo − invert = -0.100 [-0.100, -0.100] (n = 20) (differs)" in primary.reason
    assert "0.377" in primary.paper_value
    assert secondary.verdict == "holds" and "holds in 1 of 1 cells" in secondary.our_value
    assert "le_label − compexp = +0.200" in secondary.our_value
    no_protocol, _ = fc.le_best_claims(scores, {})
    assert no_protocol.verdict == "not_testable" and "scored_on" in no_protocol.reason


def test_a_differing_cell_names_the_explanation_lengths_and_the_planted_concepts_score() -> None:
    """Where the comparison fails beyond its interval, the reason shows both methods' concepts per explanation and
    what the planted concept alone scores (the truth row), from the per-unit table."""
    scores = _unit_scores([("a", "softmax", 2, "le_label", 0.60), ("a", "softmax", 2, "cce", 0.70),
                           ("a", "softmax", 2, "truth", 0.65)])
    scores["length"] = scores["method"].map({"le_label": 1.5, "cce": 8.0, "truth": 1.0})
    _, secondary = fc.le_best_claims(scores, PROTOCOLS)
    assert secondary.verdict == "differs"
    assert ("le_label − cce = -0.100 [-0.100, -0.100] (n = 20) (differs; concepts per explanation: le_label 1.5, "
            "cce 8.0; the planted concept alone scores 0.650, le_label 0.600, cce 0.700)") in secondary.reason
    close = scores.assign(simulation_correlation=scores["simulation_correlation"]
                          + np.where(scores["method"] == "cce", -0.1, 0.0) + np.tile(np.r_[0.05, -0.05], 30))
    _, within = fc.le_best_claims(close, PROTOCOLS)
    assert within.verdict == "within_noise" and "concepts per explanation" not in within.reason


def test_broden_claims_test_the_concept_subset_on_hidden_units_and_keep_final_layers_secondary() -> None:
    scores = _unit_scores([("a", "softmax", 1, "netdissect", 0.2), ("a", "softmax", 1, "le_label_l1", 0.4),
                           ("h", "block3", 1, "netdissect", 0.1), ("h", "block3", 1, "le_pseudo_l1", 0.4),
                           ("h", "block3", 2, "compexp", 0.5), ("h", "block3", 2, "invert", 0.3)])
    subset, final = fc.broden_claims(scores, PROTOCOLS)
    assert "netdissect, compexp read colour:, texture:" in subset.claim
    assert subset.verdict == "differs" and "T2 h/block3: invert − compexp = -0.200" in subset.reason
    assert "T1 h/block3: le_pseudo_l1 − netdissect = +0.300" in subset.our_value
    assert final.verdict == "holds" and "T1 a/softmax" in final.our_value and "h/" not in final.our_value
    same_concepts = {"h": {**PROTOCOLS["h"], "method_concepts": {}}}
    (untestable, _) = fc.broden_claims(scores, same_concepts)
    assert untestable.verdict == "not_testable" and "every method reads the same concepts" in untestable.reason


def test_crowd_agreement_claims_hold_when_the_interval_is_above_zero() -> None:
    agreement = pd.DataFrame({"table": 1, "setting": "all", "reference": "simulation_correlation",
                              "metric": ["crowd:bayes_uniform", "crowd:bayes_pseudo", "f1"],
                              "n_methods": 5, "n_units": 30, "tau": [0.8, 0.4, 0.1], "ci_low": [0.2, -0.2, -0.5],
                              "ci_high": [1.0, 0.8, 0.6]})
    uniform, pseudo = fc.crowd_agreement_claims(agreement)
    assert (uniform.verdict, pseudo.verdict) == ("holds", "within_noise") and "contains 0" in pseudo.reason
    # the paper's τ from its typed-in tables, by counting pairs: Table 1 (mean of both models) vs Table 3
    names = list(published.EXPLAIN_CROWD_AVERAGE)
    first = np.array([published.EXPLAIN_TABLE1[name].mean for name in names])
    second = np.array([published.EXPLAIN_CROWD_AVERAGE[name] for name in names])
    pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    tau = np.mean([np.sign(first[i] - first[j]) * np.sign(second[i] - second[j]) for i, j in pairs])
    assert f"τ = {tau:.2f}" in uniform.paper_value


def test_cosy_benchmark_claims_per_generator() -> None:
    table = pd.DataFrame({"setting": "a", "generator": ["oracle", "oracle", "embedded", "embedded"],
                          "method": ["invert_l1", "clip_dissect"] * 2, "auc_mean": [0.9, 0.8, 0.9, 0.5]})
    oracle, embedded = fc.cosy_benchmark_claims(table)
    assert oracle.verdict == "holds" and embedded.verdict == "differs"
    assert "CLIP-Dissect on a 0.50 < 0.78" in embedded.reason
    assert fc.cosy_benchmark_claims(pd.DataFrame()) == []


def test_crowd_le_claims_name_the_cells_another_method_wins() -> None:
    crowd = pd.DataFrame({"setting": "a", "aggregation": np.repeat(["u", "p"], 9),
                          "method": np.tile(np.repeat(["le_label_l1", "invert_l1", "truth"], 3), 2),
                          "unit": np.tile(["1", "2", "3"], 6),
                          "crowd_correlation": np.repeat([0.3, 0.2, 0.9, 0.1, 0.2, 0.9], 3)})
    (claim,) = fc.crowd_le_claims(crowd)
    assert claim.verdict == "differs" and "holds in 1 of 2 cells" in claim.our_value
    assert claim.reason == ("a/p: le_label_l1 − invert_l1 = -0.100 [-0.100, -0.100] (n = 3) (differs; the planted "
                            "concept alone scores 0.900, le_label_l1 0.100, invert_l1 0.200)")  # no lengths here
    assert "0.1946" in claim.paper_value
    assert fc.crowd_le_claims(pd.DataFrame())[0].verdict == "not_testable"


def test_natural_table_may_be_empty_and_names_a_missing_column(tmp_path) -> None:
    from neuroneval.fidelity.report import _natural_table

    empty = tmp_path / "natural.csv"
    empty.write_text("\n")
    assert _natural_table(empty).empty
    partial = tmp_path / "partial.csv"
    pd.DataFrame({"setting": ["s"], "generator": ["g"], "auc_natural": [0.9]}).to_csv(partial, index=False)
    with pytest.raises(ValueError, match=r"partial.csv: missing column\(s\) \['auc_synthetic'"):
        _natural_table(partial)


def test_markdown_lists_every_theoretical_cell_with_ours_printed_and_notebook() -> None:
    runs = pd.concat([_published_runs(0), _published_runs(1)], ignore_index=True)
    runs.loc[runs["seed"] == 1, "mean_delta"] -= 0.001
    cells = fc.reference_cells(runs)
    text = render_markdown(claims_frame([_claim()]), cells)
    section = text.split("## Tables C.1–C.4 cell by cell")[1]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| test")]
    assert len(rows) == len(cells) == 24 * 5 * 2
    # MAD, extra, γ = 0.1: ours (the printed value, and seed 1 0.001 lower), printed −0.3324, notebook −0.5000.
    assert ("| extra | mad | 0.1 | -0.3324 [-0.3334, -0.3324] | -0.3324 | -0.5000 | 1.0000 [1.0000, 1.0000] | 1.000 | "
            "1.000 | another max − min normalises the printed Δs") in section
    combination = next(row for row in rows if "hmean:auc+inverse_auc" in row)
    assert combination.endswith("| not printed |")
    assert render_markdown(claims_frame([_claim()])).count("cell by cell") == 0
