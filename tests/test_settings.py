"""Ground truth of a setting: known units, and argmax-IoU truth for hidden units (000 App. F.1)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from neuroneval.settings import (
    SettingData,
    ideal_activation_paths,
    setting_truth_pairs,
)


def brute_force_iou(activation: np.ndarray, concept: np.ndarray, alpha: float) -> float:
    """IoU of top-ceil(alpha·n) (ties at the cutoff included) with c >= 0.5, one pair at a time."""
    cutoff = np.sort(activation)[::-1][math.ceil(alpha * activation.size) - 1]
    active, positive = activation >= cutoff, concept >= 0.5
    union = np.sum(active | positive)
    return np.sum(active & positive) / union if union else 0.0


def test_iou_truth_picks_the_concept_of_highest_iou_for_every_unit() -> None:
    rng = np.random.default_rng(0)
    concepts = (rng.random((2000, 6)) < [0.004, 0.01, 0.02, 0.05, 0.1, 0.3]).astype(np.float32)
    activations = np.column_stack([concepts[:, 0] + 0.1 * rng.random(2000), concepts[:, 2] * rng.random(2000),
                                   rng.random(2000), concepts[:, 1] + concepts[:, 5]]).astype(np.float32)
    names = [f"c{t}" for t in range(6)]
    data = SettingData(activations, ["u0", "u1", "u2", "u3"], concepts, names, {})
    truth = setting_truth_pairs({"truth": {"method": "iou", "alpha": 0.005}}, data)
    for row, unit in enumerate(data.unit_names):
        ious = [brute_force_iou(activations[:, row], concepts[:, t], 0.005) for t in range(6)]
        if max(ious) > 0:
            assert truth[unit] == [names[int(np.argmax(ious))]]
        else:
            assert unit not in truth
    assert truth["u0"] == ["c0"]


def test_iou_truth_respects_candidate_prefixes_and_known_truth_passes_through() -> None:
    concepts = np.array([[1, 1], [0, 0], [0, 0], [0, 1]], dtype=np.float32)
    data = SettingData(np.array([[1.0], [0.0], [0.0], [0.5]], dtype=np.float32), ["u"], concepts,
                       ["class:a", "parent:b"], {"u": ["parent:b"]})
    assert setting_truth_pairs({"truth": {"method": "iou", "alpha": 0.25, "prefixes": ["parent:"]}},
                               data) == {"u": ["parent:b"]}
    assert setting_truth_pairs({}, data) == {"u": ["parent:b"]}


def test_only_the_embedded_text_worlds_next_token_units_have_generative_ideal_tables() -> None:
    """The text world's generator writes P(next = w | context) (rule lm_ideal_activations, datasets text_<split>);
    a vision setting, a mixed setting and a user's own text dataset (no known generator) fall back to labels."""
    lm = {"dataset": "text_probe", "units": [{"model": "lm_small", "layer": "next_token"}]}
    expected = Path("data/activations/text_probe/ideal/next_token.parquet")
    assert ideal_activation_paths(lm, root=Path("data")) == [expected]
    assert ideal_activation_paths({**lm, "dataset": "openwebtext"}) == []
    assert ideal_activation_paths({**lm, "units": [*lm["units"], {"model": "lm_small", "layer": "block0"}]}) == []
    vision = {"dataset": "vision_probe", "units": [{"model": "vision_vit", "layer": "softmax"}]}
    assert ideal_activation_paths(vision) == []
