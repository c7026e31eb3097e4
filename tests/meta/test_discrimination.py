"""Table 4's discrimination criterion: settings on each side of it, intervals checked by brute force, and the means
that count only discriminating settings (checked against scipy's ranks)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import rankdata
from sklearn.metrics import average_precision_score

from neuroneval.meta.auprc import bootstrap_meta_auprc, meta_auprc
from neuroneval.meta.discrimination import (
    DISCRIMINATION_COLUMNS,
    DISCRIMINATION_RULES,
    TABLE4_KEYS,
    DiscriminationOptions,
    build_table4_discriminating,
    discrimination_table,
    meta_options_block,
    setting_discrimination,
)
from neuroneval.options import OptionsError

ROOT = Path(__file__).resolve().parents[2]
N_BOOT, SEED, LEVEL = 200, 0, 0.95


def _brute_force_interval(scores: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """Percentile interval of meta-AUPRC over units resampled with replacement: each replicate's units stacked
    row by row and scored by sklearn's average precision (the same draws as bootstrap_meta_auprc)."""
    n_units = scores.shape[0]
    counts = np.random.default_rng(SEED).multinomial(n_units, np.full(n_units, 1.0 / n_units), size=N_BOOT)
    values = []
    for count in counts:
        rows = np.repeat(np.arange(n_units), count)
        labels = truth[rows].ravel()
        if labels.any():
            values.append(average_precision_score(labels, scores[rows].ravel()))
    tail = (1.0 - LEVEL) / 2.0
    return float(np.quantile(values, tail)), float(np.quantile(values, 1.0 - tail))


def _setting(metric_scores: dict[str, np.ndarray], truth: np.ndarray) -> pd.DataFrame:
    """meta.csv rows of one setting: meta-AUPRC and its bootstrap interval for each metric's (K, C) scores."""
    rows = []
    for metric, scores in metric_scores.items():
        low, high = bootstrap_meta_auprc(scores, truth, n_boot=N_BOOT, seed=SEED, level=LEVEL)
        assert (low, high) == pytest.approx(_brute_force_interval(scores, truth), abs=1e-12)
        rows.append({"setting": "s", "metric": metric, "test_auprc": meta_auprc(scores, truth), "ci_low": low,
                     "ci_high": high})
    return pd.DataFrame(rows)


def _pairs_apart(rows: pd.DataFrame) -> bool:
    """Brute force: is there a pair of metrics whose intervals are disjoint (one wholly above the other)?"""
    intervals = list(zip(rows["ci_low"], rows["ci_high"], strict=True))
    return any(low_i > high_j for (low_i, _), (_, high_j) in itertools.permutations(intervals, 2))


def _truth(n_units: int = 40, n_concepts: int = 8) -> np.ndarray:
    truth = np.zeros((n_units, n_concepts), dtype=bool)
    truth[np.arange(n_units), np.arange(n_units) % n_concepts] = True
    return truth


def test_a_setting_with_a_sharp_and_a_blind_metric_discriminates() -> None:
    rng = np.random.default_rng(1)
    truth = _truth()
    sharp = truth + 0.3 * rng.standard_normal(truth.shape)  # its own concept first, mostly
    blind = rng.standard_normal(truth.shape)  # unrelated to the truth
    rows = _setting({"sharp": sharp, "blind": blind, "middle": truth + 1.0 * rng.standard_normal(truth.shape)}, truth)
    found = setting_discrimination(rows, DiscriminationOptions(), setting="s")
    assert found["discriminates"] and _pairs_apart(rows)
    assert (found["high_metric"], found["low_metric"]) == ("sharp", "blind")
    sharp_row, blind_row = rows.set_index("metric").loc["sharp"], rows.set_index("metric").loc["blind"]
    assert found["gap"] == pytest.approx(sharp_row["ci_low"] - blind_row["ci_high"]) and found["gap"] > 0
    assert "sharp" in found["reason"] and "lies above blind" in found["reason"]


def test_a_setting_where_every_metric_scores_one_does_not_discriminate() -> None:
    truth = _truth()
    perfect = truth.astype(float)
    rows = _setting({"a": perfect, "b": 2 * perfect, "c": perfect - 5.0}, truth)
    assert (rows["ci_low"] == 1.0).all() and (rows["ci_high"] == 1.0).all()
    for rule in ("separated_pair", "best_above_worst"):
        found = setting_discrimination(rows, DiscriminationOptions(rule=rule), setting="s")
        assert not found["discriminates"] and not found["in_mean"] and found["gap"] == 0.0
        assert found["reason"] == "all 3 metrics tie at 1.000"
    assert setting_discrimination(rows, DiscriminationOptions(rule="off"))["in_mean"]


def test_two_noisy_metrics_of_equal_quality_do_not_discriminate() -> None:
    """Two metrics that are the same signal plus independent noise: their intervals overlap."""
    rng = np.random.default_rng(2)
    truth = _truth()
    rows = _setting({"a": truth + 0.8 * rng.standard_normal(truth.shape),
                     "b": truth + 0.8 * rng.standard_normal(truth.shape)}, truth)
    found = setting_discrimination(rows, DiscriminationOptions(), setting="s")
    assert not found["discriminates"] and not _pairs_apart(rows) and found["gap"] <= 0
    assert found["reason"].startswith("every pair of intervals overlaps")


