"""The exact best explanation score of a unit whose concepts are one categorical variable (neuroneval.explain.oracle),
against a brute-force search over every group set / every function on a value grid, scored by the metric engine,
and against scipy's correlation of the group means."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr

from neuroneval.explain.oracle import ORACLE_COLUMNS, best_prefix_iou, concept_groups, oracle_scores
from neuroneval.metrics import TopAlphaOptions, score

N_CONCEPTS = 4
OPTIONS = TopAlphaOptions(alpha=0.05)


@pytest.fixture(scope="module")
def world() -> dict:
    """400 inputs, a next-token-like one-hot over 4 concepts (some inputs have none), 3 stochastic units."""
    rng = np.random.default_rng(7)
    groups = rng.choice(N_CONCEPTS + 1, size=400, p=[0.05, 0.15, 0.3, 0.1, 0.4])
    concepts = np.zeros((400, N_CONCEPTS))
    has = groups < N_CONCEPTS
    concepts[np.flatnonzero(has), groups[has]] = 1.0
    effect = rng.uniform(0.0, 1.0, size=(N_CONCEPTS + 1, 3))
    units = np.clip(effect[groups] + rng.normal(0.0, 0.3, size=(400, 3)), 0.0, None)
    return {"concepts": concepts, "groups": groups, "units": pd.DataFrame(units, columns=["u0", "u1", "u2"])}


def grid_functions(n_groups: int, levels: tuple[float, ...]) -> np.ndarray:
    """Every function groups → levels, one per row (n_functions, n_groups)."""
    return np.array(list(itertools.product(levels, repeat=n_groups)), dtype=np.float64)


def set_iou(k: np.ndarray, n: np.ndarray, n_active: int, mask: np.ndarray) -> float:
    """IoU of the group set ``mask`` with the unit's active inputs, from per-group counts."""
    return k[mask].sum() / (n_active + (n - k)[mask].sum()) if n_active else 0.0


def test_concept_groups_reads_one_hots_and_refuses_the_rest(world: dict) -> None:
    np.testing.assert_array_equal(concept_groups(world["concepts"]), world["groups"])
    multi = world["concepts"].copy()
    multi[0, :2] = 1.0
    assert concept_groups(multi) is None
    assert concept_groups(world["concepts"] * 0.5) is None


def test_best_prefix_is_the_best_of_every_group_set() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = rng.integers(1, 30, size=6).astype(float)
        k = np.minimum(n, rng.integers(0, 10, size=6)).astype(float)
        n_active = int(k.sum()) + int(rng.integers(0, 5))
        chosen = best_prefix_iou(k, n, n_active)

        brute = max(set_iou(k, n, n_active, np.array(mask, dtype=bool))
                    for mask in itertools.product((0, 1), repeat=6))
        assert set_iou(k, n, n_active, chosen) == pytest.approx(brute, abs=1e-12)


@pytest.mark.filterwarnings("ignore:.*(zero-variance|all-zero)")  # the grid's constant functions
def test_oracle_equals_brute_force_over_every_explanation(world: dict) -> None:
    oracle = oracle_scores(world["units"], world["groups"], options=OPTIONS).set_index("unit")
    assert list(oracle.columns) == list(ORACLE_COLUMNS)
    n_groups = N_CONCEPTS + 1
    sets = grid_functions(n_groups, (0.0, 1.0))
    functions = grid_functions(n_groups, (0.0, 0.25, 0.5, 0.75, 1.0))
    for unit in world["units"].columns:
        a = world["units"][[unit]].to_numpy()
        binary = sets[:, world["groups"]].T
        for metric in ("f1", "iou"):
            brute = score(metric, a, binary, alpha=OPTIONS.alpha).max()
            assert oracle.loc[unit, metric] == pytest.approx(brute, abs=1e-9), (unit, metric)
        simulated = functions[:, world["groups"]].T
        assert score("auprc", a, simulated, alpha=OPTIONS.alpha).max() <= oracle.loc[unit, "auprc"] + 1e-9
        means = pd.Series(a[:, 0]).groupby(world["groups"]).transform("mean").to_numpy()
        assert oracle.loc[unit, "correlation"] == pytest.approx(pearsonr(means, a[:, 0]).statistic, abs=1e-9)
        assert oracle.loc[unit, "simulation_correlation"] == oracle.loc[unit, "correlation"]
        assert np.nanmax(score("correlation", a, simulated)) <= oracle.loc[unit, "correlation"] + 1e-9
        direct_cosine = means @ a[:, 0] / np.sqrt((means**2).sum() * (a[:, 0] ** 2).sum())
        assert oracle.loc[unit, "cosine"] == pytest.approx(direct_cosine, abs=1e-9)
        assert score("cosine", a, simulated).max() <= oracle.loc[unit, "cosine"] + 1e-9


def test_oracle_auprc_is_attained_by_the_group_precision(world: dict) -> None:
    """The AUPRC optimum is a real explanation: g(z) = share of the unit's top-α inputs in group z."""
    oracle = oracle_scores(world["units"], world["groups"], options=OPTIONS).set_index("unit")
    for unit in world["units"].columns:
        a = world["units"][unit].to_numpy()
        k = int(np.ceil(OPTIONS.alpha * len(a)))
        active = a >= np.sort(a)[-k]
        precision = pd.Series(active.astype(float)).groupby(world["groups"]).transform("mean").to_numpy()
        direct = score("auprc", a[:, None], precision[:, None], alpha=OPTIONS.alpha)[0, 0]
        assert oracle.loc[unit, "auprc"] == pytest.approx(direct, abs=1e-12)


def test_oracle_rejects_mismatched_groups(world: dict) -> None:
    with pytest.raises(ValueError, match="groups has 3 inputs"):
        oracle_scores(world["units"], world["groups"][:3])
