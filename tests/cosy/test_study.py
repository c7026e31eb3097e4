"""CoSy's evaluation of one generator's images (neuroneval.cosy.study): the typed setting it takes, and its scores
on a setting whose units' activations on the images are given (a custom model's recorded table), against
scipy's Mann–Whitney U and the closed form of MAD."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import mannwhitneyu

from neuroneval import io
from neuroneval.cosy.evaluation import image_plan, image_rows
from neuroneval.cosy.options import CosyOptions
from neuroneval.cosy.prompts import fill_template
from neuroneval.cosy.study import UNIT_KINDS, SettingUnits, evaluate_generator

CONCEPTS = ["c:a", "c:b"]
UNITS = ["0", "1"]
N_INPUTS, N_CONTROL = 40, 30


def test_the_unit_kinds_are_the_workflows() -> None:
    assert UNIT_KINDS == ("world", "external", "custom")


@pytest.mark.parametrize(("fields", "message"), [
    ({"kind": "own"}, r"kind of model 'm' must be one of \['world', 'external', 'custom'\], got 'own'"),
    ({"kind": "world"}, "a world setting needs its checkpoint path"),
    ({"kind": "custom"}, "a custom setting needs its synthetic path"),
])
def test_a_setting_names_what_it_lacks(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SettingUnits(model="m", layer="l", activations=Path("a.parquet"), concepts=Path("c.parquet"), **fields)


@pytest.fixture()
def custom_setting(tmp_path: Path) -> dict:
    """A setting of 40 inputs (labels of two concepts), two units, and the units' activations on every image of
    the plan of its true and random explanations (the table a custom model records)."""
    rng = np.random.default_rng(3)
    ids = np.arange(N_INPUTS)
    labels = (rng.random((N_INPUTS, 2)) < [0.3, 0.4]).astype(np.float32)
    control = (labels + rng.normal(0, 0.5, (N_INPUTS, 2))).astype(np.float32)  # as the tables store them
    io.write_activation_table(tmp_path / "units.parquet", pd.DataFrame({"input_id": ids, **{
        unit: control[:, k] for k, unit in enumerate(UNITS)}}), metadata={"model": "m", "layer": "l"})
    io.write_concept_table(tmp_path / "labels.parquet", pd.DataFrame({"input_id": ids, **{
        name: labels[:, t] for t, name in enumerate(CONCEPTS)}}), metadata={"source": "labels"})
    explanations = pd.DataFrame({"setting": "s", "unit": ["0", "0", "1", "1"], "method": ["true", "random"] * 2,
                                 "concept": ["c:a", "c:b", "c:b", "c:a"],
                                 "explanation": ["an a", "a b", "a b", "an a"]})
    options = CosyOptions(settings=("s",), generators=("oracle",), n_images=5, n_control=N_CONTROL)
    manifest = image_plan(explanations, options).reset_index(drop=True)
    synthetic = rng.normal(0.5, 1.0, (len(manifest), 2)).astype(np.float32)
    io.write_activation_table(tmp_path / "synthetic.parquet", pd.DataFrame({"input_id": np.arange(len(manifest)), **{
        unit: synthetic[:, k] for k, unit in enumerate(UNITS)}}), metadata={"model": "m", "layer": "l"})
    units = SettingUnits(kind="custom", model="m", layer="l", activations=tmp_path / "units.parquet",
                         concepts=tmp_path / "labels.parquet", synthetic=tmp_path / "synthetic.parquet")
    return {"root": tmp_path, "units": units, "explanations": explanations, "options": options,
            "manifest": manifest, "control": control[:N_CONTROL], "synthetic": synthetic}


def test_scores_of_a_custom_setting_are_mann_whitney_auc_and_mad(custom_setting: dict) -> None:
    """AUC (002 Eq. 3) = U / (n m) with scipy's U of the synthetic sample; MAD (Eq. 4) = (mean(A1) − mean(A0)) /
    std(A0), on the first ``n_control`` inputs (the control set with the target) and the recorded table's rows of each
    prompt's images."""
    setting = custom_setting
    tables = evaluate_generator(setting["explanations"], setting["manifest"], setting["root"], {"s": setting["units"]},
                                setting["options"], generator="oracle", extraction={"batch_size": 8, "pooling": "mean"})
    scores = tables["scores"][tables["scores"]["control"] == "with_target"]
    assert len(scores) == 4 and set(scores["n_control"]) == {N_CONTROL}
    for row in scores.itertuples(index=False):
        k = UNITS.index(row.unit)
        images = image_rows(setting["manifest"], fill_template("closeup", row.explanation))
        control = setting["control"][:, k].astype(np.float64)
        synthetic = setting["synthetic"][images, k].astype(np.float64)
        u = mannwhitneyu(synthetic, control).statistic
        assert row.n_synthetic == len(images) == 5
        assert row.auc == pytest.approx(u / (len(control) * len(synthetic)))
        assert row.mad == pytest.approx((synthetic.mean() - control.mean()) / control.std(ddof=1))
    assert tables["templates"].empty  # the template study needs the vision world's natural images


def test_a_custom_table_that_misses_images_is_named(custom_setting: dict) -> None:
    setting = custom_setting
    short = setting["root"] / "short.parquet"
    io.write_activation_table(short, pd.DataFrame({"input_id": [0, 1], "0": [0.0, 1.0], "1": [1.0, 0.0]}),
                              metadata={"model": "m", "layer": "l"})
    units = SettingUnits(kind="custom", model="m", layer="l", activations=setting["units"].activations,
                         concepts=setting["units"].concepts, synthetic=short)
    with pytest.raises(ValueError, match=f"{short}: expected the {len(setting['manifest'])} images of the manifest"):
        evaluate_generator(setting["explanations"], setting["manifest"], setting["root"], {"s": units},
                           setting["options"], generator="oracle", extraction={"batch_size": 8, "pooling": "mean"})
