"""Your own setting in the workflow: a custom model (factory + state dict) recorded on an array of sklearn digits,
and the same model's precomputed tables (``kind: tables``), through Table 4, the sanity test, the explanation
benchmark and the viewer; a half-configured overlay names every missing path in one message."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from sklearn.metrics import roc_auc_score

from neuroneval import io
from tests.external import own_model
from tests.workflow.conftest import make_workspace, run_tool, tiny_params

SETTINGS = ["mine_custom", "mine_tables"]
EXPLAIN_METHODS = ["netdissect", "le_label", "compexp", "invert"]
TARGETS = ["results/table4.csv", *(f"results/sanity/experimental/{name}.csv" for name in SETTINGS),
           "results/explain/table1.csv", *(f"results/viewer/{name}/index.html" for name in SETTINGS)]


def own_overlay(data_root: Path) -> dict:
    """The user's ``--configfile``: two datasets, one custom model, two settings, and the stages pointed at them."""
    class_units = {"source": "labels", "prefixes": ["class:"]}
    return {
        "external": {
            "data_root": str(data_root), "device": "cpu", "batch_size": 64,
            "datasets": {
                "mine_rows": {"kind": "array", "images": "images.npy", "labels": "labels.npy"},
                "mine_tables": {"kind": "tables", "activations": {"my_mlp": {"softmax": "tables/softmax.parquet"}},
                                "concepts": {"labels": "tables/labels.parquet"},
                                "known_concepts": "tables/known.csv"},
            },
            "models": {"digits_mlp": {"family": "custom", "factory": "own_model:digits_mlp",
                                      "weights_path": "mlp.pt"}},
        },
        "settings": {
            "mine_custom": {"dataset": "mine_rows", "units": [{"model": "digits_mlp", "layer": "logits"}],
                            "concepts": class_units},
            "mine_tables": {"dataset": "mine_tables", "units": [{"model": "my_mlp", "layer": "softmax"}],
                            "concepts": class_units},
        },
        "meta": {"settings": SETTINGS},
        "sanity": {"settings": SETTINGS},
        "explain": {"settings": {name: {"methods": EXPLAIN_METHODS} for name in SETTINGS}, "run_settings": SETTINGS,
                    "n_boot": 20, "cosy": {"settings": []}, "crowd": {"settings": []}},
        "viewer": {"settings": SETTINGS, "metrics": ["auc", "iou"], "top_inputs": 4},
    }


@pytest.fixture(scope="module")
def user_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("own_inputs")
    own_model.write_user_files(root)
    return root


def own_workspace(directory: Path, data_root: Path, overlay: dict) -> Path:
    """The workflow with the tiny params, the user's overlay ``mine.yaml`` and the factory module beside it."""
    workspace = make_workspace(directory, tiny_params())
    (workspace / "mine.yaml").write_text(yaml.safe_dump(overlay, sort_keys=False))
    shutil.copy2(Path(own_model.__file__), workspace / "own_model.py")
    return workspace


def test_a_half_configured_overlay_names_every_missing_path_at_once(user_files: Path, tmp_path: Path) -> None:
    overlay = own_overlay(user_files)
    overlay["external"]["models"]["digits_mlp"]["weights_path"] = "not_yet/mlp.pt"
    overlay["external"]["datasets"]["mine_rows"]["labels"] = "not_yet/labels.npy"
    overlay["external"]["datasets"]["mine_tables"]["known_concepts"] = "not_yet/known.csv"
    workspace = own_workspace(tmp_path, user_files, overlay)
    result = run_tool(["snakemake", "-n", "--cores", "1", *TARGETS, "--configfile", "mine.yaml"], workspace,
                      check=False)
    message = result.stdout + result.stderr
    assert result.returncode != 0
    for key, path in [("external.models.digits_mlp.weights_path", "not_yet/mlp.pt"),
                      ("external.datasets.mine_rows.labels", "not_yet/labels.npy"),
                      ("external.datasets.mine_tables.known_concepts", "not_yet/known.csv")]:
        assert f"{key}: file {user_files / path} does not exist" in message
    assert "Fix these, or remove settings mine_custom, mine_tables from meta.settings." in message


