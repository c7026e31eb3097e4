"""Table 3 at the paper's protocol (issue 33 item 2): α searched only where α·n reaches the paper's 5 inputs, the
experimental mean over the paper's eight settings with the others beside it, and the Decrease Acc–α·n figure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from neuroneval.options import OptionsError
from neuroneval.sanity.alpha_scale import alpha_grid_at_scale
from neuroneval.sanity.options import SanityOptions
from neuroneval.sanity.tables import table3, ties_comparison

ROOT = Path(__file__).resolve().parents[2]
PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text())


@pytest.mark.parametrize("n_inputs", [600, 898, 2000, 10000, 50000, 204800])
def test_the_grid_keeps_exactly_the_alphas_that_select_enough_inputs(n_inputs: int) -> None:
    """Oracle: ⌈α·n⌉ counted in integers (α = k·10⁻⁴ exactly), against the float rule of the library."""
    grid = PARAMS["meta"]["alpha_grid"]
    minimum = PARAMS["sanity"]["min_alpha_inputs"]
    in_ten_thousandths = [round(alpha * 10**4) for alpha in grid]
    expected = [alpha for alpha, k in zip(grid, in_ten_thousandths, strict=True) if k * n_inputs >= minimum * 10**4]
    assert alpha_grid_at_scale(grid, n_inputs, min_alpha_inputs=minimum) == expected
    assert expected[0] * n_inputs >= minimum  # the smallest α searched keeps several inputs


def test_the_shipped_protocol_is_the_papers_scale() -> None:
    """The paper's smallest α (10⁻⁴) on 50,000 ImageNet images selects 5 inputs; our 10,000 probe images then start
    at 5·10⁻⁴ and the ~900 digit images at 0.01, where meta.alpha_grid alone started at 1 and 0.09 inputs."""
    minimum = PARAMS["sanity"]["min_alpha_inputs"]
    assert minimum == round(1e-4 * 50000)
    grid = PARAMS["meta"]["alpha_grid"]
    assert alpha_grid_at_scale(grid, PARAMS["world"]["vision"]["splits"]["probe"], min_alpha_inputs=minimum)[0] == 5e-4
    assert alpha_grid_at_scale(grid, 898, min_alpha_inputs=minimum)[0] == 0.01
    sanity = SanityOptions.from_params({key: value for key, value in PARAMS["sanity"].items()})
    assert len(sanity.mean_settings) == 8 and not any("digits" in name for name in sanity.mean_settings)
    assert [name for name in sanity.settings if name not in sanity.mean_settings] == \
        ["digits_cnn_final_super_gt", "digits_cnn_final_gt"]


def test_no_alpha_left_is_an_error_naming_the_flag() -> None:
    with pytest.raises(ValueError, match=r"sanity s: no α .* sanity.min_alpha_inputs = 5 of the 10 inputs"):
        alpha_grid_at_scale([0.01, 0.1], 10, min_alpha_inputs=5, where="sanity s")


def test_the_mean_is_over_the_named_settings_present_else_over_all() -> None:
    """The paper's eight when ``sanity.settings`` has them (digits beside); an overlay whose ``sanity.settings`` are
    settings of your own (none named by ``mean_settings``) averages all of them; order is ``settings``'."""
    assert SanityOptions.from_params({"settings": ["a", "b", "c"], "mean_settings": ["c", "a", "x"]}
                                     ).averaged_settings() == ("a", "c")
    assert SanityOptions.from_params({"settings": ["mine_a", "mine_b"], "mean_settings": ["x", "y"]}
                                     ).averaged_settings() == ("mine_a", "mine_b")
    assert SanityOptions.from_params({"settings": ["a", "b"]}).averaged_settings() == ("a", "b")


def test_min_alpha_inputs_must_be_a_positive_integer() -> None:
    with pytest.raises(OptionsError, match="min_alpha_inputs"):
        SanityOptions.from_params({"min_alpha_inputs": 0})


def _experimental() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    rows = [{"setting": setting, "metric": metric, "test": test, "ties": "average",
             "decrease_acc": float(rng.random()), "alpha": 0.01 if metric == "iou" else np.nan}
            for setting in ("s1", "s2", "s3", "digits") for metric in ("iou", "auc") for test in ("missing", "extra")]
    return pd.DataFrame(rows)


