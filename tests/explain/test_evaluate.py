"""``neuroneval.explain.evaluate`` and ``neuroneval evaluate``: scores against scipy/sklearn and brute-force
bootstraps, alignment by input id, unscorable rows listed, the sanity table read, the files written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr
from sklearn.metrics import average_precision_score

from neuroneval import io
from neuroneval.cli import main
from neuroneval.explain import RandomOptions, random_explanations
from neuroneval.explain.benchmark import holdout_mask
from neuroneval.explain.evaluate import (
    FLOOR,
    OPTIMUM,
    PAPER_TABLE3,
    EvaluateOptions,
    evaluate,
    resampled_correlations,
    sanity_metrics,
)
from neuroneval.explain.evaluate_report import OUTPUT_FILES
from neuroneval.explain.simulate import SANITY_PASSING_METRICS

N_INPUTS, N_UNITS, N_CONCEPTS = 300, 5, 4


def world(seed: int = 0, *, categorical: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """Activations (rows in reverse id order), concepts (one categorical variable, or two independent flags each)
    and each input's concept."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, N_CONCEPTS, N_INPUTS)
    if categorical:
        values = {f"c{t}": (group == t).astype(float) for t in range(N_CONCEPTS)}
    else:
        values = {f"c{t}": rng.integers(0, 2, N_INPUTS).astype(float) for t in range(N_CONCEPTS)}
    concepts = pd.DataFrame({"input_id": np.arange(N_INPUTS), **values})
    signal = concepts[[f"c{k % N_CONCEPTS}" for k in range(N_UNITS)]].to_numpy()
    units = signal + 0.5 * rng.normal(size=(N_INPUTS, N_UNITS))
    activations = pd.DataFrame({"input_id": np.arange(N_INPUTS), **{f"u{k}": units[:, k] for k in range(N_UNITS)}})
    return activations.iloc[::-1].reset_index(drop=True), concepts, group


