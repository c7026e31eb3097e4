"""``neuroneval evaluate`` on the digits MLP with dead units of tests/test_dead_units.py, run as a user would (the
CLI): explanation files of every supported format, free text mapped by exact name and a synonym table, the dead
units flagged and never listed first, the activation rows' order irrelevant (issue 30, items 1, 2 and 4).

The oracles: scipy's ``pearsonr`` of a unit's held-out activations and the explanation's simulated concept column
(a concept's own column; ``A OR B`` of one-hot labels is ``A + B``), sklearn's ``average_precision_score`` of the
unit's top-α inputs against that column, and the degenerate units found with ``np.ptp`` and a count of active
held-out inputs.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr
from sklearn.metrics import average_precision_score

from neuroneval import io
from neuroneval.cli import main
from neuroneval.explain.benchmark import holdout_mask
from neuroneval.metrics.unit_checks import DegenerateUnitWarning, SmallProbeSetWarning
from neuroneval.settings import SettingData
from tests.test_dead_units import DEAD, LARGE, NEAR_DEAD, digits_mlp, tables  # noqa: F401 (fixtures)

ALPHA, HOLDOUT, SEED = 0.05, 0.5, 0
DEAD_UNIT = f"h{DEAD[0]}"


def _held(data: SettingData) -> np.ndarray:
    return holdout_mask(data.activations.shape[0], HOLDOUT, SEED)


def _degenerate_on_held_out(data: SettingData) -> set[str]:
    """ReLU units constant (zero range) or active on 1–4 held-out inputs."""
    held = data.activations[_held(data)]
    active = np.count_nonzero(held > 0, axis=0)
    return {name for name, spread, count in zip(data.unit_names, np.ptp(held, axis=0), active, strict=True)
            if spread == 0 or 0 < count < 5}


def _write_files(folder: Path, alive: list[str]) -> dict[str, Path]:
    """One small explanation file per format, by hand; returns source name → path."""
    number = [int(name[1:]) for name in alive]
    folder.mkdir()
    project = folder / "mine.csv"
    pd.DataFrame({"unit": [alive[0], alive[1], DEAD_UNIT], "explanation": ["class:0", "class:1 OR class:7", LARGE],
                  "length": [1, 2, 1], "kind": ["concept", "formula", "concept"]}).to_csv(project, index=False)
    clip = folder / "clip_dissect.csv"
    clip.write_text(f"unit,description,similarity\n{alive[2]},Class 4.,0.3\n{alive[3]},the digit five,0.2\n"
                    f"{alive[4]},curly loops,0.1\nh{NEAR_DEAD},class 2,0.1\n", encoding="utf-8")
    delphi = folder / "delphi"
    delphi.mkdir()
    for index, text in ((number[5], "class 7"), (number[6], "eight"), (number[7], "zigzag strokes"),
                        (DEAD[0], "large digits")):
        (delphi / f"hidden_latent{index}.txt").write_text(json.dumps(text), encoding="utf-8")
    neuronpedia = folder / "neuronpedia.json"
    neuronpedia.write_text(json.dumps([
        {"modelId": "mlp", "layer": "hidden", "index": str(number[8]), "description": "class 9"},
        {"modelId": "mlp", "layer": "hidden", "index": str(number[9]), "description": "blurry ink"},
        {"modelId": "mlp", "layer": "hidden", "index": "99", "description": "class 2"}]), encoding="utf-8")
    openai = folder / "autointerp.jsonl"
    lines = [{"neuron_id": {"layer_index": 0, "neuron_index": number[10]},
              "scored_explanations": [{"explanation": "class 3", "scored_simulation": {"ev_correlation_score": 0.1}},
                                      {"explanation": "three", "scored_simulation": {"ev_correlation_score": 0.5}}]},
             {"neuron_id": {"layer_index": 0, "neuron_index": number[11]},
              "scored_explanations": [{"explanation": "nothing in particular", "scored_simulation": None}]}]
    openai.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return {"mine": project, "clip": clip, "delphi": delphi, "neuronpedia": neuronpedia, "autointerp": openai}


def _mapping_files(folder: Path, alive: list[str]) -> tuple[Path, Path]:
    synonyms = folder / "synonyms.csv"
    synonyms.write_text("text,concept\nthe digit five,class:5\neight,class:8\nthree,class:3\n"
                        f"large digits,{LARGE}\n", encoding="utf-8")
    unit_map = folder / "units.csv"
    renamed = [f"hidden/{name[1:]}" for name in alive[5:10]] + [f"hidden/{DEAD[0]}"]
    renamed += [f"0/{name[1:]}" for name in alive[10:12]]
    targets = [*alive[5:10], DEAD_UNIT, *alive[10:12]]
    pd.DataFrame({"source_unit": renamed, "unit": targets}).to_csv(unit_map, index=False)
    return synonyms, unit_map


def _evaluate(activations: Path, concepts: Path, files: dict[str, Path], synonyms: Path, unit_map: Path, out: Path,
              *extra: str) -> int:
    return main(["evaluate", "--activations", str(activations), "--concepts", str(concepts),
                 "--explanations", *[f"{name}={path}" for name, path in files.items()], "--synonyms", str(synonyms),
                 "--unit-map", str(unit_map), "--alpha", str(ALPHA), "--holdout", str(HOLDOUT), "--seed", str(SEED),
                 "--n-boot", "50", "--unit-n-boot", "4", "--out", str(out), *extra])


@pytest.fixture(scope="module")
def run(digits_mlp: SettingData, tables, tmp_path_factory) -> dict:  # noqa: F811 (fixtures)
    """The CLI on the ordered tables and on a row-shuffled activation table; the warnings of the first run."""
    folder = tmp_path_factory.mktemp("evaluate_digits")
    activation_path, concept_path = tables
    expected = _degenerate_on_held_out(digits_mlp)
    alive = [name for name in digits_mlp.unit_names if name not in expected]
    files = _write_files(folder / "explanations", alive)
    synonyms, unit_map = _mapping_files(folder, alive)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _evaluate(activation_path, concept_path, files, synonyms, unit_map, folder / "ordered") == 0
    frame, metadata = io.read_activation_table(activation_path)
    shuffled = frame.iloc[np.random.default_rng(5).permutation(len(frame))].reset_index(drop=True)
    shuffled_path = io.write_activation_table(folder / "shuffled.parquet", shuffled, metadata=metadata)
    assert _evaluate(shuffled_path, concept_path, files, synonyms, unit_map, folder / "shuffled") == 0
    return {"folder": folder, "alive": alive, "expected": expected, "caught": caught, "files": files,
            "synonyms": synonyms, "unit_map": unit_map, "shuffled": shuffled}


def test_dead_units_are_flagged_left_out_of_the_means_and_never_listed_first(digits_mlp, run) -> None:  # noqa: F811
    expected = run["expected"]
    assert {f"h{k}" for k in DEAD} <= expected and DEAD_UNIT in expected
    units = pd.read_csv(run["folder"] / "ordered" / "units.csv")
    flags = units.groupby("unit")["degenerate"].agg(["min", "max"])
    assert (flags["min"] == flags["max"]).all()
    assert set(flags.index[flags["max"]]) == expected & set(units["unit"])
    for _, group in units.groupby(["source", "metric"], sort=False):
        listed = group["degenerate"].to_numpy()
        assert not (listed[:-1] & ~listed[1:]).any()  # every degenerate row after every other row
        if (~listed).any():
            assert not listed[0]
    # the dead unit explained as large:3-9 has the best IoU of its source (every input active: the positive
    # rate), which would rank it first; it is listed last and left out of the mean
    held = _held(digits_mlp)
    positive_rate = digits_mlp.concepts[held, digits_mlp.concept_names.index(LARGE)].astype(np.float64).mean()
    iou = units[(units["source"] == "mine") & (units["metric"] == "iou")]
    assert iou.set_index("unit").loc[DEAD_UNIT, "value"] == pytest.approx(positive_rate, abs=1e-9)
    assert iou["value"].max() == iou.set_index("unit").loc[DEAD_UNIT, "value"] and iou.iloc[-1]["unit"] == DEAD_UNIT
    summary = pd.read_csv(run["folder"] / "ordered" / "summary.csv").set_index(["source", "metric"])
    for source in ("mine", "delphi", "random"):  # no optimum: large:3-9 overlaps the classes
        for metric in ("simulation_correlation", "iou", "auprc"):
            rows = units[(units["source"] == source) & (units["metric"] == metric) & ~units["degenerate"]]
            values = rows["value"].dropna()
            assert summary.loc[(source, metric), "n_units"] == len(values)
            assert summary.loc[(source, metric), "mean"] == pytest.approx(values.mean(), rel=1e-9)
    random_units = summary.loc[("random", "simulation_correlation"), "n_units"]
    assert random_units == len(digits_mlp.unit_names) - len(expected)
    differences = pd.read_csv(run["folder"] / "ordered" / "differences.csv")
    floor = differences[(differences["source_a"] == "mine") & (differences["source_b"] == "random")
                        & (differences["metric"] == "simulation_correlation")].iloc[0]
    assert floor["n_units"] == 2  # the two live units of mine.csv; the dead one is left out
    named = [w for w in run["caught"] if issubclass(w.category, DegenerateUnitWarning)]
    assert len(named) == 1 and DEAD_UNIT in str(named[0].message)
    assert not [w for w in run["caught"] if issubclass(w.category, SmallProbeSetWarning)]  # 0.05 · 360 = 18
    report = (run["folder"] / "ordered" / "report.md").read_text(encoding="utf-8")
    assert report.count("Degenerate units:") == 1 and DEAD_UNIT in report


def test_every_format_is_read_mapped_and_scored_like_scipy_and_sklearn(digits_mlp, run) -> None:  # noqa: F811
    alive = run["alive"]
    units = pd.read_csv(run["folder"] / "ordered" / "units.csv")
    scored = units[units["metric"] == "simulation_correlation"].groupby("source")["unit"].apply(set)
    assert scored["mine"] == {alive[0], alive[1], DEAD_UNIT}
    assert scored["clip"] == {alive[2], alive[3], f"h{NEAR_DEAD}"}
    assert scored["delphi"] == {alive[5], alive[6], DEAD_UNIT}
    assert scored["neuronpedia"] == {alive[8]}
    assert scored["autointerp"] == {alive[10]}
    explained = units.drop_duplicates(["source", "unit"]).set_index(["source", "unit"])["explanation"]
    assert explained[("clip", alive[3])] == "class:5" and explained[("delphi", alive[6])] == "class:8"
    assert explained[("autointerp", alive[10])] == "class:3"  # the higher-scored of two texts, via the synonym
    unscorable = pd.read_csv(run["folder"] / "ordered" / "unscorable.csv")
    rows = unscorable.dropna(subset=["row"]).set_index(["source", "text"])["reason"]
    for source, text in (("clip", "curly loops"), ("delphi", "zigzag strokes"), ("neuronpedia", "blurry ink"),
                         ("autointerp", "nothing in particular")):
        assert f"no concept matches '{text}'" in rows[(source, text)]
    assert rows[("neuronpedia", "class 2")] == "unit not in the activation table"
    absent = unscorable[unscorable["row"].isna() & (unscorable["source"] == "neuronpedia")]
    assert len(absent) == len(digits_mlp.unit_names) - 2  # every unit the file has no row for, named
    # the oracle, on the held-out inputs
    held = _held(digits_mlp)
    values = units.set_index(["source", "unit", "metric"])["value"]
    labels = {name: digits_mlp.concepts[held, k] for k, name in enumerate(digits_mlp.concept_names)}
    checks = (("mine", alive[0], labels["class:0"]), ("mine", alive[1], labels["class:1"] + labels["class:7"]),
              ("clip", alive[2], labels["class:4"]), ("clip", alive[3], labels["class:5"]),
              ("delphi", alive[6], labels["class:8"]), ("autointerp", alive[10], labels["class:3"]))
    for source, unit, concept in checks:
        a = digits_mlp.activations[held, digits_mlp.unit_names.index(unit)].astype(np.float64)
        assert values[(source, unit, "simulation_correlation")] == pytest.approx(pearsonr(a, concept)[0], abs=1e-9)
        active = (a >= np.sort(a)[len(a) - int(np.ceil(ALPHA * len(a)))]).astype(int)
        assert values[(source, unit, "auprc")] == pytest.approx(average_precision_score(active, concept), abs=1e-9)


def test_row_order_is_irrelevant_and_other_ids_are_named(run, tables, capsys) -> None:  # noqa: F811
    for name in ("units.csv", "summary.csv", "differences.csv", "unscorable.csv", "report.md"):
        assert (run["folder"] / "ordered" / name).read_bytes() == (run["folder"] / "shuffled" / name).read_bytes()
    _, concept_path = tables
    other = run["shuffled"].assign(input_id=run["shuffled"]["input_id"] + 1000)
    other_path = io.write_activation_table(run["folder"] / "other.parquet", other, metadata={})
    assert _evaluate(other_path, concept_path, run["files"], run["synonyms"], run["unit_map"],
                     run["folder"] / "other") == 2
    assert "input ids differ" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"input ids differ: .*other.parquet only \[1000, 1001, 1002\], .* only "
                                         r"\[0, 1, 2\] \(719 and 719 ids\)"):
        from neuroneval.explain.evaluate import evaluate

        evaluate(other_path, concept_path, {})


def test_unit_template_names_units_without_a_map(run, tables, tmp_path: Path) -> None:  # noqa: F811
    activation_path, concept_path = tables
    files = {"neuronpedia": run["files"]["neuronpedia"]}
    with pytest.warns(SmallProbeSetWarning, match=r"evaluate \(held-out inputs\): alpha = 0.005"):
        assert main(["evaluate", "--activations", str(activation_path), "--concepts", str(concept_path),
                     "--explanations", f"neuronpedia={files['neuronpedia']}", "--unit-template", "h{index}",
                     "--alpha", "0.005", "--n-boot", "0", "--unit-n-boot", "0", "--out", str(tmp_path)]) == 0
    units = pd.read_csv(tmp_path / "units.csv")
    assert set(units.loc[units["source"] == "neuronpedia", "unit"]) == {run["alive"][8]}
