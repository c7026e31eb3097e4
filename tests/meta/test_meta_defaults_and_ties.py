"""MetaOptions' defaults are params.yaml's meta block; empty metrics are an error; a tied α grid warns."""

import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

from neuroneval.meta import MetaOptions
from neuroneval.meta.discrimination import DiscriminationOptions, meta_options_block
from neuroneval.meta.search import evaluate_metric, warn_tied_grid
from neuroneval.metrics.unit_checks import TiedGridWarning
from neuroneval.options import OptionsError

ROOT = Path(__file__).resolve().parents[2]


def test_meta_options_defaults_are_the_shipped_params() -> None:
    block = yaml.safe_load((ROOT / "params.yaml").read_text())["meta"]
    assert MetaOptions() == MetaOptions.from_params(meta_options_block(block))
    assert DiscriminationOptions() == DiscriminationOptions.from_params(block["discrimination"])


@pytest.mark.parametrize("field", ["metrics", "alpha_grid", "lam_grid"])
def test_an_empty_list_is_an_error_not_an_empty_table(field: str) -> None:
    with pytest.raises(OptionsError, match=rf"MetaOptions.{field} is empty"):
        MetaOptions.from_params({field: []})


def _binary_setting(n: int = 400, units: int = 24, concepts: int = 4) -> tuple[np.ndarray, ...]:
    """0/1 units, each a noisy copy of one concept: any α below the active fraction selects the same inputs."""
    rng = np.random.default_rng(1)
    labels = rng.integers(0, concepts, size=n)
    concept_matrix = np.eye(concepts)[labels]
    own = np.arange(units) % concepts
    flips = rng.random((n, units)) < 0.1
    activations = np.where(flips, 1 - concept_matrix[:, own], concept_matrix[:, own])
    truth = np.eye(concepts, dtype=bool)[own]
    return activations.astype(np.float32), concept_matrix.astype(np.float32), truth


def test_a_grid_whose_points_tie_warns_with_the_metric_and_the_grid() -> None:
    activations, concepts, truth = _binary_setting()
    assert (activations.mean(axis=0) > 0.05).all()  # every α below 0.05 ties at the unit's ones
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.warns(TiedGridWarning, match=r"iou: validation meta-AUPRC is [0-9.]+ at every one of the 3 grid "
                                                 r"points \(alpha=0.01, alpha=0.02, alpha=0.05\)"):
            warnings.simplefilter("always", TiedGridWarning)
            result = evaluate_metric("iou", activations, concepts, truth, val_units=np.arange(8),
                                     test_units=np.arange(8, 24), alpha_grid=(0.01, 0.02, 0.05), lam_grid=(0.0,))
    assert result.params == {"alpha": 0.01}


def test_distinct_grid_points_and_single_points_do_not_warn() -> None:
    grid = [{"alpha": 0.01}, {"alpha": 0.1}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not warn_tied_grid("iou", grid, [0.5, 0.6])
        assert not warn_tied_grid("iou", grid[:1], [0.5])
    with pytest.warns(TiedGridWarning, match="alpha=0.01, alpha=0.1"):
        assert warn_tied_grid("iou", grid, [0.5, 0.5])