def explanations(texts: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame({"unit": list(texts), "explanation": list(texts.values()),
                         "length": [text.count(" OR ") + 1 for text in texts.values()], "kind": "concept"}
                        ).assign(kind=lambda f: np.where(f["length"] > 1, "formula", "concept"))


TRUTH = {f"u{k}": f"c{k % N_CONCEPTS}" for k in range(N_UNITS)}


def test_scores_equal_scipy_and_sklearn_on_the_held_out_inputs() -> None:
    activations, concepts, _ = world()
    options = EvaluateOptions(holdout=0.4, seed=3, n_boot=0, unit_n_boot=0)
    result = evaluate(activations, concepts, {"truth": explanations(TRUTH)}, options=options)
    held = holdout_mask(N_INPUTS, 0.4, 3)
    ordered = activations.set_index("input_id").loc[concepts["input_id"]]
    units = result.units[result.units["source"] == "truth"].set_index(["unit", "metric"])["value"]
    for unit, concept in TRUTH.items():
        a, c = ordered[unit].to_numpy()[held], concepts[concept].to_numpy()[held]
        assert units[(unit, "simulation_correlation")] == pytest.approx(pearsonr(a, c)[0], abs=1e-12)
        assert units[(unit, "correlation")] == pytest.approx(pearsonr(a, c)[0], abs=1e-12)
        assert units[(unit, "cosine")] == pytest.approx(a @ c / np.linalg.norm(a) / np.linalg.norm(c), abs=1e-12)
        active = (a >= np.sort(a)[len(a) - int(np.ceil(0.005 * len(a)))]).astype(int)
        assert units[(unit, "auprc")] == pytest.approx(average_precision_score(active, c), abs=1e-12)
    assert result.metrics == SANITY_PASSING_METRICS and result.sanity_source == PAPER_TABLE3
    assert result.n_held_out == held.sum() == 120


def test_floor_optimum_summary_and_paired_differences() -> None:
    activations, concepts, _ = world()
    options = EvaluateOptions(n_boot=400, unit_n_boot=0, seed=1)
    wrong = {unit: f"c{(int(unit[1:]) + 1) % N_CONCEPTS}" for unit in TRUTH}
    result = evaluate(activations, concepts, {"truth": explanations(TRUTH), "wrong": explanations(wrong)},
                      options=options)
    floor = random_explanations(list(TRUTH), [f"c{t}" for t in range(N_CONCEPTS)], RandomOptions(length=1, seed=1))
    shown = result.units[(result.units["source"] == FLOOR) & (result.units["metric"] == "simulation_correlation")]
    assert shown["explanation"].tolist() == floor["explanation"].tolist()
    wide = result.units.pivot_table(index="unit", columns=["source", "metric"], values="value")
    summary = result.summary.set_index(["source", "metric"])
    for metric in ("simulation_correlation", *SANITY_PASSING_METRICS):
        for source in ("truth", "wrong", FLOOR, OPTIMUM):
            assert summary.loc[(source, metric), "mean"] == pytest.approx(wide[(source, metric)].mean())
        # the optimum bounds every explanation; the truth beats the floor
        assert (wide[("truth", metric)] <= wide[(OPTIMUM, metric)] + 1e-9).all()
        assert summary.loc[("truth", metric), "mean"] > summary.loc[("wrong", metric), "mean"]
    differences = result.differences.set_index(["source_a", "source_b", "metric"])
    row = differences.loc[("truth", "wrong", "simulation_correlation")]
    delta = (wide[("truth", "simulation_correlation")] - wide[("wrong", "simulation_correlation")]).to_numpy()
    assert row["difference"] == pytest.approx(delta.mean()) and row["n_units"] == N_UNITS
    assert row["ci_low"] <= delta.mean() <= row["ci_high"] and row["ci_low"] > 0
    assert len(result.differences) == 6 * (1 + len(SANITY_PASSING_METRICS))


def test_input_intervals_equal_a_per_unit_brute_force() -> None:
    from neuroneval.explain.simulate import simulation_metrics

    activations, concepts, _ = world()
    options = EvaluateOptions(n_boot=0, unit_n_boot=30, seed=2, holdout=0.5)
    result = evaluate(activations, concepts, {"truth": explanations(TRUTH)}, options=options)
    held = holdout_mask(N_INPUTS, 0.5, 2)
    ordered = activations.set_index("input_id").loc[concepts["input_id"]].to_numpy()[held]
    simulated = concepts[[TRUTH[f"u{k}"] for k in range(N_UNITS)]].to_numpy()[held]
    rng = np.random.default_rng([2, 1])
    draws = []
    for _ in range(30):
        rows = rng.integers(0, len(ordered), size=len(ordered))
        draws.append([simulation_metrics(ordered[rows][:, [k]], simulated[rows][:, [k]])["iou"].item()
                      for k in range(N_UNITS)])
    low, high = np.nanpercentile(np.array(draws), [2.5, 97.5], axis=0)
    shown = result.units[(result.units["source"] == "truth") & (result.units["metric"] == "iou")]
    assert np.allclose(shown["ci_low"], low) and np.allclose(shown["ci_high"], high)


def test_resampled_correlations_equal_scipy_on_each_resample() -> None:
    rng = np.random.default_rng(4)
    actual = np.column_stack([rng.normal(size=40), np.zeros(40), np.r_[np.zeros(38), 1.0, 2.0], rng.normal(size=40)])
    predicted = np.column_stack([actual[:, 0] + rng.normal(size=40), rng.random(40), rng.random(40),
                                 rng.integers(0, 2, 40).astype(float)])
    rows = rng.integers(0, 40, size=(25, 40))
    rows[0, :] = np.arange(40) % 38  # the third column is constant (0) on this resample
    got = resampled_correlations(actual, predicted, rows)
    for b in range(len(rows)):
        for k in range(actual.shape[1]):
            a, p = actual[rows[b], k], predicted[rows[b], k]
            expected = 0.0 if np.ptp(a) == 0 or np.ptp(p) == 0 else pearsonr(a, p)[0]
            assert got[b, k] == pytest.approx(expected, abs=1e-10), (b, k)
    assert (got[:, 1] == 0).all() and got[0, 2] == 0


def test_simulation_correlation_intervals_equal_a_per_resample_scipy_reference() -> None:
    activations, concepts, _ = world()
    options = EvaluateOptions(n_boot=0, unit_n_boot=15, seed=5, holdout=0.5)
    result = evaluate(activations, concepts, {"truth": explanations(TRUTH)}, options=options)
    held = holdout_mask(N_INPUTS, 0.5, 5)
    ordered = activations.set_index("input_id").loc[concepts["input_id"]].to_numpy()[held]
    simulated = concepts[[TRUTH[f"u{k}"] for k in range(N_UNITS)]].to_numpy()[held]
    rng = np.random.default_rng([5, 1])
    draws = []
    for _ in range(15):
        rows = rng.integers(0, len(ordered), size=len(ordered))
        draws.append([pearsonr(ordered[rows, k], simulated[rows, k])[0] for k in range(N_UNITS)])
    low, high = np.percentile(np.array(draws), [2.5, 97.5], axis=0)
    shown = result.units[(result.units["source"] == "truth") & (result.units["metric"] == "simulation_correlation")]
    assert np.allclose(shown["ci_low"], low, atol=1e-10) and np.allclose(shown["ci_high"], high, atol=1e-10)


def test_no_optimum_unless_one_categorical_variable() -> None:
    activations, concepts, _ = world(categorical=False)
    result = evaluate(activations, concepts, {"truth": explanations(TRUTH)},
                      options=EvaluateOptions(n_boot=0, unit_n_boot=0))
    assert set(result.units["source"]) == {"truth", FLOOR}


def test_mismatched_ids_and_unscorable_rows_are_named(tmp_path: Path) -> None:
    activations, concepts, _ = world()
    with pytest.raises(ValueError, match=r"input ids differ: activations only \[\], concepts only \[0\]"):
        evaluate(activations[activations["input_id"] != 0], concepts, {"truth": explanations(TRUTH)})
    partial = explanations({"u0": "c0", "u1": "nope", "u9": "c1"})
    path = tmp_path / "partial.csv"
    partial.to_csv(path, index=False)
    result = evaluate(activations, concepts, {"partial": path}, options=EvaluateOptions(n_boot=0, unit_n_boot=0))
    reasons = result.unscorable.set_index("unit")["reason"]
    assert "no concept matches 'nope'" in reasons["u1"] and "not in the activation table" in reasons["u9"]
    assert reasons[["u2", "u3", "u4"]].str.contains("no explanation").all()
    assert set(result.units.loc[result.units["source"] == "partial", "unit"]) == {"u0"}
    with pytest.raises(ValueError, match="reserved"):
        evaluate(activations, concepts, {FLOOR: path})


def test_text_mapping_and_unit_naming_reach_the_reader(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """An embedder (a bag of letters: texts sharing letters are near) maps free text the names do not; the unit
    template names units; a bad model folder or threshold is a clear error naming the flag's value."""
    from neuroneval.explain.text_mapping import TextMapping

    def letters(texts: list[str]) -> np.ndarray:
        return np.array([[text.lower().count(letter) for letter in "abcdefghijklmnopqrstuvwxyz0123456789"]
                         for text in texts], dtype=float)

    activations, concepts, _ = world()
    path = tmp_path / "neuronpedia.json"
    path.write_text('[{"modelId": "m", "layer": "l", "index": "0", "description": "c0"},'
                    ' {"modelId": "m", "layer": "l", "index": "1", "description": "cc11"},'
                    ' {"modelId": "m", "layer": "l", "index": "2", "description": "zzz"}]')
    options = EvaluateOptions(n_boot=0, unit_n_boot=0, unit_template="u{index}",
                              mapping=TextMapping(embedder=letters, threshold=0.9))
    result = evaluate(activations, concepts, {"np": path}, options=options)
    explained = result.units[result.units["source"] == "np"].drop_duplicates("unit").set_index("unit")["explanation"]
    assert explained.to_dict() == {"u0": "c0", "u1": "c1"}  # exact, then embedding (cosine of cc11 and c1 is 1)
    reasons = result.unscorable[result.unscorable["source"] == "np"].set_index("unit")["reason"]
    assert "no concept matches 'zzz' (best:" in reasons["u2"]
    io.write_activation_table(tmp_path / "a.parquet", activations, metadata={})
    io.write_concept_table(tmp_path / "c.parquet", concepts, metadata={})
    common = ["evaluate", "--activations", str(tmp_path / "a.parquet"), "--concepts", str(tmp_path / "c.parquet"),
              "--explanations", f"np={path}", "--out", str(tmp_path / "out")]
    assert main([*common, "--embedding-model", str(tmp_path / "no_model")]) == 2
    assert "no_model" in capsys.readouterr().err
    assert main([*common, "--similarity-threshold", "1.5"]) == 2
    assert "threshold" in capsys.readouterr().err


def test_sanity_table_chooses_the_metrics(tmp_path: Path) -> None:
    table = pd.DataFrame({"metric": ["iou", "accuracy", "auprc"], "pass": [True, False, True]})
    table.to_csv(tmp_path / "table3.csv", index=False)
    metrics, source = sanity_metrics(tmp_path / "table3.csv")
    assert metrics == ("iou", "auprc") and "table3.csv" in source
    table.drop(columns="pass").to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match=r"bad.csv: .*missing \['pass'\]"):
        sanity_metrics(tmp_path / "bad.csv")
    activations, concepts, _ = world()
    result = evaluate(activations, concepts, {"truth": explanations(TRUTH)},
                      options=EvaluateOptions(n_boot=0, unit_n_boot=0, sanity=str(tmp_path / "table3.csv")))
    assert set(result.units["metric"]) == {"simulation_correlation", "iou", "auprc"}


def test_cli_writes_every_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    activations, concepts, _ = world()
    io.write_activation_table(tmp_path / "a.parquet", activations.sort_values("input_id"), metadata={})
    io.write_concept_table(tmp_path / "c.parquet", concepts, metadata={})
    explanations(TRUTH).to_csv(tmp_path / "truth.csv", index=False)
    status = main(["evaluate", "--activations", str(tmp_path / "a.parquet"), "--concepts", str(tmp_path / "c.parquet"),
                   "--explanations", f"truth={tmp_path / 'truth.csv'}", "--n-boot", "50", "--unit-n-boot", "5",
                   "--out", str(tmp_path / "out")])
    assert status == 0
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == sorted(OUTPUT_FILES)
    units = pd.read_csv(tmp_path / "out" / "units.csv")
    assert list(units.columns[:6]) == ["unit", "source", "metric", "value", "ci_low", "ci_high"]
    assert "paper 000 Table 3" in (tmp_path / "out" / "report.md").read_text()
    assert main(["evaluate", "--activations", str(tmp_path / "a.parquet"), "--concepts", str(tmp_path / "c.parquet"),
                 "--explanations", "truth", "--out", str(tmp_path / "x")]) == 2
    assert "NAME=PATH" in capsys.readouterr().err