@pytest.mark.parametrize("seed", range(20))
def test_separated_pair_is_the_brute_force_pair_search_and_best_above_worst_implies_it(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_metrics = int(rng.integers(2, 7))
    estimate = rng.uniform(0.2, 0.9, n_metrics)
    rows = pd.DataFrame({"metric": [f"m{i}" for i in range(n_metrics)], "test_auprc": estimate,
                         "ci_low": estimate - rng.uniform(0, 0.3, n_metrics),
                         "ci_high": estimate + rng.uniform(0, 0.3, n_metrics)})
    pair = setting_discrimination(rows, DiscriminationOptions(rule="separated_pair"))
    assert pair["discriminates"] == _pairs_apart(rows)
    best, worst = rows.loc[rows["test_auprc"].idxmax()], rows.loc[rows["test_auprc"].idxmin()]
    strict = setting_discrimination(rows, DiscriminationOptions(rule="best_above_worst"))
    assert strict["discriminates"] == (best["ci_low"] > worst["ci_high"])
    assert (strict["high_metric"], strict["low_metric"]) == (best["metric"], worst["metric"])
    assert not strict["discriminates"] or pair["discriminates"]


@pytest.mark.parametrize(("low_of_high", "expected"), [(0.6 + 1e-9, True), (0.6, False), (0.6 - 1e-9, False)])
def test_touching_intervals_do_not_separate(low_of_high: float, expected: bool) -> None:
    rows = pd.DataFrame({"metric": ["a", "b"], "test_auprc": [0.8, 0.5], "ci_low": [low_of_high, 0.4],
                         "ci_high": [0.9, 0.6]})
    assert setting_discrimination(rows, DiscriminationOptions())["discriminates"] is expected


def test_without_intervals_the_point_estimates_are_the_intervals() -> None:
    rows = pd.DataFrame({"metric": ["a", "b"], "test_auprc": [0.8, 0.5], "ci_low": [np.nan, np.nan],
                         "ci_high": [np.nan, np.nan]})
    found = setting_discrimination(rows, DiscriminationOptions())
    assert found["discriminates"] and found["gap"] == pytest.approx(0.3)
    no_columns = setting_discrimination(rows[["metric", "test_auprc"]], DiscriminationOptions())
    assert no_columns == found


def _tidy(values: dict[str, dict[str, float]], half_width: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame([{"setting": s, "metric": m, "test_auprc": v, "ci_low": v - half_width[s],
                          "ci_high": v + half_width[s]} for s, per in values.items() for m, v in per.items()])


def test_table4_means_count_only_the_settings_that_discriminate() -> None:
    metrics = ["a", "b", "c"]
    values = {"spread": {"a": 0.9, "b": 0.5, "c": 0.7}, "tied": {"a": 1.0, "b": 1.0, "c": 1.0},
              "noisy": {"a": 0.6, "b": 0.5, "c": 0.4}, "other": {"a": 0.3, "b": 0.8, "c": 0.8}}
    tidy = _tidy(values, {"spread": 0.05, "tied": 0.0, "noisy": 0.2, "other": 0.1})
    order = list(values)
    table, settings = build_table4_discriminating(tidy, DiscriminationOptions(), metric_order=metrics,
                                                  setting_order=order)
    assert settings.columns.tolist() == list(DISCRIMINATION_COLUMNS)
    assert settings.set_index("setting")["in_mean"].to_dict() == {"spread": True, "tied": False, "noisy": False,
                                                                  "other": True}
    assert table.columns.tolist() == ["metric", *order, "mean_auprc", "mean_rank"]
    wide = np.array([[values[s][m] for s in order] for m in metrics])
    np.testing.assert_allclose(table[order].to_numpy(), wide)  # every setting stays a column
    counted = [order.index("spread"), order.index("other")]
    np.testing.assert_allclose(table["mean_auprc"], wide[:, counted].mean(axis=1))
    ranks = np.column_stack([rankdata(-wide[:, column], method="average") for column in counted])
    np.testing.assert_allclose(table["mean_rank"], ranks.mean(axis=1))
    table_off, settings_off = build_table4_discriminating(tidy, DiscriminationOptions(rule="off"),
                                                          metric_order=metrics, setting_order=order)
    assert settings_off["in_mean"].all()
    np.testing.assert_allclose(table_off["mean_auprc"], wide.mean(axis=1))


def test_no_discriminating_setting_leaves_the_means_undefined() -> None:
    tidy = _tidy({"tied": {"a": 1.0, "b": 1.0}}, {"tied": 0.0})
    table, settings = build_table4_discriminating(tidy, DiscriminationOptions(), metric_order=["a", "b"],
                                                  setting_order=["tied"])
    assert not settings["in_mean"].any() and table[["mean_auprc", "mean_rank"]].isna().all().all()


def test_bad_input_is_named() -> None:
    with pytest.raises(OptionsError, match=r"DiscriminationOptions.rule must be one of"):
        DiscriminationOptions(rule="overlap")
    tidy = _tidy({"s": {"a": 0.5}}, {"s": 0.1})
    with pytest.raises(ValueError, match=r"results lack settings \['t'\]"):
        discrimination_table(tidy, DiscriminationOptions(), setting_order=["s", "t"])
    with pytest.raises(ValueError, match=r"s: test_auprc of metric\(s\) \['a'\] is not finite"):
        setting_discrimination(tidy.assign(test_auprc=np.nan), DiscriminationOptions(), setting="s")


def test_the_schema_enum_and_the_table4_keys_follow_the_library() -> None:
    schema = yaml.safe_load((ROOT / "workflow/schemas/params.schema.yaml").read_text())
    meta = schema["properties"]["meta"]["properties"]
    assert tuple(meta["discrimination"]["properties"]["rule"]["enum"]) == DISCRIMINATION_RULES
    common = (ROOT / "workflow/rules/common.smk").read_text()
    assert f"META_TABLE4_KEYS = {list(TABLE4_KEYS)!r}".replace("'", '"') in common
    params = yaml.safe_load((ROOT / "params.yaml").read_text())["meta"]
    assert set(params) - set(meta_options_block(params)) == set(TABLE4_KEYS)
