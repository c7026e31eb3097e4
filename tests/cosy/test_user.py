"""CoSy on a user's explanation file, without models: prompt words, true/random rows, scores, options."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neuroneval.cosy.synthesis import plan_images
from neuroneval.cosy.user import (
    USER_SCORE_COLUMNS,
    CosyUserEntry,
    UserCosyOptions,
    check_drawable,
    prompt_words,
    user_prompts,
    user_scores,
)
from neuroneval.options import OptionsError
from tests.oracles import mann_whitney_p, mann_whitney_u


@pytest.mark.parametrize(("text", "kind", "words"), [
    ("class:red_striped_circle", "concept", "a red striped circle"),
    ("shape:circle OR (colour:red AND NOT scene:grass)", "formula", "a circle or a red and not on grass"),
    ("0.2*class:blue_solid_square + 0.7*shape:star - 0.1", "linear", "a star"),
    ("  a dog on a sofa ", "text", "a dog on a sofa"),
    ("class:n01", "concept", "tench"),
])
def test_prompt_words(text: str, kind: str, words: str) -> None:
    assert prompt_words(text, kind, {"class:n01": "tench"}) == words


@pytest.mark.parametrize(("text", "kind", "message"), [
    ("[0, 1] class:a; [2, 3] class:b", "clustered", "clustered explanation has no picture"),
    ("-0.5*class:a + 1", "linear", "no positive weight"),
])
def test_prompt_words_refuses_what_has_no_picture(text: str, kind: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        prompt_words(text, kind)


def _file(units: list[str], texts: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"unit": units, "explanation": texts, "length": 1, "kind": "concept"})


def test_random_explanations_are_other_units_words_drawn_from_the_seed() -> None:
    units = [str(k) for k in range(6)]
    frame = _file(units, ["class:red_solid_circle", "class:blue_solid_circle", "class:red_solid_circle",
                          "class:green_dotted_star", "class:white_checked_ring", "class:orange_solid_cross"])
    prompts = user_prompts(frame, unit_names=units, options=UserCosyOptions(seed=3), source="f.csv")
    true, random = prompts[prompts["method"] == "true"], prompts[prompts["method"] == "random"]
    assert true["unit"].tolist() == random["unit"].tolist() == units
    assert (true["words"].to_numpy() != random["words"].to_numpy()).all()
    assert set(random["explanation"]) <= set(frame["explanation"])
    again = user_prompts(frame, unit_names=units, options=UserCosyOptions(seed=3), source="f.csv")
    pd.testing.assert_frame_equal(prompts, again)
    seeds = {tuple(user_prompts(frame, unit_names=units, options=UserCosyOptions(seed=seed), source="f.csv")
                   .loc[lambda table: table["method"] == "random", "words"]) for seed in range(8)}
    assert len(seeds) > 1
    only_true = user_prompts(frame, unit_names=units, options=UserCosyOptions(random=False), source="f.csv")
    assert set(only_true["method"]) == {"true"}


def test_user_prompts_name_the_row_and_unit() -> None:
    frame = _file(["0", "7"], ["class:red_solid_circle", "class:blue_solid_circle"])
    with pytest.raises(ValueError, match=r"f\.csv, row 1: unit '7' is not a unit of the model's layer"):
        user_prompts(frame, unit_names=["0", "1"], options=UserCosyOptions(), source="f.csv")
    linear = frame.assign(unit=["0", "1"], explanation=["class:a", "-1*class:b"], kind=["concept", "linear"])
    with pytest.raises(ValueError, match=r"f\.csv, row 1 \(unit '1'\): linear explanation"):
        user_prompts(linear, unit_names=["0", "1"], options=UserCosyOptions(), source="f.csv")


def test_check_drawable_asks_generators_that_read_prompts() -> None:
    class Reader:
        name = "reader"

        def parse(self, prompt: str) -> None:
            if "blob" in prompt:
                raise ValueError(f"cannot read {prompt!r}")

    prompts = pd.DataFrame({"row": [0, 1], "unit": ["0", "1"], "method": "true", "explanation": ["a circle", "a blob"],
                            "kind": "text", "words": ["a circle", "a blob"]})
    with pytest.raises(ValueError, match=r"f\.csv, row 1 \(unit '1', true explanation 'a blob'\): the reader"):
        check_drawable(Reader(), prompts, template="a", source="f.csv")
    check_drawable(object(), prompts, template="a", source="f.csv")  # no parse(): nothing to check


def test_user_scores_equal_scipy_and_sklearn_per_row() -> None:
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(2)
    prompts = pd.DataFrame({"unit": ["a", "b", "a"], "method": ["true", "true", "random"],
                            "explanation": ["x", "y", "y"], "kind": "text", "words": ["an x", "a y", "a y"]})
    manifest = plan_images(["an x", "a y"], templates=["photo"], n_images=5, generation_seeds=[4])
    control = rng.normal(size=(40, 2))
    synthetic = rng.normal(1.0, 1.0, size=(len(manifest), 2))
    table = user_scores(prompts, unit_names=["a", "b"], control=control, synthetic=synthetic, manifest=manifest,
                        template="photo", generation_seed=4, progress=False)
    assert list(table.columns) == USER_SCORE_COLUMNS and len(table) == 3
    for row in table.itertuples(index=False):
        k = ["a", "b"].index(row.unit)
        images = synthetic[(manifest["prompt"] == row.prompt).to_numpy(), k]
        label = np.r_[np.zeros(40), np.ones(5)]
        assert row.auc == pytest.approx(roc_auc_score(label, np.r_[control[:, k], images]), abs=1e-12)
        assert (row.u, row.p_value) == (mann_whitney_u(list(images), list(control[:, k])),
                                        pytest.approx(mann_whitney_p(list(images), list(control[:, k])), rel=1e-9))
        assert (row.n_synthetic, row.n_control) == (5, 40) and row.prompt.startswith("photo of ")


def test_options() -> None:
    assert CosyUserEntry.from_params({"explanations": "e.csv", "setting": "s"}).generator == "oracle"
    for bad, message in [({"explanations": "e.csv"}, "setting must be a non-empty string"),
                         ({"explanations": "e.csv", "setting": "s", "generator": "dalle"}, "generator must be one of"),
                         ({"explanations": "e.csv", "setting": "s", "template": "no slot"}, "template"),
                         ({"explanations": "e.csv", "setting": "s", "random": "yes"}, "random must be a boolean"),
                         ({"explanations": "e.csv", "setting": "s", "n_images": 0}, "n_images")]:
        with pytest.raises(OptionsError, match=message):
            CosyUserEntry.from_params(bad)


def test_schema_takes_user_entries() -> None:
    import jsonschema
    import yaml

    from tests.workflow.conftest import ROOT, deep_update

    schema = yaml.safe_load((ROOT / "workflow/schemas/params.schema.yaml").read_text())
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    entry = {"explanations": "mine.csv", "setting": "cnn_final_gt", "generator": "embedded", "n_images": 4,
             "template": "photo", "seed": 1, "random": False, "n_control": None}
    jsonschema.validate(deep_update(params, {"cosy": {"user_explanations": {"mine": entry}}}), schema)
    assert CosyUserEntry.from_params(entry).n_images == 4  # the schema's keys are the options' fields
    with pytest.raises(jsonschema.ValidationError, match="'unit' was unexpected"):
        jsonschema.validate(deep_update(params, {"cosy": {"user_explanations": {"mine": {**entry, "unit": 1}}}}),
                            schema)
    with pytest.raises(jsonschema.ValidationError, match="'setting' is a required property"):
        jsonschema.validate(deep_update(params, {"cosy": {"user_explanations": {"m": {"explanations": "e"}}}}),
                            schema)