def _theoretical() -> pd.DataFrame:
    return pd.DataFrame([{"metric": metric, "test": test, "gamma": gamma, "ties": "average", "decrease_acc": value}
                         for metric, value in (("iou", 0.95), ("auc", 0.99)) for test in ("missing", "extra")
                         for gamma in (0.1, 0.01)])


def test_table3_averages_the_mean_settings_and_reports_the_others_beside() -> None:
    experimental = _experimental()
    table = table3(experimental, _theoretical(), metrics=["iou", "auc"], settings=["s1", "s2", "s3", "digits"],
                   ties="average", threshold=0.5, mean_settings=["s1", "s2", "s3"]).set_index("metric")
    for metric in ("iou", "auc"):
        for test in ("missing", "extra"):
            rows = experimental[(experimental["metric"] == metric) & (experimental["test"] == test)]
            expected = rows.loc[rows["setting"] != "digits", "decrease_acc"].sum() / 3
            assert table.loc[metric, f"experimental_{test}"] == pytest.approx(expected, abs=1e-15)
            assert table.loc[metric, f"digits_{test}"] == rows.loc[rows["setting"] == "digits", "decrease_acc"].item()
            assert table.loc[metric, f"pass_{test}"] == (expected > 0.5)
    assert list(table.columns)[-2:] == ["digits_missing", "digits_extra"]


def test_table3_without_mean_settings_is_unchanged() -> None:
    """An empty ``mean_settings`` averages every setting, column for column as before."""
    experimental, settings = _experimental(), ["s1", "s2", "s3", "digits"]
    table = table3(experimental, _theoretical(), metrics=["iou", "auc"], settings=settings, ties="average",
                   threshold=0.5, mean_settings=())
    assert list(table.columns) == ["metric", "ties", "experimental_missing", "theoretical_missing",
                                   "experimental_extra", "theoretical_extra", "pass_missing", "pass_extra", "pass"]
    rows = experimental[(experimental["metric"] == "iou") & (experimental["test"] == "extra")]
    assert table.set_index("metric").loc["iou", "experimental_extra"] == pytest.approx(rows["decrease_acc"].mean())
    with pytest.raises(ValueError, match=r"mean_settings are not among its settings: \['x'\]"):
        table3(experimental, _theoretical(), metrics=["iou"], settings=settings, ties="average", threshold=0.5,
               mean_settings=["x"])


def test_the_alpha_inputs_figure_is_written(tmp_path: Path) -> None:
    from neuroneval.figures.sanity import plot_decrease_vs_alpha_inputs

    path = plot_decrease_vs_alpha_inputs(_experimental(), {"s1": 600, "s2": 10000, "s3": 2000, "digits": 898},
                                         metrics=["iou", "auc"], ties="average", mean_settings=["s1", "s2", "s3"],
                                         threshold=0.9, min_alpha_inputs=5, path=tmp_path / "alpha_inputs.png")
    assert Path(path).stat().st_size > 10_000


def test_the_tie_comparison_mean_is_table3s_mean() -> None:
    """results/ties.csv's experimental ``mean`` rows average the same settings as Table 3."""
    experimental = _experimental()
    both = pd.concat([experimental, experimental.assign(ties="reference", decrease_acc=0.5)], ignore_index=True)
    theoretical = _theoretical()
    both_theory = pd.concat([theoretical, theoretical.assign(ties="reference")], ignore_index=True)
    comparison = ties_comparison(both.assign(mean_delta=0.0), both_theory.assign(mean_delta=0.0), metrics=["auc"],
                                 mean_settings=["s1", "s2", "s3"])
    mean = comparison[(comparison["case"] == "mean") & (comparison["source"] == "experimental")
                      & (comparison["ties"] == "average")].set_index("test")["decrease_acc"]
    table = table3(experimental, theoretical, metrics=["auc"], settings=["s1", "s2", "s3", "digits"],
                   ties="average", threshold=0.5, mean_settings=["s1", "s2", "s3"]).set_index("metric")
    for test in ("missing", "extra"):
        assert mean[test] == pytest.approx(table.loc["auc", f"experimental_{test}"], abs=1e-15)
    assert "digits" in set(comparison["case"])  # still listed per setting