def test_a_typo_in_an_own_setting_is_caught_at_parse_time(user_files: Path, tmp_path: Path) -> None:
    overlay = own_overlay(user_files)
    overlay["settings"]["mine_tables"]["units"] = [{"model": "my_mlp", "layer": "softmx"}]
    overlay["settings"]["mine_custom"]["units"] = [{"model": "digits_mpl", "layer": "logits"}]
    workspace = own_workspace(tmp_path, user_files, overlay)
    result = run_tool(["snakemake", "-n", "--cores", "1", "results/table4.csv", "--configfile", "mine.yaml"],
                      workspace, check=False)
    message = result.stdout + result.stderr
    assert result.returncode != 0
    assert "settings.mine_tables.units[0].layer: 'softmx' is not a layer of " \
           "external.datasets.mine_tables.activations.my_mlp (['softmax'])" in message
    assert "settings.mine_custom.units[0].model: 'digits_mpl' is not a custom model of external.models" in message


@pytest.fixture(scope="module")
def own_run(user_files: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    workspace = own_workspace(tmp_path_factory.mktemp("own_run"), user_files, own_overlay(user_files))
    run_tool(["snakemake", "--cores", "2", *TARGETS, "--configfile", "mine.yaml"], workspace)
    return workspace


@pytest.mark.slow
def test_the_custom_model_is_recorded_as_its_own_forward_pass(own_run: Path, user_files: Path) -> None:
    """Slow (marker ``slow``): reads ``own_run``, Snakemake's build of both own settings."""
    frame, metadata = io.read_activation_table(own_run / "data/activations/mine_rows/digits_mlp/logits.parquet")
    model = own_model.digits_mlp()
    model.load_state_dict(torch.load(user_files / "mlp.pt"))
    with torch.no_grad():
        logits = model(torch.from_numpy(np.load(user_files / "images.npy"))).numpy()
    np.testing.assert_allclose(frame.drop(columns="input_id").to_numpy(), logits, rtol=1e-5, atol=1e-5)
    assert metadata["unit_concepts"] == {f"logits.{k}": [f"class:{k}"] for k in range(10)}
    labels, _ = io.read_concept_table(own_run / "data/concepts/mine_rows/labels.parquet")
    expected = np.load(user_files / "labels.npy")
    assert (labels.drop(columns="input_id").to_numpy().argmax(axis=1) == expected).all()


@pytest.mark.slow
def test_the_tables_are_imported_with_their_known_concepts(own_run: Path, user_files: Path) -> None:
    """Slow (marker ``slow``): reads ``own_run``, Snakemake's build of both own settings."""
    imported, metadata = io.read_activation_table(own_run / "data/activations/mine_tables/my_mlp/softmax.parquet")
    original, _ = io.read_activation_table(user_files / "tables/softmax.parquet")
    pd.testing.assert_frame_equal(imported, original)
    assert metadata["unit_concepts"] == {f"p{k}": [f"class:{k}"] for k in range(10)}
    truth = pd.read_csv(own_run / "data/truth/mine_tables.csv")
    assert list(truth.itertuples(index=False, name=None)) == [(f"p{k}", f"class:{k}") for k in range(10)]


@pytest.mark.slow
def test_every_stage_runs_on_both_own_settings(own_run: Path) -> None:
    """Slow (marker ``slow``): reads ``own_run``, Snakemake's build of both own settings."""
    table4 = pd.read_csv(own_run / "results/table4.csv")
    assert {"mine_custom", "mine_tables"} <= set(table4.columns)
    assert table4[SETTINGS].notna().all().all()
    for name in SETTINGS:
        sanity = pd.read_csv(own_run / f"results/sanity/experimental/{name}.csv")
        assert set(sanity["setting"]) == {name} and {"missing", "extra"} <= set(sanity["test"])
        scores = pd.read_csv(own_run / f"results/explain/scores/{name}.csv")
        assert {"netdissect", "compexp", "invert", "le_label"} <= set(scores["method"])
        page = (own_run / f"results/viewer/{name}/index.html").read_text()
        assert name in page and "class:3" in page
    assert (own_run / "results/explain/table1.csv").stat().st_size > 0


@pytest.mark.slow
def test_recorded_units_and_label_table_share_their_input_ids(own_run: Path) -> None:
    """Slow (marker ``slow``): reads ``own_run``, Snakemake's build of both own settings.

    Each class unit ranks its class's inputs first (sklearn's ROC AUC on the two workflow tables joined by
    ``input_id``): a shifted or shuffled id between recording and labels would put the AUC near 0.5."""
    frame, _ = io.read_activation_table(own_run / "data/activations/mine_rows/digits_mlp/logits.parquet")
    labels, _ = io.read_concept_table(own_run / "data/concepts/mine_rows/labels.parquet")
    joined = frame.merge(labels, on="input_id", validate="one_to_one")
    assert len(joined) == own_model.N_INPUTS
    aucs = [roc_auc_score(joined[f"class:{k}"], joined[f"logits.{k}"]) for k in range(10)]
    assert min(aucs) > 0.9
